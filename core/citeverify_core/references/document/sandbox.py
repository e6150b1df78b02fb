"""Run a document parser in a child process, bounded in time and memory (issue 26).

A PDF is a program for a reader: a hostile one can ask for gigabytes (a FlateDecode bomb), loop
the parser (a cycle pdfminer does not catch) or simply be huge. The parsing therefore happens in
a child Python process that limits its own address space (``RLIMIT_AS``) and CPU time
(``RLIMIT_CPU``) before it reads the document, while the caller waits with a wall-clock timeout
and kills the child when it expires. Whatever the child does, the caller gets a result or a
:class:`~citeverify_core.errors.DocumentError` and its own memory is untouched.

Why a fresh interpreter (``subprocess``) and not ``multiprocessing``: it works the same from the
service's threads, from a batch worker (a daemonic pool process may not start
``multiprocessing`` children), and from the CLI, and it shares no lock or state with the caller.
Its price is the start-up (Python and pdfminer's imports, about 0.3 s). To keep that off the
critical path, each finished run leaves one *warm spare*: a child that has already imported the
parser and waits on its stdin. The next document goes to the spare (a service or a batch pays the
start-up once). A spare exits by itself when its parent goes away (its stdin closes) and is
killed at interpreter exit.

Protocol: the parent writes one JSON line (``{"target": "module:function", "options": {...},
"memory": bytes, "cpu": seconds}``) and then the document's bytes, and closes stdin; the child
answers one JSON document on stdout: ``{"ok": result}`` or ``{"error": [code, message]}``.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import json
import os
import signal
import subprocess
import sys
import threading
from typing import Any

from citeverify_core.errors import DocumentError

__all__ = ["DEFAULT_MEMORY_BYTES", "DEFAULT_TIMEOUT_SECONDS", "Cancel", "run_isolated"]

#: The address space a parsing child may use. A 40-page paper needs about 60 MB.
DEFAULT_MEMORY_BYTES = 1024 * 1024 * 1024
#: The wall-clock time a document may take to parse (a 40-page paper takes under a second).
DEFAULT_TIMEOUT_SECONDS = 60.0

_CHILD_CODE = "from citeverify_core.references.document.sandbox import _child_main; _child_main()"

_lock = threading.Lock()
#: Warm spares by the modules they preloaded, with the pid of the process that started them.
_spares: dict[tuple[str, ...], subprocess.Popen[bytes]] = {}
_owner = os.getpid()
#: Children running at once: each may use DEFAULT_MEMORY_BYTES.
_slots = threading.BoundedSemaphore(max(2, os.cpu_count() or 1))
#: True in a child: a target that would start a child of its own (a PDF read inside a whole
#: document's reading) runs in place, already bounded.
_inside = False


class Cancel:
    """Gives up a :func:`run_isolated` call from another thread: its child is killed at once.

    A caller that stops waiting (a service's timeout, a client gone, a shutdown) calls it; the
    child stops using memory and CPU immediately, and the call raises
    ``DocumentError("timeout")`` in its own thread. Calling it before the child started kills
    the child as soon as it starts; calling it after the call ended does nothing.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._child: subprocess.Popen[bytes] | None = None
        self.cancelled = False

    def __call__(self) -> None:
        """Kill the child (or the next one attached)."""
        with self._lock:
            self.cancelled = True
            child = self._child
        if child is not None and child.poll() is None:
            with contextlib.suppress(OSError):
                child.kill()

    def forget(self) -> None:
        """Drop the child (once the call ended): a Popen keeps what was written to it."""
        with self._lock:
            self._child = None

    def _attach(self, child: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._child = child
            cancelled = self.cancelled
        if cancelled:
            with contextlib.suppress(OSError):
                child.kill()


def run_isolated(
    target: str,
    data: bytes,
    *,
    options: dict[str, Any] | None = None,
    preload: tuple[str, ...] = (),
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    memory: int | None = DEFAULT_MEMORY_BYTES,
    cancel: Cancel | None = None,
    fallback: bool = True,
) -> Any:
    """``target(data, options)`` run in a child process; its JSON-able result.

    Args:
        target: ``"package.module:function"``; the function takes ``(data, options)``, returns
            JSON-able data and raises :class:`DocumentError` for a document it refuses. In the
            child, ``options["sandboxed"]`` is true.
        data: The document's bytes.
        options: JSON-able options passed on.
        preload: Modules a warm spare imports while it waits (the target's heavy imports).
        timeout: Wall-clock seconds before the child is killed (``DocumentError("timeout")``).
        memory: The child's address-space limit in bytes (``None``: no limit). Exceeding it
            gives ``DocumentError("too-large")``.
        cancel: A :class:`Cancel` another thread may call to give the reading up at once.
        fallback: When no child can be started, read here (bounded by the target's own caps
            only). A service passes False: it answers that it cannot read now instead.

    Raises:
        DocumentError: What the target raised, ``timeout`` (also when cancelled),
            ``too-large``, ``corrupt`` when the child died without an answer, or ``unavailable``
            when no child can be started and ``fallback`` is False.
    """
    if _inside:  # already in a bounded child: no grandchild with a second copy of the data
        return _in_process(target, data, options or {})
    request = json.dumps(
        {
            "target": target,
            "options": options or {},
            "memory": memory,
            "cpu": int(timeout) + 2,
        }
    ).encode()
    with _slots:
        spare = _take_spare(preload)
        try:
            child = spare or _start(preload)
        except OSError:
            # No child can be started (no interpreter at sys.executable, no processes left):
            # read here, bounded by the target's own page and character caps only.
            if not fallback:
                msg = "no reader process can be started now; try again later"
                raise DocumentError(msg, code="unavailable") from None
            return _in_process(target, data, options or {})
        message = request + b"\n" + data
        if cancel is not None:
            cancel._attach(child)
        out, returncode = _run_child(child, message, timeout)
        if not out and spare is not None and not (cancel is not None and cancel.cancelled):
            # A spare that died while it waited (killed by someone, out of memory): not this
            # document's fault. Once more with a fresh child.
            child = _start(preload)
            if cancel is not None:
                cancel._attach(child)
            out, returncode = _run_child(child, message, timeout)
        del message
    _keep_spare(preload)
    if cancel is not None and cancel.cancelled:
        raise DocumentError("reading was given up and stopped", code="timeout")
    return _answer(out, returncode)


def _in_process(target: str, data: bytes, options: dict[str, Any]) -> Any:
    module, _, function = target.partition(":")
    return getattr(importlib.import_module(module), function)(data, options)


def _run_child(
    child: subprocess.Popen[bytes], message: bytes, timeout: float
) -> tuple[bytes, int | None]:
    """Send ``message`` to ``child``, wait for its answer; kill it when ``timeout`` expires."""
    try:
        out, _ = child.communicate(message, timeout=timeout)
    except subprocess.TimeoutExpired:
        msg = f"reading took longer than {timeout:g} s and was stopped"
        raise DocumentError(msg, code="timeout") from None
    except OSError:  # the child died before reading its input (a broken pipe)
        out = b""
    finally:
        # communicate() keeps its input on the Popen (CPython's _input): the whole document,
        # for as long as anything holds the child. Dropped once the child has ended.
        _reap(child)
        with contextlib.suppress(AttributeError):
            child._input = None  # type: ignore[attr-defined]
    return out, child.returncode


def _answer(out: bytes, returncode: int | None) -> Any:
    """The child's result, or the DocumentError it reported or its death means."""
    try:
        answer = json.loads(out) if out else None
    except ValueError:
        answer = None
    if isinstance(answer, dict) and "ok" in answer:
        return answer["ok"]
    if isinstance(answer, dict) and isinstance(answer.get("error"), list):
        code, message = answer["error"]
        raise DocumentError(str(message), code=str(code))
    if returncode is not None and -returncode == getattr(signal, "SIGXCPU", -1):
        msg = "reading used more CPU time than allowed and was stopped"
        raise DocumentError(msg, code="timeout")
    if returncode is not None and -returncode in (signal.SIGKILL, signal.SIGABRT, signal.SIGSEGV):
        # The kernel's OOM killer, or an allocation failure the interpreter could not survive.
        msg = "reading needed more memory than allowed and was stopped"
        raise DocumentError(msg, code="too-large")
    msg = f"the reader stopped without an answer (exit status {returncode})"
    raise DocumentError(msg, code="corrupt")


def _start(preload: tuple[str, ...]) -> subprocess.Popen[bytes]:
    """A new child that imports ``preload`` and then waits for its request."""
    env = dict(os.environ)
    # The child must import what this process imports (a source checkout, a PYTHONPATH):
    # its sys.path is ours. -P keeps the working directory off it (a stray docx.py there).
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))
    env["CITEVERIFY_SANDBOX_PRELOAD"] = ",".join(preload)
    return subprocess.Popen(
        [sys.executable, "-P", "-s", "-c", _CHILD_CODE],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        close_fds=True,
    )


def _take_spare(preload: tuple[str, ...]) -> subprocess.Popen[bytes] | None:
    with _lock:
        _forget_inherited()
        child = _spares.pop(preload, None)
    if child is not None and child.poll() is not None:  # it died while waiting
        _reap(child)
        return None
    return child


def _keep_spare(preload: tuple[str, ...]) -> None:
    """Start the next document's child now, so that its imports run while the caller works."""
    with _lock:
        _forget_inherited()
        if preload in _spares:
            return
        try:
            _spares[preload] = _start(preload)
        except OSError:  # no more processes: the next run starts its own
            return


def _forget_inherited() -> None:
    """A forked process does not own its parent's spares (it must not write to them)."""
    global _owner  # noqa: PLW0603 - per-process state
    if _owner != os.getpid():
        _spares.clear()
        _owner = os.getpid()


def _reap(child: subprocess.Popen[bytes]) -> None:
    """Kill ``child`` if it still runs and collect its exit status (no zombie left)."""
    if child.poll() is None:
        with contextlib.suppress(OSError):
            child.kill()
    for stream in (child.stdin, child.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        child.wait(timeout=5)


@atexit.register
def _stop_spares() -> None:
    with _lock:
        if _owner != os.getpid():
            return
        spares = list(_spares.values())
        _spares.clear()
    for child in spares:
        _reap(child)


os.register_at_fork(after_in_child=_forget_inherited)


def _child_main() -> None:  # pragma: no cover - runs in the child (tests exercise it there)
    """The child: preload, read the request, limit itself, run the target, answer."""
    # Ctrl-C in a terminal reaches the whole process group: the parent handles it (and kills
    # this child); a waiting spare must not print a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for module in filter(None, os.environ.get("CITEVERIFY_SANDBOX_PRELOAD", "").split(",")):
        with contextlib.suppress(ImportError):
            importlib.import_module(module)
    stdin = sys.stdin.buffer
    header = stdin.readline()
    if not header:  # the parent went away before sending work (a spare at exit)
        return
    request = json.loads(header)
    _limit(request.get("memory"), request.get("cpu"))
    global _inside  # noqa: PLW0603 - this process is the bounded child from now on
    _inside = True
    try:
        data = stdin.read()
        module, _, function = request["target"].partition(":")
        # The target may do what only a throwaway process should (pdfminer's loggers quieted).
        options = {**request["options"], "sandboxed": True}
        result = getattr(importlib.import_module(module), function)(data, options)
        answer: dict[str, Any] = {"ok": result}
    except DocumentError as exc:
        answer = {"error": [exc.code, str(exc)]}
    except MemoryError:
        answer = {"error": ["too-large", "reading needed more memory than allowed"]}
    except RecursionError:
        answer = {"error": ["corrupt", "the document nests objects too deeply"]}
    except Exception as exc:  # the child's one boundary: any failure becomes an answer
        answer = {"error": ["corrupt", f"not readable ({type(exc).__name__})"]}
    out = json.dumps(answer).encode()
    sys.stdout.buffer.write(out)
    sys.stdout.buffer.flush()


def _limit(memory: int | None, cpu: int | None) -> None:  # pragma: no cover - in the child
    """Limit this process's address space and CPU seconds (where the OS has rlimits)."""
    try:
        import resource  # noqa: PLC0415 - POSIX only
    except ImportError:
        return
    limits = []
    if memory:
        limits.append((resource.RLIMIT_AS, memory))
    if cpu:
        limits.append((resource.RLIMIT_CPU, cpu))
    for kind, wanted in limits:
        _, hard = resource.getrlimit(kind)
        soft = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(kind, (soft, hard))
