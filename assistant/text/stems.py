"""This project's crude word stems, which the grounding checks (citations, intent, support)
compare words with, and the stop words they leave out (BM25 leaves out the same)."""

from __future__ import annotations

import re
from functools import lru_cache

_TOKEN = re.compile(r"[a-z0-9]+")
# "isn't", "can't": the word and "not", not "isn" and "t" (nor "ca")
_NOT = re.compile(r"\b(\w*?)n['’]t\b")
_ODD_NOT = {"ca": "can", "wo": "will", "sha": "should"}
STOP_WORDS = frozenset(
    """a about above after again all also am an and any are as at be been being below
    between both but by can could did do does doing down during each few for from further
    had has have having he her here hers him his how i if in into is it its itself just me
    more most my no nor not now of off on once only or other our out over own same she
    should so some such than that the their them then there these they this those through
    to too under until up very was we were what when where which while who whom why will
    with would you your paper papers study propose proposes proposed method approach use
    uses used""".split()
)
_SUFFIXES = (("ations", "at"), ("ation", "at"), ("ings", ""), ("ing", ""), ("ies", "y"),
             ("ied", "y"), ("ers", ""), ("er", ""), ("ed", ""), ("es", ""), ("ly", ""), ("s", ""),
             ("e", ""))

@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """A crude suffix-stripping stem: 'calibrates', 'calibrated', 'calibration' -> 'calibrat'."""
    if word.endswith("ss"):
        return word
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)] + replacement
    return word


def terms(text: str) -> list[str]:
    """Lower-cased word stems, stop words removed."""
    text = text.lower()
    if "n'" in text or "n’" in text:
        text = _NOT.sub(lambda m: f"{_ODD_NOT.get(m[1], m[1])} not", text)
    return [stem(t) for t in _TOKEN.findall(text) if t not in STOP_WORDS]
