"""The model's own judgement of whether a paper answers a "which paper …?" question.

Asked "which paper uses GFlowNets for molecule design?", the retrieved paper about GFlowNets
on synthetic tasks is close in words and in meaning, and no measure of overlap tells it from a
paraphrase of a real match. The language model can: shown the paper's title and abstract and
the question (``prompts/judge.md``), the probability it gives to "yes" as its first token is
high for the paper asked about and lower for the nearest one (``benchmarks/judge_probe.py``
measures it; docs/quality.md has the figures). The threshold is chosen on the dev split and
kept with the support model (``assistant/data/support.json``).

One short prompt and one token: about as long as reading the answer prompt, and it replaces
writing the answer for these questions (the answer is then the paper and its abstract's own
sentence, ``CitationChecker.pointer``). A model that cannot give token probabilities (a fake,
or a server without ``logprobs``) has no judge, and the answer is written and checked as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage, HumanMessage

from assistant.answer.prompts import load_prompt
from assistant.models.yes_no import share_of_yes
from assistant.types import Source

if TYPE_CHECKING:
    from langchain_core.language_models.chat_models import BaseChatModel

Judge = Callable[[str, Source], "float | None"]

_ABSTRACT_CHARS = 1200  # the probe's cut: the abstract's first 1,200 characters


def prompt(question: str, source: Source) -> list[BaseMessage]:
    """The judge's one message: the paper, its passages as the caller chose them (its whole
    abstract, or the excerpt shown for the question), the question."""
    body = (" ".join(source.passages) or source.text)[:_ABSTRACT_CHARS]
    text = load_prompt("judge").format(title=source.title, abstract=body, question=question)
    return [HumanMessage(text)]


def _server_yes(llm: Any, messages: list[BaseMessage]) -> float | None:
    """From an OpenAI-compatible server's ``logprobs`` (None when it gives none)."""
    reply = llm.bind(logprobs=True, top_logprobs=10, max_tokens=1, temperature=0).invoke(messages)
    content = ((reply.response_metadata or {}).get("logprobs") or {}).get("content") or []
    if not content:
        return None
    top = [(t["token"], float(t["logprob"])) for t in content[0].get("top_logprobs") or []]
    return share_of_yes(top)


def build_judge(llm: BaseChatModel) -> Judge | None:
    """A judge on ``llm``, or None when the model cannot say how sure it is."""
    own = getattr(llm, "yes_probability", None)
    if callable(own):
        def judge(question: str, source: Source) -> float | None:
            return own(prompt(question, source))
        return judge
    if hasattr(llm, "openai_api_base"):  # ChatOpenAI and our ServerChatModel
        unable: list[bool] = []

        def server_judge(question: str, source: Source) -> float | None:
            if unable:
                return None
            try:
                value = _server_yes(llm, prompt(question, source))
            except Exception:  # noqa: BLE001  (a server that refuses logprobs: write instead)
                value = None
            if value is None:
                unable.append(True)  # not asked again: the answer is written and checked
            return value
        return server_judge
    return None
