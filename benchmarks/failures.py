"""Every failing question of an eval report, one line each on why, for docs/quality.md.

    python benchmarks/failures.py REPORT.json [--questions data/eval/questions.jsonl]
    python benchmarks/failures.py NEW.json --against OLD.json   # what changed between two runs

A question fails when the assistant abstains on an answerable one, answers an unanswerable
one with citations, misses a key fact, cites a paper that is not gold, or leaves a gold paper
out. The reason is read off the report: the check that dropped the sentence, the support
gate, or the answer's opening words.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _facts(record: dict, question: dict) -> list[str]:
    """The key facts the answer missed, each by its first wording."""
    found = record.get("facts_found") or []
    facts = question.get("key_facts") or []
    return [alts[0] for alts, ok in zip(facts, found, strict=False) if not ok]


def why(record: dict, question: dict) -> str | None:
    """One line on why a question failed, or None when it passed."""
    record = {**record, "answer": " ".join(record["answer"].split())}
    gold, cited = set(record["gold"]), set(record["cited"])
    if record["expect_abstain"]:
        if record["abstained"] and not cited:
            return None
        return f'answered an unanswerable question with citations: "{record["answer"][:90]}"'
    if record["abstained"]:
        if not record["dropped"]:
            best = max(record.get("support", {}).values(), default=0.0)
            if record.get("first_token") is not None:  # the model wrote, and said no
                return ("false abstention: the model said the sources do not answer "
                        f"(support {best:.4f})")
            return f"false abstention before the model (support {best:.4f})"
        # the last reason decided it: a dropped "Yes, …" and then the judge's no
        last = record["dropped"][-1]
        return f'false abstention: dropped "{last["sentence"][:70]}" ({last["reason"]})'
    parts = []
    missed = _facts(record, question)
    if missed:
        parts.append("missed " + " / ".join(missed))
    if cited - gold:
        parts.append(f"cited {len(cited - gold)} non-gold")
    if gold - cited:
        parts.append(f"{len(gold - cited)} gold paper{'s' if len(gold - cited) > 1 else ''} "
                     "not cited")
    if not parts:
        return None
    return "; ".join(parts) + f': "{record["answer"][:90]}"'


def lines(report: dict, questions: dict[str, dict]) -> dict[str, str]:
    """{id: "- `id` (type, style): why"} for every failing question of the report."""
    out = {}
    for record in report["questions"]["assistant"]:
        question = questions.get(record["id"], {})
        reason = why(record, question)
        if reason is None:
            continue
        kind = ", ".join(x for x in (record["type"], question.get("style")) if x)
        out[record["id"]] = f"- `{record['id']}` ({kind}): {reason}"
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--questions", type=Path, default=ROOT / "data/eval/questions.jsonl")
    parser.add_argument("--against", type=Path, help="an earlier report: print what changed")
    args = parser.parse_args()
    questions = {}
    for line in args.questions.read_text(encoding="utf-8").splitlines():
        if line.strip():
            q = json.loads(line)
            questions[q["id"]] = q
    now = lines(json.loads(args.report.read_text(encoding="utf-8")), questions)
    if args.against is None:
        total = len(json.loads(args.report.read_text(encoding="utf-8"))["questions"]["assistant"])
        print(f"{len(now)} failing of {total}:")
        print("\n".join(now.values()))
        return
    before = lines(json.loads(args.against.read_text(encoding="utf-8")), questions)
    for qid in sorted(set(now) | set(before)):
        if qid not in now:
            print(f"fixed   {before[qid]}")
        elif qid not in before:
            print(f"broken  {now[qid]}")
        elif now[qid] != before[qid]:
            print(f"changed {now[qid]}\n   was  {before[qid]}")


if __name__ == "__main__":
    main()
