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
    parser.add_argument("--scan-threads", nargs="+", default=["auto"], metavar="N",
                        help="onnxruntime threads of the int8 pass, 'auto' or a number; "
                             "several are timed in turns as int8 (auto: one or two, the "
                             "faster on the first question) and int8_Nthreads "
                             "(default: auto, as retrieval; before 2026-12-04 'int8' was "
                             "one thread)")
    args = parser.parse_args(argv)
    if not (args.work / "ours").is_dir() or not (args.work / "tutorial").is_dir():
        print(f"{args.work}: no 'ours' and 'tutorial' stores; make them with "
              f"`python benchmarks/run.py --papers N --keep {args.work}`", file=sys.stderr)
        return 2

    from assistant.api import Assistant
    from assistant.config import Settings
    from assistant.index.embeddings import MiniLMEmbeddings

    def threads(value: str) -> int | None:
        if value == "auto":
            return None
        try:
            return int(value) if int(value) >= 1 else -1
        except ValueError:
            return -1

    if any(threads(v) == -1 for v in args.scan_threads):
        parser.error("--scan-threads: each value must be 'auto' or a whole number from 1")

    embeddings = MiniLMEmbeddings()
    # name: (assistant, whether the int8 pass runs, its threads: None to choose)
    variants: dict[str, tuple[Any, bool, int | None]] = {
        ("int8" if n is None else f"int8_{n}threads"): (
            Assistant(Settings(home=args.work / "ours"), embeddings=embeddings), True, n)
        for n in dict.fromkeys(threads(v) for v in args.scan_threads)}
    variants["float"] = (Assistant(Settings(home=args.work / "ours"), embeddings=embeddings),
                         False, None)
    for assistant, scanned, n in variants.values():
        vectors = assistant.retriever._lexical_index().vectors
        if vectors is None:
            print(f"{args.work / 'ours'}: no saved vectors", file=sys.stderr)
            return 2
        vectors.scan_from = 0 if scanned else 10**12
        vectors.scan_threads = n
    tutorial = TutorialPipeline(args.work / "tutorial", embeddings)
    same = all(len({tuple(tuple(s.chunk_ids) for s in a.retrieve(q))
                    for a, _, _ in variants.values()}) == 1
               for q in QUERIES)
    calls = {name: (lambda q, a=a: a.retrieve(q, k=5)) for name, (a, _, _) in variants.items()}
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
    scan = variants["int8"][0].retriever._lexical_index().vectors._int8 if (
        "int8" in variants) else None
    if scan is not None:  # what the choice found in this process (none below 41 chunks)
        result["int8_threads_chosen"] = scan.threads
        result["int8_choice_ms"] = {str(n): round(ms, 3) for n, ms in scan.timings.items()}
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key:<26} {value}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
