"""Benchmarks: indexing, re-indexing, retrieval, start-up and answers, side by side with the
LangChain-tutorial pipeline, at N generated papers.

    python benchmarks/run.py --papers 1000 [--json] [--answers] [--no-server] [--out FILE]
    python benchmarks/run.py --answers-only --json      # embedded-model answer latency alone

Ratios are measured in the same run, so a shared or noisy machine affects both sides alike.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale_corpus  # noqa: E402
from tutorial import TutorialPipeline  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RAW_SAMPLE = 2000  # chunks timed through the bare embedding model
TUTORIAL_REINDEX_MAX = 5000
QUERIES = [
    "Which paper proposes GlowQ?", "What reward does DrPose maximize?",
    "How is the sampling budget calibrated?", "flow matching for reinforcement learning",
    "quantized large language models with low-rank corrections", "3D human reconstruction",
    "time series forecasting with diffusion models", "multi-agent policy optimization",
    "graph learning with regularity lemma", "test-time adaptation without backpropagation",
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed_latencies(calls: dict[str, Any], queries: list[str], repeat: int = 5
                    ) -> dict[str, tuple[float, float]]:
    """p50 and p95 in ms of each call, taken in turns query by query (first in turn
    alternating each round), so that what else the machine does weighs on all alike."""
    for call in calls.values():
        call(queries[0])  # warm: the first call loads what it needs
    samples: dict[str, list[float]] = {name: [] for name in calls}
    names = list(calls)
    for round_ in range(repeat):
        order = names if round_ % 2 == 0 else names[::-1]
        for query in queries:
            for name in order:
                start = time.perf_counter()
                calls[name](query)
                samples[name].append((time.perf_counter() - start) * 1000)
    return {name: (round(percentile(v, 0.5), 2), round(percentile(v, 0.95), 2))
            for name, v in samples.items()}


def cold_starts(commands: dict[str, list[str]], repeat: int = 5) -> dict[str, float]:
    """The best of ``repeat`` wall times of each command, the commands run in turns."""
    best = {name: float("inf") for name in commands}
    names = list(commands)
    for round_ in range(repeat):
        for name in names if round_ % 2 == 0 else names[::-1]:
            start = time.perf_counter()
            subprocess.run(commands[name], capture_output=True, check=True)
            best[name] = min(best[name], time.perf_counter() - start)
    return {name: round(value, 3) for name, value in best.items()}


def chroma_server(path: Path) -> tuple[subprocess.Popen, str]:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    chroma = shutil.which("chroma") or str(Path(sys.executable).with_name("chroma"))
    process = subprocess.Popen([chroma, "run", "--path", str(path), "--host", "127.0.0.1",
                                "--port", str(port)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return process, f"http://127.0.0.1:{port}"
        time.sleep(0.2)
    process.kill()
    raise RuntimeError("the Chroma server did not start")


def copy_to_server(store, url: str, settings_cls) -> Any:
    """Copy the built collection, vectors included, to a server (no second embedding run)."""
    from assistant.index.store import open_store

    target = open_store(settings_cls(chroma_url=url), store.embeddings, create=True)
    total = store.count()
    for offset in range(0, total, 1000):
        batch = store.collection.get(limit=1000, offset=offset,
                                     include=["embeddings", "documents", "metadatas"])
        target.collection.add(ids=batch["ids"], embeddings=batch["embeddings"],
                              documents=batch["documents"], metadatas=batch["metadatas"])
    target.collection.modify(metadata={
        k: v for k, v in (store.collection.metadata or {}).items() if not k.startswith("hnsw:")})
    return target


class RawInTurns:
    """The bare embedding model, timed in turns with the pipeline's build.

    Passed to ``build_index`` as its progress callback. The sample is sorted by length and
    cut into the embedder's batches, as one ``embed_documents`` call over the whole sample
    would run it (its best case), and the batches, shuffled with a fixed seed so that each
    stretch of the build gets short and long ones alike, run one at a time as the build
    passes its share of the chunks. The time of each batch is kept apart, so neither side
    counts the other's, and both see the machine at the same moments. The pipeline writes
    to Chroma on a thread of its own; a batch waits for a write under way and no write
    starts while it runs (``writes_apart``), so no write runs free in the bare batch's time.
    """

    def __init__(self, embeddings: Any, sample: list[str], total: int) -> None:
        from assistant.index.embeddings import run_lengths

        lengths = run_lengths(embeddings, sample)
        ordered = [sample[i] for i in sorted(range(len(sample)), key=lengths.__getitem__)]
        size = getattr(embeddings, "batch_size", 32)
        self.batches = [ordered[i : i + size] for i in range(0, len(ordered), size)]
        random.Random(0).shuffle(self.batches)
        # Batch j is due when the build has embedded (j + 1/2) / n of its chunks.
        self.due = [(j + 0.5) * total / len(self.batches) for j in range(len(self.batches))]
        self.embeddings, self.texts = embeddings, len(sample)
        self.next = self.during = 0
        self.wall = self.cpu = 0.0
        self.lock = threading.Lock()

    @contextlib.contextmanager
    def writes_apart(self) -> Iterator[None]:
        """Chroma's writes, wherever they run, hold ``self.lock`` while this block lasts."""
        from chromadb.api.models.Collection import Collection

        real = Collection.upsert

        def upsert(collection: Any, *args: Any, **kwargs: Any) -> Any:
            with self.lock:
                return real(collection, *args, **kwargs)

        Collection.upsert = upsert  # type: ignore[method-assign]
        try:
            yield
        finally:
            Collection.upsert = real  # type: ignore[method-assign]

    def __call__(self, done: int, total: int) -> None:
        while self.next < len(self.batches) and self.due[self.next] <= done:
            self._run_next()
            self.during += 1

    def finish(self) -> None:
        """Run what the build left (none unless it embedded fewer chunks than expected)."""
        while self.next < len(self.batches):
            self._run_next()

    def _run_next(self) -> None:
        with self.lock:
            start, cpu = time.perf_counter(), time.process_time()
            self.embeddings.embed_documents(self.batches[self.next])
            self.wall += time.perf_counter() - start
            self.cpu += time.process_time() - cpu
        self.next += 1


def bench(papers: int, with_server: bool, with_answers: bool, work: Path,
          tutorial_reindex: bool = True, with_tutorial: bool = True) -> dict[str, Any]:
    from assistant.api import Assistant
    from assistant.config import Settings
    from assistant.index.embeddings import MiniLMEmbeddings
    from assistant.index.indexing import build_index
    from assistant.index.store import embed_text
    from assistant.ingest.chunking import chunk_paper
    from assistant.ingest.corpus import load_papers
    from assistant.ingest.tokens import count_tokens, encoding

    corpus = scale_corpus.write(papers, work / "corpus" / "papers.jsonl")
    settings = Settings(home=work / "ours")
    index = settings.index
    embeddings = MiniLMEmbeddings()
    enc = encoding(settings.storage.cache_path())
    loaded = load_papers([corpus])
    texts = [embed_text(p.title, c.text) for p in loaded
             for c in chunk_paper(p, lambda t: count_tokens(enc, t), index.chunk_tokens,
                                  index.chunk_overlap)]
    result: dict[str, Any] = {"papers": papers, "chunks": len(texts)}

    # The raw model's throughput on an evenly spaced sample of the same chunk texts (at 20,000
    # papers a full extra pass would cost as long as the build it is compared with), timed in
    # turns with the build, so that a machine slowing down weighs on both alike.
    step = max(1, len(texts) // RAW_SAMPLE)
    raw = RawInTurns(embeddings, texts[::step], len(texts))
    start, cpu = time.perf_counter(), time.process_time()
    with raw.writes_apart():
        report = build_index(settings, [corpus], embeddings=embeddings, progress=raw)
    raw.finish()
    build = time.perf_counter() - start - raw.wall
    build_cpu = time.process_time() - cpu - raw.cpu
    assert report.chunks == len(texts), (report.chunks, len(texts))
    raw_rate, raw_cpu_rate = raw.texts / raw.wall, raw.texts / raw.cpu
    result["raw_embed_sample"] = raw.texts
    result["raw_embed_chunks_per_s"] = round(raw_rate, 1)
    result["raw_embed_batches_during_build"] = raw.during
    result["index_seconds"] = round(build, 2)
    result["index_chunks_per_s"] = round(len(texts) / build, 1)
    result["index_papers_per_s"] = round(papers / build, 1)
    result["index_overhead_ratio"] = round(len(texts) / build / raw_rate, 3)
    # The same ratio in CPU seconds: what another job on the cores cannot skew.
    result["index_overhead_ratio_cpu"] = round(len(texts) / build_cpu / raw_cpu_rate, 3)

    start = time.perf_counter()
    again = build_index(settings, [corpus], embeddings=embeddings)
    reindex = time.perf_counter() - start
    assert again.unchanged == papers
    result["reindex_seconds"] = round(reindex, 3)
    result["reindex_ratio"] = round(reindex / build, 4)

    assistant = Assistant(settings, embeddings=embeddings)
    if not with_tutorial:  # else timed in turns with the tutorial's, after its build
        (result["retrieve_p50_ms"], result["retrieve_p95_ms"]), = timed_latencies(
            {"assistant": lambda q: assistant.retrieve(q, k=5)}, QUERIES).values()
        # After a retrieval, so that it holds the BM25 index and the chunks saved beside the
        # collection, as the tutorial's folder is measured after its own retrievals.
        result["store_bytes"] = folder_size(settings.storage.vectorstore_path())

    if with_server:
        process, url = chroma_server(work / "server")
        try:
            copy_to_server(assistant.store, url, Settings)
            remote = Assistant(Settings(home=work / "ours", chroma_url=url), embeddings=embeddings)
            (result["server_retrieve_p50_ms"], result["server_retrieve_p95_ms"]), = timed_latencies(
                {"server": lambda q: remote.retrieve(q, k=5)}, QUERIES).values()
            # A server's BM25 index is kept in the cache folder, which the benchmark shares
            # with the user's (for the model file), under a key of this run's random port.
            if remote.store.cache_dir is not None:
                shutil.rmtree(remote.store.cache_dir, ignore_errors=True)
        finally:
            process.terminate()
            process.wait(timeout=30)

    if not with_tutorial:
        return _finish(result, work, with_answers, tutorial=False)
    tutorial = TutorialPipeline(work / "tutorial", embeddings)
    start = time.perf_counter()
    tutorial.build(loaded)
    tut_build = time.perf_counter() - start
    result["tutorial_chunks"] = tutorial.chunks
    result["tutorial_index_seconds"] = round(tut_build, 2)
    result["tutorial_index_papers_per_s"] = round(papers / tut_build, 1)
    if tutorial_reindex:
        start = time.perf_counter()
        tutorial.build(loaded)  # what the tutorial does on a second run: embed everything again
        result["tutorial_reindex_ratio"] = round((time.perf_counter() - start) / tut_build, 4)
    timed = timed_latencies({"assistant": lambda q: assistant.retrieve(q, k=5),
                             "tutorial": lambda q: tutorial.retrieve(q, k=5)}, QUERIES)
    result["retrieve_p50_ms"], result["retrieve_p95_ms"] = timed["assistant"]
    result["tutorial_retrieve_p50_ms"], result["tutorial_retrieve_p95_ms"] = timed["tutorial"]
    result["retrieve_ratio"] = round(result["retrieve_p50_ms"] / result["tutorial_retrieve_p50_ms"], 3)
    result["store_bytes"] = folder_size(settings.storage.vectorstore_path())
    result["tutorial_store_bytes"] = folder_size(work / "tutorial")
    return _finish(result, work, with_answers, tutorial=True)


def _finish(result: dict[str, Any], work: Path, with_answers: bool, tutorial: bool) -> dict[str, Any]:
    """Memory, cold starts and (optionally) answer latencies."""
    result["peak_rss_mb"] = round(peak_rss_mb(), 1)

    python = sys.executable
    result["help_cold_s"] = cold_starts({"help": [python, "-m", "assistant", "--help"]})["help"]
    probe = ("from assistant.api import Assistant; from assistant.config import Settings; "
             f"Assistant(Settings(home={str(work / 'ours')!r})).retrieve('GlowQ')")
    probe_tut = ("import sys; sys.path.insert(0, " + repr(str(ROOT / "benchmarks")) + "); "
                 "from tutorial import TutorialPipeline; from assistant.index.embeddings import "
                 "MiniLMEmbeddings; from pathlib import Path; "
                 f"TutorialPipeline(Path({str(work / 'tutorial')!r}), MiniLMEmbeddings())"
                 ".retrieve('GlowQ', k=5)")
    probes = {"assistant": [python, "-c", probe]}
    if tutorial:
        probes["tutorial"] = [python, "-c", probe_tut]
    cold = cold_starts(probes)
    result["ask_to_first_retrieval_cold_s"] = cold["assistant"]
    if tutorial:
        result["tutorial_to_first_retrieval_cold_s"] = cold["tutorial"]

    if with_answers:
        from answers import answer_latencies

        result.update(answer_latencies(work / "answers"))
    return result


@contextlib.contextmanager
def _work_folder(keep: Path | None) -> Iterator[str]:
    if keep is None:
        with tempfile.TemporaryDirectory(prefix="assistant-bench-") as tmp:
            yield tmp
    else:
        keep.mkdir(parents=True, exist_ok=True)
        yield str(keep.resolve())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=1000)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--answers", action="store_true",
                        help="also time the embedded model's answers on the bundled corpus")
    parser.add_argument("--answers-only", action="store_true",
                        help="only the answer latencies (no scale corpus)")
    parser.add_argument("--no-server", action="store_true", help="skip the Chroma-server timings")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    parser.add_argument("--no-tutorial", action="store_true",
                        help="skip the tutorial pipeline (it embeds the corpus once more)")
    parser.add_argument("--tutorial-reindex", choices=["auto", "yes", "no"], default="auto",
                        help="time the tutorial's second run, a full re-embedding "
                             f"(auto: only up to {TUTORIAL_REINDEX_MAX:,} papers)")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="work in DIR (new or empty) and leave the stores there")
    args = parser.parse_args()
    if args.keep is not None and args.keep.exists() and (
            not args.keep.is_dir() or any(args.keep.iterdir())):
        parser.error(f"--keep {args.keep}: not an empty folder; name a new one")
    load_before = os.getloadavg()[0]  # other jobs on the cores skew the absolute figures
    with _work_folder(args.keep) as tmp:
        os.environ["ASSISTANT_HOME"] = str(Path(tmp) / "home")
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(Path(tmp) / "tiktoken"))
        if "ASSISTANT_CACHE_DIR" not in os.environ:  # reuse the assembled model file
            from assistant.resources import default_cache_dir

            os.environ["ASSISTANT_CACHE_DIR"] = str(default_cache_dir())
        reindex = args.tutorial_reindex == "yes" or (
            args.tutorial_reindex == "auto" and args.papers <= TUTORIAL_REINDEX_MAX)
        if args.answers_only:
            sys.path.insert(0, str(ROOT / "benchmarks"))
            from answers import answer_latencies

            result = {"corpus": "bundled", **answer_latencies(Path(tmp) / "answers")}
        else:
            result = bench(args.papers, not args.no_server, args.answers, Path(tmp), reindex,
                           not args.no_tutorial)
    result["load_average_start_end"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    result["machine"] = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"
    result["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        width = max(len(k) for k in result)
        for key, value in result.items():
            print(f"{key:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
