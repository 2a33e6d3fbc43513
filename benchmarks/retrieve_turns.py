"""Retrieval on the stores `run.py --keep DIR` left: the assistant with and without its int8
first pass, and the tutorial pipeline, timed in turns question by question.

    python benchmarks/run.py --papers 20000 --keep DIR      # builds the stores once
    python benchmarks/retrieve_turns.py DIR [--repeat 10] [--json]

The same ten questions as run.py; every call as `Assistant.retrieve` (hybrid, 5 papers) or
the tutorial's dense top 5. Both assistants share one embedding model and differ only in
`VectorTable.scan_from`; their sources are checked to be the same.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import QUERIES, timed_latencies  # noqa: E402
from tutorial import TutorialPipeline  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("work", type=Path, help="the folder run.py --keep wrote")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not (args.work / "ours").is_dir() or not (args.work / "tutorial").is_dir():
        print(f"{args.work}: no 'ours' and 'tutorial' stores; make them with "
              f"`python benchmarks/run.py --papers N --keep {args.work}`", file=sys.stderr)
        return 2

    from assistant.api import Assistant
    from assistant.config import Settings
    from assistant.embeddings import MiniLMEmbeddings

    embeddings = MiniLMEmbeddings()
    scanned = Assistant(Settings(home=args.work / "ours"), embeddings=embeddings)
    floats = Assistant(Settings(home=args.work / "ours"), embeddings=embeddings)
    for assistant, scan_from in ((scanned, 0), (floats, 10**12)):
        vectors = assistant.retriever._lexical_index().vectors
        if vectors is None:
            print(f"{args.work / 'ours'}: no saved vectors", file=sys.stderr)
            return 2
        vectors.scan_from = scan_from
    tutorial = TutorialPipeline(args.work / "tutorial", embeddings)
    same = all([s.chunk_ids for s in scanned.retrieve(q)] == [s.chunk_ids for s in floats.retrieve(q)]
               for q in QUERIES)
    timed = timed_latencies({"int8": lambda q: scanned.retrieve(q, k=5),
                             "float": lambda q: floats.retrieve(q, k=5),
                             "tutorial": lambda q: tutorial.retrieve(q, k=5)},
                            QUERIES, repeat=args.repeat)
    result = {
        "chunks": len(scanned.retriever._lexical_index().table), "repeat": args.repeat,
        "same_sources": same,
        **{f"{name}_p50_ms": p50 for name, (p50, _) in timed.items()},
        **{f"{name}_p95_ms": p95 for name, (_, p95) in timed.items()},
        "int8_ratio_to_tutorial": round(timed["int8"][0] / timed["tutorial"][0], 3),
        "float_ratio_to_tutorial": round(timed["float"][0] / timed["tutorial"][0], 3),
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key:<26} {value}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
