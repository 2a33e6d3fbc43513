"""BM25 over the stored chunks, for the lexical half of hybrid retrieval."""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict

_TOKEN = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
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
    return [stem(t) for t in _TOKEN.findall(text.lower()) if t not in _STOP]


class BM25:
    """Okapi BM25 with an inverted index; ``search`` returns (document index, score)."""

    def __init__(self, documents: list[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        lengths = []
        for index, document in enumerate(documents):
            counts = Counter(terms(document))
            lengths.append(sum(counts.values()))
            for term, tf in counts.items():
                self.postings[term].append((index, tf))
        self.lengths = lengths
        self.size = len(documents)
        self.average = (sum(lengths) / len(lengths)) if lengths else 1.0

    def idf(self, term: str) -> float:
        df = len(self.postings.get(term, ()))
        return math.log(1 + (self.size - df + 0.5) / (df + 0.5))

    def search(self, query: str, n: int) -> list[tuple[int, float]]:
        scores: dict[int, float] = defaultdict(float)
        for term in set(terms(query)):
            idf = self.idf(term)
            for index, tf in self.postings.get(term, ()):
                norm = self.k1 * (1 - self.b + self.b * self.lengths[index] / self.average)
                scores[index] += idf * tf * (self.k1 + 1) / (tf + norm)
        return sorted(scores.items(), key=lambda item: -item[1])[:n]
