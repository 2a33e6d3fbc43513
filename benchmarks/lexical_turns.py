"""The lexical index alone at N generated papers: this checkout's against the one of an earlier
commit (its assistant/retrieve/lexical.py, read with git), built, saved, loaded and searched in turns.

    python benchmarks/lexical_turns.py --papers 20000 --against c36ff61 [--json]

The documents are the scale corpus's chunks with their titles, as retrieval indexes them; the
questions are run.py's, each searched for its 40 best chunks as retrieval asks.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scale_corpus  # noqa: E402
from run import QUERIES, timed_latencies  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def earlier(ref: str, folder: Path) -> Any:
    """assistant/retrieve/lexical.py as it was at ``ref``, imported under another name."""
    path = folder / "lexical_then.py"
    path.write_text(subprocess.run(["git", "-C", str(ROOT), "show", f"{ref}:assistant/retrieve/lexical.py"],
                                   check=True, capture_output=True, text=True).stdout)
    spec = importlib.util.spec_from_file_location("lexical_then", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def timed(call: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    value = call()
    return value, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=1000)
    parser.add_argument("--against", required=True, metavar="REF",
                        help="the commit whose assistant/retrieve/lexical.py to compare with")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    from assistant.config import Settings
    from assistant.index.store import embed_text
    from assistant.ingest.chunking import chunk_paper
    from assistant.ingest.corpus import load_papers
    from assistant.ingest.tokens import count_tokens, encoding
    from assistant.retrieve import lexical as now

    out: dict[str, Any] = {"papers": args.papers, "against": args.against}
    with tempfile.TemporaryDirectory(prefix="assistant-lexical-") as tmp:
        work = Path(tmp)
        then = earlier(args.against, work)
        settings = Settings(home=work / "home")
        index = settings.index
        enc = encoding(Settings().storage.cache_path())
        texts = [embed_text(p.title, c.text)
                 for p in load_papers([scale_corpus.write(args.papers, work / "papers.jsonl")])
                 for c in chunk_paper(p, lambda t: count_tokens(enc, t), index.chunk_tokens,
                                      index.chunk_overlap)]
        out["chunks"] = len(texts)
        keys = [str(i) for i in range(len(texts))]
        old, seconds = timed(lambda: then.BM25.build(texts, keys=keys))
        out["then_build_s"] = round(seconds, 2)
        new, seconds = timed(lambda: now.BM25.build(texts))
        out["now_build_s"] = round(seconds, 2)
        old.save(work / "then.arrays")
        new.save(work / "now.bm25")
        loads: dict[str, list[float]] = {"then": [], "now": []}
        for _ in range(5):
            old, seconds = timed(lambda: then.BM25.load(work / "then.arrays"))
            loads["then"].append(seconds)
            new, seconds = timed(lambda: now.BM25.load(work / "now.bm25"))
            loads["now"].append(seconds)
        for name, values in loads.items():
            out[f"{name}_load_ms"] = round(min(values) * 1000, 1)
        out["then_bytes"] = (work / "then.arrays").stat().st_size
        out["now_bytes"] = sum(p.stat().st_size for p in (work / "now.bm25").iterdir())
        latencies = timed_latencies({"then": lambda q: old.search(q, 40),
                                     "now": lambda q: new.search(q, 40)}, QUERIES, args.repeat)
        for name, (p50, p95) in latencies.items():
            out[f"{name}_search_p50_ms"], out[f"{name}_search_p95_ms"] = p50, p95
        # How far the rankings agree: chunks both put among a question's 40 (of those found).
        out["shared_of_40"] = [
            [len({i for i, _ in old.search(q, 40)} & {i for i, _ in new.search(q, 40)}),
             len(old.search(q, 40)), len(new.search(q, 40))] for q in QUERIES]
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for key, value in out.items():
            print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
