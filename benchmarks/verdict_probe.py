"""The model's judgement of whether an abstract answers a yes/no question at all (yes or no):
measure it on dev and choose ``verdict_threshold`` (assistant/answer/chain.py, ``says_either``).

    python benchmarks/verdict_probe.py REPORT.json [REPORT.json …] --out rows.jsonl

Reads eval reports (``assistant eval --report``) and takes every question whose answer fell back
to the abstract's sentences ("The abstract of X does not say yes or no in so many words"); for
each, asks the judge in ``prompts/judge_verdict.md`` about the cited paper (its abstract as the
judge reads it: the first 1,200 characters) and writes one JSON line: the question id, whether
it is answerable, and P(yes). The threshold is chosen between the answerable and unanswerable
values on dev (test is only reported).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from assistant.api import Assistant  # noqa: E402
from assistant.eval.questions import load_questions  # noqa: E402
from assistant.types import Source  # noqa: E402

FALLBACK = "does not say yes or no in so many words"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    questions = {q.id: q for q in load_questions(ROOT / "data" / "eval" / "questions.jsonl")}
    assistant = Assistant()
    judge = assistant.judge
    if judge is None:
        raise SystemExit("the configured model gives no token probabilities: no judge to probe")
    papers = {p.id: p for p in assistant.papers()}
    with args.out.open("w", encoding="utf-8") as out:
        for report in args.reports:
            for row in json.loads(report.read_text(encoding="utf-8"))["questions"]["assistant"]:
                if FALLBACK not in row["answer"] or not row["cited"]:
                    continue
                paper = papers[row["cited"][0]]
                source = Source(paper.id, paper.title, paper.abstract, 0.0,
                                passages=(paper.abstract,))
                p_yes = judge(questions[row["id"]].text, source, "judge_verdict")
                line = {"id": row["id"], "split": row["split"],
                        "answerable": not row["expect_abstain"], "p_yes": round(p_yes or 0.0, 4)}
                out.write(json.dumps(line) + "\n")
                print(line, flush=True)


if __name__ == "__main__":
    main()
