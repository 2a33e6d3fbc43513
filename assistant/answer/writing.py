"""Writing the answer: the model's stream, cut into sentences, each checked before it is shown.

The model streams its answer; a sentence is shown only once it is complete and the checker
(``citations.CitationChecker``) has kept it, with its sources numbered in order of first use
(``Render``). A dropped sentence goes to ``dropped`` with its reason.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from assistant.answer.citations import CitationChecker, Evidence, Verdict
from assistant.answer.markers import split_units
from assistant.answer.polarity import opens_with_verdict
from assistant.answer.wording import display
from assistant.text.sentences import split_sentences
from assistant.types import Citation, Dropped, Usage

if TYPE_CHECKING:
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import BaseMessage

UNNAMED = "the answer names no "  # a Dropped reason: "… names no dataset"


@dataclass
class Render:
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
        # "… PoseScore . . ." ends once, its citation before the stop
        body = re.sub(r"(?:\s*[.!?])+$", "", text)
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


class Writer:
    """One answer as the model writes it: the sentences kept so far, whether the model said
    the sources do not answer (``refused``) or started repeating itself (``looping``)."""

    def __init__(self, checker: CitationChecker, render: Render, dropped: list[Dropped],
                 hold_verdict: bool = False) -> None:
        self.checker, self.render, self.dropped = checker, render, dropped
        # an answer opening with "Yes" or "No" is held back, to be checked once it is written
        self.hold_verdict = hold_verdict
        self.opening: Verdict | None = None  # its first sentence, when held
        self.held: list[str] = []
        self.kept: list[str] = []
        self.refused = False
        self.looping = False
        self.first_token: float | None = None
        self.usage = Usage()
        self._claims_dropped = False
        self._line_has_text = False
        self._seen: set[tuple[str, tuple[int, ...]]] = set()  # sentences kept, with their sources
        self._written: set[str] = set()  # every sentence the model wrote, kept or not

    def next_part(self) -> None:
        """Write on for another prompt (a comparison answered one paper at a time): the
        next part starts a new line, and a refusal or loop in one part does not end it; the
        caller adds up each part's ``usage``."""
        self.refused = self.looping = False
        self._line_has_text = False
        self._written.clear()
        self.usage = Usage()

    def stream(self, llm: BaseChatModel, messages: list[BaseMessage],
               started: float) -> Iterator[str]:
        """Stream the model's answer and yield each sentence the checks keep, as shown."""
        pending = ""
        stream = llm.stream(messages)
        try:
            for chunk in stream:
                self.usage = _usage(chunk) or self.usage
                text = str(chunk.content or "")
                if not text:
                    continue
                if self.first_token is None:
                    self.first_token = round(time.perf_counter() - started, 3)
                pending += text
                ready, pending = _complete_part(pending)
                for prefix, raw, ends_line in split_units(ready) if ready else ():
                    yield from self._handle(prefix, raw, ends_line or ready.endswith("\n"))
                    if self.looping:
                        break
                if self.refused or self.looping:
                    break  # the sources lack the answer, or the model repeats itself: stop it
        finally:
            close = getattr(stream, "close", None)
            if close:
                close()
        if self.usage == Usage():  # stopped before the last chunk, which carries the counts
            counts = getattr(llm, "stopped_usage", lambda: None)()
            if counts:
                self.usage = Usage(int(counts["input_tokens"]), int(counts["output_tokens"]))
        if not self.refused and not self.looping and pending.strip():
            for prefix, raw, ends_line in split_units(pending):
                yield from self._handle(prefix, raw, ends_line)
        for number in sorted(set(self.checker.invalid_markers)):
            self.dropped.append(Dropped(f"[{number}]", "cites a source number that was not given"))

    def _handle(self, prefix: str, raw: str, ends_line: bool) -> Iterator[str]:
        said_before = _said(raw)
        if said_before in self._written:
            # The model decodes greedily: once it writes a sentence again word for word it
            # is in a loop and would repeat it up to its token limit.
            self.dropped.append(Dropped(raw, "repeats an earlier sentence"))
            self.looping = True
            return
        if said_before:
            self._written.add(said_before)
        verdict = self.checker.check(raw)
        if verdict.refusal:
            if not self.kept:
                self.refused = True
            else:
                self.dropped.append(Dropped(verdict.sentence, "says the sources lack something"))
            return
        if verdict.dropped:
            self.dropped.append(verdict.dropped)
            if verdict.dropped.reason not in ("empty", "no claim to check"):
                self._claims_dropped = True
            return
        if (not self.kept and not verdict.pointer
                and not self.checker.names_wanted(verdict.sentence, verdict.passages)):
            # "Which dataset …?" answered "X uses a real-world dataset": true, and no answer
            self.dropped.append(Dropped(verdict.sentence, f"{UNNAMED}{self.checker.wanted}"))
            self._claims_dropped = True
            return
        if verdict.pointer and (self.kept or self._claims_dropped or not self.checker.papers):
            # A trailing "[1]" after sentences that carry their own citations, or after a
            # claim the checks dropped (it was that claim's citation), or paper titles given
            # as the answer to a question that titles do not answer.
            return
        said = (verdict.sentence.strip().rstrip(".!?").lower(), verdict.numbers)
        if said in self._seen:
            self.dropped.append(Dropped(verdict.sentence, "repeats an earlier sentence"))
            return
        self._seen.add(said)
        if not self.kept:
            verdict = self._named_subject(verdict)
        piece = self.render.sentence(verdict)
        if self.kept and self._line_has_text:
            piece = " " + piece
        elif self.kept:
            piece = "\n" + prefix + piece
        else:
            piece = prefix + piece
        self._line_has_text = not ends_line
        if not self.kept and self.hold_verdict and opens_with_verdict(verdict.sentence):
            self.opening = verdict
        self.kept.append(piece)
        if self.opening is not None:
            self.held.append(piece)
            return
        yield piece

    def release(self, drop: Dropped | None, started: float) -> Iterator[str]:
        """The pieces held back, shown now; or, ``drop`` given (the opening yes or no is
        wrong), none: the answer is dropped whole, for ``drop``'s reason."""
        held, self.held = self.held, []
        if not held:
            return
        if drop is not None:
            self.dropped.append(drop)
            self.kept, self.first_token = [], None
            self.render.display.clear()  # nothing was shown: its citations are not the answer's
            self.render.passages.clear()
            return
        self.first_token = round(time.perf_counter() - started, 3)  # when it is shown
        yield from held


    def _named_subject(self, verdict: Verdict) -> Verdict:
        """The answer's first sentence with the paper it cites for its subject, where it
        opens with "It", "Its" or "This paper": the sentence that named the paper was dropped
        ("Yes, GlowQ is relevant." then "It is a group-shared low-rank approximation …"), and
        an answer must not begin with a pronoun that points at nothing."""
        match = _PRONOUN.match(verdict.sentence)
        if match is None or len(set(verdict.numbers)) != 1:
            return verdict
        item = self.render.evidence[verdict.numbers[0]]
        name = self.checker.short_label(item)
        if name == display(item.source):  # no short name: the title, quoted
            name = f'"{item.source.title}"'
            if match.group(1) == "Its":
                return verdict  # "\"A Long Title\"'s method" reads worse than "Its method"
        rest = verdict.sentence[match.end():]
        if name.strip('"').lower() in rest.lower():
            return verdict  # "This paper proposes GlowQ" names it already
        name += "'s" if match.group(1) == "Its" else ""
        return replace(verdict, sentence=name + rest)


# a first sentence's subject that points back at a sentence not shown; not the "it" of
# "It is hard to …"
_PRONOUN = re.compile(
    r"(It|Its|This (?:paper|work|method|approach|framework)"
    r"(?! (?:on|about|in|from|by|that|which)\b))(?=\s)"  # not "This paper on X …"
    r"(?! (?:is|was|seems|appears|remains) (?:not )?(?!a |an |the )(?:\w+ ){1,2}"
    r"(?:to|that|whether|from|in)\b)"  # "It is worth noting that", "It is not clear from"
)


def _usage(chunk: Any) -> Usage | None:
    meta = getattr(chunk, "usage_metadata", None)
    if not meta:
        return None
    return Usage(int(meta.get("input_tokens", 0)), int(meta.get("output_tokens", 0)))


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
