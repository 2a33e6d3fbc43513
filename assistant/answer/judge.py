"""The model's own judgement of whether a paper answers a "which paper …?" question.

Asked "which paper uses GFlowNets for molecule design?", the retrieved paper about GFlowNets
on synthetic tasks is close in words and in meaning, and no measure of overlap tells it from a
paraphrase of a real match. The language model can: shown the paper's title and abstract and
the question (``prompts/judge.md``), the probability it gives to "yes" as its first token is
high for the paper asked about and lower for the nearest one (``benchmarks/judge_probe.py``
measures it; docs/quality.md has the figures). The threshold is chosen on the dev split and
kept with the support model (``assistant/data/support.json``).

When the first answer is unsure (P(yes) inside ``Calibration.judge_band``, chosen on dev), the
model is asked again in other words (``prompts/judge_second.md``, with a system turn) and the
two are averaged: the two wordings err on different papers, and on dev the pair separates
the paper asked about from the nearest one better than either alone (docs/quality.md).

One short prompt and one token: about as long as reading the answer prompt, and it replaces
writing the answer for these questions (the answer is then the paper and its abstract's own
sentence, ``CitationChecker.pointer``). A model that cannot give token probabilities (a fake,
or a server without ``logprobs``) has no judge, and the answer is written and checked as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from assistant.answer.prompts import load_prompt
from assistant.models.yes_no import share_of_yes
from assistant.types import Source

if TYPE_CHECKING:
    from langchain_core.language_models.chat_models import BaseChatModel


class Judge(Protocol):
    """P(yes) that ``source`` answers ``question``, asked in ``wording`` (a prompt's name:
    "judge"; "judge_verdict": whether the abstract says yes or no to it; "judge_list":
    whether the paper belongs in a list's answer); None when the model cannot say how sure
    it is."""

    def __call__(self, question: str, source: Source, wording: str = "judge") -> float | None:
        ...


_ABSTRACT_CHARS = 1200  # the probe's cut: the abstract's first 1,200 characters


def prompt(question: str, source: Source, second: bool = False,
           wording: str = "judge") -> list[BaseMessage]:
    """The judge's message: the paper, its passages as the caller chose them (its whole
    abstract, or the excerpt shown for the question), the question, in ``wording``; the
    ``second`` asking words it otherwise, after a system turn."""
    body = (" ".join(source.passages) or source.text)[:_ABSTRACT_CHARS]
    name = "judge_second" if second else wording
    text = load_prompt(name).format(title=source.title, abstract=body, question=question)
    if not second:
        return [HumanMessage(text)]
    return [SystemMessage(load_prompt("judge_second_system").format()), HumanMessage(text)]


def _twice(ask: Callable[[list[BaseMessage]], float | None],
           band: tuple[float, float]) -> Judge:
    """A judge that asks again, in other words, when the first P(yes) is inside ``band``
    (from, below), and gives the mean of the two; another ``wording`` is asked once."""
    def judge(question: str, source: Source, wording: str = "judge") -> float | None:
        first = ask(prompt(question, source, wording=wording))
        if first is None or wording != "judge" or not band[0] <= first < band[1]:
            return first
        again = ask(prompt(question, source, second=True))
        return first if again is None else (first + again) / 2
    return judge


def _server_yes(llm: Any, messages: list[BaseMessage]) -> tuple[float | None, bool]:
    """(P(yes), whether the server gave ``logprobs`` at all) from an OpenAI-compatible server:
    a reply whose top tokens hold neither yes nor no says nothing of this question only."""
    reply = llm.bind(logprobs=True, top_logprobs=10, max_tokens=1, temperature=0).invoke(messages)
    content = ((reply.response_metadata or {}).get("logprobs") or {}).get("content") or []
    if not content:
        return None, False
    top = [(t["token"], float(t["logprob"])) for t in content[0].get("top_logprobs") or []]
    return share_of_yes(top), True


def build_judge(llm: BaseChatModel, band: tuple[float, float] = (0.0, 0.0)) -> Judge | None:
    """A judge on ``llm``, or None when the model cannot say how sure it is; a first P(yes)
    inside ``band`` is asked again (an empty band: never)."""
    own = getattr(llm, "yes_probability", None)
    if callable(own):
        return _twice(own, band)  # ``sure`` unset: it always can
    if hasattr(llm, "openai_api_base"):  # ChatOpenAI and our ServerChatModel
        unable: list[bool] = []

        def server_yes(messages: list[BaseMessage]) -> float | None:
            if unable:
                return None
            try:
                value, gives = _server_yes(llm, messages)
            except Exception:  # noqa: BLE001  (a server that refuses logprobs: write instead)
                value, gives = None, False
            if not gives:
                unable.append(True)  # not asked again: the answer is written and checked
            return value
        judge = _twice(server_yes, band)
        judge.sure = lambda: not unable  # type: ignore[attr-defined]  # still gives P(yes)
        return judge
    return None
