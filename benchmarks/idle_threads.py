"""What idle worker threads that spin cost: retrieval and batch embedding with the
assistant's settings, with onnxruntime's or OpenBLAS's defaults in their place, and with no
spinning at all, each in child processes, in turns over one index.

After each run onnxruntime's idle workers spin on for a while by default, and after each
matrix-vector product OpenBLAS's do too. On 2 cores a spinning worker takes the core that the
next step needs: the dense search after the question's embedding, the next question's
embedding after the search, llama.cpp's prompt after the excerpts are embedded. The
assistant's onnxruntime workers spin while a run lasts and stop at its end
(``session.force_spinning_stop``), and OpenBLAS's sleep as soon as a product ends
(``OPENBLAS_THREAD_TIMEOUT=4``, set on importing the package).

    python benchmarks/idle_threads.py [--papers 1000] [--rounds 4] [--json]

Each child times ``Assistant.retrieve`` alone (10 questions, 5 rounds), the process's CPU in
the half second after one embedding and after one retrieval, and the embedding of 256 chunk
texts in one call.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale_corpus  # noqa: E402

# What each variant puts over the assistant's settings: onnxruntime session entries, and the
# environment (OpenBLAS reads its timeout when it loads: 2**28 cycles is its default).
VARIANTS: dict[str, tuple[dict[str, str], dict[str, str]]] = {
    "assistant": ({}, {}),
    "onnxruntime_default": ({"session.force_spinning_stop": "0"}, {}),
    "openblas_default": ({}, {"OPENBLAS_THREAD_TIMEOUT": "28"}),
    "both_default": ({"session.force_spinning_stop": "0"}, {"OPENBLAS_THREAD_TIMEOUT": "28"}),
    "no_spinning": ({"session.intra_op.allow_spinning": "0"}, {}),
}

_CHILD = r"""
import json, os, resource, statistics, sys, time
from pathlib import Path
sys.path.insert(0, {bench!r})
import onnxruntime
real = onnxruntime.InferenceSession.__init__
def init(self, path, options, *args, **kwargs):
    for key, value in {entries!r}.items():
        options.add_session_config_entry(key, value)
    real(self, path, options, *args, **kwargs)
onnxruntime.InferenceSession.__init__ = init
from run import QUERIES
from assistant.api import Assistant
from assistant.config import Settings
from assistant.index.embeddings import MiniLMEmbeddings

def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime

embeddings = MiniLMEmbeddings()
assistant = Assistant(Settings(home=Path({home!r})), embeddings=embeddings)
assistant.retrieve(QUERIES[0], k=5)
times = []
for _ in range(5):
    for question in QUERIES:
        start = time.perf_counter()
        assistant.retrieve(question, k=5)
        times.append((time.perf_counter() - start) * 1000)
time.sleep(0.5)
embeddings.embed_query(QUERIES[1])
start = cpu()
time.sleep(0.5)
idle = (cpu() - start) * 1000
time.sleep(0.5)
assistant.retrieve(QUERIES[2], k=5)
start = cpu()
time.sleep(0.5)
idle_retrieve = (cpu() - start) * 1000
texts = json.loads(Path({texts!r}).read_text())
start = time.perf_counter()
embeddings.embed_documents(texts)
batch = time.perf_counter() - start
print(json.dumps({{"retrieve_p50_ms": statistics.median(times),
                  "idle_cpu_ms": idle, "idle_cpu_after_retrieve_ms": idle_retrieve,
                  "batch_chunks_per_s": len(texts) / batch}}))
"""


def child(variant: str, home: Path, texts: Path) -> dict[str, float]:
    entries, env = VARIANTS[variant]
    code = _CHILD.format(bench=str(Path(__file__).resolve().parent), home=str(home),
                         texts=str(texts), entries=entries)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "ORT_DISABLE_TELEMETRY": "1",
                              "OPENBLAS_THREAD_TIMEOUT": "4", **env}, timeout=900)
    if run.returncode != 0:
        raise RuntimeError(f"the {variant} child failed: {run.stderr[-2000:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def measure(papers: int, rounds: int, work: Path) -> dict[str, Any]:
    from assistant.config import Settings
    from assistant.index.embeddings import MiniLMEmbeddings
    from assistant.index.indexing import build_index
    from assistant.ingest.corpus import load_papers

    corpus = scale_corpus.write(papers, work / "corpus" / "papers.jsonl")
    home = work / "ours"
    build_index(Settings(home=home), [corpus], embeddings=MiniLMEmbeddings())
    texts = work / "texts.json"
    abstracts = [p.abstract for p in load_papers([corpus])]
    texts.write_text(json.dumps([abstracts[i % len(abstracts)][:700] for i in range(256)]))
    names = list(VARIANTS)
    runs: dict[str, list[dict[str, float]]] = {v: [] for v in names}
    for round_ in range(rounds):  # ABC, CBA, ...: a steady drift weighs on all alike
        for variant in names if round_ % 2 == 0 else names[::-1]:
            runs[variant].append(child(variant, home, texts))
    result: dict[str, Any] = {"papers": papers, "rounds": rounds}
    for variant, results in runs.items():
        for key in results[0]:
            result[f"{variant}_{key}"] = round(statistics.median(r[key] for r in results), 2)
    for other in names[1:]:  # < 1: the assistant retrieves faster; > 1: it embeds faster
        result[f"retrieve_ratio_to_{other}"] = round(
            result["assistant_retrieve_p50_ms"] / result[f"{other}_retrieve_p50_ms"], 3)
        result[f"batch_ratio_to_{other}"] = round(
            result["assistant_batch_chunks_per_s"] / result[f"{other}_batch_chunks_per_s"], 3)
    result["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=4, help="child processes per variant")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    if args.papers < 1 or args.rounds < 1:
        parser.error("--papers and --rounds must be at least 1")
    work = Path(tempfile.mkdtemp(prefix="assistant-idle-"))
    try:
        os.environ["ASSISTANT_HOME"] = str(work / "home")
        if "ASSISTANT_CACHE_DIR" not in os.environ:  # reuse the assembled model file
            from assistant.resources import default_cache_dir

            os.environ["ASSISTANT_CACHE_DIR"] = str(default_cache_dir())
        result = measure(args.papers, args.rounds, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key:36} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
