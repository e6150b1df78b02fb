"""An output parser for chains that end at the model: ``prompt | llm | CiteVerifyOutputParser``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.output_parsers import BaseOutputParser
from langchain_core.runnables import Runnable, RunnableConfig
from pydantic import (
    ConfigDict,
    Field,
    PrivateAttr,
    SkipValidation,
    field_serializer,
    field_validator,
    model_validator,
)

from citeverify_core import CitationVerifier, PolicyConfig, VerificationResult
from citeverify_core.engine import blocked_answer, check_blocked_response, shown_result
from citeverify_core.policy import collect_policy_options
from langchain_citeverify._common import (
    AdapterModel,
    CitationBlockedError,
    answer_text,
    document_texts,
    held_then,
    masked_policy,
    semantic_scorer,
    unobserved,
)

__all__ = ["CiteVerifyOutputParser"]

#: ``config={"configurable": {CONTEXT_KEY: docs}}`` passes the documents at call time.
CONTEXT_KEY = "context_documents"

#: What :meth:`CiteVerifyOutputParser.get_format_instructions` tells the model: the answer is
#: checked claim by claim against the sources, so it should say only what they say.
FORMAT_INSTRUCTIONS = (
    "Answer only from the sources you are given. Every sentence must be supported by them: "
    "do not add facts, names, numbers or dates that the sources do not contain, and keep "
    "numbers, dates and quotations exactly as the sources write them. Quote with double quotes "
    "only text that appears word for word in a source. After a sentence, cite the source it "
    "comes from in square brackets, like [1] or [hours.md]. If the sources do not contain the "
    "answer, say that they do not."
)


class CiteVerifyOutputParser(AdapterModel, BaseOutputParser[VerificationResult]):
    """Parse a model's text into a :class:`citeverify_core.VerificationResult`.

    The documents are bound at construction (``documents=[...]``, Documents or strings) or given
    per call with ``config={"configurable": {"context_documents": [...]}}``. A blocked answer
    raises :class:`CitationBlockedError`, an ``OutputParserException``; with
    ``blocked_response=`` (a string, or a callable given the result) the parser returns the
    result instead, its ``answer`` that text (``verdict`` and ``action`` stay "block"). Under
    ``block`` and ``redact`` the result (and the error) carries nothing of what was blocked or
    removed (claim texts withheld, spans and scores kept); ``include_original=True`` sends the
    original along (``original_answer``, the claims' texts). ``embeddings`` (a
    LangChain ``Embeddings``) or ``semantic_scorer`` (a callable ``(claim, passages) -> score``)
    turn the semantic tier on, as for :class:`~langchain_citeverify.CiteVerifyGuard`.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    policy: PolicyConfig = Field(default_factory=PolicyConfig)
    documents: list[str] = Field(default_factory=list)
    include_original: bool = False
    embeddings: SkipValidation[Embeddings | None] = None
    semantic_scorer: SkipValidation[Callable[..., Any] | None] = None
    blocked_response: SkipValidation[str | Callable[[VerificationResult], str] | None] = None

    _verifier: CitationVerifier = PrivateAttr()

    @field_serializer("policy")
    def _dump_policy(self, policy: PolicyConfig, info: Any) -> dict[str, Any]:
        """``model_dump`` writes the credentials masked (see ``masked_policy``)."""
        return masked_policy(policy, info)

    @model_validator(mode="before")
    @classmethod
    def _collect_policy(cls, data: Any) -> Any:
        """Policy keywords (``unverified_action="block"``, ``min_groundedness=0.7``): policy."""
        if not isinstance(data, dict):
            return data
        return collect_policy_options(data, cls.model_fields)

    @field_validator("documents", mode="before")
    @classmethod
    def _document_texts(cls, value: Any) -> list[str]:
        return document_texts(value, where="documents")

    def model_post_init(self, context: Any, /) -> None:
        """Build the verifier.

        Raises:
            InputError: ``blocked_response`` is neither a string nor a callable.
        """
        check_blocked_response(self.blocked_response)
        self._verifier = CitationVerifier(
            self.policy,
            include_original=self.include_original,
            semantic=semantic_scorer(self.embeddings, self.semantic_scorer),
        )

    @property
    def _type(self) -> str:
        return "citeverify"

    def get_format_instructions(self) -> str:
        """What to tell the model so that its answer passes: answer from the sources, cite them.

        Put it in the prompt (``prompt.partial(format_instructions=...)``).
        """
        return FORMAT_INSTRUCTIONS

    def parse(self, text: str) -> VerificationResult:
        """Verify ``text`` against the bound documents."""
        return self._check(self._verifier.verify(text, self.documents))

    async def aparse(self, text: str) -> VerificationResult:
        """Async :meth:`parse`."""
        return self._check(await self._verifier.averify(text, self.documents))

    def invoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> VerificationResult:
        """Verify a model output (string or message); documents may come from ``configurable``."""
        docs = self._documents(config)
        if unobserved(config):  # no handler would see the run: the core directly
            return self._check(self._verifier.verify(answer_text(input, where="input"), docs))
        return self._call_with_config(
            lambda x: self._check(self._verifier.verify(answer_text(x, where="input"), docs)),
            input,
            config,
            run_type="parser",
        )

    async def ainvoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> VerificationResult:
        """Async :meth:`invoke`."""
        docs = self._documents(config)

        async def run(x: Any) -> VerificationResult:
            return self._check(await self._verifier.averify(answer_text(x, where="input"), docs))

        if unobserved(config):
            return await run(input)
        return await self._acall_with_config(run, input, config, run_type="parser")

    def around(self, runnable: Runnable[Any, Any]) -> Runnable[Any, VerificationResult]:
        """``runnable | self`` as one step whose streams show only the checked result.

        In ``prompt | llm | parser`` the model streams its tokens before the parser sees the
        answer: ``astream_events`` carries them (and the parser's input), and a LangGraph node
        that runs the chain shows them in ``stream_mode="messages"``. Under ``redact`` and
        ``block``, ``parser.around(prompt | llm)`` runs the chain with every stream held
        (tracers such as LangSmith still see it) and then parses; under ``flag`` it is
        ``runnable | self``. The documents come as for :meth:`invoke`.
        """
        if self._verifier.policy.output_action.unverified_action == "flag":
            return runnable | self

        def check(output: Any, config: RunnableConfig) -> VerificationResult:
            text = answer_text(output, where="input")
            return self._check(self._verifier.verify(text, self._documents(config)))

        async def acheck(output: Any, config: RunnableConfig) -> VerificationResult:
            text = answer_text(output, where="input")
            return self._check(await self._verifier.averify(text, self._documents(config)))

        return held_then(
            runnable, check, acheck, name=f"CiteVerifyOutputParser.around({runnable.get_name()})"
        )

    def _documents(self, config: RunnableConfig | None) -> list[str]:
        configurable = (config or {}).get("configurable") or {}
        if CONTEXT_KEY in configurable:
            return document_texts(configurable[CONTEXT_KEY], where=CONTEXT_KEY)
        return self.documents

    def _check(self, result: VerificationResult) -> VerificationResult:
        """The result as shown (:func:`~citeverify_core.engine.shown_result`), or the raise."""
        if result.verdict != "block":
            return shown_result(result, include_original=self.include_original)
        if self.blocked_response is None:
            raise CitationBlockedError(result, include_original=self.include_original)
        text = blocked_answer(result, self.blocked_response)
        return shown_result(result, replacement=text, include_original=self.include_original)
