"""Plot indexing throughput and retrieval latency against corpus size, ours and the tutorial's.

    python benchmarks/plot.py benchmarks/results/1000-*.json ... --out docs/img/scaling.png
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def series(rows: list[dict], key: str) -> tuple[list[int], list[float]]:
    """(papers, value) for the runs that measured ``key`` (large runs may skip some parts)."""
    measured = [r for r in rows if key in r]
    return [r["papers"] for r in measured], [r[key] for r in measured]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", type=Path, help="JSON files from run.py --out")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = sorted((json.loads(p.read_text()) for p in args.results), key=lambda r: r["papers"])
    n = [r["papers"] for r in rows]
    fig, (left, middle, right) = plt.subplots(1, 3, figsize=(15, 4.2))
    left.plot(n, [r["index_papers_per_s"] for r in rows], "o-", label="assistant")
    left.plot(*series(rows, "tutorial_index_papers_per_s"), "s--", label="LangChain tutorial")
    left.set(title="Indexing throughput", xlabel="papers", ylabel="papers / s", xscale="log")
    left.set_ylim(bottom=0)  # from zero, so a gap of a few percent looks like one
    middle.plot(n, [r["reindex_seconds"] for r in rows], "o-", label="assistant (unchanged corpus)")
    timed = [r for r in rows if "tutorial_reindex_ratio" in r]  # not timed at large N
    middle.plot([r["papers"] for r in timed],
                [r["tutorial_reindex_ratio"] * r["tutorial_index_seconds"] for r in timed], "s--",
                label="LangChain tutorial (re-embeds all)")
    middle.set(title="Re-indexing an unchanged corpus", xlabel="papers", ylabel="seconds",
               xscale="log", yscale="log")
    right.plot(n, [r["retrieve_p50_ms"] for r in rows], "o-", label="assistant hybrid p50")
    right.plot(n, [r["retrieve_p95_ms"] for r in rows], "o:", label="assistant hybrid p95")
    right.plot(*series(rows, "server_retrieve_p50_ms"), "^-", label="assistant, Chroma server p50")
    right.plot(*series(rows, "tutorial_retrieve_p50_ms"), "s--", label="tutorial dense p50")
    right.set(title="Retrieval latency", xlabel="papers", ylabel="ms", xscale="log")
    right.set_ylim(bottom=0)  # the tutorial's few milliseconds stay in sight
    for row in rows:  # say which points ran on busy cores
        load = row.get("load_average_start_end") or row.get("load_average_reported")
        if load:
            text = f"load {max(load) if isinstance(load, list) else load:g}"
            left.annotate(text, (row["papers"], row["index_papers_per_s"]), fontsize=7,
                          textcoords="offset points", xytext=(4, -10))
    for axis in (left, middle, right):
        axis.grid(True, alpha=0.3)
        axis.legend(fontsize=8, loc="center right" if axis is right else "best")
    runs = "; ".join(f"{r['papers']:,} papers {r.get('date', '?')}" for r in rows)
    fig.suptitle(f"{rows[-1].get('machine', '')} - {runs}", fontsize=9)
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
