"""The evaluation's scorecard: the issue's targets, the ``--min``/``--max`` gates, the table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from assistant.errors import InputError
from assistant.eval.metrics import (
    ANSWER_METRICS,
    COST_METRICS,
    HIGHER_IS_BETTER,
    QUALITY_METRICS,
    RETRIEVAL_METRICS,
)

# The targets of issue 35 for the embedded default, on the test split (shown, not gated).
TARGETS: dict[str, tuple[str, float]] = {
    "hit@5": ("min", 1.0),
    "multi_recall@5": ("min", 0.95),
    "citation_precision": ("min", 0.95),
    "citation_recall": ("min", 0.90),
    "fabricated_citations": ("max", 0.0),
    "unanswerable_citations": ("max", 0.0),
    "key_fact_recall": ("min", 0.85),
    "abstention_recall": ("min", 0.95),
    "false_abstention_rate": ("max", 0.03),
    "first_token_latency_p50": ("max", 4.0),
    "total_latency_p50": ("max", 7.0),
}
LABELS = {
    "hit@1": "hit@1 (single-paper questions)",
    "hit@5": "hit@5 (single-paper questions)",
    "mrr": "MRR (single-paper questions)",
    "ndcg@10": "nDCG@10 (questions with gold papers)",
    "multi_recall@5": "recall@5 (multi-paper questions)",
    "fabricated_citations": "fabricated citations (count)",
    "unanswerable_citations": "citations on unanswerable (count)",
    "abstention_recall": "abstention recall (expected abstentions)",
    "false_abstention_rate": "false abstentions (share of answerable)",
}
_SECTIONS = (
    ("retrieval", RETRIEVAL_METRICS), ("citations and answers", ANSWER_METRICS),
    ("cost (seconds, tokens)", COST_METRICS),
)


@dataclass(frozen=True)
class Threshold:
    """A gate: ``metric`` must be at least (``min``) or at most (``max``) ``value``."""

    metric: str
    bound: str
    value: float

    def problem(self, measured: float | None) -> str | None:
        """Why the gate fails for ``measured``, or None when it passes."""
        sign = ">=" if self.bound == "min" else "<="
        if measured is None:
            return f"{self.metric}: not measured (no question of the set measures it); " \
                   f"needs {sign} {self.value:g}"
        if (measured < self.value) if self.bound == "min" else (measured > self.value):
            return f"{self.metric} = {measured:.4g}, needs {sign} {self.value:g}"
        return None


def parse_thresholds(
    minimums: Sequence[str], maximums: Sequence[str], measured: Sequence[str]
) -> list[Threshold]:
    """``METRIC=VALUE`` options as gates; names must be among ``measured`` in this mode."""
    gates = []
    for bound, options in (("min", minimums), ("max", maximums)):
        for option in options:
            name, equals, raw = option.partition("=")
            name = name.strip()
            try:
                value = float(raw)
            except ValueError:
                value = None
            if not equals or value is None:
                raise InputError(f"--{bound} {option!r}: expected METRIC=VALUE, such as hit@5=0.95")
            if name not in HIGHER_IS_BETTER:
                raise InputError(
                    f"--{bound}: unknown metric {name!r}; known: {', '.join(HIGHER_IS_BETTER)}"
                )
            if name not in measured:
                raise InputError(
                    f"--{bound}: {name} is not measured with --retrieval-only; measured: "
                    f"{', '.join(measured)}"
                )
            gates.append(Threshold(name, bound, value))
    return gates


def missed(gates: Sequence[Threshold], metrics: Mapping[str, float | None]) -> list[str]:
    """One line per gate the metrics miss."""
    return [p for gate in gates if (p := gate.problem(metrics.get(gate.metric))) is not None]


def behind_baseline(metrics: Mapping[str, Mapping[str, float | None]]) -> list[str]:
    """Quality metrics on which the assistant does worse than the baseline."""
    ours, theirs = metrics.get("assistant", {}), metrics.get("baseline")
    if theirs is None:
        return []
    worse = []
    for name in QUALITY_METRICS:
        a, b = ours.get(name), theirs.get(name)
        if a is None or b is None:
            continue
        if (a < b) if HIGHER_IS_BETTER[name] else (a > b):
            worse.append(name)
    return worse


def format_value(name: str, value: float | None) -> str:
    if value is None:
        return "-"
    if name in ("fabricated_citations", "unanswerable_citations") or name.startswith(("tokens", "prompt_", "completion_")):
        return f"{value:.0f}"
    if "latency" in name:
        return f"{value:.3f}" if value < 1 else f"{value:.2f}"
    return f"{value:.3f}"


def _target(name: str) -> str:
    if name not in TARGETS:
        return ""
    bound, value = TARGETS[name]
    return f"{'>=' if bound == 'min' else '<='} {value:g}"


def render_table(metrics: Mapping[str, Mapping[str, float | None]], heading: str) -> str:
    """The metrics of each pipeline side by side, with the issue's targets."""
    pipelines = list(metrics)
    width = max(len(LABELS.get(m, m)) for m in HIGHER_IS_BETTER) + 2
    cell = max([11, *(len(p) + 2 for p in pipelines)])
    lines = [heading, f"{'metric':<{width}}" + "".join(f"{p:>{cell}}" for p in pipelines)
             + "   target"]
    for title, names in _SECTIONS:
        rows = [m for m in names if any(metrics[p].get(m) is not None for p in pipelines)]
        if not rows:
            continue
        lines.append(title)
        for name in rows:
            cells = "".join(f"{format_value(name, metrics[p].get(name)):>{cell}}"
                            for p in pipelines)
            lines.append(f"  {LABELS.get(name, name):<{width - 2}}{cells}   {_target(name)}".rstrip())
    return "\n".join(lines)
