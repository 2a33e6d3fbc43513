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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import QUERIES, timed_latencies  # noqa: E402
from tutorial import TutorialPipeline  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("work", type=Path, help="the folder run.py --keep wrote")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--scan-threads", type=int, nargs="+", default=[1], metavar="N",
                        help="onnxruntime threads of the int8 pass; several values are timed "
                             "in turns as int8 (1) and int8_Nthreads (default: 1, as retrieval)")
    args = parser.parse_args(argv)
    if not (args.work / "ours").is_dir() or not (args.work / "tutorial").is_dir():
        print(f"{args.work}: no 'ours' and 'tutorial' stores; make them with "
              f"`python benchmarks/run.py --papers N --keep {args.work}`", file=sys.stderr)
        return 2

    from assistant.api import Assistant
    from assistant.config import Settings
    from assistant.embeddings import MiniLMEmbeddings

    if any(n < 1 for n in args.scan_threads):
        parser.error("--scan-threads: each value must be 1 or more")

    embeddings = MiniLMEmbeddings()
    variants: dict[str, tuple[Any, int | None]] = {  # name: (assistant, the scan's threads)
        ("int8" if n == 1 else f"int8_{n}threads"): (
            Assistant(Settings(home=args.work / "ours"), embeddings=embeddings), n)
        for n in dict.fromkeys(args.scan_threads)}
    variants["float"] = (Assistant(Settings(home=args.work / "ours"), embeddings=embeddings), None)
    for assistant, threads in variants.values():
        vectors = assistant.retriever._lexical_index().vectors
        if vectors is None:
            print(f"{args.work / 'ours'}: no saved vectors", file=sys.stderr)
            return 2
        vectors.scan_from = 10**12 if threads is None else 0
        vectors.scan_threads = threads
    tutorial = TutorialPipeline(args.work / "tutorial", embeddings)
    same = all(len({tuple(tuple(s.chunk_ids) for s in a.retrieve(q)) for a, _ in variants.values()}) == 1
               for q in QUERIES)
    calls = {name: (lambda q, a=a: a.retrieve(q, k=5)) for name, (a, _) in variants.items()}
    calls["tutorial"] = lambda q: tutorial.retrieve(q, k=5)
    timed = timed_latencies(calls, QUERIES, repeat=args.repeat)
    result = {
        "chunks": len(variants["float"][0].retriever._lexical_index().table), "repeat": args.repeat,
        "same_sources": same,
        **{f"{name}_p50_ms": p50 for name, (p50, _) in timed.items()},
        **{f"{name}_p95_ms": p95 for name, (_, p95) in timed.items()},
        **{f"{name}_ratio_to_tutorial": round(timed[name][0] / timed["tutorial"][0], 3)
           for name in variants},
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key:<26} {value}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
