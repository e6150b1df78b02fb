// citeverify serve: the review page. Plain JavaScript, no build step, nothing from another origin.
//
// Every value that comes from the API (answers, documents, references, reasons, ...) is
// untrusted: it is rendered with textContent, createElement and setAttribute only, never as
// markup. The Content-Security-Policy of the page forbids inline script besides.
"use strict";

(function () {
  const KEY_NAME = "citeverify.apiKey";
  const POLL_MS = 500;
  const BATCH = 20; // references per POST /api/verify-reference
  const MAX_CHARS = 1200; // characters of one reference (the seed's limit)
  const POLL_IDS = 50; // job ids per POST /api/verify-reference/results
  const PAGE_SIZE = 50;
  const SVG_NS = "http://www.w3.org/2000/svg";

  const $ = (id) => document.getElementById(id);

  // --- building elements (never from markup strings) ------------------------------------------

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    setAttrs(node, attrs);
    appendAll(node, children);
    return node;
  }

  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVG_NS, tag);
    setAttrs(node, attrs);
    appendAll(node, children);
    return node;
  }

  function setAttrs(node, attrs) {
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (/^on/i.test(name) || name === "style") throw new Error("no handlers or styles");
      if (name === "class") {
        for (const c of String(value).split(/\s+/)) if (c) node.classList.add(c);
      } else {
        node.setAttribute(name, value === true ? "" : String(value));
      }
    }
  }

  function appendAll(node, children) {
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
  }

  // A class name from a data value (statuses, labels): letters, digits and dashes only.
  function token(value) {
    return String(value ?? "none").toLowerCase().replace(/[^a-z0-9]+/g, "-");
  }

  function fmt(x, digits = 2) {
    return typeof x === "number" && Number.isFinite(x) ? x.toFixed(digits) : "–";
  }

  function show(node, visible) {
    node.hidden = !visible;
  }

  function setStatus(node, text, kind) {
    node.textContent = text || "";
    node.classList.toggle("error", kind === "error");
    node.classList.toggle("ok", kind === "ok");
  }

  // --- the API key -----------------------------------------------------------------------------

  function storedKey() {
    return sessionStorage.getItem(KEY_NAME) || localStorage.getItem(KEY_NAME) || "";
  }

  function storeKey(key, remember) {
    sessionStorage.setItem(KEY_NAME, key);
    if (remember) localStorage.setItem(KEY_NAME, key);
    else localStorage.removeItem(KEY_NAME);
  }

  function forgetKey() {
    sessionStorage.removeItem(KEY_NAME);
    localStorage.removeItem(KEY_NAME);
  }

  class ApiError extends Error {
    constructor(status, code, message) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  // A 401 or 403: the key is forgotten and asked for again, with the service's message.
  function askForKey(message) {
    forgetKey();
    clearData();
    show($("app"), false);
    show($("key-status"), false);
    show($("key-section"), true);
    const error = $("key-error");
    error.textContent = message || "";
    show(error, Boolean(message));
    $("key-input").value = "";
    $("key-input").focus();
  }

  // Another key is another tenant: nothing the previous key read stays on the page, and its
  // reference polls stop.
  let session = 0;

  function clearData() {
    session += 1;
    policiesLoaded = false;
    loadedLogged = false;
    offset = 0;
    for (const id of ["check-result", "refs-results", "refs-skipped", "doc-result", "decisions-body", "daily-chart", "logged-select"]) {
      $(id).replaceChildren();
    }
    for (const id of ["check-status", "refs-status", "doc-status", "logged-status", "decisions-status", "page-info"]) {
      setStatus($(id), "");
    }
    $("answer-input").value = "";
    $("refs-input").value = "";
    $("refs-title").value = "";
    clearBib();
    clearDocumentFile();
    $("doc-title").value = "";
    setDocuments([""]);
  }

  async function api(method, path, body, key) {
    const used = key || storedKey();
    if (!used) throw new ApiError(401, "no_api_key", "no API key");
    const headers = { Accept: "application/json", Authorization: "Bearer " + used };
    const init = { method, headers, cache: "no-store", credentials: "omit" };
    if (body instanceof FormData) {
      init.body = body; // multipart: the browser writes the Content-Type with its boundary
    } else if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(path, init);
    } catch (err) {
      throw new ApiError(0, "network", "The service cannot be reached (" + err.message + ").");
    }
    let data = null;
    try {
      data = await response.json();
    } catch (err) {
      data = null;
    }
    if (!response.ok) {
      const e = (data && data.error) || {};
      const code = e.code || "http_" + response.status;
      const message = e.message || response.statusText || "the request failed";
      const error = new ApiError(response.status, code, message);
      // Only the first refusal asks again (requests in flight with the same key say nothing).
      if ((response.status === 401 || response.status === 403) && key === undefined && storedKey() === used) {
        askForKey(keyMessage(error));
      }
      throw error;
    }
    return data;
  }

  function keyMessage(error) {
    const what = error.status === 403 ? "revoked" : "refused";
    return `The service ${what} the API key (HTTP ${error.status} ${error.code}: ${error.message}). Enter a valid key.`;
  }

  function describe(error) {
    if (error instanceof ApiError) {
      return error.status ? `${error.message} (HTTP ${error.status} ${error.code})` : error.message;
    }
    return String(error && error.message ? error.message : error);
  }

  async function useKey(key, remember) {
    const balance = await api("GET", "api/verify-reference/balance", undefined, key);
    storeKey(key, remember);
    showApp(key, balance);
  }

  function showApp(key, balance) {
    show($("key-section"), false);
    show($("key-error"), false);
    show($("app"), true);
    show($("key-status"), true);
    const tokens = balance && typeof balance.totalAvailable === "number"
      ? ` · ${balance.totalAvailable.toLocaleString()} tokens` : "";
    $("key-label").textContent = `Key ${key.slice(0, 12)}…${tokens}`;
    loadPolicies();
    loadLogged();
    loadDocumentLimits();
    if (currentTab() === "decisions") loadDecisions();
  }

  async function refreshBalance() {
    try {
      const balance = await api("GET", "api/verify-reference/balance");
      $("key-label").textContent =
        `Key ${storedKey().slice(0, 12)}… · ${balance.totalAvailable.toLocaleString()} tokens`;
    } catch (err) {
      /* shown elsewhere */
    }
  }

  // --- tabs --------------------------------------------------------------------------------

  const TABS = ["answers", "references", "decisions"];

  function currentTab() {
    return TABS.find((t) => $("tab-" + t).getAttribute("aria-selected") === "true");
  }

  function selectTab(name, focus) {
    for (const t of TABS) {
      const tab = $("tab-" + t);
      const on = t === name;
      tab.setAttribute("aria-selected", on ? "true" : "false");
      tab.tabIndex = on ? 0 : -1;
      show($("view-" + t), on);
      if (on && focus) tab.focus();
    }
    if (name === "decisions") loadDecisions();
    if (name === "answers") loadLogged();
  }

  // --- Answers ----------------------------------------------------------------------------

  let policiesLoaded = false;

  async function loadPolicies() {
    if (policiesLoaded) return;
    try {
      const data = await api("GET", "api/policies");
      const select = $("policy-select");
      const filter = $("filter-policy");
      select.replaceChildren();
      filter.replaceChildren(el("option", { value: "" }, "any"));
      for (const p of data.policies || []) {
        const label = p.default ? `${p.name} (default)` : p.name;
        select.append(el("option", { value: p.name, selected: Boolean(p.default) }, label));
        filter.append(el("option", { value: p.name }, p.name));
      }
      policiesLoaded = true;
    } catch (err) {
      if (err.status !== 401 && err.status !== 403) {
        setStatus($("check-status"), "Cannot list the policies: " + describe(err), "error");
      }
    }
  }

  let documentCount = 0;

  function addDocument(text) {
    documentCount += 1;
    const id = "document-" + documentCount;
    const area = el("textarea", { id, rows: 4, spellcheck: "false", class: "document" });
    area.value = text || "";
    const remove = el("button", { type: "button", class: "secondary small" }, "Remove");
    const box = el("div", { class: "field document-box" },
      el("div", { class: "document-head" },
        el("label", { for: id }, "Document " + documentCount), remove),
      area);
    remove.addEventListener("click", () => {
      box.remove();
      if (!$("documents").children.length) addDocument("");
    });
    $("documents").append(box);
    return area;
  }

  function setDocuments(texts) {
    $("documents").replaceChildren();
    documentCount = 0;
    if (!texts.length) addDocument("");
    for (const t of texts) addDocument(t);
  }

  function readDocuments() {
    const docs = [];
    for (const area of $("documents").querySelectorAll("textarea")) {
      for (const part of area.value.split(/\r?\n---[ \t]*(?:\r?\n|$)/)) {
        if (part.trim()) docs.push(part.trim());
      }
    }
    return docs;
  }

  async function check(event) {
    event.preventDefault();
    const answer = $("answer-input").value;
    const status = $("check-status");
    if (!answer.trim()) {
      setStatus(status, "Paste an answer first.", "error");
      return;
    }
    const body = {
      answer,
      context_documents: readDocuments(),
      policy: $("policy-select").value || null,
    };
    $("check-button").disabled = true;
    setStatus(status, "Checking…");
    try {
      const data = await api("POST", "api/check", body);
      setStatus(status, data.decision_id ? `Decision ${data.decision_id} logged.` : "Checked (not logged).", "ok");
      renderCheck($("check-result"), data, null, answer);
      loadLogged(true);
    } catch (err) {
      setStatus(status, "The check failed: " + describe(err), "error");
    } finally {
      $("check-button").disabled = false;
    }
  }

  // The answer with its claims, quotes and citations marked. Spans count code points (Python
  // string offsets), so the text is cut as an array of code points, not UTF-16 units.
  function annotate(text, claims, marks) {
    const cps = Array.from(text || "");
    const out = el("div", { class: "answer-text" });
    const valid = (s) => Array.isArray(s) && s.length === 2 && s[0] >= 0 && s[1] <= cps.length && s[0] < s[1];
    const sorted = claims
      .map((c, i) => ({ c, i }))
      .filter(({ c }) => valid(c.span))
      .sort((a, b) => a.c.span[0] - b.c.span[0]);
    let pos = 0;
    for (const { c, i } of sorted) {
      const [s, e] = c.span;
      if (s < pos) continue;
      appendAll(out, segments(cps, pos, s, marks));
      const supported = c.verified === true;
      let title = `${supported ? "Supported" : "Unsupported"} claim ${i + 1}: groundedness ${fmt(c.groundedness)}`;
      if (!supported && c.missing_words && c.missing_words.length) {
        title += `\nWords no document contains: ${c.missing_words.slice(0, 20).join(", ")}`;
      }
      if (c.misattributed) title += "\nMisattributed: the cited document does not support it";
      out.append(el("span", {
        class: "claim " + (supported ? "supported" : "unsupported"),
        title,
        "data-claim": i,
      }, segments(cps, s, e, marks)));
      pos = e;
    }
    appendAll(out, segments(cps, pos, cps.length, marks));
    return out;
  }

  function segments(cps, from, to, marks) {
    if (from >= to) return [];
    const inside = marks.filter((m) => m.start < to && m.end > from);
    const cuts = new Set([from, to]);
    for (const m of inside) {
      cuts.add(Math.max(from, m.start));
      cuts.add(Math.min(to, m.end));
    }
    const points = [...cuts].sort((a, b) => a - b);
    const parts = [];
    for (let k = 0; k + 1 < points.length; k += 1) {
      const [a, b] = [points[k], points[k + 1]];
      const text = cps.slice(a, b).join("");
      const covering = inside.filter((m) => m.start <= a && m.end >= b);
      if (!covering.length) {
        parts.push(text);
      } else {
        parts.push(el("span", {
          class: ["mark", ...covering.map((m) => m.cls)].join(" "),
          title: covering.map((m) => m.title).join("\n"),
        }, text));
      }
    }
    return parts;
  }

  function marksOf(details) {
    const marks = [];
    for (const q of details.quotes || []) {
      if (!Array.isArray(q.span)) continue;
      const where = q.matched ? `matched in document ${(q.document ?? 0) + 1}` : "altered: not found in any context document";
      marks.push({ start: q.span[0], end: q.span[1], cls: q.matched ? "quote-matched" : "quote-altered", title: "Quote " + where });
    }
    for (const c of details.citations || []) {
      if (!Array.isArray(c.span) || c.type === "quote") continue;
      marks.push({
        start: c.span[0],
        end: c.span[1],
        cls: "cite cite-" + token(c.status),
        title: `Citation (${c.kind || c.type}): ${c.status}${c.reason ? " (" + c.reason + ")" : ""}`,
      });
    }
    return marks;
  }

  function badge(kind, value) {
    return el("span", { class: `badge ${kind}-${token(value)}` }, String(value ?? "–"));
  }

  function table(caption, headers, rows, cls) {
    return el("div", { class: "table-wrap" },
      el("table", { class: cls || "" },
        el("caption", {}, caption),
        el("thead", {}, el("tr", {}, headers.map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, rows)));
  }

  // `submitted`: the answer as sent. Under redact the service may withhold the original
  // (original_answer is then empty), but every span indexes it: the page has it anyway.
  function renderCheck(container, data, logged, submitted) {
    const r = data.result || {};
    const d = r.details || {};
    const claims = d.claims || [];
    const quotes = d.quotes || [];
    const citations = d.citations || [];
    const parts = [];
    const withheld = !r.original_answer && r.action === "redact";
    const originalText = r.original_answer || (withheld ? submitted ?? "" : r.answer ?? "");
    // Spans index the original answer; under redact a claim's own text is the redacted one.
    const original = Array.from(originalText);
    const textOf = (x) => Array.isArray(x.span) && x.span[1] <= original.length
      ? original.slice(x.span[0], x.span[1]).join("") : x.text;

    if (logged) {
      parts.push(el("p", { class: "note" },
        `Logged decision ${logged.id} (${logged.created_at}, ${logged.source}, policy ${logged.policy}): `,
        badge("verdict", logged.verdict), " ", badge("action", logged.action),
        ` ${logged.reason_code ?? ""}. ` + (data.decision_id === logged.id
          ? "Shown as it was decided."
          : `Checked again just now: decision ${data.decision_id ?? "(not logged)"}.`)));
    }
    parts.push(el("div", { class: "summary", id: "check-summary" },
      el("div", {}, el("span", { class: "label" }, "Verdict"), badge("verdict", r.verdict)),
      el("div", {}, el("span", { class: "label" }, "Action"), badge("action", r.action)),
      el("div", {}, el("span", { class: "label" }, "Reason"), el("code", {}, r.reason_code || "–")),
      el("div", {}, el("span", { class: "label" }, "Groundedness"), fmt(d.groundedness)),
      el("div", {}, el("span", { class: "label" }, "Claim confidence"), fmt(d.claim_confidence)),
      el("div", {}, el("span", { class: "label" }, "Policy"), data.policy || "–"),
      el("div", {}, el("span", { class: "label" }, "Decision"), el("code", {}, data.decision_id || "–"))));

    if ((r.reasons || []).length) {
      parts.push(el("h3", {}, "Reasons"), el("ul", { class: "reasons" }, r.reasons.map((x) => el("li", {}, x))));
    }
    if ((r.notes || []).length) {
      parts.push(el("h3", {}, "Notes"), el("ul", { class: "notes" }, r.notes.map((x) => el("li", {}, x))));
    }

    parts.push(el("h3", {}, "Answer"),
      el("p", { class: "legend" },
        el("span", { class: "claim supported" }, "supported claim"), " ",
        el("span", { class: "claim unsupported" }, "unsupported claim"), " ",
        el("span", { class: "mark quote-matched" }, "quote matched"), " ",
        el("span", { class: "mark quote-altered" }, "quote altered"), " ",
        el("span", { class: "mark cite" }, "citation"),
        " · hover a claim for its groundedness"),
      originalText ? annotate(originalText, claims, marksOf(d))
        : el("p", { class: "note" }, "The service did not return the original answer."));

    if (r.action === "redact") {
      parts.push(el("h3", {}, "Redacted answer (what is shown to the user)"),
        el("div", { class: "answer-text redacted", id: "redacted-answer" }, r.answer ?? ""));
    }

    parts.push(table(`Claims (${claims.filter((c) => !c.verified).length} of ${claims.length} unsupported)`,
      ["#", "Claim", "Groundedness", "Supported", "Missing words", "Best document"],
      claims.map((c, i) => el("tr", { class: c.verified ? "row-supported" : "row-unsupported" },
        el("td", { class: "num" }, i + 1),
        el("td", {}, textOf(c)),
        el("td", { class: "num" }, fmt(c.groundedness)),
        el("td", {}, c.verified ? "supported" : "unsupported"),
        el("td", {}, (c.missing_words || []).slice(0, 20).join(", ")),
        el("td", { class: "num" }, typeof c.best_document === "number" ? c.best_document + 1 : "–"))),
      "claims"));

    if (quotes.length) {
      parts.push(table("Quotes", ["Quote", "Status", "Document"],
        quotes.map((q) => el("tr", {},
          el("td", {}, textOf(q)),
          el("td", {}, badge("quote", q.matched ? "matched" : "altered")),
          el("td", { class: "num" }, typeof q.document === "number" ? q.document + 1 : "–"))),
        "quotes"));
    }
    if (citations.length) {
      parts.push(table("Citations", ["Type", "Citation", "Status", "Reason"],
        citations.map((c) => el("tr", {},
          el("td", {}, c.kind && c.kind !== c.type ? `${c.type} (${c.kind})` : c.type),
          el("td", {}, textOf(c)),
          el("td", {}, badge("status", c.status)),
          el("td", {}, c.reason || ""))),
        "citations"));
    }
    container.replaceChildren(...parts);
  }

  // Pick a logged decision: those that kept their content can be opened again.
  let loadedLogged = false;

  async function loadLogged(force) {
    if (loadedLogged && !force) return;
    const select = $("logged-select");
    try {
      const data = await api("GET", `api/decisions?limit=${PAGE_SIZE}&offset=0`);
      const options = (data.decisions || []).filter((x) => x.has_content).map((x) =>
        el("option", { value: x.id },
          `${shortTime(x.created_at)} · ${x.verdict}/${x.action} · ${x.policy} · ${x.source} · ${x.id}`));
      select.replaceChildren(...(options.length ? options : [el("option", { value: "" }, "no logged decision with content")]));
      $("logged-open").disabled = !options.length;
      loadedLogged = true;
      setStatus($("logged-status"), "");
    } catch (err) {
      if (err.status !== 401 && err.status !== 403) {
        setStatus($("logged-status"), "Cannot read the decision log: " + describe(err), "error");
      }
    }
  }

  async function openLogged(id) {
    const status = $("logged-status");
    if (!id) return;
    setStatus(status, "Opening…");
    try {
      const logged = await api("GET", "api/decisions/" + encodeURIComponent(id));
      if (!logged.content) {
        setStatus(status, "This decision was logged without its content.", "error");
        return;
      }
      $("answer-input").value = logged.content.answer || "";
      setDocuments((logged.content.context_documents || []).map((x) => typeof x === "string" ? x : (x && x.content) || ""));
      const select = $("policy-select");
      if ([...select.options].some((o) => o.value === logged.policy)) select.value = logged.policy;
      if (logged.result) { // a log that keeps the whole result: shown as it was
        renderCheck($("check-result"), { decision_id: logged.id, policy: logged.policy, result: logged.result }, logged, logged.content.answer);
        setStatus(status, `Decision ${logged.id} opened.`, "ok");
        return;
      }
      // The log keeps the summary and the content: check the content again to show it marked.
      const data = await api("POST", "api/check", {
        answer: logged.content.answer || "",
        context_documents: logged.content.context_documents || [],
        policy: logged.policy || null,
      });
      renderCheck($("check-result"), data, logged, logged.content.answer || "");
      setStatus(status, `Decision ${logged.id} opened and checked again.`, "ok");
      loadedLogged = false; // the list is refreshed next time (not now: the choice stays)
    } catch (err) {
      setStatus(status, "Cannot open the decision: " + describe(err), "error");
    }
  }

  // --- References -------------------------------------------------------------------------

  let bibFile = null; // {name, text}

  function readFile(file) {
    return new Promise((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = () => resolve(String(reader.result));
      reader.onerror = () => reject(reader.error || new Error("the file cannot be read"));
      reader.readAsText(file);
    });
  }

  async function chooseBib() {
    const input = $("bib-input");
    const file = input.files && input.files[0];
    if (!file) return;
    try {
      const text = await readFile(file);
      bibFile = { name: file.name, text };
      $("bib-name").textContent = `Using ${file.name} (${text.length.toLocaleString()} characters); the list above is ignored.`;
      show($("bib-info"), true);
      $("refs-input").disabled = true;
    } catch (err) {
      setStatus($("refs-status"), "Cannot read the file: " + describe(err), "error");
    }
  }

  function clearBib() {
    bibFile = null;
    $("bib-input").value = "";
    show($("bib-info"), false);
    $("refs-input").disabled = false;
  }

  async function splitReferences() {
    const body = bibFile ? { text: bibFile.text, format: "bib" } : { text: $("refs-input").value, format: "lines" };
    try {
      return await api("POST", "api/references/split", body);
    } catch (err) {
      if (err.status === 404 && !bibFile) { // an older service: split the lines here
        const references = body.text.split(/\r?\n/).map((x) => x.trim()).filter(Boolean);
        return { references, skipped: [] };
      }
      throw err;
    }
  }

  async function submitReferences(event) {
    event.preventDefault();
    const status = $("refs-status");
    const button = $("refs-submit");
    button.disabled = true;
    try {
      setStatus(status, bibFile ? `Reading ${bibFile.name}…` : "Reading the list…");
      const split = await splitReferences();
      // The service takes references of at most 1,200 characters (a .bib entry with its
      // abstract can be longer): those are listed as skipped instead of failing their batch.
      const skipped = [...(split.skipped || [])];
      const refs = [];
      (split.references || []).forEach((ref, i) => {
        if (Array.from(ref).length <= MAX_CHARS) refs.push(ref);
        else skipped.push({ line: null, entry: i + 1, reason: `longer than ${MAX_CHARS.toLocaleString("en")} characters`, text: ref.slice(0, 80) + "…" });
      });
      renderSkipped(skipped);
      if (!refs.length) {
        setStatus(status, "No reference to verify.", "error");
        return;
      }
      const title = $("refs-title").value.trim() || (bibFile ? bibFile.name : null);
      const jobs = [];
      const list = $("refs-results");
      list.replaceChildren();
      $("doc-result").replaceChildren(); // a document shown before is not this list's
      for (let i = 0; i < refs.length; i += BATCH) {
        const batch = refs.slice(i, i + BATCH);
        setStatus(status, `Submitting ${i + batch.length} of ${refs.length}…`);
        const sub = await api("POST", "api/verify-reference", title ? { references: batch, title } : { references: batch });
        sub.jobIds.forEach((id, k) => {
          const item = referenceItem(i + k + 1, batch[k], id);
          list.append(item.node);
          jobs.push(item);
        });
      }
      setStatus(status, `${refs.length} reference${refs.length === 1 ? "" : "s"} submitted; verifying…`);
      await poll(jobs, status);
      refreshBalance();
    } catch (err) {
      setStatus(status, "Cannot verify: " + describe(err), "error");
    } finally {
      button.disabled = false;
    }
  }

  function renderSkipped(skipped) {
    const box = $("refs-skipped");
    if (!skipped.length) {
      box.replaceChildren();
      return;
    }
    box.replaceChildren(el("details", { class: "card skipped", open: true },
      el("summary", {}, `${skipped.length} entr${skipped.length === 1 ? "y" : "ies"} skipped`),
      el("ul", {}, skipped.map((s) => el("li", {},
        s.line ? `Line ${s.line}: ${s.reason}` : `Entry ${s.entry}: ${s.reason}`,
        s.text ? el("code", {}, " " + s.text) : null)))));
  }

  // `where`: a document's reference: its label and location ({label, location}).
  function referenceItem(n, text, id, where) {
    const state = el("span", { class: "badge state-waiting" }, "waiting");
    const progress = el("span", { class: "progress" }, "");
    const body = el("div", { class: "ref-body" });
    const node = el("li", { class: "ref card", "data-job": id },
      el("div", { class: "ref-head" },
        el("span", { class: "ref-n" }, `#${n}`),
        where && where.label ? el("span", { class: "ref-label" }, `[${where.label}]`) : null,
        where && where.location ? el("span", { class: "ref-where" }, placeText(where.location)) : null,
        state, progress),
      el("p", { class: "ref-raw" }, text),
      body);
    return { id, text, node, state, progress, body, done: false };
  }

  async function poll(jobs, status) {
    const mine = session;
    for (;;) {
      if (mine !== session) return; // the key changed
      const open = jobs.filter((j) => !j.done);
      if (!open.length) break;
      for (let i = 0; i < open.length; i += POLL_IDS) {
        const chunk = open.slice(i, i + POLL_IDS);
        const data = await api("POST", "api/verify-reference/results", { jobIds: chunk.map((j) => j.id) });
        if (mine !== session) return;
        const byId = new Map((data.jobs || []).map((j) => [j.id, j]));
        for (const job of chunk) updateJob(job, byId.get(job.id));
      }
      const left = jobs.filter((j) => !j.done).length;
      setStatus(status, left ? `Verifying: ${jobs.length - left} of ${jobs.length} done…` : `Done: ${jobs.length} of ${jobs.length} verified.`, left ? null : "ok");
      if (!left) break;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  function updateJob(job, info) {
    if (!info) return;
    job.state.textContent = info.state;
    job.state.className = "badge state-" + token(info.state);
    const p = info.progress || {};
    job.progress.textContent = info.state === "active" || info.state === "waiting"
      ? [p.step, p.message].filter(Boolean).join(": ") : "";
    if (info.state === "completed" && info.result) {
      job.done = true;
      job.body.replaceChildren(...renderReference(info.result));
    } else if (info.state === "failed" || info.state === "not-found") {
      job.done = true;
      job.body.replaceChildren(el("p", { class: "error" }, info.error || info.state));
    }
  }

  // --- References: a whole document ------------------------------------------------------

  let documentFile = null; // a File
  let documentLimits = { maxBytes: 50 * 1024 * 1024, formats: [".pdf", ".docx", ".tex", ".bbl", ".bib", ".md", ".html", ".txt"] };

  // What a person can do about a document the service cannot read, by its error code.
  const DOCUMENT_ERRORS = {
    "no-text-layer": "No text layer: run OCR first, then upload the result.",
    "no-reference-list": "No reference list found: the document has no References / Bibliography section or numbered list at its end.",
    "encrypted": "The document is encrypted: save a copy without a password and upload that.",
    "corrupt": "The file is damaged, or not the kind of file its name says.",
    "unsupported-format": "This kind of file is not read here.",
    "too-large": "The document is too large.",
    "body_too_large": "The file is too large.",
    "timeout": "Reading the document took too long.",
    "too-many-references": "The document has more references than one upload may have.",
    "insufficient_tokens": "Not enough tokens: each reference costs one.",
  };

  const FINDING_TEXT = {
    "missing-entry": "Citation with no entry",
    "uncited-entry": "Entry never cited",
    "out-of-order": "Out of order",
    "duplicate-entry": "Duplicate entry",
  };

  function megabytes(bytes) {
    if (bytes < 100_000) return Math.max(1, Math.round(bytes / 1000)).toLocaleString("en") + " KB";
    return (bytes / 1e6).toLocaleString("en", { maximumFractionDigits: 1 }) + " MB";
  }

  function placeText(location) {
    if (!location || typeof location !== "object") return "";
    const line = Number.isFinite(location.line) ? `line ${location.line}` : "";
    return Number.isFinite(location.page) ? `page ${location.page}, ${line}` : line;
  }

  async function loadDocumentLimits() {
    try {
      const limits = await api("GET", "api/verify-document/limits");
      if (limits && Number.isFinite(limits.maxBytes)) documentLimits = limits;
    } catch (err) {
      /* an older service: the defaults stand */
    }
    $("doc-accepts").textContent =
      `Accepted: ${(documentLimits.formats || []).join(" ")}; up to ${megabytes(documentLimits.maxBytes)}.`;
    $("doc-input").setAttribute("accept", (documentLimits.formats || []).join(","));
  }

  function chooseDocument(file) {
    showDocumentError("");
    if (!file) return;
    documentFile = file;
    $("doc-name").textContent = `${file.name} (${megabytes(file.size)})`;
  }

  function clearDocumentFile() {
    documentFile = null;
    $("doc-input").value = "";
    $("doc-name").textContent = "";
    showDocumentError("");
  }

  function showDocumentError(text) {
    const box = $("doc-error");
    box.textContent = text || "";
    show(box, Boolean(text));
  }

  function documentErrorText(err) {
    const known = err instanceof ApiError ? DOCUMENT_ERRORS[err.code] : null;
    if (!known) return "Cannot check the document: " + describe(err);
    return `${known} (${err.message})`;
  }

  async function submitDocument(event) {
    event.preventDefault();
    const status = $("doc-status");
    const file = documentFile;
    showDocumentError("");
    if (!file) {
      setStatus(status, "Choose a file first.", "error");
      return;
    }
    if (file.size > documentLimits.maxBytes) {
      showDocumentError(`${DOCUMENT_ERRORS["too-large"]} ${file.name} has ${megabytes(file.size)}; the limit is ${megabytes(documentLimits.maxBytes)}.`);
      return;
    }
    const form = new FormData();
    form.append("file", file, file.name);
    const title = $("doc-title").value.trim();
    if (title) form.append("title", title);
    $("doc-submit").disabled = true;
    setStatus(status, `Reading ${file.name}…`);
    $("doc-result").replaceChildren();
    $("refs-skipped").replaceChildren();
    $("refs-results").replaceChildren();
    try {
      const sub = await api("POST", "api/verify-document", form);
      $("doc-result").replaceChildren(renderDocumentSummary(sub));
      const jobs = [];
      const list = $("refs-results");
      (sub.references || []).forEach((ref, i) => {
        const item = referenceItem(ref.number ?? i + 1, ref.text, ref.jobId, ref);
        list.append(item.node);
        jobs.push(item);
      });
      const n = jobs.length;
      setStatus(status, `${n} reference${n === 1 ? "" : "s"} found; verifying…`);
      refreshBalance();
      await poll(jobs, status);
      refreshBalance();
    } catch (err) {
      setStatus(status, "");
      showDocumentError(documentErrorText(err));
    } finally {
      $("doc-submit").disabled = false;
    }
  }

  function renderDocumentSummary(sub) {
    const doc = sub.document || {};
    const counts = sub.counts || {};
    const findings = Array.isArray(doc.findings) ? doc.findings : [];
    const facts = [
      ["Title", sub.title || doc.title || "–"],
      ["File", `${sub.fileName || doc.name || ""} (${sub.format || doc.format || "?"})`],
      ["Pages", doc.pages ?? "–"],
      ["Reference list", doc.heading || "–"],
      ["References", `${counts.references ?? (sub.references || []).length} found, ${counts.queued ?? "?"} queued`
        + (counts.notVerifiable ? `, ${counts.notVerifiable} too long to verify` : "")],
      ["Citations in the text", counts.citations ?? (doc.citations || []).length],
    ];
    const parts = [
      el("h3", {}, "Document"),
      el("dl", {}, facts.map(([k, v]) => [el("dt", {}, k), el("dd", {}, String(v))])),
      el("h4", { id: "findings-heading" }, `Consistency findings (${findings.length})`),
    ];
    if (!findings.length) {
      parts.push(el("p", { class: "empty", id: "no-findings" }, "The citations in the text and the reference list agree: no finding."));
    } else {
      parts.push(el("ul", { class: "findings", "aria-labelledby": "findings-heading" }, findings.map((f) =>
        el("li", { class: "finding", "data-kind": token(f.kind) },
          el("span", { class: "badge kind-" + token(f.kind) }, FINDING_TEXT[f.kind] || String(f.kind)), " ",
          el("span", { class: "finding-message" }, String(f.message ?? "")),
          f.location ? el("span", { class: "finding-where" }, ` (${placeText(f.location)})`) : null))));
    }
    const notes = Array.isArray(doc.notes) ? doc.notes : [];
    if (notes.length) {
      parts.push(el("details", { class: "notes" }, el("summary", {}, `Notes on the reading (${notes.length})`),
        el("ul", {}, notes.map((x) => el("li", {}, String(x))))));
    }
    return el("section", { class: "card doc-summary", "aria-label": "The document" }, parts);
  }

  const LABEL_TEXT = {
    MATCH: "match",
    MATCH_WITH_TYPO: "match with typo",
    CONTAINS: "contains",
    ABSENT: "absent",
    UNCONFIRMED: "unconfirmed",
    CONTRADICTION: "contradiction",
  };

  function renderReference(result) {
    const labels = result.field_results || {};
    const corrected = el("p", { class: "corrected" }, result.reference || "");
    const copy = el("button", { type: "button", class: "secondary small copy" }, "Copy");
    copy.addEventListener("click", () => copyText(result.reference || "", copy, corrected));
    const parts = [
      el("div", { class: "ref-status" }, badge("status", result.status)),
      el("ul", { class: "labels", "aria-label": "Field labels" },
        Object.entries(labels).map(([field, label]) =>
          el("li", { class: "label-" + token(label), title: `${field}: ${LABEL_TEXT[label] || label}` },
            el("span", { class: "field-name" }, field), " ", LABEL_TEXT[label] || String(label)))),
      el("div", { class: "corrected-box" },
        el("span", { class: "label" }, result.status === "unverified" ? "Result" : "Corrected reference (APA 7)"),
        corrected, copy),
    ];
    if (result.error) parts.push(el("p", { class: "error" }, result.error));
    // Retraction, expression-of-concern and correction notices of the work (issue 35).
    for (const n of result.notices || []) {
      const text = [String(n.kind || "notice").replace(/-/g, " "), n.date ? `(${n.date})` : "",
        n.doi ? `notice https://doi.org/${n.doi}` : "", n.source ? `source: ${n.source}` : ""]
        .filter(Boolean).join(" ");
      parts.push(el("p", { class: "notice notice-" + token(n.kind || "notice"), role: "alert" }, text));
    }
    if (result.verificationGraph) {
      parts.push(el("details", { class: "graph-box", open: true },
        el("summary", {}, "Verification graph"), drawGraph(result.verificationGraph)));
    }
    if (result.message) {
      parts.push(el("details", { class: "message" },
        el("summary", {}, "Message"), el("pre", {}, result.message)));
    }
    return parts;
  }

  async function copyText(text, button, source) {
    let ok = false;
    try {
      if (navigator.clipboard && window.isSecureContext) {
        await navigator.clipboard.writeText(text);
        ok = true;
      }
    } catch (err) {
      ok = false;
    }
    if (!ok) { // an insecure context (http to another host): the old way
      const area = el("textarea", { class: "offscreen", readonly: true, "aria-hidden": "true" });
      area.value = text;
      document.body.append(area);
      area.select();
      try {
        ok = document.execCommand("copy");
      } catch (err) {
        ok = false;
      }
      area.remove();
    }
    if (!ok) { // last resort: select it for the user
      const range = document.createRange();
      range.selectNodeContents(source);
      const sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
    }
    button.textContent = ok ? "Copied" : "Press Ctrl+C";
    setTimeout(() => { button.textContent = "Copy"; }, 2000);
  }

  // The verification graph: one column per node type, edges as lines.
  const LAYERS = { CITATION: 0, CANDIDATE: 1, COMPARISON: 2, RESULT: 3 };

  function nodeText(n) {
    switch (n.type) {
      case "CITATION": return "Citation";
      case "CANDIDATE": {
        const s = n.comparisonSummary || {};
        return `${n.sourceType || "candidate"} · ${s.matches ?? 0} match`;
      }
      case "COMPARISON": return `${n.fieldName}: ${LABEL_TEXT[n.result] || n.result}`;
      case "RESULT": return `Result: ${n.status}`;
      default: return String(n.type || n.id);
    }
  }

  function nodeTitle(n) {
    const rows = [`${n.type} ${n.id}`];
    if (n.rawText) rows.push(n.rawText);
    if (n.type === "CANDIDATE" && n.candidateFields) {
      const f = n.candidateFields;
      rows.push([f.title, f.year, f.venue, f.doi || f.identifier].filter(Boolean).join(" · "));
    }
    if (n.type === "COMPARISON") {
      rows.push(`reference: ${shortValue(n.citationValue)}`, `evidence: ${shortValue(n.candidateValue)}`);
      if (n.reasoning) rows.push(String(n.reasoning));
    }
    if (n.type === "RESULT" && n.reasoning) rows.push(n.reasoning);
    return rows.join("\n");
  }

  function shortValue(v) {
    if (v === null || v === undefined || (Array.isArray(v) && !v.length)) return "—";
    const s = Array.isArray(v) ? v.join("; ") : typeof v === "object" ? JSON.stringify(v) : String(v);
    return s.length > 200 ? s.slice(0, 200) + "…" : s;
  }

  function drawGraph(graph) {
    const nodes = (graph.nodes || []).slice(0, 400);
    const columns = [[], [], [], []];
    for (const n of nodes) columns[LAYERS[n.type] ?? 2].push(n);
    const W = 1100, colW = 230, gap = (W - 4 * colW) / 3, rowH = 30, boxH = 24, pad = 10;
    const rows = Math.max(1, ...columns.map((c) => c.length));
    const H = rows * rowH + 2 * pad;
    const pos = new Map();
    columns.forEach((col, ci) => {
      const offset = (H - col.length * rowH) / 2;
      col.forEach((n, ri) => pos.set(n.id, { x: ci * (colW + gap), y: offset + ri * rowH + (rowH - boxH) / 2 }));
    });
    const edges = [...(graph.edges || [])];
    const result = nodes.find((n) => n.type === "RESULT");
    if (result) { // the result comes from the best candidate (or from the citation when none)
      const from = result.bestCandidateId || (nodes.find((n) => n.type === "CITATION") || {}).id;
      if (from) edges.push({ source: from, target: result.id, type: "DECIDED" });
    }
    const lines = edges.filter((e) => pos.has(e.source) && pos.has(e.target)).map((e) => {
      const a = pos.get(e.source), b = pos.get(e.target);
      return svg("line", {
        class: "edge edge-" + token(e.type),
        x1: a.x + colW, y1: a.y + boxH / 2, x2: b.x, y2: b.y + boxH / 2,
      }, svg("title", {}, `${e.source} ${e.type} ${e.target}`));
    });
    const boxes = nodes.filter((n) => pos.has(n.id)).map((n) => {
      const p = pos.get(n.id);
      const extra = n.type === "COMPARISON" ? " label-" + token(n.result)
        : n.type === "RESULT" ? " status-" + token(n.status) : "";
      let label = nodeText(n);
      if (label.length > 30) label = label.slice(0, 29) + "…";
      return svg("g", { class: "node node-" + token(n.type) + extra, transform: `translate(${p.x} ${p.y})`, "data-node": n.id },
        svg("title", {}, nodeTitle(n)),
        svg("rect", { width: colW, height: boxH, rx: 4 }),
        svg("text", { x: 8, y: boxH / 2 + 4 }, label));
    });
    const heads = ["Citation", "Candidates", "Comparisons", "Result"].map((h, i) =>
      svg("text", { class: "layer-head", x: i * (colW + gap), y: 12 }, h));
    return svg("svg", {
      class: "graph",
      viewBox: `0 -8 ${W} ${H + 20}`,
      width: "100%",
      role: "img",
      "aria-label": `Verification graph: ${nodes.length} nodes, ${edges.length} edges`,
    }, heads, svg("g", { transform: "translate(0 16)" }, lines, boxes));
  }

  // --- Decision log -----------------------------------------------------------------------

  let offset = 0;
  let total = 0;

  // Local time as 2026-11-30 22:07:16 (the title of a cell keeps the server's UTC value).
  function shortTime(iso) {
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return String(iso ?? "");
    const p = (n) => String(n).padStart(2, "0");
    return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ` +
      `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
  }

  // The last `n` UTC days, oldest first, each with the counts the service gave (or zeros).
  function fillDays(given, n) {
    const byDay = new Map(given.map((d) => [String(d.day), d]));
    const today = new Date();
    const out = [];
    for (let i = n - 1; i >= 0; i -= 1) {
      const day = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - i))
        .toISOString().slice(0, 10);
      out.push(byDay.get(day) || { day, allow: 0, flag: 0, redact: 0, block: 0, total: 0 });
      byDay.delete(day);
    }
    // days the service counted outside this range (another clock): kept, in order
    return [...byDay.values(), ...out].sort((a, b) => String(a.day).localeCompare(String(b.day)));
  }

  function filters() {
    const params = new URLSearchParams();
    for (const [name, id] of [["verdict", "filter-verdict"], ["action", "filter-action"], ["policy", "filter-policy"]]) {
      const v = $(id).value;
      if (v) params.set(name, v);
    }
    return params;
  }

  let decisionsRequest = 0; // only the latest request's answer is shown

  async function loadDecisions() {
    const status = $("decisions-status");
    const params = filters();
    params.set("limit", String(PAGE_SIZE));
    params.set("offset", String(offset));
    setStatus(status, "Loading…");
    const mine = ++decisionsRequest;
    loadDaily(mine);
    try {
      const data = await api("GET", "api/decisions?" + params.toString());
      if (mine !== decisionsRequest) return;
      const page = data.pagination || {};
      total = page.total ?? (data.decisions || []).length;
      renderDecisions(data.decisions || []);
      const first = total ? offset + 1 : 0;
      const last = offset + (data.decisions || []).length;
      $("page-info").textContent = `${first}–${last} of ${total}`;
      $("page-prev").disabled = offset <= 0;
      $("page-next").disabled = !page.hasMore;
      setStatus(status, "");
    } catch (err) {
      if (mine === decisionsRequest && err.status !== 401 && err.status !== 403) {
        setStatus(status, "Cannot read the decision log: " + describe(err), "error");
      }
    }
  }

  function renderDecisions(rows) {
    const body = $("decisions-body");
    if (!rows.length) {
      body.replaceChildren(el("tr", {}, el("td", { colspan: 13, class: "empty" }, "No decision matches.")));
      return;
    }
    body.replaceChildren(...rows.map((x) => {
      const cites = Object.entries(x.citations || {}).map(([k, v]) => `${k}: ${v}`).join(", ");
      let open = "";
      if (x.has_content) {
        open = el("button", { type: "button", class: "secondary small", "aria-label": `Open decision ${x.id}` }, "Open");
        open.addEventListener("click", () => {
          selectTab("answers", true);
          openLogged(x.id);
        });
      }
      return el("tr", { "data-decision": x.id },
        el("td", { title: x.created_at }, shortTime(x.created_at)),
        el("td", {}, x.source),
        el("td", {}, x.policy),
        el("td", {}, badge("verdict", x.verdict)),
        el("td", {}, badge("action", x.action)),
        el("td", {}, x.reason_code ? el("code", {}, x.reason_code) : null,
          typeof x.status === "number" && x.status !== 200 ? el("span", { class: "http" }, ` HTTP ${x.status}`) : null),
        el("td", { class: "num" }, fmt(x.groundedness)),
        el("td", { class: "num" }, `${x.unsupported_claims ?? "–"} / ${x.claims ?? "–"}`),
        el("td", { class: "num" }, `${x.altered_quotes ?? "–"} / ${x.quotes ?? "–"}`),
        el("td", {}, cites || "–"),
        el("td", { class: "num" }, typeof x.latency_ms === "number" ? `${Math.round(x.latency_ms)} ms` : "–"),
        el("td", {}, x.enforced === false ? "no" + (x.stream ? " (stream)" : "") : "yes"),
        el("td", {}, open));
    }));
  }

  const ACTIONS = ["allow", "flag", "redact", "block"];

  async function loadDaily(mine) {
    const box = $("daily-chart");
    const params = new URLSearchParams({ days: "30" });
    const policy = $("filter-policy").value;
    if (policy) params.set("policy", policy);
    $("daily-heading").textContent = `Decisions per day (last 30 days${policy ? ", policy " + policy : ""})`;
    try {
      const data = await api("GET", "api/decisions/daily?" + params.toString());
      if (mine !== decisionsRequest) return;
      box.replaceChildren(...drawDaily(fillDays(data.days || [], 30)));
    } catch (err) {
      if (mine === decisionsRequest && err.status !== 401 && err.status !== 403) box.replaceChildren(el("p", { class: "error" }, "Cannot read the counts per day: " + describe(err)));
    }
  }

  function drawDaily(days) {
    if (!days.some((d) => d.total)) return [el("p", { class: "empty" }, "No decision in the last 30 days.")];
    const W = 1100, H = 160, left = 36, bottom = 22, top = 8;
    const max = Math.max(1, ...days.map((d) => d.total || ACTIONS.reduce((s, a) => s + (d[a] || 0), 0)));
    const step = (W - left) / days.length;
    const barW = Math.max(4, Math.min(28, step * 0.7));
    const scale = (H - bottom - top) / max;
    const bars = days.map((d, i) => {
      const x = left + i * step + (step - barW) / 2;
      let y = H - bottom;
      const rects = ACTIONS.filter((a) => d[a]).map((a) => {
        const h = d[a] * scale;
        y -= h;
        return svg("rect", { class: "bar bar-" + a, x, y, width: barW, height: h });
      });
      const tip = `${d.day}: ${d.total ?? 0} (` + ACTIONS.map((a) => `${d[a] || 0} ${a}`).join(", ") + ")";
      const every = Math.ceil(days.length / 10);
      const label = (days.length - 1 - i) % every === 0
        ? svg("text", { class: "axis", x: x + barW / 2, y: H - 6, "text-anchor": "middle" }, String(d.day).slice(5)) : null;
      return svg("g", { class: "day", "data-day": d.day }, svg("title", {}, tip), rects, label);
    });
    const axis = [
      svg("line", { class: "axis-line", x1: left, y1: H - bottom, x2: W, y2: H - bottom }),
      svg("text", { class: "axis", x: left - 6, y: top + 8, "text-anchor": "end" }, String(max)),
      svg("text", { class: "axis", x: left - 6, y: H - bottom, "text-anchor": "end" }, "0"),
    ];
    const chart = svg("svg", {
      class: "daily", viewBox: `0 0 ${W} ${H}`, width: "100%", role: "img",
      "aria-label": `Decisions per day, ${days.length} days, at most ${max} a day`,
    }, axis, bars);
    const legend = el("p", { class: "legend" },
      ACTIONS.map((a) => [el("span", { class: "swatch bar-" + a, "aria-hidden": "true" }), a + " "]));
    const rows = days.filter((d) => d.total).map((d) => el("tr", {}, el("th", { scope: "row" }, d.day),
      ACTIONS.map((a) => el("td", { class: "num" }, d[a] || 0)), el("td", { class: "num" }, d.total ?? 0)));
    const tableBox = el("details", {}, el("summary", {}, "Show as a table"),
      table("Decisions per day", ["Day", ...ACTIONS, "Total"], rows, "daily-table"));
    return [chart, legend, tableBox];
  }

  // --- wiring -----------------------------------------------------------------------------

  function init() {
    $("key-form").addEventListener("submit", async (event) => {
      event.preventDefault();
      const key = $("key-input").value.trim();
      const error = $("key-error");
      if (!key) return;
      $("key-submit").disabled = true;
      try {
        await useKey(key, $("key-remember").checked);
        $("key-input").value = "";
      } catch (err) {
        error.textContent = err.status === 401 || err.status === 403 ? keyMessage(err) : "Cannot check the key: " + describe(err);
        show(error, true);
      } finally {
        $("key-submit").disabled = false;
      }
    });
    $("forget-key").addEventListener("click", () => askForKey(""));

    const tabs = TABS.map((t) => $("tab-" + t));
    tabs.forEach((tab, i) => {
      tab.addEventListener("click", () => selectTab(TABS[i], false));
      tab.addEventListener("keydown", (event) => {
        const moves = { ArrowRight: 1, ArrowLeft: -1 };
        if (event.key in moves) {
          event.preventDefault();
          selectTab(TABS[(i + moves[event.key] + TABS.length) % TABS.length], true);
        }
      });
    });

    setDocuments([""]);
    $("add-document").addEventListener("click", () => addDocument("").focus());
    $("check-form").addEventListener("submit", check);
    $("logged-form").addEventListener("submit", (event) => {
      event.preventDefault();
      openLogged($("logged-select").value);
    });
    $("logged-refresh").addEventListener("click", () => loadLogged(true));

    $("bib-input").addEventListener("change", chooseBib);
    $("bib-clear").addEventListener("click", clearBib);
    $("refs-form").addEventListener("submit", submitReferences);
    $("doc-input").addEventListener("change", () => chooseDocument($("doc-input").files && $("doc-input").files[0]));
    $("doc-form").addEventListener("submit", submitDocument);
    const drop = $("doc-drop");
    drop.addEventListener("dragover", (event) => {
      event.preventDefault();
      drop.classList.add("dragging");
    });
    drop.addEventListener("dragleave", () => drop.classList.remove("dragging"));
    drop.addEventListener("drop", (event) => {
      event.preventDefault();
      drop.classList.remove("dragging");
      const files = event.dataTransfer && event.dataTransfer.files;
      if (files && files.length) chooseDocument(files[0]);
    });

    $("decisions-filter").addEventListener("submit", (event) => {
      event.preventDefault();
      offset = 0;
      loadDecisions();
    });
    for (const id of ["filter-verdict", "filter-action", "filter-policy"]) {
      $(id).addEventListener("change", () => {
        offset = 0;
        loadDecisions();
      });
    }
    $("page-prev").addEventListener("click", () => {
      offset = Math.max(0, offset - PAGE_SIZE);
      loadDecisions();
    });
    $("page-next").addEventListener("click", () => {
      offset += PAGE_SIZE;
      loadDecisions();
    });

    const key = storedKey();
    if (key) {
      useKey(key, Boolean(localStorage.getItem(KEY_NAME))).catch((err) => {
        if (err.status === 401 || err.status === 403) askForKey(keyMessage(err));
        else askForKey("Cannot check the key: " + describe(err));
      });
    } else {
      askForKey("");
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
