"""BM25's ranked search against a plain scorer that reads every document."""

from __future__ import annotations

import math
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from assistant.lexical import BM25, terms

WORDS = ["diffusion", "policy", "graph", "token", "reward", "quantized", "lemma", "agent",
         "forecast", "sampler", "kernel", "prior"]


def reference(texts: list[str], query: str, k1: float = 1.2, b: float = 0.75) -> list[float]:
    """Every document's BM25 score, computed the textbook way."""
    counts = [Counter(terms(t)) for t in texts]
    lengths = [sum(c.values()) for c in counts]
    average = sum(lengths) / len(lengths)
    scores = [0.0] * len(texts)
    for term in set(terms(query)):
        df = sum(1 for c in counts if term in c)
        if not df:
            continue
        idf = math.log(1 + (len(texts) - df + 0.5) / (df + 0.5))
        for i, c in enumerate(counts):
            tf = c.get(term, 0)
            if tf:
                scores[i] += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths[i] / average))
    return scores


documents = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(" ".join),
                     min_size=1, max_size=60)
queries = st.lists(st.sampled_from(WORDS + ["absent"]), min_size=1, max_size=4).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(documents, queries, st.integers(min_value=1, max_value=10))
def test_search_returns_the_best_scoring_documents_best_first(texts, query, n) -> None:
    index = BM25.build(texts)
    found = index.search(query, n)
    expected = reference(texts, query)
    scoring = sorted((s for s in expected if s > 0), reverse=True)
    # As many as asked for (or as score at all), best first, each with its own score ...
    assert len(found) == len(scoring[:n])
    assert all(math.isclose(s, best, rel_tol=1e-4) for (_, s), best in zip(found, scoring))
    for i, score in found:
        assert math.isclose(score, expected[i], rel_tol=1e-4)
    # ... and no document left out scores more than the last one returned.
    if found:
        returned = {i for i, _ in found}
        assert all(s <= found[-1][1] + 1e-4 for i, s in enumerate(expected) if i not in returned)
    # Ties come in document order, so the same question always ranks the same way.
    for (a, sa), (b, sb) in zip(found, found[1:]):
        assert sa > sb or (sa == sb and a < b)
