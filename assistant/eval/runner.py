"""Evaluation: run the question set through the assistant and the baseline, score both.

``run_eval`` is the library entry point; ``run_eval_command`` is what ``assistant eval``
calls (it prints the table and applies the ``--min``/``--max`` gates). The metrics are
defined in ``assistant.eval.metrics`` and stated in ``docs/quality.md``.
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant.eval.metrics import (
    HIGHER_IS_BETTER,
    RANK_DEPTH,
    RETRIEVAL_METRICS,
    Outcome,
    contains_fact,
    summarise,
)
from assistant.eval.questions import KINDS, SPLITS, Question

if TYPE_CHECKING:
    from assistant.api import Assistant
    from assistant.config import Settings
    from assistant.eval.baseline import Baseline
    from assistant.ingest.corpus import Paper

FOLLOWUP_NOTE = (
    "retrieval-only: follow-ups are retrieved with the last history question and the follow-up "
    "joined, not with the model's rewrite"
)
# (pipeline, number, of how many, the question's record, seconds it took)
Progress = Callable[[str, int, int, dict[str, Any], float], None]


@dataclass(frozen=True)
class EvalReport:
    """Metrics per pipeline, per question type, and what each pipeline did per question."""

    created: str
    machine: str
    mode: str
    questions_file: str
    settings: dict[str, Any]
    metrics: dict[str, dict[str, float | None]]
    by_type: dict[str, dict[str, dict[str, float | None]]]
    questions: dict[str, list[dict[str, Any]]]
    notes: tuple[str, ...] = ()
    seconds: float = 0.0
    by_split: dict[str, dict[str, dict[str, float | None]]] | None = None

    def columns(self) -> dict[str, dict[str, float | None]]:
        """The table's columns: each pipeline, per split when the run had several."""
        if not self.by_split or all(len(s) < 2 for s in self.by_split.values()):
            return self.metrics
        return {f"{name} {split}": metrics for name, splits in self.by_split.items()
                for split, metrics in splits.items()}

    def to_dict(self) -> dict[str, Any]:
        return {
            "created": self.created, "machine": self.machine, "mode": self.mode,
            "questions_file": self.questions_file, "settings": self.settings,
            "seconds": round(self.seconds, 1), "notes": list(self.notes),
            "metrics": self.metrics, "by_split": self.by_split, "by_type": self.by_type,
            "questions": self.questions,
        }


def machine() -> str:
    """OS, architecture, core count and CPU model of this machine."""
    model = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores, {model}"


def _record(question: Question, outcome: Outcome, **extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": question.id, "split": question.split, "type": question.kind,
        "question": question.text,
        "gold": list(question.gold), "ranked": list(outcome.ranked),
        "gold_ranks": [outcome.ranked.index(g) + 1 if g in outcome.ranked else None
                       for g in question.gold],
        "retrieve_seconds": round(outcome.retrieve_seconds, 4),
    }
    if outcome.answered:
        record.update(
            answer=outcome.text, abstained=outcome.abstained,
            expect_abstain=question.expect_abstain, cited=list(outcome.cited),
            fabricated=list(outcome.fabricated),
            facts_found=[contains_fact(outcome.text, f) for f in question.key_facts],
            first_token=outcome.first_token, total_seconds=round(outcome.total_seconds, 3),
            prompt_tokens=outcome.prompt_tokens, completion_tokens=outcome.completion_tokens,
        )
    record.update(extra)
    return record


def _outcome(question: Question, ranked: Sequence[str], **answer: Any) -> Outcome:
    return Outcome(
        question_id=question.id, kind=question.kind, gold=question.gold, ranked=tuple(ranked),
        expect_abstain=question.expect_abstain, key_facts=question.key_facts, **answer,
    )


def _run_assistant(assistant: Assistant, question: Question, titles: dict[str, str],
                   retrieval_only: bool, where: Sequence[str] = ()
                   ) -> tuple[Outcome, dict[str, Any]]:
    from assistant.text.mentions import unknown_titles

    if retrieval_only:
        started = time.perf_counter()
        ranked = [s.paper_id for s in assistant.retrieve(question.joined(), k=RANK_DEPTH,
                                                          where=where)]
        outcome = _outcome(question, ranked, retrieve_seconds=time.perf_counter() - started)
        return outcome, _record(question, outcome, query=question.joined())
    answer = assistant.ask(question.text, history=list(question.history) or None, where=where)
    # the same ranking the answer's sources are the top of, taken deeper for nDCG@10
    ranked = [s.paper_id for s in assistant.retrieve(answer.question, k=RANK_DEPTH, where=where)]
    retrieved = {s.paper_id for s in answer.sources}
    fabricated = [
        f"{c.title} (not in the corpus)" if titles.get(c.paper_id) != c.title
        else f"{c.title} (not retrieved)"
        for c in answer.citations
        if titles.get(c.paper_id) != c.title or c.paper_id not in retrieved
    ] + [f"{t} (not in the corpus)" for t in unknown_titles(answer.text, titles)]
    outcome = _outcome(
        question, ranked, answered=True, text=answer.text,
        cited=tuple(c.paper_id for c in answer.citations), fabricated=tuple(fabricated),
        abstained=answer.abstained, retrieve_seconds=answer.timings.retrieve,
        first_token=answer.timings.first_token, total_seconds=answer.timings.total,
        prompt_tokens=answer.usage.prompt_tokens, completion_tokens=answer.usage.completion_tokens,
    )
    return outcome, _record(
        question, outcome, query=answer.question,
        dropped=[{"sentence": d.sentence, "reason": d.reason} for d in answer.dropped],
        support={s.paper_id: s.support for s in answer.sources},
        warnings=list(answer.warnings),
    )


def _run_baseline(baseline: Baseline, question: Question,
                  retrieval_only: bool) -> tuple[Outcome, dict[str, Any]]:
    query = question.joined()  # the tutorial pipeline has no conversation memory
    if retrieval_only:
        started = time.perf_counter()
        ranked, _ = baseline.search(query)
        outcome = _outcome(question, ranked, retrieve_seconds=time.perf_counter() - started)
        return outcome, _record(question, outcome, query=query)
    result = baseline.answer(query)
    outcome = _outcome(
        question, result.ranked, answered=True, text=result.text, cited=result.cited,
        fabricated=result.fabricated, abstained=result.abstained,
        retrieve_seconds=result.retrieve_seconds, first_token=result.first_token,
        total_seconds=result.total_seconds, prompt_tokens=result.prompt_tokens,
        completion_tokens=result.completion_tokens,
    )
    return outcome, _record(question, outcome, query=query, shown=list(result.shown))


def _by_type(outcomes: Sequence[Outcome]) -> dict[str, dict[str, float | None]]:
    kinds = sorted({o.kind for o in outcomes}, key=lambda k: (KINDS + (k,)).index(k))
    quality = [*RETRIEVAL_METRICS, "citation_precision", "citation_recall", "key_fact_recall",
               "abstention_recall", "false_abstention_rate", "fabricated_citations",
               "unanswerable_citations"]
    result = {}
    for kind in kinds:
        metrics = summarise([o for o in outcomes if o.kind == kind])
        result[kind] = {m: metrics[m] for m in quality if metrics[m] is not None}
    return result


def _by_split(questions: Sequence[Question],
              outcomes: Sequence[Outcome]) -> dict[str, dict[str, float | None]]:
    split = {q.id: q.split for q in questions}
    return {name: summarise([o for o in outcomes if split[o.question_id] == name])
            for name in SPLITS if name in split.values()}


def _notes(questions: Sequence[Question], titles: dict[str, str], retrieval_only: bool,
           baseline: bool, where: Sequence[str]) -> list[str]:
    """What a reader of the report needs to know about how this run differs."""
    notes: list[str] = []
    if retrieval_only and any(q.history for q in questions):
        notes.append(FOLLOWUP_NOTE)
    if where:
        notes.append(f"the assistant retrieved only papers where {' and '.join(where)}; the "
                     "baseline retrieved from all of them")
    if baseline:
        notes.append("baseline: follow-ups are asked as the last history question and the "
                     "follow-up joined (the tutorial pipeline has no conversation memory)")
    missing = sorted({g for q in questions for g in q.gold} - titles.keys())
    if missing:
        notes.append(f"gold papers not in the index: {', '.join(missing)}; index the corpus "
                     "the questions are about")
    return notes


def _each(name: str, questions: Sequence[Question], progress: Progress | None,
          run: Callable[[Question], tuple[Outcome, dict[str, Any]]],
          ) -> list[tuple[Outcome, dict[str, Any]]]:
    """``run`` on every question in turn, reporting each to ``progress``."""
    done: list[tuple[Outcome, dict[str, Any]]] = []
    for n, question in enumerate(questions, start=1):
        tick = time.perf_counter()
        done.append(run(question))
        if progress:
            progress(name, n, len(questions), done[-1][1], time.perf_counter() - tick)
    return done


def run_eval(
    settings: Settings,
    questions: Sequence[Question],
    *,
    assistant: Assistant | None = None,
    retrieval_only: bool = False,
    baseline: bool = True,
    ours: bool = True,
    papers: Sequence[Paper] | None = None,
    questions_file: str = "",
    progress: Progress | None = None,
    where: Sequence[str] = (),
) -> EvalReport:
    """Score the assistant (unless not ``ours``) and the tutorial baseline over ``papers``
    (default the bundled corpus) on ``questions``; the assistant's index must exist. The
    assistant retrieves only papers ``where`` (``--where`` expressions) matches."""
    from assistant.api import Assistant

    if baseline:  # before the assistant's run, not after it
        from assistant.eval.baseline import check_installed

        check_installed()
    started = time.perf_counter()
    assistant = assistant or Assistant(settings)
    titles = {p.id: p.title for p in assistant.papers(abstracts=False)}
    notes = _notes(questions, titles, retrieval_only, baseline, where)
    runs: dict[str, list[tuple[Outcome, dict[str, Any]]]] = {}
    if ours:
        runs["assistant"] = _each("assistant", questions, progress, lambda q: _run_assistant(
            assistant, q, titles, retrieval_only, where))
    if baseline:
        from assistant.eval.baseline import open_baseline

        if papers is None:
            from assistant import resources
            from assistant.ingest.corpus import load_papers

            papers = load_papers([resources.bundled_corpus_dir()])
        if {p.id for p in papers} != titles.keys():
            notes.append("the baseline indexes a different set of papers than the assistant")
        llm = None if retrieval_only else assistant.llm
        with open_baseline(papers, assistant.embeddings, llm,
                           assistant.settings.retrieval.k) as pipeline:
            runs["baseline"] = _each("baseline", questions, progress,
                                     lambda q: _run_baseline(pipeline, q, retrieval_only))
    from assistant.models.llm import model_label

    return EvalReport(
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        machine=machine(),
        mode="retrieval-only" if retrieval_only else "full",
        questions_file=questions_file,
        settings={
            "k": assistant.settings.retrieval.k, "embeddings": assistant.settings.models.embeddings,
            "model": None if retrieval_only else model_label(assistant.llm),
            "questions": len(questions), "where": list(where),
        },
        metrics={name: summarise([o for o, _ in run]) for name, run in runs.items()},
        by_split={name: _by_split(questions, [o for o, _ in run]) for name, run in runs.items()},
        by_type={name: _by_type([o for o, _ in run]) for name, run in runs.items()},
        questions={name: [r for _, r in run] for name, run in runs.items()},
        notes=tuple(notes),
        seconds=time.perf_counter() - started,
    )


def measured(retrieval_only: bool) -> list[str]:
    """The metric names a run of this mode measures."""
    if retrieval_only:
        return [*RETRIEVAL_METRICS, "retrieval_latency_p50", "retrieval_latency_p95"]
    return list(HIGHER_IS_BETTER)


def report_path(settings: Settings, given: Path | None) -> Path:
    """``given``, or ``<cache>/eval/report-<UTC timestamp>.json``."""
    if given is not None:
        return given
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return settings.storage.cache_path() / "eval" / f"report-{stamp}.json"


def run_eval_command(settings: Settings, args: Any) -> int:
    """``assistant eval``: run, print the table (or JSON), write the report, apply the gates.

    Returns 0, or 1 when a ``--min``/``--max`` gate is missed (one line per missed metric on
    stderr). A malformed gate or an unknown metric raises InputError (exit 1 from the CLI).
    """
    import sys

    from assistant.errors import InputError
    from assistant.eval.scorecard import behind_baseline, missed

    gates, where, path, questions = _read_args(args)
    target = report_path(settings, args.report)
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
        ours=not args.baseline_only, where=where,
    )
    failures = missed(gates, report.metrics["assistant"]) if gates else []
    data = report.to_dict()
    data["checks"] = {
        "thresholds": [f"{g.metric} {'>=' if g.bound == 'min' else '<='} {g.value:g}"
                       for g in gates],
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


def _read_args(args: Any) -> tuple[list[Any], list[str], Path, list[Question]]:
    """(gates, --where expressions, questions file, questions), each checked before anything
    runs."""
    from assistant import resources
    from assistant.api import parse_where
    from assistant.errors import InputError
    from assistant.eval.questions import load_questions
    from assistant.eval.scorecard import parse_thresholds

    gates = parse_thresholds(args.min, args.max, measured(args.retrieval_only))
    where = list(getattr(args, "where", None) or [])
    parse_where(where)  # a bad --where fails before anything runs
    if args.baseline_only and (gates or args.no_baseline):
        raise InputError("--baseline-only runs the baseline alone: it takes no --min, --max "
                         "or --no-baseline")
    if args.limit is not None and args.limit < 1:
        raise InputError("--limit must be at least 1")
    path = args.questions or resources.eval_questions()
    split = None if args.split == "both" else args.split
    return gates, where, path, load_questions(path, split)[: args.limit]


def _kept_in(partial: Path) -> Progress:
    """Progress that keeps each question's record in ``partial`` (a long run keeps what it has
    done so far, should it be interrupted) and prints a line for it on stderr."""
    import sys

    def progress(pipeline: str, n: int, total: int, record: dict[str, Any],
                 seconds: float) -> None:
        with partial.open("a", encoding="utf-8") as out:
            out.write(json.dumps({"pipeline": pipeline, **record}, ensure_ascii=False) + "\n")
        print(f"[{pipeline} {n}/{total}] {record['id']} {seconds:.1f} s", file=sys.stderr,
              flush=True)
    return progress


def _print_table(report: EvalReport, data: dict[str, Any], what: str,
                 settings: Settings) -> None:
    from assistant.eval.scorecard import render_table

    heading = (f"{what}, {report.mode}, {report.seconds:.1f} s ({report.machine}; "
               f"k={settings.retrieval.k})")
    print(render_table(report.columns(), heading))
    for note in report.notes:
        print(f"note: {note}")
    behind = data["checks"]["behind_baseline"]
    if "baseline" in report.metrics:
        print("baseline better on: " + ", ".join(behind) if behind
              else "assistant at least as good as the baseline on every quality metric")
