"""Fit the support model (assistant/answer/support.py) on the dev split and choose its threshold.

    python benchmarks/calibrate.py                 # print the fit and both splits' figures
    python benchmarks/calibrate.py --write         # also save assistant/data/support.json
    python benchmarks/calibrate.py --plot docs/eval/support-calibration.png

Paper level: each retrieved paper of each dev question is a row, labelled 1 when it is a
gold paper of the question; a logistic regression on ``support.FEATURES`` is fitted to those
rows. Question level: a question is answered when its best paper's support reaches the
threshold; the threshold is the one that abstains on the most unanswerable dev questions while
refusing at most ``--max-false`` of the answerable ones whose gold paper was retrieved; the
``relative`` share is the largest that keeps 97 % of the retrieved gold papers of the dev
"which papers" questions. The test split is scored with the fitted model and threshold only, to report.

Needs the bundled index (``assistant index``); no language model runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from assistant import resources  # noqa: E402
from assistant.answer.support import (  # noqa: E402
    FEATURES,
    Calibration,
    features,
    named,
)
from assistant.text.sentences import expansions  # noqa: E402
from assistant.api import Assistant  # noqa: E402
from assistant.eval.questions import Question, load_questions  # noqa: E402


def rows(assistant: Assistant, questions: list[Question], k: int) -> list[dict]:
    """Per question: its retrieved papers' features and whether each is gold."""
    out = []
    for q in questions:
        text = q.joined()
        sources = assistant.retriever.retrieve(text, k)
        spelled = expansions(text, [f"{s.title} {s.text}" for s in sources])
        papers = [
            {"paper_id": s.paper_id, "gold": s.paper_id in q.gold, "named": named(text, s),
             "features": features(text, s, assistant.retriever.rarity, spelled)}
            for s in sources
        ]
        out.append({"id": q.id, "type": q.kind, "answerable": not q.expect_abstain,
                    "gold_retrieved": any(p["gold"] for p in papers), "papers": papers})
    return out


def fit(data: list[dict], l2: float = 0.01, steps: int = 4000) -> tuple[dict[str, float], float]:
    """Logistic regression by gradient descent on the paper rows (gold or not)."""
    x = np.array([[p["features"][f] for f in FEATURES] for q in data for p in q["papers"]])
    y = np.array([float(p["gold"]) for q in data for p in q["papers"]])
    w, b = np.zeros(x.shape[1]), 0.0
    positive = y.mean()
    weight = np.where(y == 1, 0.5 / positive, 0.5 / (1 - positive))  # classes balanced
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(x @ w + b)))
        grad = weight * (p - y)
        w -= 0.5 * (x.T @ grad / len(y) + l2 * w)
        b -= 0.5 * grad.mean()
    return dict(zip(FEATURES, map(float, w), strict=True)), float(b)


def support(model: Calibration, paper: dict) -> float:
    """As ``support.score_sources`` gives it: a paper the question names is at the threshold."""
    score = model.score(paper["features"])
    return max(score, model.threshold) if paper["named"] else score


def best_scores(data: list[dict], model: Calibration) -> list[tuple[float, dict]]:
    return [(max((support(model, p) for p in q["papers"]), default=0.0), q) for q in data]


def decisions(data: list[dict], model: Calibration, threshold: float) -> dict[str, float]:
    """Abstention recall, false abstention and the paper-level figures at a threshold."""
    model = Calibration(model.weights, model.bias, threshold)
    scored = best_scores(data, model)
    unanswerable = [s for s, q in scored if not q["answerable"]]
    answerable = [s for s, q in scored if q["answerable"] and q["gold_retrieved"]]
    gold = [support(model, p) for q in data for p in q["papers"] if p["gold"]]
    other = [support(model, p) for q in data for p in q["papers"]
             if not p["gold"] and q["answerable"]]
    kept_gold = sum(s >= threshold for s in gold)
    kept_other = sum(s >= threshold for s in other)
    return {
        "abstention_recall": sum(s < threshold for s in unanswerable) / max(len(unanswerable), 1),
        "false_abstention_rate": sum(s < threshold for s in answerable) / max(len(answerable), 1),
        "gold_papers_kept": kept_gold / max(len(gold), 1),
        "kept_papers_gold": kept_gold / max(kept_gold + kept_other, 1),
        "unanswerable": len(unanswerable), "answerable": len(answerable),
    }


def choose(data: list[dict], model: Calibration, max_false: float) -> float:
    candidates = sorted({round(s, 4) for s, _ in best_scores(data, model)})
    best = (-1.0, 0.0)
    for t in candidates:
        d = decisions(data, model, t)
        if d["false_abstention_rate"] <= max_false and d["abstention_recall"] > best[0]:
            best = (d["abstention_recall"], t)
    return best[1]


def lists(data: list[dict], model: Calibration, relative: float) -> dict[str, float]:
    """Precision and recall of the papers shown for "which papers" questions (gold papers
    retrieved count for recall)."""
    tp = fp = fn = 0
    for q in data:
        if q["type"] != "multi":
            continue
        scored = [(support(model, p), p["gold"]) for p in q["papers"]]
        top = max((s for s, _ in scored), default=0.0)
        kept = [g for s, g in scored if s >= model.threshold and s >= relative * top]
        tp += sum(kept)
        fp += len(kept) - sum(kept)
        fn += sum(g for _, g in scored) - sum(kept)
    return {"precision": tp / max(tp + fp, 1), "recall": tp / max(tp + fn, 1)}


def choose_relative(data: list[dict], model: Calibration, min_recall: float = 0.97) -> float:
    """The largest share of the best paper's support that keeps ``min_recall`` of the gold
    papers of the dev "which papers" questions."""
    best = 0.0
    for share in np.arange(0.0, 0.96, 0.05):
        if lists(data, model, float(share))["recall"] >= min_recall:
            best = round(float(share), 2)
    return best


def curve(data: list[dict], model: Calibration) -> list[tuple[float, float, float]]:
    """(threshold, precision, recall) of "answer": precision = answered questions that are
    answerable, recall = answerable questions answered."""
    points = []
    for t in np.linspace(0, 1, 201):
        scored = best_scores(data, Calibration(model.weights, model.bias, float(t)))
        answered = [q for s, q in scored if s >= t]
        answerable = [q for _, q in scored if q["answerable"]]
        right = sum(q["answerable"] for q in answered)
        points.append((float(t), right / len(answered) if answered else 1.0,
                       right / max(len(answerable), 1)))
    return points


def plot(path: Path, curves: dict[str, list], model: Calibration) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 4.2))
    for name, points in curves.items():
        ax.plot([r for _, _, r in points], [p for _, p, _ in points], label=name)
        at = min(points, key=lambda pt: abs(pt[0] - model.threshold))
        ax.scatter([at[2]], [at[1]], zorder=3)
    ax.set_xlabel("recall: answerable questions answered")
    ax.set_ylabel("precision: answered questions that are answerable")
    ax.set_title(f"support threshold {model.threshold:.3f} (dot), chosen on dev")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--max-false", type=float, default=0.03)
    parser.add_argument("--write", action="store_true", help="save assistant/data/support.json")
    parser.add_argument("--plot", type=Path)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()

    assistant = Assistant()
    path = resources.eval_questions()
    dev = rows(assistant, load_questions(path, "dev"), args.k)
    test = rows(assistant, load_questions(path, "test"), args.k)
    weights, bias = fit(dev)
    model = Calibration(weights, bias, 0.5)
    threshold = choose(dev, model, args.max_false)
    model = Calibration(weights, bias, threshold)
    relative = choose_relative(dev, model)
    result = {
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "weights": weights, "bias": bias, "threshold": threshold, "relative": relative,
        "dev_lists": lists(dev, model, relative), "test_lists": lists(test, model, relative),
        "dev": decisions(dev, model, threshold), "test": decisions(test, model, threshold),
    }
    print(json.dumps(result, indent=2))
    if args.write:
        target = ROOT / "assistant" / "data" / "support.json"
        kept = json.loads(target.read_text()) if target.exists() else {}  # the judges' fits
        target.write_text(json.dumps({**kept, "weights": weights, "bias": round(bias, 4),
                                      "threshold": threshold, "relative": relative,
                                      "fitted_on": "dev",
                                      "created": result["created"]}, indent=2) + "\n")
        print(f"wrote {target}", file=sys.stderr)
    if args.plot:
        plot(args.plot, {"dev": curve(dev, model), "test": curve(test, model)}, model)
        print(f"plot: {args.plot}", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
