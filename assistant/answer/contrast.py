"""Sentences that set two papers side by side: "SSD-GS relights scenes, while GaussianFusion
fuses sensors."

Every claim is checked against one source, and no one abstract says what two papers do: such a
sentence fails against each source alone, although each half is what one source says. Cut at
its contrast ("while", "whereas", "but", ";"), each half is checked on its own, with the
sentence's citations; the sentence is kept, citing both sources, only when every half is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from assistant.answer.markers import cited_numbers, strip_markers

Verdict = Any  # citations.Verdict (which imports this module)

_CONTRAST = re.compile(r",?\s+(?:while|whereas)\s+|;\s+|,\s+(?:but|and\s+in\s+contrast,?)\s+",
                       re.IGNORECASE)


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
