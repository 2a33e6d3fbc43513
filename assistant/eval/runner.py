"""Evaluation: run the question set through the assistant and the baseline, score both.

``run_eval`` is the library entry point; ``assistant eval`` calls it through
``scorecard.run_eval_command`` (which prints the table and applies the ``--min``/``--max``
gates). The metrics are defined in ``assistant.eval.metrics`` and stated in
``docs/quality.md``.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant.eval.metrics import (
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
    by_split: dict[str, dict[str, dict[str, float | None]]]
    by_type: dict[str, dict[str, dict[str, float | None]]]
    questions: dict[str, list[dict[str, Any]]]
    notes: tuple[str, ...]
    seconds: float

    def columns(self) -> dict[str, dict[str, float | None]]:
        """The table's columns: each pipeline, per split when the run had several."""
        if all(len(s) < 2 for s in self.by_split.values()):
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
    with suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
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
        notes.append("retrieval-only: follow-ups are retrieved with the last history question "
                     "and the follow-up joined, not with the model's rewrite")
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
    questions_file: str = "",
    progress: Progress | None = None,
    where: Sequence[str] = (),
) -> EvalReport:
    """Score the assistant (unless not ``ours``) and the tutorial baseline over the bundled
    corpus on ``questions``; the assistant's index must exist. The assistant retrieves only
    papers ``where`` (``--where`` expressions) matches."""
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
        runs["baseline"] = _baseline_run(assistant, questions, titles, notes, retrieval_only,
                                         progress)
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


def _baseline_run(assistant: Assistant, questions: Sequence[Question], titles: dict[str, str],
                  notes: list[str], retrieval_only: bool, progress: Progress | None,
                  ) -> list[tuple[Outcome, dict[str, Any]]]:
    """The tutorial baseline over the bundled corpus, with the assistant's models; a note
    when it indexes other papers than the assistant."""
    from assistant import resources
    from assistant.eval.baseline import open_baseline
    from assistant.ingest.corpus import load_papers

    papers = load_papers([resources.bundled_corpus_dir()])
    if {p.id for p in papers} != titles.keys():
        notes.append("the baseline indexes a different set of papers than the assistant")
    llm = None if retrieval_only else assistant.llm
    with open_baseline(papers, assistant.embeddings, llm,
                       assistant.settings.retrieval.k) as pipeline:
        return _each("baseline", questions, progress,
                     lambda q: _run_baseline(pipeline, q, retrieval_only))

