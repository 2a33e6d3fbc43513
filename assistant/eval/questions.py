"""The evaluation question set: one JSON object per line, written by hand from the abstracts.

Each question belongs to a split: ``dev`` (the system may be tuned on it) or ``test`` (frozen:
run only to report; a change that helps dev but not test is not an improvement).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from assistant.errors import InputFileError

KINDS = ("factual", "numeric", "paraphrase", "identify", "multi", "unanswerable", "followup",
         "injection")
SPLITS = ("dev", "test")


@dataclass(frozen=True)
class Question:
    """One question of the set, with what a right answer holds."""

    id: str
    kind: str
    text: str
    gold: tuple[str, ...] = ()
    key_facts: tuple[tuple[str, ...], ...] = ()
    history: tuple[tuple[str, str], ...] = ()
    expect_abstain: bool = False
    split: str = "dev"
    style: str = ""  # how it is phrased ("which paper", "typo", "point me to" …)

    def joined(self) -> str:
        """The question with the last history question before it (a follow-up without a model)."""
        return f"{self.history[-1][0]} {self.text}" if self.history else self.text


def load_questions(path: Path, split: str | None = None) -> list[Question]:
    """The question set (only ``split``'s questions when given), one JSON object per line; a
    bad line is named in the error."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputFileError(f"{path}: cannot read the question file ({exc.strerror})") from exc
    questions: list[Question] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row.get("gold", []), list) or not all(
                isinstance(fact, list) for fact in row.get("key_facts", [])
            ):
                raise TypeError("gold must be a list and key_facts a list of lists of alternatives")
            question = Question(
                id=str(row["id"]), kind=str(row.get("type", "factual")), text=str(row["question"]),
                gold=tuple(str(g) for g in row.get("gold", [])),
                key_facts=tuple(tuple(str(a) for a in fact) for fact in row.get("key_facts", [])),
                history=tuple((str(q), str(a)) for q, a in row.get("history", [])),
                expect_abstain=bool(row.get("expect_abstain", False)),
                split=str(row.get("split", "dev")), style=str(row.get("style", "")),
            )
            if question.split not in SPLITS:
                raise ValueError(f"split must be one of {', '.join(SPLITS)}, not {question.split!r}")
        except (ValueError, KeyError, TypeError) as exc:
            raise InputFileError(
                f"{path}:{number}: not a question ({type(exc).__name__}: {exc}); each line needs "
                "id, question, and optionally type, gold, key_facts, history, expect_abstain"
            ) from exc
        if any(q.id == question.id for q in questions):
            raise InputFileError(f"{path}:{number}: the id {question.id!r} is used twice")
        questions.append(question)
    if not questions:
        raise InputFileError(f"{path}: no questions in the file")
    if split is not None:
        questions = [q for q in questions if q.split == split]
        if not questions:
            raise InputFileError(f"{path}: no questions in the {split!r} split")
    return questions
