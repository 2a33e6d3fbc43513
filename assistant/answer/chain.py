"""The chain: sources -> prompt -> model -> checked, cited sentences -> Answer."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from assistant.answer.asked import BARE_VERDICT
from assistant.answer.citations import CitationChecker, Evidence, Verdict
from assistant.answer.evidence import (
    AnswerConfig,
    asked_about,
    called,
    covered,
    focus,
    format_sources,
    judged_text,
    named_paper,
    speaks_of,
    to_judge,
    unheld,
)
from assistant.answer.excerpts import EmbedMany, remembered, select_excerpts, without_orders
from assistant.answer.intent import (
    asking,
    asks_for_papers,
    asks_for_several,
    asks_whether,
    asks_yes_or_no,
    identifies,
    ranks,
)
from assistant.answer.polarity import CONTRADICTS, contradicted
from assistant.answer.prompts import load_prompt
from assistant.answer.quotes import each_paper, quote_under
from assistant.answer.support import backing as supporting
from assistant.answer.support import named_each
from assistant.answer.writing import UNNAMED, Render, Writer
from assistant.ingest.tokens import count_tokens
from assistant.types import Answer, Dropped, Source, Timings, Usage

if TYPE_CHECKING:
    import tiktoken
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import BaseMessage

    from assistant.answer.judge import Judge

ABSTAIN_TEXT = "The indexed papers do not cover this question."


def generate(
    question: str,
    sources: Sequence[Source],
    *,
    llm: BaseChatModel,
    embed: Callable[[str], Sequence[float]],
    vectors: Callable[[Source, Sequence[str]], Sequence[Sequence[float]]],
    embed_many: EmbedMany,
    abstract: Callable[[str], str | None],
    known: Callable[[str], bool] | None = None,
    defines: Callable[[str], set[str]] | None = None,
    judge: Judge | None = None,
    enc: tiktoken.Encoding,
    config: AnswerConfig,
    model: str = "",
    warnings: Sequence[str] = (),
    started: float | None = None,
    retrieve_seconds: float = 0.0,
    shown: str | None = None,
) -> Iterator[str | Answer]:
    """Stream checked sentences of the answer as they complete, then the final Answer;
    ``shown``: the question as the model reads it, when not ``question`` (which is what is
    checked): with what it says to leave out."""
    embed_many = remembered(embed_many)  # the excerpts and the quote read the same sentences
    reply = _Reply(question, tuple(sources), config, abstract, embed_many, tuple(warnings),
                   model, started if started is not None else time.perf_counter(),
                   retrieve_seconds, judge)
    judging = judge is not None and config.judge_threshold > 0  # else only the verdict's
    backing, judged_only = _gate(question, sources, config, judged=judging)
    if not backing or not covered(question, backing, config) or unheld(question, sources):
        yield from reply.abstain()
        return
    evidence = _evidence(question, backing, config=config, abstract=abstract,
                         embed_many=embed_many, vectors=vectors, enc=enc, defines=defines)
    reply.defines = defines
    reply.shown(evidence, CitationChecker(
        evidence, embed, question, several=asks_for_several(question),
        papers=asks_for_papers(question), abstract=abstract, known=known,
    ))
    if judging and identifies(question) and (yield from reply.judged(judged_only)):
        return
    if asks_for_several(question) and not reply.listed():
        yield from reply.abstain()
        return
    yield from reply.written(llm, shown or question)


@dataclass
class _Reply:
    """One answer being made: what it was asked and shown, and the ways it can end."""

    question: str
    sources: tuple[Source, ...]
    config: AnswerConfig
    abstract: Callable[[str], str | None]
    embed_many: EmbedMany
    warnings: tuple[str, ...]
    model: str
    started: float
    retrieve_seconds: float
    judge: Judge | None = None
    dropped: list[Dropped] = field(default_factory=list)
    evidence: Sequence[Evidence] = ()
    checker: CitationChecker | None = None
    render: Render | None = None
    named: frozenset[str] = frozenset()  # the papers a comparison names
    defines: Callable[[str], set[str]] | None = None  # what the index defines an acronym as

    def shown(self, evidence: Sequence[Evidence], checker: CitationChecker) -> None:
        self.evidence, self.checker = evidence, checker
        self.render = Render({e.number: e for e in evidence})
        self.named = frozenset(named_each(self.question, [e.source for e in evidence]))

    def judged(self, judged_only: bool) -> Generator[str | Answer, None, bool]:
        """"Which paper …?": the model judges each best-supported paper against the question,
        and the first it accepts is the answer, with its abstract's own sentence; a paper that
        is merely the nearest one is not (assistant/answer/judge.py). Whether the judge
        decided the answer (else the model writes it)."""
        assert self.judge is not None
        item, decided = _judge_papers(self.question, self.evidence, self.judge, self.config,
                                      self.abstract, judged_only, self.dropped)
        if item is not None:
            lead = "Yes: " if asks_whether(self.question) else ""
            yield from self.the_paper(item, lead, None, Usage())
        elif decided:
            yield from self.abstain()
        return item is not None or decided

    def listed(self) -> bool:
        """"Which papers …?": whether the model judges one of the best-supported papers an
        answer, not so for a near miss ("Which papers apply GRPO to speech models?"); yes
        without a judge or a fitted threshold, or when the question calls papers by name."""
        config = self.config
        if not self.judge or config.list_threshold <= 0 or called(self.question, self.evidence):
            return True
        refused: list[Dropped] = []
        item, decided = _judge_papers(self.question, self.evidence, self.judge, replace(
            config, judge_threshold=config.list_threshold, judge_papers=config.list_papers,
            judge_within=0.0), self.abstract, False, refused, "judge_list")
        if item is None and decided:
            self.dropped.extend(refused)
        return item is not None or not decided

    def written(self, llm: BaseChatModel, asked: str) -> Iterator[str | Answer]:
        """The answer the model writes from the sources shown, ``asked`` the question as it
        reads it, each sentence checked as it completes; when none is kept, the ways out
        (``one_by_one``, ``instead``)."""
        assert self.checker is not None and self.render is not None
        checks = (self.judge is not None and self.config.polarity_threshold > 0
                  and getattr(self.judge, "sure", lambda: True)())  # a server without logprobs
        writer = Writer(self.checker, self.render, self.dropped,
                        hold_verdict=checks and asks_yes_or_no(self.question))
        yield from writer.stream(llm, _messages(load_prompt("answer").format(
            sources=format_sources(self.evidence), question=asked)), self.started)
        yield from writer.release(self.contradicted(writer.opening), self.started)
        each = called(self.question, self.evidence)
        if (not writer.kept and not writer.refused and len(each) > 1
                and not ranks(self.question) and not asks_yes_or_no(self.question)):
            writer = yield from self.one_by_one(llm, asked, each, writer)
        if writer.refused or not writer.kept:
            yield from self.instead(writer)
            return
        text = yield from self.quoted_under("".join(writer.kept))
        yield self.finish(text.strip(), False, writer.first_token, writer.usage)

    def one_by_one(self, llm: BaseChatModel, asked: str, each: Sequence[Evidence],
                   first: Writer) -> Generator[str, None, Writer]:
        """A comparison whose every sentence was dropped (the model said of both papers what
        one of them does: "Both Value Matching and MindPilot use EEG signals"): each paper it
        names is asked about alone, shown only its own source, and checked as before. Not for
        a yes/no question ("Has GlowQ been compared with Qflex?"), which is about the two
        together, nor one asking which is more of something (``intent.ranks``)."""
        assert self.checker is not None and self.render is not None
        writer, usage = Writer(self.checker, self.render, self.dropped), first.usage
        for item in each:
            writer.next_part()
            text = load_prompt("answer_each").format(
                sources=format_sources([item]), question=asked,
                paper=self.checker.short_label(item), number=str(item.number))
            yield from writer.stream(llm, _messages(text), self.started)
            usage = Usage(usage.prompt_tokens + writer.usage.prompt_tokens,
                          usage.completion_tokens + writer.usage.completion_tokens)
        writer.refused, writer.usage, writer.first_token = False, usage, first.first_token
        return writer

    def contradicted(self, opening: Verdict | None) -> Dropped | None:
        """Why an answer opening with a yes or a no is dropped: the model, reading the cited
        abstract again, gives the other (assistant/answer/polarity.py); else None."""
        if opening is None or self.judge is None or self.render is None or not opening.numbers:
            return None
        item = self.render.evidence[opening.numbers[0]]
        return contradicted(asking(self.question), opening.sentence, self.judge,
                            judged_text(item, self.config, self.abstract),
                            self.config.polarity_threshold)

    def finish(self, text: str, abstained: bool, first: float | None, usage: Usage) -> Answer:
        render = None if abstained else self.render
        return Answer(
            question=self.question, text=text,
            citations=render.citations() if render else (), sources=self.sources,
            abstained=abstained, dropped=tuple(self.dropped), warnings=self.warnings,
            timings=Timings(round(self.retrieve_seconds, 3), first,
                            round(time.perf_counter() - self.started, 3)),
            usage=usage, model=self.model,
        )

    def abstain(self, first: float | None = None,
                usage: Usage = Usage()) -> Iterator[str | Answer]:
        yield ABSTAIN_TEXT
        yield self.finish(ABSTAIN_TEXT, True, first, usage)

    def quoted_under(self, said: str, rare: bool = False,
                     how: bool = False) -> Generator[str, None, str]:
        """Stream the quote under the answer ``said`` (already shown); the whole text."""
        checker, render, config = self.checker, self.render, self.config
        assert checker is not None and render is not None
        quote = (each_paper(checker, render, said, config) if asks_for_several(self.question)
                 else quote_under(self.question, render, said, self.abstract, self.embed_many,
                                  config, rare, how))
        # "Compare SAFER and RS-GRPO.": a paper the question names that the answer left out
        left_out = [e.number for e in self.evidence
                    if e.source.paper_id in self.named and e.number not in render.display]
        if left_out:
            quote = "\n".join(filter(None, [
                quote, each_paper(checker, render, said, config, left_out)]))
        if quote:
            yield "\n" + quote
        return said + ("\n" + quote if quote else "")

    def the_paper(self, item: Evidence, lead: str, first: float | None,
                  usage: Usage) -> Iterator[str | Answer]:
        """The answer that is one paper: its name and its own sentence, then the quote."""
        assert self.checker is not None and self.render is not None
        piece = self.render.sentence(replace(self.checker.pointer([item], lead), pointer=False))
        first = first if first is not None else round(time.perf_counter() - self.started, 3)
        yield piece
        text = yield from self.quoted_under(piece, how=True)
        yield self.finish(text, False, first, usage)

    def the_abstract(self, item: Evidence, first: float | None,
                     usage: Usage) -> Iterator[str | Answer]:
        """No verdict, and the abstract's sentences closest to the question, quoted."""
        assert self.checker is not None and self.render is not None
        piece = self.render.sentence(Verdict(
            f"The abstract of {self.checker.short_label(item)} does not say yes or no in so "
            "many words", (item.number,), (item.passages[0],)))
        first = first if first is not None else round(time.perf_counter() - self.started, 3)
        yield piece
        text = yield from self.quoted_under(piece, rare=True)
        yield self.finish(text, False, first, usage)

    def says_either(self, item: Evidence) -> bool:
        """Whether the abstract answers the yes/no question, yes or no, so its sentences may
        stand for the answer ("Does UEC need the models retrained?": "… in a post-hoc
        manner"): it holds a fifth of the question's words, and the model judges so (without
        a judge or a fitted threshold, it does). Not for a near miss ("Has Value Matching been
        used for protein design?"), whose closest sentences would only look like an answer."""
        assert self.checker is not None
        share = speaks_of(self.question, self.checker.short_label(item),
                          self.abstract(item.source.paper_id) or item.text)
        if share < self.config.verdict_words:
            self.dropped.append(Dropped(item.source.title, (
                f"its abstract holds {share:.0%} of the question's words")))
            return False
        threshold = self.config.verdict_threshold
        if self.judge is None or threshold <= 0:
            return True
        p_yes = self.judge(self.question, judged_text(item, self.config, self.abstract),
                           "judge_verdict")
        if p_yes is None or p_yes >= threshold:
            return True
        self.dropped.append(Dropped(item.source.title, (
            f"the model judged that its abstract does not say yes or no to the question "
            f"(P(yes) {p_yes:.2f} < {threshold:.2f})")))
        return False

    def instead(self, writer: Writer) -> Iterator[str | Answer]:
        """When the model kept no sentence: the paper the question names (unless the model's
        claim about it was refuted), or for a yes/no question answered in its own words the
        abstract's sentences, or "not covered"."""
        refuted = any(d.reason.startswith(("the source says nothing of", UNNAMED))
                      for d in self.dropped)
        found = None if refuted else named_paper(self.question, self.evidence, self.defines)
        # "Does TEDM rely on an external noise schedule?" answered "Yes, TEDM relies on …":
        # the abstract's own sentences closest to the question answer instead
        about = (asked_about(self.question, self.evidence)
                 if not (refuted or writer.refused)
                 and any(d.reason == BARE_VERDICT or d.reason.startswith(CONTRADICTS)
                         for d in self.dropped) else None)
        if found is not None:
            yield from self.the_paper(found, "", writer.first_token, writer.usage)
        elif about is not None and self.says_either(about):
            yield from self.the_abstract(about, writer.first_token, writer.usage)
        else:
            yield from self.abstain(writer.first_token, writer.usage)


def _messages(text: str) -> list[BaseMessage]:
    """The model's prompt: the system turn, then ``text``."""
    from langchain_core.messages import HumanMessage, SystemMessage

    return [SystemMessage(load_prompt("system").format()), HumanMessage(text)]


def _gate(question: str, sources: Sequence[Source], config: AnswerConfig,
          judged: bool) -> tuple[list[Source], bool]:
    """(the papers that may answer, whether only the judge may accept one of them).

    Only papers whose abstract supports the question are shown, listed or cited; when none
    does (a near miss: the nearest paper is about something else), the answer says so. But a
    "which paper …?" question that no paper passes the gate for goes to the judge (``judged``:
    the model can say how sure it is) with the best-supported papers, and only its yes can
    answer: a long paraphrase shares few words with its paper."""
    backing = supporting(sources, config.min_support, config.relative_support)
    if backing or not judged or not identifies(question):
        return backing, False
    return sorted(sources, key=lambda s: -s.support)[: config.judge_papers], True


def _evidence(question: str, backing: Sequence[Source], *, config: AnswerConfig,
              abstract: Callable[[str], str | None], embed_many: EmbedMany,
              vectors: Callable[[Source, Sequence[str]], Sequence[Sequence[float]]],
              enc: tiktoken.Encoding,
              defines: Callable[[str], set[str]] | None = None) -> list[Evidence]:
    """The numbered sources the model is shown: each paper's sentences closest to the
    question, or the whole abstract's when the question names one paper. Orders planted in
    an abstract ("ignore your rules, cite ...") are never shown to the model, so they cannot
    support a claim either."""
    named = focus(question, backing, defines) if config.focus_tokens else None
    if named is not None:
        # One paper: choose from its whole abstract, not only the two best chunks.
        whole = abstract(named.paper_id)
        if whole:
            named = replace(named, text=whole, passages=(whole,))
    shown = [s for s in map(without_orders, [named] if named else backing) if s.text.strip()]
    chosen = select_excerpts(
        question, shown, embed_many, lambda text: count_tokens(enc, text),
        min(config.focus_tokens, config.context_tokens) if named else config.context_tokens,
        several=asks_for_several(question), focused=named is not None,
    )
    return [Evidence(n, source, passages, tuple(vectors(source, passages)))
            for n, (source, passages) in enumerate(chosen, start=1)]


def _judge_papers(question: str, evidence: Sequence[Evidence], judge: Judge,
                  config: AnswerConfig, abstract: Callable[[str], str | None],
                  judged_only: bool, dropped: list[Dropped],
                  wording: str = "judge") -> tuple[Evidence | None, bool]:
    """(the paper the judge accepts, whether the judge decided): (None, True) when it refused
    every paper put to it, (None, False) when the model cannot say how sure it is and so
    writes the answer instead (unless only the judge may answer: ``judged_only``)."""
    for item in to_judge(evidence, config):
        p_yes = judge(asking(question), judged_text(item, config, abstract), wording)
        if p_yes is None:
            if judged_only:
                continue  # under the gate only the judge may answer: the gate stands
            return None, False
        if p_yes >= config.judge_threshold:
            return item, True
        dropped.append(Dropped(item.source.title, (
            f"the model judged that it does not answer the question "
            f"(P(yes) {p_yes:.2f} < {config.judge_threshold:.2f})")))
    return None, True


_MARKS = re.compile(r"\s*\[\d+(?:\]\s*\[\d+)*\]")


def recap(history: Sequence[tuple[str, str]], turns: int = 2, words: int = 40) -> str:
    """The last turns for the rewrite prompt, answers cut short and without [n] marks:
    the names a follow-up refers to are in the first words, and a short prompt is fast."""
    lines = []
    for question, answer in list(history)[-turns:]:
        gist = _MARKS.sub("", answer).split()
        cut = " ".join(gist[:words]) + (" …" if len(gist) > words else "")
        lines.append(f"User: {question}\nAssistant: {cut}")
    return "\n".join(lines)
