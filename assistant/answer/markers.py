"""The model's answer read as units: its [n] source markers, its refusals, its sentences
under their bullets."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from assistant.text.sentences import split_sentences

_NUMBERS = r"\d+(?:\s*[,;\u2013-]\s*\d+)*"  # "1", "1, 2", "1-3"
_MARKER = re.compile(rf"\s*\[(?:sources?\s*)?({_NUMBERS})\]", re.IGNORECASE)
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


# Markers standing for papers inside a sentence: "…, including [1] and [2]." Stripped, they
# would leave "including and."; the papers' names take their place instead.
_ONE = r"\[(?:sources?\s*)?\d+(?:\s*[,;\u2013-]\s*\d+)*\]"
_LISTED = re.compile(
    r"(?P<comma>\s*,)?\s*\b(?P<lead>including|includes?|such\s+as|like|namely|e\.g\.,?|i\.e\.,?"
    r"|for\s+(?:example|instance),?|notably|especially|particularly)\s*"
    rf"(?P<group>{_ONE}(?:\s*(?:,|;|&|\band\b|\bor\b|,\s*and\b)?\s*{_ONE})*)(?!\s*\[)",
    re.IGNORECASE)


@dataclass(frozen=True)
class Listed:
    """A sentence whose markers stand for papers: what it says around them, and them."""

    before: str
    comma: bool  # a comma before the lead word
    lead: str  # "including", "such as"
    numbers: list[int]
    after: str

    @property
    def rest(self) -> str:
        """The sentence without the list, to check."""
        after = self.after if self.before else self.after.lstrip(" ,;")
        return f"{self.before}{after}".strip()

    def naming(self, names: Sequence[str]) -> str:
        """The sentence with the papers' names where their markers were."""
        said = and_join(names)
        lead = self.lead if self.before else self.lead.capitalize()
        return f"{self.before}{',' if self.comma else ''} {lead} {said}{self.after}".strip()


def and_join(names: Sequence[str]) -> str:
    """"A", "A and B", "A, B and C"."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def listed(sentence: str) -> Listed | None:
    """The papers a sentence lists by their markers ("…, including [1] and [2]."), or None."""
    found = _LISTED.search(sentence)
    if found is None:
        return None
    return Listed(sentence[:found.start()].rstrip(), bool(found["comma"]),
                  " ".join(found["lead"].split()), cited_numbers(found["group"]),
                  sentence[found.end():])


def strip_markers(sentence: str) -> str:
    """The sentence without its [n] markers, nor the brackets or commas that held only them:
    "It uses poses ([2])." and "Unlike PEA, [2], which …" leave no "()" nor ",,"."""
    bare = _IN_COMMAS.sub(lambda m: "," if m[0].endswith(",") else "",
                          _IN_BRACKETS.sub("", sentence))
    return _MARKER.sub("", bare).strip()


_ONE_MARKER = rf"\[(?:sources?\s*)?{_NUMBERS}\]"
_IN_BRACKETS = re.compile(rf"\s*\((?:(?:see(?:\s+also)?|e\.g\.,?|cf\.)\s*)?{_ONE_MARKER}"
                          rf"(?:\s*(?:[,;]|and)\s*{_ONE_MARKER})*\s*\)", re.IGNORECASE)
# ", [2]," between two clauses; ", [2]." at the end
_IN_COMMAS = re.compile(rf",\s*{_ONE_MARKER}(?:\s*{_ONE_MARKER})*\s*(?:,|(?=[.;:!?]|$))",
                        re.IGNORECASE)


# A line that opens with a marker lists papers by marker, without a full stop between them
# ("[2] First Title [3] Second Title"): each marker starts an item of its own.
# Not "[1] and [2] both use RL." nor "… (see also [3])": a marker after "and", "or", a comma or
# a bracket, or before a word in lower case, is inside the sentence.
_LEADS = re.compile(rf"^(?i:{_ONE})\s*[^\s\[]")
_NEXT_ITEM = re.compile(rf"(?<![,(])(?<!\band)(?<!\bor)\s+(?=(?i:{_ONE})\s*[A-Z0-9\"“])")


def _items(body: str) -> list[str]:
    return _NEXT_ITEM.split(body) if _LEADS.match(body) else [body]


def split_units(text: str) -> Iterator[tuple[str, str, bool]]:
    """(bullet prefix, sentence, ends a line) for each sentence of the model's text."""
    lines = [line for line in text.splitlines() if line.strip()]
    for line in lines:
        match = _BULLET.match(line)
        prefix = match.group(0).strip() + " " if match else ""
        body = line[match.end():] if match else line
        # a citation marker after the full stop (and a closing quote: '… "quoted." [1].')
        # belongs to the sentence before it
        sentences = [s for item in _items(body.strip()) for s in split_sentences(
            re.sub(r"([.!?])([\"'”’)]*)(\s*\[[^\]]+\])", r"\3\1\2", item))]
        for i, sentence in enumerate(sentences):
            yield (prefix if i == 0 else ""), sentence, i == len(sentences) - 1
