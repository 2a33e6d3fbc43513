"""Index builds of the assistant and of the tutorial pipeline in turns, for a fair ratio.

`run.py` builds the two one after the other, tens of minutes apart at 20,000 papers; on a
shared or throttled machine the cores' speed drifts between them (measured: the same
embedding took 1.8 times as long at the end of a run as at its start). Here each pipeline
builds the same corpus several times into new folders, in an order such as ABBAAB that
cancels a steady drift, and the ratio is taken over all the builds.

    python benchmarks/index_turns.py --papers 1000 [--order ABBAAB] [--json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale_corpus  # noqa: E402
from tutorial import TutorialPipeline  # noqa: E402


def in_turns(papers: int, order: str, work: Path) -> dict[str, Any]:
    from assistant.config import Settings
    from assistant.corpus import load_papers
    from assistant.embeddings import MiniLMEmbeddings
    from assistant.indexing import build_index

    corpus = scale_corpus.write(papers, work / "corpus" / "papers.jsonl")
    embeddings = MiniLMEmbeddings()
    builds: dict[str, list[dict[str, Any]]] = {"assistant": [], "tutorial": []}
    for n, who in enumerate(order):
        name = "assistant" if who == "A" else "tutorial"
        folder = work / f"{name}-{n}"
        start, cpu = time.perf_counter(), time.process_time()
        if who == "A":  # the assistant reads and parses the corpus file as part of its build
            build_index(Settings(home=folder), [corpus], embeddings=embeddings)
        else:  # the tutorial's loading is counted too: it is part of what a user runs
            TutorialPipeline(folder, embeddings).build(load_papers([corpus]))
        builds[name].append({
            "seconds": round(time.perf_counter() - start, 2),
            "cpu_seconds": round(time.process_time() - cpu, 2),
            "at": time.strftime("%H:%M:%S"),
        })
        shutil.rmtree(folder, ignore_errors=True)

    def total(who: str, key: str) -> float:
        return sum(b[key] for b in builds[who])

    ours, theirs = len(builds["assistant"]), len(builds["tutorial"])
    return {
        "papers": papers,
        "order": order,
        **builds,
        # Papers per second, the assistant's over the tutorial's (> 1: the assistant is faster).
        "index_papers_per_s_ratio": round(total("tutorial", "seconds") / theirs
                                          / (total("assistant", "seconds") / ours), 3),
        "index_papers_per_s_ratio_cpu": round(total("tutorial", "cpu_seconds") / theirs
                                              / (total("assistant", "cpu_seconds") / ours), 3),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--papers", type=int, default=1000)
    parser.add_argument("--order", default="ABBAAB",
                        help="A: the assistant builds, B: the tutorial builds (default ABBAAB)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    if not args.order or set(args.order) - {"A", "B"} or {"A", "B"} - set(args.order):
        parser.error(f"--order {args.order!r}: use the letters A and B, each at least once")
    if args.papers < 1:
        parser.error("--papers must be at least 1")
    work = Path(tempfile.mkdtemp(prefix="assistant-turns-"))
    try:
        result = in_turns(args.papers, args.order, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for who in ("assistant", "tutorial"):
            print(f"{who:10} " + "  ".join(f"{b['seconds']:.1f} s" for b in result[who]))
        print(f"papers/s, assistant ÷ tutorial: {result['index_papers_per_s_ratio']} "
              f"(CPU seconds: {result['index_papers_per_s_ratio_cpu']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
