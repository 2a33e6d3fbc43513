"""The model's answer read as units: its [n] source markers, its refusals, its sentences
under their bullets."""

from __future__ import annotations

import re
from collections.abc import Iterator

from assistant.text.sentences import split_sentences

_MARKER = re.compile(r"\s*\[(?:sources?\s*)?(\d+(?:\s*[,;–-]\s*\d+)*)\]", re.IGNORECASE)
_REFUSAL = re.compile(
    r"\b(?:sources?|papers?|abstracts?|context|documents?|passages?|provided)\b.*"
    r"\b(?:do(?:es)?\s+not|don't|doesn't|cannot|can't)\b.*\b(?:cover|mention|provide|contain|"
    r"include|specify|state|say|discuss|answer|describe|list|report|give)"
    r"|\bnot\s+(?:mentioned|provided|specified|covered|stated|available|listed|reported|"
    r"included|given|discussed)\b"
    r"|\bno\s+(?:information|mention|details?|data)\b"
    r"|\b(?:cannot|can't|unable\s+to)\s+(?:be\s+)?(?:determine|answer|find|tell)",
    re.IGNORECASE,
)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


def is_refusal(sentence: str) -> bool:
    """The model saying the sources do not answer the question."""
    return bool(_REFUSAL.search(sentence))


def cited_numbers(sentence: str) -> list[int]:
    """The [n] markers in a sentence, in order ([1, 2] and [1-3] included)."""
    numbers: list[int] = []
    for group in _MARKER.findall(sentence):
        for part in re.split(r"\s*[,;]\s*", group):
            bounds = re.split(r"\s*[–-]\s*", part)
            if len(bounds) == 2 and bounds[0].isdigit() and bounds[1].isdigit():
                low, high = int(bounds[0]), int(bounds[1])
                numbers += list(range(low, min(high, low + 20) + 1))
            elif part.isdigit():
                numbers.append(int(part))
    return list(dict.fromkeys(numbers))


def strip_markers(sentence: str) -> str:
    return _MARKER.sub("", sentence).strip()


def split_units(text: str) -> Iterator[tuple[str, str, bool]]:
    """(bullet prefix, sentence, ends a line) for each sentence of the model's text."""
    lines = [line for line in text.splitlines() if line.strip()]
    for line in lines:
        match = _BULLET.match(line)
        prefix = match.group(0).strip() + " " if match else ""
        body = line[match.end():] if match else line
        # a citation marker after the full stop belongs to the sentence before it
        body = re.sub(r"([.!?])(\s*\[[^\]]+\])", r"\2\1", body)
        sentences = split_sentences(body.strip())
        for i, sentence in enumerate(sentences):
            yield (prefix if i == 0 else ""), sentence, i == len(sentences) - 1
