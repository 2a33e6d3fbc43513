"""The model's yes/no judgement of "which paper …?" answers (assistant/answer/judge.py): measure it on
dev and choose its threshold.

    python benchmarks/judge_probe.py --out judge.jsonl [--split dev] [--limit N]
    python benchmarks/judge_probe.py --from judge.jsonl --write   # choose and save the threshold
    python benchmarks/judge_probe.py --from judge.jsonl --plot docs/eval/judge-dev.png

For each question of the split that asks for one paper (``intent.identifies``), the retrieved
papers the support model backs are put to the judge, best supported first, up to
``AnswerConfig.judge_papers`` of them, exactly as ``answer.generate`` does; one JSON line per
question with each paper's P(yes), whether it is a gold paper, and the seconds it took.

The threshold: the answer is the first judged paper at or above it, else "not covered". The one
chosen is the one that maximises (unanswerable questions abstained) - (answerable questions
whose gold paper was backed that are answered wrongly or not at all), over dev only; ``--write``
saves it as ``judge_threshold`` in assistant/data/support.json, with ``judge_within``: the
largest share of the first paper's support a second paper needs to be judged at all that keeps
both dev figures (each judgement is the model reading a whole abstract, ~15 s on 2 cores).
Test is scored to report.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from assistant import resources  # noqa: E402
from assistant.answer import support  # noqa: E402
from assistant.answer.intent import identifies  # noqa: E402
from assistant.answer.support import calibration  # noqa: E402
from assistant.api import Assistant  # noqa: E402
from assistant.eval.questions import load_questions  # noqa: E402
from assistant.types import Source  # noqa: E402


def probe(split: str, out: Path, limit: int | None, on: str, null: bool,
          only: set[str] | None = None) -> None:
    """Ask each which-paper question through the real pipeline (``Assistant.ask``) with the
    judge's threshold above 1, so every paper ``generate`` would judge is judged and none is
    accepted; record what the judge said of each."""
    assistant = Assistant()
    real = assistant.judge
    if real is None:
        raise SystemExit("the configured model gives no token probabilities: no judge to probe")
    shipped = support.calibration()
    support.calibration = lambda: replace(shipped, judge=1.01, judge_on=on, judge_within=0.0)  # judge them all
    calls: list[dict] = []

    def recording(question: str, source: Source, wording: str = "judge") -> float | None:
        started = time.perf_counter()
        value = real(question, source, wording)
        if wording != "judge":  # the yes/no verdict (benchmarks/verdict_probe.py), not a paper
            return value
        calls.append({"paper_id": source.paper_id, "support": source.support,
                      "p_yes": round(value or 0.0, 4), "chars": len(" ".join(source.passages)),
                      "seconds": round(time.perf_counter() - started, 2)})
        return value

    assistant._judge = (recording,)
    questions = [q for q in load_questions(resources.eval_questions(), split)
                 if identifies(q.joined()) and q.kind != "followup"
                 and (only is None or q.id in only)][:limit]
    with out.open("w", encoding="utf-8") as handle:
        for q in questions:
            calls.clear()
            assistant.ask(q.joined())
            papers = [dict(c, gold=c["paper_id"] in q.gold) for c in calls]
            row = {"id": q.id, "split": q.split, "on": on, "answerable": not q.expect_abstain,
                   "gold_backed": any(p["gold"] for p in papers), "papers": papers}
            if null:  # the question's own pull towards "yes", with no paper to read
                row["null"] = round(real(q.joined(), Source("", "N/A", "N/A", 0.0,
                                                            passages=("N/A",))) or 0.0, 4)
            handle.write(json.dumps(row) + "\n")
            handle.flush()
            print(q.id, [(p["gold"], p["p_yes"]) for p in papers], row.get("null"), flush=True)


def judged(row: dict, within: float = 0.0) -> list[dict]:
    """The papers generate() puts to the judge: after the first, only those whose support is at
    least ``within`` of the first's."""
    papers = row["papers"]
    return [p for p in papers if p["support"] >= within * papers[0]["support"]] if papers else []


def outcome(row: dict, threshold: float, within: float = 0.0) -> str:
    """'abstain', 'right' (a gold paper) or 'wrong', as generate() decides at ``threshold``."""
    for paper in judged(row, within):
        if paper["p_yes"] >= threshold:
            return "right" if paper["gold"] else "wrong"
    return "abstain"


def figures(rows: list[dict], threshold: float, within: float = 0.0) -> dict[str, float]:
    unanswerable = [r for r in rows if not r["answerable"]]
    answerable = [r for r in rows if r["answerable"] and r["gold_backed"]]
    abstained = sum(outcome(r, threshold, within) == "abstain" for r in unanswerable)
    right = sum(outcome(r, threshold, within) == "right" for r in answerable)
    missed = sum(outcome(r, threshold, within) == "abstain" for r in answerable)
    # judgements made: the answer stops at the first paper accepted
    calls = 0
    for r in rows:
        for paper in judged(r, within):
            calls += 1
            if paper["p_yes"] >= threshold:
                break
    return {"threshold": threshold, "within": within,
            "abstention_recall": abstained / len(unanswerable) if unanswerable else 0.0,
            "right": right / len(answerable) if answerable else 0.0,
            "false_abstention": missed / len(answerable) if answerable else 0.0,
            "judgements": calls, "questions": len(rows),
            "unanswerable": len(unanswerable), "answerable_backed": len(answerable)}


def choose(rows: list[dict]) -> dict[str, float]:
    """The threshold that best separates (near misses abstained + gold given), then the
    largest ``within`` that keeps both figures and so spares the most judgements."""
    grid = [round(0.5 + 0.01 * i, 2) for i in range(46)]
    best = max((figures(rows, t) for t in grid),
               key=lambda f: (f["abstention_recall"] + f["right"] - 1, -f["threshold"]))
    keeps = [figures(rows, best["threshold"], w) for w in [round(0.05 * i, 2) for i in range(21)]]
    return max((f for f in keeps if f["abstention_recall"] >= best["abstention_recall"]
                and f["right"] >= best["right"]), key=lambda f: f["within"])


def plot(path: Path, rows: list[dict], threshold: float) -> None:
    """Each question's judged papers: P(yes) of gold papers and of the nearest papers of near
    misses, and where the answer flips as the threshold moves."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    gold = [p["p_yes"] for r in rows if r["answerable"] for p in r["papers"] if p["gold"]]
    near = [r["papers"][0]["p_yes"] for r in rows if not r["answerable"] and r["papers"]]
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.8))
    left.hist([gold, near], bins=[0.5 + 0.025 * i for i in range(21)], stacked=False,
              label=[f"gold paper, answerable ({len(gold)})",
                     f"nearest paper, near miss ({len(near)})"])
    left.axvline(threshold, color="k", linestyle="--", linewidth=1)
    left.set_xlabel("P(yes) from the first token")
    left.set_ylabel("papers")
    left.legend(fontsize=8)
    grid = [0.5 + 0.01 * i for i in range(50)]
    curves = [figures(rows, t) for t in grid]
    right.plot(grid, [c["abstention_recall"] for c in curves], label="near misses abstained")
    right.plot(grid, [c["right"] for c in curves], label="answerable: gold paper given")
    right.axvline(threshold, color="k", linestyle="--", linewidth=1)
    right.set_xlabel("threshold")
    right.grid(alpha=0.3)
    right.legend(fontsize=8)
    fig.suptitle(f"which-paper judge on dev; threshold {threshold:.2f} (dashed), chosen on dev")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="probe the split and write its rows here")
    parser.add_argument("--split", default="dev", choices=["dev", "test"])
    parser.add_argument("--limit", type=int)
    parser.add_argument("--on", default="abstract", choices=["abstract", "excerpt"],
                        help="what the judge reads: the whole abstract or the excerpt shown")
    parser.add_argument("--null", action="store_true",
                        help="also record each question's P(yes) with no paper (its prior)")
    parser.add_argument("--only", help="a file of question ids, one per line: probe just these")
    parser.add_argument("--from", dest="source", type=Path, help="rows written by --out")
    parser.add_argument("--plot", type=Path, help="draw the dev P(yes) and the threshold here")
    parser.add_argument("--write", action="store_true",
                        help="save the threshold chosen on dev in assistant/data/support.json")
    args = parser.parse_args()
    if args.out:
        only = set(args.only and Path(args.only).read_text().split() or []) or None
        probe(args.split, args.out, args.limit, args.on, args.null, only)
    path = args.source or args.out
    if path is None:
        parser.error("give --out (probe) or --from (choose a threshold)")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    dev = [r for r in rows if r["split"] == "dev"]
    if dev:
        best = choose(dev)
        print(json.dumps({"dev": best}, indent=2))
        if args.write:
            target = ROOT / "assistant" / "data" / "support.json"
            data = json.loads(target.read_text(encoding="utf-8"))
            data["judge_threshold"] = best["threshold"]
            data["judge_within"] = best["within"]
            data["judge_fitted_on"] = f"dev, {len(dev)} which-paper questions"
            target.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
            print(f"wrote {target}")
        if args.plot:
            plot(args.plot, dev, calibration().judge if not args.write else best["threshold"])
    else:
        fitted = calibration()
        split = rows[0]["split"] if rows else args.split
        print(json.dumps({split: figures(rows, fitted.judge, fitted.judge_within)}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
