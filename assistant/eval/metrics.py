"""Evaluation metrics: pure functions over what a pipeline did with each question.

The definitions are stated in ``docs/quality.md``; keep the two in step.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# Metric name -> True when higher is better. The order is the order of the report.
RETRIEVAL_METRICS = {
    "hit@1": True, "hit@5": True, "mrr": True, "ndcg@10": True, "multi_recall@5": True,
}
ANSWER_METRICS = {
    "citation_precision": True, "citation_recall": True, "fabricated_citations": False,
    "unanswerable_citations": False, "key_fact_recall": True, "abstention_precision": True, "abstention_recall": True,
    "false_abstention_rate": False,
}
COST_METRICS = {
    "retrieval_latency_p50": False, "retrieval_latency_p95": False,
    "first_token_latency_p50": False, "first_token_latency_p95": False,
    "total_latency_p50": False, "total_latency_p95": False,
    "prompt_tokens_mean": False, "completion_tokens_mean": False, "tokens_total": False,
}
HIGHER_IS_BETTER = {**RETRIEVAL_METRICS, **ANSWER_METRICS, **COST_METRICS}
QUALITY_METRICS = (*RETRIEVAL_METRICS, *ANSWER_METRICS)
RANK_DEPTH = 10  # papers ranked per question for the retrieval metrics


@dataclass(frozen=True)
class Outcome:
    """What one pipeline did with one question, reduced to what the metrics need."""

    question_id: str
    kind: str
    gold: tuple[str, ...]
    ranked: tuple[str, ...]  # paper ids, best first
    expect_abstain: bool = False
    key_facts: tuple[tuple[str, ...], ...] = ()
    answered: bool = False  # False in retrieval-only runs: the answer fields mean nothing
    text: str = ""
    cited: tuple[str, ...] = ()  # paper ids the answer cites
    fabricated: tuple[str, ...] = ()  # cited titles not in the corpus or not retrieved
    abstained: bool = False
    retrieve_seconds: float = 0.0
    first_token: float | None = None
    total_seconds: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0


def hit_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """1.0 when any gold paper is among the first ``k``, else 0.0."""
    return 1.0 if set(ranked[:k]) & set(gold) else 0.0


def reciprocal_rank(ranked: Sequence[str], gold: Iterable[str]) -> float:
    """1 / rank of the first gold paper (ranks from 1); 0.0 when none is ranked."""
    wanted = set(gold)
    for rank, paper in enumerate(ranked, start=1):
        if paper in wanted:
            return 1.0 / rank
    return 0.0


def recall_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """Share of the gold papers among the first ``k``."""
    wanted = set(gold)
    return len(set(ranked[:k]) & wanted) / len(wanted) if wanted else 0.0


def ndcg_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """Binary-relevance nDCG@k: DCG of the ranking over DCG of the ideal one."""
    wanted = set(gold)
    if not wanted:
        return 0.0
    seen: set[str] = set()
    dcg = 0.0
    for rank, paper in enumerate(ranked[:k], start=1):
        if paper in wanted and paper not in seen:
            dcg += 1.0 / math.log2(rank + 1)
        seen.add(paper)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(wanted), k) + 1))
    return dcg / ideal


def _normalise(text: str) -> str:
    text = text.lower().replace("\\%", "%")
    text = re.sub(r"[\u2010-\u2015\u2212]", "-", text)
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)  # 23,404 -> 23404
    return " ".join(text.split())


def contains_fact(text: str, alternatives: Iterable[str]) -> bool:
    """Whether ``text`` states one of the alternatives (case-insensitive).

    An alternative must start at a word boundary; one ending in a digit must also end at
    a number boundary, so "28" is not found in "128" or "2.8" in "2.85".
    """
    haystack = _normalise(text)
    for alternative in alternatives:
        needle = _normalise(alternative)
        if not needle:
            continue
        tail = r"(?!\d|[.,]\d)" if needle[-1].isdigit() else ""
        if re.search(rf"(?<![\w.]){re.escape(needle)}{tail}", haystack):
            return True
    return False


def key_fact_recall(text: str, key_facts: Sequence[Sequence[str]]) -> float:
    """Share of the key facts (each a list of alternatives) that ``text`` states."""
    if not key_facts:
        return 0.0
    return sum(contains_fact(text, facts) for facts in key_facts) / len(key_facts)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0-100) by linear interpolation; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def retrieval_metrics(outcomes: Sequence[Outcome]) -> dict[str, float | None]:
    """hit@1, hit@5 and MRR over single-paper questions, nDCG@10 over every question with
    gold papers, recall@5 over multi-paper questions."""
    single = [o for o in outcomes if len(o.gold) == 1]
    multi = [o for o in outcomes if len(o.gold) > 1]
    with_gold = [o for o in outcomes if o.gold]
    return {
        "hit@1": _mean([hit_at(o.ranked, o.gold, 1) for o in single]),
        "hit@5": _mean([hit_at(o.ranked, o.gold, 5) for o in single]),
        "mrr": _mean([reciprocal_rank(o.ranked, o.gold) for o in single]),
        "ndcg@10": _mean([ndcg_at(o.ranked, o.gold, 10) for o in with_gold]),
        "multi_recall@5": _mean([recall_at(o.ranked, o.gold, 5) for o in multi]),
    }


def answer_metrics(outcomes: Sequence[Outcome]) -> dict[str, float | None]:
    """Citation, key-fact and abstention metrics over the answered questions."""
    done = [o for o in outcomes if o.answered]
    cited = sum(len(set(o.cited)) for o in done)
    cited_gold = sum(len(set(o.cited) & set(o.gold)) for o in done)
    gold = sum(len(set(o.gold)) for o in done)
    expected = [o for o in done if o.expect_abstain]
    answerable = [o for o in done if not o.expect_abstain]
    abstained = [o for o in done if o.abstained]
    with_facts = [o for o in answerable if o.key_facts]
    return {
        "citation_precision": _ratio(cited_gold, cited),
        "citation_recall": _ratio(cited_gold, gold),
        "fabricated_citations": float(sum(len(o.fabricated) for o in done)) if done else None,
        "unanswerable_citations": (float(sum(len(set(o.cited)) for o in expected))
                                   if expected else None),
        "key_fact_recall": _mean(
            [0.0 if o.abstained else key_fact_recall(o.text, o.key_facts) for o in with_facts]
        ),
        "abstention_precision": _ratio(sum(o.expect_abstain for o in abstained), len(abstained)),
        "abstention_recall": _ratio(sum(o.abstained for o in expected), len(expected)),
        "false_abstention_rate": _ratio(sum(o.abstained for o in answerable), len(answerable)),
    }


def cost_metrics(outcomes: Sequence[Outcome]) -> dict[str, float | None]:
    """Latency percentiles (seconds) and tokens; model figures only for answered questions."""
    done = [o for o in outcomes if o.answered]
    first = [o.first_token for o in done if o.first_token is not None]
    tokens = [o.prompt_tokens + o.completion_tokens for o in done]
    return {
        "retrieval_latency_p50": percentile([o.retrieve_seconds for o in outcomes], 50),
        "retrieval_latency_p95": percentile([o.retrieve_seconds for o in outcomes], 95),
        "first_token_latency_p50": percentile(first, 50),
        "first_token_latency_p95": percentile(first, 95),
        "total_latency_p50": percentile([o.total_seconds for o in done], 50),
        "total_latency_p95": percentile([o.total_seconds for o in done], 95),
        "prompt_tokens_mean": _mean([float(o.prompt_tokens) for o in done]),
        "completion_tokens_mean": _mean([float(o.completion_tokens) for o in done]),
        "tokens_total": float(sum(tokens)) if done else None,
    }


def summarise(outcomes: Sequence[Outcome]) -> dict[str, float | None]:
    """Every metric; None where no question of the set measures it."""
    return {**retrieval_metrics(outcomes), **answer_metrics(outcomes), **cost_metrics(outcomes)}
