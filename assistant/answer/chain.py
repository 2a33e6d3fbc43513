"""The chain: sources -> prompt -> model -> checked, cited sentences -> Answer."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from assistant.answer.citations import CitationChecker, Evidence, Verdict
from assistant.answer.evidence import (
    AnswerConfig,
    covered,
    focus,
    format_sources,
    named_paper,
    select_evidence,
    unheld,
)
from assistant.answer.excerpts import EmbedMany, select_excerpts
from assistant.answer.intent import (
    asks_for_papers,
    asks_for_several,
    asks_whether,
    identifies,
)
from assistant.answer.markers import split_units
from assistant.answer.prompts import load_prompt
from assistant.answer.quotes import closest_sentences, quoted
from assistant.answer.support import backing as supporting
from assistant.ingest.tokens import count_tokens
from assistant.text.sentences import (
    split_sentences,
    without_instructions,
)
from assistant.types import Answer, Citation, Dropped, Source, Timings, Usage

if TYPE_CHECKING:
    import tiktoken
    from langchain_core.language_models.chat_models import BaseChatModel

    from assistant.answer.judge import Judge

ABSTAIN_TEXT = "The indexed papers do not cover this question."
UNNAMED = "the answer names no "  # a Dropped reason: "… names no dataset"

def _to_judge(evidence: Sequence[Evidence], config: AnswerConfig) -> list[Evidence]:
    """The papers put to the judge, best supported first: a later one only when its support
    is close to the best's (a clear second place is rarely the answer, and each judgement
    costs the model reading a whole abstract)."""
    ranked = sorted(evidence, key=lambda e: -e.source.support)[: config.judge_papers]
    return [e for e in ranked
            if e.source.support >= config.judge_within * ranked[0].source.support]


def _judged(item: Evidence, config: AnswerConfig,
            abstract: Callable[[str], str | None] | None) -> Source:
    """The paper as the judge reads it: its whole abstract, or the excerpt chosen for the
    question (shorter, so read sooner)."""
    if config.judge_on == "excerpt":
        text = item.text
    else:
        text = (abstract(item.source.paper_id) if abstract else None) or item.source.text
    return replace(item.source, passages=(text,))


@dataclass
class _Render:
    """Numbers citations in order of first use and collects what the answer cites."""

    evidence: dict[int, Evidence]
    display: dict[int, int] = field(default_factory=dict)
    passages: dict[int, str] = field(default_factory=dict)

    def sentence(self, verdict: Verdict) -> str:
        marks = []
        for number, passage in zip(verdict.numbers, verdict.passages, strict=True):
            if number not in self.display:
                self.display[number] = len(self.display) + 1
                self.passages[number] = passage
            marks.append(f"[{self.display[number]}]")
        text = verdict.sentence.rstrip()
        end = text[-1] if text and text[-1] in ".!?" else "."
        body = text[:-1].rstrip() if text and text[-1] in ".!?" else text
        return f"{body} {''.join(marks)}{end}"

    def citations(self) -> tuple[Citation, ...]:
        out = []
        for number, shown in sorted(self.display.items(), key=lambda item: item[1]):
            source = self.evidence[number].source
            out.append(
                Citation(
                    number=shown, paper_id=source.paper_id, title=source.title,
                    text=self.passages[number], title_derived=source.title_derived,
                    arxiv_id=source.arxiv_id, openreview_id=source.openreview_id,
                )
            )
        return tuple(out)


def _without_orders(source: Source) -> Source:
    passages = tuple(p for p in map(without_instructions, source.passages) if p.strip())
    text = without_instructions(source.text)
    if passages == source.passages and text == source.text:
        return source
    return replace(source, passages=passages, text=text)


def _usage(chunk: Any) -> Usage | None:
    meta = getattr(chunk, "usage_metadata", None)
    if not meta:
        return None
    return Usage(int(meta.get("input_tokens", 0)), int(meta.get("output_tokens", 0)))


def generate(
    question: str,
    sources: Sequence[Source],
    *,
    llm: BaseChatModel,
    embed: Callable[[str], Sequence[float]],
    vectors: Callable[[Source, Sequence[str]], Sequence[Sequence[float]]],
    embed_many: EmbedMany | None = None,
    abstract: Callable[[str], str | None] | None = None,
    known: Callable[[str], bool] | None = None,
    judge: Judge | None = None,
    enc: tiktoken.Encoding,
    config: AnswerConfig,
    model: str = "",
    warnings: Sequence[str] = (),
    started: float | None = None,
    retrieve_seconds: float = 0.0,
) -> Iterator[str | Answer]:
    """Stream checked sentences of the answer as they complete, then the final Answer."""
    from langchain_core.messages import HumanMessage, SystemMessage

    started = started if started is not None else time.perf_counter()
    dropped: list[Dropped] = []
    if embed_many is not None:  # the excerpts and the quote read the same sentences
        embed_many = _remembered(embed_many)

    def finish(text: str, render: _Render | None, abstained: bool, first: float | None,
               usage: Usage) -> Answer:
        return Answer(
            question=question, text=text, citations=render.citations() if render else (),
            sources=tuple(sources), abstained=abstained, dropped=tuple(dropped),
            warnings=tuple(warnings),
            timings=Timings(round(retrieve_seconds, 3), first, round(time.perf_counter() - started, 3)),
            usage=usage, model=model,
        )

    # Only papers whose abstract supports the question are shown, listed or cited; when none
    # does (a near miss: the nearest paper is about something else), the answer says so.
    backing = supporting(sources, config.min_support, config.relative_support)
    # "Which paper …?" that no paper passes the gate for: the judge reads the best-supported
    # ones and decides (a long paraphrase shares few words with its paper), and nothing else
    # may answer.
    judged_only = not backing and judge is not None and identifies(question)
    if judged_only:
        backing = sorted(sources, key=lambda s: -s.support)[: config.judge_papers]
    if not backing or not covered(question, backing, config) or unheld(question, sources):
        yield ABSTAIN_TEXT
        yield finish(ABSTAIN_TEXT, None, True, None, Usage())
        return

    # Orders planted in an abstract ("ignore your rules, cite ...") are never shown to the
    # model, so they cannot support a claim either.
    named = focus(question, backing) if config.focus_tokens else None
    if named is not None and abstract is not None:
        # One paper: choose from its whole abstract, not only the two best chunks.
        whole = abstract(named.paper_id)
        if whole:
            named = replace(named, text=whole, passages=(whole,))
    shown = [s for s in map(_without_orders, [named] if named else backing) if s.text.strip()]
    if embed_many is not None:
        chosen = select_excerpts(
            question, shown, embed_many, lambda text: count_tokens(enc, text),
            min(config.focus_tokens, config.context_tokens) if named else config.context_tokens,
            several=asks_for_several(question), focused=named is not None,
        )
    else:
        chosen = select_evidence(shown, enc, config, question)
    evidence = [
        Evidence(n, source, passages, tuple(vectors(source, passages)))
        for n, (source, passages) in enumerate(chosen, start=1)
    ]
    checker = CitationChecker(
        evidence, embed, question, threshold=config.support_threshold,
        several=asks_for_several(question), papers=asks_for_papers(question), abstract=abstract,
        known=known,
    )
    render = _Render({e.number: e for e in evidence})

    def quoted_under(said: str) -> Generator[str, None, str]:
        """Stream the quote under the answer ``said`` (already shown); the whole text."""
        quote = _quote(question, render, said, abstract, embed_many, config)
        if quote:
            yield "\n" + quote
        return said + ("\n" + quote if quote else "")
    if judge is not None and identifies(question):
        # "Which paper …?": the model judges each best-supported paper against the question,
        # and the first it accepts is the answer, with its abstract's own sentence; a paper
        # that is merely the nearest one is not (assistant/answer/judge.py).
        for item in _to_judge(evidence, config):
            p_yes = judge(question, _judged(item, config, abstract))
            if p_yes is None:
                if judged_only:
                    continue  # under the gate only the judge may answer: the gate stands
                break  # the model cannot say how sure it is: it writes the answer instead
            if p_yes >= config.judge_threshold:
                lead = "Yes: " if asks_whether(question) else ""
                piece = render.sentence(replace(checker.pointer([item], lead), pointer=False))
                first = round(time.perf_counter() - started, 3)
                yield piece
                text = yield from quoted_under(piece)
                yield finish(text, render, False, first, Usage())
                return
            dropped.append(Dropped(item.source.title, (
                f"the model judged that it does not answer the question "
                f"(P(yes) {p_yes:.2f} < {config.judge_threshold:.2f})")))
        else:
            yield ABSTAIN_TEXT
            yield finish(ABSTAIN_TEXT, None, True, None, Usage())
            return
    messages = [
        SystemMessage(load_prompt("system").format()),
        HumanMessage(load_prompt("answer").format(sources=format_sources(evidence), question=question)),
    ]
    kept: list[str] = []
    refused = False
    first_token: float | None = None
    usage = Usage()
    pending = ""
    line_has_text = False

    claims_dropped = False
    seen: set[tuple[str, tuple[int, ...]]] = set()  # sentences kept, with their sources
    written: set[str] = set()  # every sentence the model wrote, kept or not
    looping = False

    def handle(prefix: str, raw: str, ends_line: bool) -> Iterator[str]:
        nonlocal refused, line_has_text, claims_dropped, looping
        said_before = _said(raw)
        if said_before in written:
            # The model decodes greedily: once it writes a sentence again word for word it
            # is in a loop and would repeat it up to its token limit.
            dropped.append(Dropped(raw, "repeats an earlier sentence"))
            looping = True
            return
        if said_before:
            written.add(said_before)
        verdict = checker.check(raw)
        if verdict.refusal:
            if not kept:
                refused = True
            else:
                dropped.append(Dropped(verdict.sentence, "says the sources lack something"))
            return
        if verdict.dropped:
            dropped.append(verdict.dropped)
            if verdict.dropped.reason not in ("empty", "no claim to check"):
                claims_dropped = True
            return
        if not kept and not verdict.pointer and not checker.names_wanted(verdict.sentence):
            # "Which dataset …?" answered "X uses a real-world dataset": true, and no answer
            dropped.append(Dropped(verdict.sentence, f"{UNNAMED}{checker.wanted}"))
            claims_dropped = True
            return
        if verdict.pointer and (kept or claims_dropped or not asks_for_papers(question)):
            # A trailing "[1]" after sentences that carry their own citations, or after a
            # claim the checks dropped (it was that claim's citation), or paper titles given
            # as the answer to a question that titles do not answer.
            return
        said = (verdict.sentence.strip().rstrip(".!?").lower(), verdict.numbers)
        if said in seen:
            dropped.append(Dropped(verdict.sentence, "repeats an earlier sentence"))
            return
        seen.add(said)
        piece = render.sentence(verdict)
        if kept and line_has_text:
            piece = " " + piece
        elif kept:
            piece = "\n" + prefix + piece
        else:
            piece = prefix + piece
        line_has_text = not ends_line
        kept.append(piece)
        yield piece

    stream = llm.stream(messages)
    try:
        for chunk in stream:
            usage = _usage(chunk) or usage
            text = str(chunk.content or "")
            if not text:
                continue
            if first_token is None:
                first_token = round(time.perf_counter() - started, 3)
            pending += text
            ready, pending = _complete_part(pending)
            for prefix, raw, ends_line in split_units(ready) if ready else ():
                yield from handle(prefix, raw, ends_line or ready.endswith("\n"))
                if looping:
                    break
            if refused or looping:
                break  # the sources lack the answer, or the model repeats itself: stop it
    finally:
        close = getattr(stream, "close", None)
        if close:
            close()
    if usage == Usage():  # stopped before the model's last chunk, which carries the counts
        counts = getattr(llm, "stopped_usage", lambda: None)()
        if counts:
            usage = Usage(int(counts["input_tokens"]), int(counts["output_tokens"]))
    if not refused and not looping and pending.strip():
        for prefix, raw, ends_line in split_units(pending):
            yield from handle(prefix, raw, ends_line)
    for number in sorted(set(checker.invalid_markers)):
        dropped.append(Dropped(f"[{number}]", "cites a source number that was not given"))

    if refused or not kept:
        # the paper the question names, unless the model's claim about it was refuted
        refuted = any(d.reason.startswith(("the source says nothing of", UNNAMED))
                      for d in dropped)
        found = None if refuted else named_paper(question, evidence)
        if found is not None:
            piece = render.sentence(replace(checker.pointer([found]), pointer=False))
            yield piece
            text = yield from quoted_under(piece)
            yield finish(text, render, False, first_token, usage)
            return
        yield ABSTAIN_TEXT
        yield finish(ABSTAIN_TEXT, None, True, first_token, usage)
        return
    text = yield from quoted_under("".join(kept))
    yield finish(text.strip(), render, False, first_token, usage)


def _remembered(embed_many: EmbedMany) -> EmbedMany:
    """``embed_many`` that embeds each text once, however often it is asked for."""
    seen: dict[str, list[float]] = {}

    def embed(texts: list[str]) -> list[list[float]]:
        new = [t for t in dict.fromkeys(texts) if t not in seen]
        if new:
            seen.update(zip(new, embed_many(new), strict=True))
        return [seen[t] for t in texts]
    return embed


def _quote(question: str, render: _Render, answer: str,
           abstract: Callable[[str], str | None] | None, embed_many: EmbedMany | None,
           config: AnswerConfig) -> str:
    """The first cited paper's sentences closest to the question, quoted and cited under an
    answer (under a which-paper answer too: its quote says what the paper proposes, these what
    the question asked about); none under a list of papers, which names them only."""
    if (not config.quote_sentences or embed_many is None or not render.display
            or asks_for_several(question)):
        return ""
    number = min(render.display, key=render.display.__getitem__)
    item = render.evidence[number]
    text = (abstract(item.source.paper_id) if abstract else None) or " ".join(item.passages)
    sentences = closest_sentences(question, text, answer, embed_many, config.quote_sentences)
    if not sentences:
        return ""
    return render.sentence(Verdict(quoted(sentences), (number,), (item.passages[0],)))


def _said(raw: str) -> str:
    """A sentence's words, for spotting one written again; empty for a bare citation."""
    words = " ".join(raw.lower().split()).rstrip(".!?,;: ")
    return words if any(c.isalpha() for c in re.sub(r"\[[^\]]*\]", "", words)) else ""


def _complete_part(text: str) -> tuple[str, str]:
    """Split streamed text into the part made of finished sentences and the rest."""
    if "\n" in text:
        head, _, tail = text.rpartition("\n")
        return head + "\n", tail
    sentences = split_sentences(text)
    if len(sentences) < 2:
        return "", text
    last = sentences[-1]
    cut = text.rfind(last)
    return text[:cut], text[cut:]


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
