"""Index builds of the assistant and of the tutorial pipeline in turns, for a fair ratio.

`run.py` builds the two one after the other, tens of minutes apart at 20,000 papers; on a
shared or throttled machine the cores' speed drifts between them (measured: the same
embedding took 1.8 times as long at the end of a run as at its start). Here each pipeline
builds the same corpus several times into new folders, in an order such as ABBAAB that
cancels a steady drift, and the ratio is taken over all the builds.

    python benchmarks/index_turns.py --papers 1000 [--order ABBAAB] [--json]

The letter W is the assistant writing to Chroma in the indexing thread, as it did before
its writes moved to a thread of their own: `--order AWWAAW` measures what that move buys.
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
    from assistant.index import sync
    from assistant.index.embeddings import MiniLMEmbeddings
    from assistant.index.indexing import build_index
    from assistant.ingest.corpus import load_papers

    corpus = scale_corpus.write(papers, work / "corpus" / "papers.jsonl")
    embeddings = MiniLMEmbeddings()
    builds: dict[str, list[dict[str, Any]]] = {NAMES[who]: [] for who in sorted(set(order))}
    for n, who in enumerate(order):
        name = NAMES[who]
        folder = work / f"{name}-{n}"
        sync.BACKGROUND_WRITES = who != "W"
        start, cpu = time.perf_counter(), time.process_time()
        if who in "AW":  # the assistant reads and parses the corpus file as part of its build
            build_index(Settings(home=folder), [corpus], embeddings=embeddings)
        else:  # the tutorial's loading is counted too: it is part of what a user runs
            TutorialPipeline(folder, embeddings).build(load_papers([corpus]))
        builds[name].append({
            "seconds": round(time.perf_counter() - start, 2),
            "cpu_seconds": round(time.process_time() - cpu, 2),
            "at": time.strftime("%H:%M:%S"),
        })
        shutil.rmtree(folder, ignore_errors=True)

    sync.BACKGROUND_WRITES = True

    def speed(fast: str, slow: str, key: str) -> float:
        """Papers per second of ``fast`` over those of ``slow`` (> 1: ``fast`` is faster)."""
        def mean(who: str) -> float:
            return sum(b[key] for b in builds[who]) / len(builds[who])
        return round(mean(slow) / mean(fast), 3)

    result: dict[str, Any] = {"papers": papers, "order": order, **builds}
    for key, fast, slow in RATIOS:
        if fast in builds and slow in builds:
            result[key] = speed(fast, slow, "seconds")
            result[f"{key}_cpu"] = speed(fast, slow, "cpu_seconds")
    result["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    return result


NAMES = {"A": "assistant", "B": "tutorial", "W": "assistant_foreground_writes"}
RATIOS = (  # JSON key, the pipeline whose speed is divided, the one it is divided by
    ("index_papers_per_s_ratio", "assistant", "tutorial"),
    ("background_writes_ratio", "assistant", "assistant_foreground_writes"),
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--papers", type=int, default=1000)
    parser.add_argument("--order", default="ABBAAB",
                        help="A: the assistant builds, B: the tutorial builds, W: the assistant "
                             "writes in its indexing thread (default ABBAAB)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    letters = set(args.order)
    if letters - set(NAMES) or "A" not in letters or len(letters) < 2:
        parser.error(f"--order {args.order!r}: use A and at least one of B and W "
                     "(A: the assistant, B: the tutorial, W: the assistant writing in its "
                     "indexing thread), each at least once")
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
        for who in NAMES.values():
            if who in result:
                print(f"{who:28} " + "  ".join(f"{b['seconds']:.1f} s" for b in result[who]))
        for key, fast, slow in RATIOS:
            if key in result:
                print(f"papers/s, {fast} ÷ {slow}: {result[key]} "
                      f"(CPU seconds: {result[key + '_cpu']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
