"""Sentences that set two papers side by side: "SSD-GS relights scenes, while GaussianFusion
fuses sensors.", "Both Qflex and Value Matching learn a value function."

Every claim is checked against one source, and no one abstract says what two papers do: such a
sentence fails against each source alone, although each half is what one source says. Cut at
its contrast ("while", "whereas", "but", ";"), each half is checked on its own, with the
sentence's citations; the sentence is kept, citing both sources, only when every half is. A
sentence whose subject is two papers ("Both A and B …", "A and B both …") is checked as "A …"
against A's source and "B …" against B's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from assistant.answer.markers import cited_numbers, strip_markers
from assistant.text.stems import terms

Verdict = Any  # citations.Verdict (which imports this module)

_SHARED = 0.6  # of a predicate said of two papers, the share of its words each passage holds
_CONTRAST = re.compile(r",?\s+(?:while|whereas)\s+|;\s+|,\s+(?:but|and\s+in\s+contrast,?)\s+",
                       re.IGNORECASE)


# "They both use …": said of two papers; one source holding it is not enough
_BOTH = re.compile(r"\W*(?:they|these|the\s+two(?:\s+\w+)?)\s+(?:both|each|all)\b",
                   re.IGNORECASE)  # not "Both training and inference costs drop …"
ONE_OF_TWO = "says it of both papers, and only one source holds it"  # a Dropped reason


def of_both(raw: str) -> bool:
    """Whether a sentence says what it says of two papers or more ("They both …")."""
    return _BOTH.match(raw) is not None


def by_subjects(raw: str, check: Callable[[str], Verdict],
                names: Sequence[tuple[str, int]]) -> Verdict | None:
    """The sentence ``raw`` whose subject is two of the papers ``names`` ((name, number) of
    each shown paper), kept when what it says holds for each paper against its own source;
    None otherwise."""
    sentence = strip_markers(raw).strip()
    by_name = {n.lower(): number for n, number in names}
    alternatives = "|".join(re.escape(n) for n, _ in sorted(names, key=lambda x: -len(x[0])))
    if not alternatives:
        return None
    found = re.match(rf"(?i:both\s+)?(?i:the\s+)?({alternatives})\s+and\s+(?i:the\s+)?"
                     rf"({alternatives})\s+(?i:(?:papers?|authors|methods)\s+)?"
                     rf"(?i:(?:both|each)\s+)?(.+)", sentence)
    if found is None or found[1].lower() == found[2].lower():
        return None
    halves = []
    for name in (found[1], found[2]):
        number = by_name[name.lower()]
        verdict = check(f"{name} {found[3].rstrip('.!?')} [{number}].")
        if verdict.dropped or verdict.refusal or verdict.pointer or verdict.numbers != (number,):
            return None
        # what one paper does, said of both, is the usual slip here: most of the words must
        # be in each paper's own passage, however close the meaning
        said = set(terms(found[3]))
        if len(said & set(terms(" ".join(verdict.passages)))) < _SHARED * len(said):
            return None
        halves.append(verdict)
    return replace(halves[0], sentence=sentence,
                   numbers=halves[0].numbers + halves[1].numbers,
                   passages=halves[0].passages + halves[1].passages)


def by_halves(raw: str, check: Callable[[str], Verdict]) -> Verdict | None:
    """The sentence ``raw`` kept as its halves are (each checked by ``check``, with the
    citations of its own half or else of the whole sentence); None when it has no contrast, or
    any half is dropped."""
    sentence = strip_markers(raw)
    halves = [h for h in _CONTRAST.split(raw.strip()) if h.strip()]
    if len(halves) != 2:
        return None
    marks = "".join(f"[{n}]" for n in cited_numbers(raw))
    verdicts = []
    for half in halves:
        own = cited_numbers(half)
        text = strip_markers(half).rstrip(".!?") + "."
        verdict = check(text + ("".join(f"[{n}]" for n in own) if own else marks))
        if verdict.dropped or verdict.refusal or verdict.pointer or not verdict.numbers:
            return None
        verdicts.append(verdict)
    numbers: list[int] = []
    passages: list[str] = []
    for verdict in verdicts:
        for number, passage in zip(verdict.numbers, verdict.passages, strict=True):
            if number not in numbers:
                numbers.append(number)
                passages.append(passage)
    return replace(verdicts[0], sentence=sentence, numbers=tuple(numbers),
                   passages=tuple(passages))
