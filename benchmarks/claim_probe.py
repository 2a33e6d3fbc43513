"""The model's judgement of whether a cited abstract states a sentence the checks kept: measured
on dev, not used by the assistant (docs/quality.md says why).

    python benchmarks/claim_probe.py REPORT.json --out rows.jsonl

Reads an eval report (``assistant eval --report``), takes every sentence the model wrote in an
answer and the checks kept (not the quoted lines, not our own "does not say yes or no" line)
that uses a word neither its cited abstracts nor the question use, and asks the model, shown the
cited paper's title and abstract and the sentence, "Does the abstract state this claim?"; P(yes)
of its first token, the highest over the sentence's cited papers, is written with the sentence.
``UNSTATED`` holds the sentences of dev's answers at 9595b21 that, read by hand against their
abstracts, state something the abstract does not.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langchain_core.messages import HumanMessage  # noqa: E402

from assistant.api import Assistant  # noqa: E402
from assistant.eval.questions import load_questions  # noqa: E402
from assistant.text.sentences import split_sentences  # noqa: E402
from assistant.text.stems import terms  # noqa: E402

PROMPT = ("Paper: {title}\nAbstract: {abstract}\n\nClaim: {claim}\n\n"
          "Does the abstract state this claim? Answer yes or no.")
# (question id, how the sentence begins)
UNSTATED = {("a-007", "This is achieved by allowing"), ("a-027", "QAvatar judges whether"),
            ("a-027", "If the performance on the target"), ("r-011", "The calibration-test split"),
            ("s-032", "Existing approaches to tuning"), ("o-029", "AIGB-Pearl and the off-policy"),
            ("o-029", "On the other hand, the off-policy"), ("l-020", "Qflex and Value Matching")}


def written(answer: str) -> list[str]:
    """The model's own sentences of an answer, with their markers: not the quoted lines."""
    lines = [ln for ln in answer.split("\n")
             if not ln.startswith("From the abstract") and ': "' not in ln]
    return [s for ln in lines for s in split_sentences(ln) if re.search(r"\[\d+\]", s)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    report = json.loads(args.report.read_text(encoding="utf-8"))
    questions = {q.id: q for q in load_questions(ROOT / "data" / "eval" / "questions.jsonl")}
    assistant = Assistant()
    papers_by_id = {p.id: p for p in assistant.store.papers()}
    yes_probability = getattr(assistant.llm, "yes_probability", None)
    if yes_probability is None:
        raise SystemExit("the configured model gives no token probabilities: nothing to probe")
    with args.out.open("w", encoding="utf-8") as out:
        for row in report["questions"]["assistant"]:
            if row["abstained"]:
                continue
            question = questions[row["id"]].text
            for raw in written(row["answer"]):
                claim = re.sub(r"\s*\[\d+\]", "", raw).strip()
                ids = [row["cited"][int(n) - 1] for n in re.findall(r"\[(\d+)\]", raw)
                       if int(n) <= len(row["cited"])]
                papers = [papers_by_id[i] for i in ids[:2] if i in papers_by_id]
                if "in so many words" in claim or not papers or len(claim.split()) < 4:
                    continue
                source = " ".join(f"{p.title}. {p.abstract}" for p in papers)
                if not set(terms(claim)) - set(terms(source)) - set(terms(question)):
                    continue
                started = time.perf_counter()
                p_yes = max(yes_probability([HumanMessage(PROMPT.format(
                    title=p.title, abstract=p.abstract[:2000], claim=claim))]) for p in papers)
                unstated = any(row["id"] == i and claim.startswith(s) for i, s in UNSTATED)
                out.write(json.dumps({
                    "id": row["id"], "claim": claim, "papers": ids, "unstated": unstated,
                    "p_yes": round(p_yes, 4),
                    "seconds": round(time.perf_counter() - started, 2)}) + "\n")


if __name__ == "__main__":
    main()
