"""Dense search over a large store: the assistant's exact product beside approximate first
passes, for what each would save and what it would miss.

    python benchmarks/dense_search.py --home DIR [--json]      # a store `assistant index` built
    python benchmarks/dense_search.py --papers 2000 [--json]   # builds one from generated papers

Each question (run.py's ten and the evaluation's) is embedded as retrieval embeds it, then
searched for its 40 nearest chunks (the candidates retrieval takes from the dense list) by:

- ``exact``: the float product of the question with every saved vector (as saved: float16
  since 2026-12-03, scored in float32, so recall here does not count float16's rounding);
- ``int8``: ``VectorTable.nearest`` with its int8 first pass (what retrieval does from 8,192
  rows on): the same 40 in the same order, found by scanning int8 codes with error bounds and
  scoring in full only the rows that could be among them;
- ``chroma``: the collection's HNSW graph, ``Store.nearest`` (what a Chroma server does);
- ``binary-M``: each vector's sign bits (48 bytes), Hamming distance to the question's, the M
  nearest rescored with the full vectors;
- ``ivf-F``: spherical k-means into sqrt(rows) lists; the lists nearest the question, up to a
  share F of the rows, scanned with the full vectors.

Per method: the search's p50 in ms, each timed right after its question's embedding (as in a
retrieval, whose embedding leaves the caches to the model), the methods in turns with the
first rotating; the share of the exact 40 found (mean and worst question); and the questions
whose first 10 are the exact first 10. Nothing here changes the store.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
ROOT = Path(__file__).resolve().parent.parent

import numpy as np  # noqa: E402

from assistant.index.vector_table import VectorTable  # noqa: E402
from assistant.retrieve.retrieval import _CANDIDATES as N_NEAREST  # noqa: E402  retrieval's dense list

Search = Callable[[np.ndarray], np.ndarray]  # unit question -> rows, nearest first


def binary_search(vectors: np.ndarray, rescore: int) -> Search:
    """Sign bits and Hamming distance first; the ``rescore`` nearest scored exactly."""
    codes = np.ascontiguousarray(np.packbits(vectors > 0, axis=1).view(np.uint64).T)
    rescore = min(rescore, len(vectors))

    def search(q: np.ndarray) -> np.ndarray:
        words = np.packbits(q > 0).view(np.uint64)
        distance = np.bitwise_count(codes[0] ^ words[0])
        for j in range(1, len(words)):
            distance += np.bitwise_count(codes[j] ^ words[j])
        rows = (np.argpartition(distance, rescore - 1)[:rescore] if rescore < len(vectors)
                else np.arange(len(vectors)))
        return _nearest(rows, vectors[rows], q)

    return search


def kmeans(vectors: np.ndarray, lists: int, rounds: int = 10, seed: int = 0
           ) -> tuple[np.ndarray, np.ndarray]:
    """Spherical k-means (seeded): unit centroids, and each row's list."""
    rng = np.random.default_rng(seed)
    centroids = vectors[rng.choice(len(vectors), lists, replace=False)].copy()
    for _ in range(rounds):
        assigned = np.argmax(vectors @ centroids.T, axis=1)
        sums = np.zeros_like(centroids)
        np.add.at(sums, assigned, vectors)
        empty = np.bincount(assigned, minlength=lists) == 0
        sums[empty] = vectors[rng.choice(len(vectors), int(empty.sum()), replace=False)]
        centroids = sums / np.linalg.norm(sums, axis=1, keepdims=True)
    return centroids, np.argmax(vectors @ centroids.T, axis=1)


def ivf_search(vectors: np.ndarray, centroids: np.ndarray, assigned: np.ndarray,
               share: float) -> Search:
    """The lists nearest the question, up to ``share`` of the rows, scanned exactly."""
    order = np.argsort(assigned, kind="stable")
    grouped = vectors[order]
    bounds = np.searchsorted(assigned[order], np.arange(len(centroids) + 1))
    sizes = np.diff(bounds)
    wanted = max(N_NEAREST, share * len(vectors))

    def search(q: np.ndarray) -> np.ndarray:
        nearest = np.argsort(-(centroids @ q))
        taken = nearest[: int(np.searchsorted(np.cumsum(sizes[nearest]), wanted)) + 1]
        rows = np.concatenate([np.arange(bounds[c], bounds[c + 1]) for c in np.sort(taken)])
        return order[_nearest(rows, grouped[rows], q)]

    return search


def _nearest(rows: np.ndarray, candidates: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Of ``rows`` (whose vectors are ``candidates``), the nearest, ranked as retrieval ranks."""
    table = VectorTable(candidates)
    table.scan_from = len(candidates) + 1  # the float product: these rows are the first pass's
    return rows[[i for i, _ in table.nearest(q, N_NEAREST)]]


def questions() -> list[str]:
    from run import QUERIES

    from assistant.eval.questions import load_questions

    return QUERIES + [q.text for q in load_questions(ROOT / "data" / "eval" / "questions.jsonl")]


def build_store(papers: int, home: Path) -> None:
    import scale_corpus

    from assistant.config import Settings
    from assistant.index.embeddings import MiniLMEmbeddings
    from assistant.index.indexing import build_index

    corpus = scale_corpus.write(papers, home / "corpus" / "papers.jsonl")
    build_index(Settings(home=home), [corpus], embeddings=MiniLMEmbeddings())


def measure(home: Path, rounds: int, rescores: list[int], shares: list[float]) -> dict[str, Any]:
    from assistant.api import Assistant
    from assistant.config import Settings
    from assistant.index.embeddings import MiniLMEmbeddings

    embeddings = MiniLMEmbeddings()
    assistant = Assistant(Settings(home=home), embeddings=embeddings)
    retriever = assistant.retriever
    lexical = retriever._lexical_index()  # the saved vectors, as retrieval loads them
    if lexical.vectors is None or not len(lexical.vectors):
        raise SystemExit(f"{home}: no saved vectors (a local store built by `assistant index` "
                         "is needed)")
    vectors = np.ascontiguousarray(lexical.vectors.vectors, dtype=np.float32)
    table = lexical.table

    def chroma(q: np.ndarray) -> np.ndarray:
        found = assistant.store.nearest(q.tolist(), N_NEAREST, total=len(table))
        rows = (table.position(c) for c, _ in found)
        return np.array([i for i in rows if i is not None], dtype=np.int64)

    def unit(question: str) -> np.ndarray:
        q = np.asarray(embeddings.embed_query(question), dtype=np.float32)
        return q / max(float(np.linalg.norm(q)), 1e-12)

    full = VectorTable(lexical.vectors.vectors)
    full.scan_from = len(vectors) + 1  # the float product over every row
    scanned = VectorTable(lexical.vectors.vectors)
    scanned.scan_from = 0
    scanned.nearest(unit("warm up"), N_NEAREST)  # codes the rows once, as a first retrieval does
    if scanned._int8 is None:
        raise SystemExit("the int8 first pass could not be made on this machine "
                         "(onnxruntime failed); the float product is all there is")
    methods: dict[str, Search] = {
        "exact": lambda q: np.array([i for i, _ in full.nearest(q, N_NEAREST)]),
        "int8": lambda q: np.array([i for i, _ in scanned.nearest(q, N_NEAREST)]),
        "chroma": chroma,
    }
    for m in rescores:
        methods[f"binary-{m}"] = binary_search(vectors, m)
    start = time.perf_counter()
    lists = max(1, round(math.sqrt(len(vectors))))
    centroids, assigned = kmeans(vectors, lists)
    kmeans_s = time.perf_counter() - start
    for share in shares:
        methods[f"ivf-{share:g}"] = ivf_search(vectors, centroids, assigned, share)

    asked = questions()
    units = [unit(question) for question in asked]
    truth = [methods["exact"](q) for q in units]
    found: dict[str, list[float]] = {name: [] for name in methods}
    same10 = dict.fromkeys(methods, 0)
    for name, search in methods.items():
        for q, exact in zip(units, truth, strict=True):
            got = search(q)
            found[name].append(len(set(got.tolist()) & set(exact.tolist())) / max(len(exact), 1))
            same10[name] += got[:10].tolist() == exact[:10].tolist()

    timed = asked[:10]
    samples: dict[str, list[float]] = {name: [] for name in methods}
    names = list(methods)
    for round_ in range(rounds):
        shift = round_ % len(names)
        for question in timed:
            for name in names[shift:] + names[:shift]:
                q = unit(question)
                begin = time.perf_counter()
                methods[name](q)
                samples[name].append((time.perf_counter() - begin) * 1000)

    exact_ms = statistics.median(samples["exact"])
    return {
        "rows": len(vectors), "dimension": int(vectors.shape[1]), "questions": len(asked),
        "timed_questions": len(timed), "rounds": rounds, "ivf_lists": lists,
        "kmeans_s": round(kmeans_s, 2),
        "methods": {
            name: {
                "p50_ms": round(statistics.median(samples[name]), 3),
                "ratio_to_exact": round(statistics.median(samples[name]) / exact_ms, 3),
                "recall_mean": round(statistics.mean(found[name]), 4),
                "recall_min": round(min(found[name]), 4),
                "same_first_10": same10[name],
            }
            for name in methods
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--home", type=Path, help="an assistant home holding a built store")
    source.add_argument("--papers", type=int, help="build a store of N generated papers first")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--rescore", type=int, nargs="+", default=[1000, 4000],
                        help="binary first pass: how many to rescore exactly")
    parser.add_argument("--share", type=float, nargs="+", default=[0.1, 0.3],
                        help="ivf first pass: share of the rows scanned")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if args.papers is not None and args.papers < 1:
        parser.error("--papers must be at least 1")
    if args.rounds < 1 or min(args.rescore) < 1 or not all(0 < s <= 1 for s in args.share):
        parser.error("--rounds and --rescore must be at least 1, --share in (0, 1]")

    from assistant._env import quiet_third_parties
    from assistant.errors import AssistantError

    quiet_third_parties()
    with tempfile.TemporaryDirectory(prefix="assistant-dense-") as tmp:
        home = args.home
        if home is None:
            home = Path(tmp) / "home"
            build_store(args.papers, home)
        try:
            result = measure(home, args.rounds, args.rescore, args.share)
        except AssistantError as exc:
            print(f"dense_search.py: {exc}", file=sys.stderr)
            return 1
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{result['rows']:,} rows × {result['dimension']}, {result['questions']} questions "
          f"({result['timed_questions']} timed × {result['rounds']}); k-means "
          f"{result['ivf_lists']} lists in {result['kmeans_s']} s")
    print(f"{'method':12s} {'p50 ms':>8s} {'× exact':>8s} {'found of 40':>12s} "
          f"{'worst':>6s} {'first 10 same':>14s}")
    for name, m in result["methods"].items():
        print(f"{name:12s} {m['p50_ms']:8.3f} {m['ratio_to_exact']:8.3f} "
              f"{m['recall_mean']:12.4f} {m['recall_min']:6.3f} "
              f"{m['same_first_10']:>8d}/{result['questions']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
