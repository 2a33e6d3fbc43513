"""The evaluation's scorecard: the issue's targets, the ``--min``/``--max`` gates, the table,
and ``assistant eval`` itself (``run_eval_command``: run, print, write the report, gate)."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant.errors import InputError
from assistant.eval.metrics import (
    ANSWER_METRICS,
    COST_METRICS,
    HIGHER_IS_BETTER,
    QUALITY_METRICS,
    RETRIEVAL_METRICS,
)

if TYPE_CHECKING:
    from assistant.config import Settings
    from assistant.eval.questions import Question
    from assistant.eval.runner import EvalReport, Progress

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
        if measured is None:
            return f"{self.metric}: not measured (no question of the set measures it); " \
                   f"needs {_bound(self.bound, self.value)}"
        if (measured < self.value) if self.bound == "min" else (measured > self.value):
            return f"{self.metric} = {measured:.4g}, needs {_bound(self.bound, self.value)}"
        return None


def _bound(bound: str, value: float) -> str:
    """A gate or target as written in the table and the report: ">= 0.95", "<= 0"."""
    return f"{'>=' if bound == 'min' else '<='} {value:g}"


def parse_thresholds(
    minimums: Sequence[str], maximums: Sequence[str], measured: Sequence[str]
) -> list[Threshold]:
    """``METRIC=VALUE`` options as gates; names must be among ``measured`` in this mode."""
    gates = []
    for bound, options in (("min", minimums), ("max", maximums)):
        for option in options:
            name, _, raw = option.partition("=")  # without "=", raw is "" and not a number
            name = name.strip()
            try:
                value = float(raw)
            except ValueError:
                raise InputError(
                    f"--{bound} {option!r}: expected METRIC=VALUE, such as hit@5=0.95") from None
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
            target = _bound(*TARGETS[name]) if name in TARGETS else ""
            lines.append(f"  {LABELS.get(name, name):<{width - 2}}{cells}   {target}".rstrip())
    return "\n".join(lines)


def measured(retrieval_only: bool) -> list[str]:
    """The metric names a run of this mode measures."""
    if retrieval_only:
        return [*RETRIEVAL_METRICS, "retrieval_latency_p50", "retrieval_latency_p95"]
    return list(HIGHER_IS_BETTER)


def run_eval_command(settings: Settings, args: Any) -> int:
    """``assistant eval``: run, print the table (or JSON), write the report, apply the gates.

    Returns 0, or 1 when a ``--min``/``--max`` gate is missed (one line per missed metric on
    stderr). A malformed gate or an unknown metric raises InputError (exit 1 from the CLI).
    """
    from assistant.eval.runner import run_eval

    gates, path, questions = _read_args(args)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    target = args.report or settings.storage.cache_path() / "eval" / f"report-{stamp}.json"
    partial = target.with_name(target.stem + ".partial.jsonl")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        partial.unlink(missing_ok=True)
    except OSError as exc:
        raise InputError(
            f"cannot write the report to {target} ({exc.strerror}); pass --report") from exc
    report = run_eval(
        settings, questions, retrieval_only=args.retrieval_only, baseline=not args.no_baseline,
        questions_file=str(path), progress=None if args.retrieval_only else _kept_in(partial),
        ours=not args.baseline_only, where=args.where,
    )
    failures = missed(gates, report.metrics["assistant"]) if gates else []
    data = report.to_dict()
    data["checks"] = {
        "thresholds": [f"{g.metric} {_bound(g.bound, g.value)}" for g in gates],
        "missed": failures,
        "behind_baseline": behind_baseline(report.metrics),
    }
    target.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    partial.unlink(missing_ok=True)
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        _print_table(report, data, f"{len(questions)} questions ({args.split})", settings)
    print(f"report: {target}", file=sys.stderr if args.json else sys.stdout)
    for failure in failures:
        print(f"missed: {failure}", file=sys.stderr)
    return 1 if failures else 0


def _read_args(args: Any) -> tuple[list[Any], Path, list[Question]]:
    """(gates, questions file, questions), each checked, with --where, before anything runs."""
    from assistant import resources
    from assistant.api import parse_where
    from assistant.eval.questions import load_questions

    gates = parse_thresholds(args.min, args.max, measured(args.retrieval_only))
    parse_where(args.where)  # a bad --where fails before anything runs
    if args.baseline_only and (gates or args.no_baseline):
        raise InputError("--baseline-only runs the baseline alone: it takes no --min, --max "
                         "or --no-baseline")
    if args.limit is not None and args.limit < 1:
        raise InputError("--limit must be at least 1")
    path = args.questions or resources.eval_questions()
    split = None if args.split == "both" else args.split
    return gates, path, load_questions(path, split)[: args.limit]


def _kept_in(partial: Path) -> Progress:
    """Progress that keeps each question's record in ``partial`` (a long run keeps what it has
    done so far, should it be interrupted) and prints a line for it on stderr."""
    def progress(pipeline: str, n: int, total: int, record: dict[str, Any],
                 seconds: float) -> None:
        with partial.open("a", encoding="utf-8") as out:
            out.write(json.dumps({"pipeline": pipeline, **record}, ensure_ascii=False) + "\n")
        print(f"[{pipeline} {n}/{total}] {record['id']} {seconds:.1f} s", file=sys.stderr,
              flush=True)
    return progress


def _print_table(report: EvalReport, data: dict[str, Any], what: str,
                 settings: Settings) -> None:
    heading = (f"{what}, {report.mode}, {report.seconds:.1f} s ({report.machine}; "
               f"k={settings.retrieval.k})")
    print(render_table(report.columns(), heading))
    for note in report.notes:
        print(f"note: {note}")
    behind = data["checks"]["behind_baseline"]
    if "baseline" in report.metrics:
        print("baseline better on: " + ", ".join(behind) if behind
              else "assistant at least as good as the baseline on every quality metric")
