"""Every chunk's vector beside the chunk table, for an exact dense search without Chroma.

For a store in a local folder, the vectors are read from Chroma once per index version and
saved with the chunk table, so a question is one matrix-vector product instead of a Chroma
query. Measured on 2 cores (40 nearest of 384-dimensional vectors): 0.06 ms at 2,253 chunks
and 1.7 ms at 45,500, against Chroma's 1.3 and 3.5 ms for the same 40 ids; and the search is
exact where Chroma's HNSW graph is approximate. A Chroma server keeps its own search: copying
every vector to every client is what a server is there to avoid.

The vectors are kept, saved and searched as float16: half the bytes on disk (32 against
65 MB at 42,243 chunks), and in memory where the int8 pass searches (from ``scan_from``
rows); a smaller table, whose every row is scored, also keeps a float32 copy for the
product. Each component is then within 1.2e-4 of the model's float32 value, the scores
within 5e-5: over the 108 benchmark questions at 20,000 papers the 40 nearest were the same
chunks as the float32 search's for all 108, and in the same order for 84, the others
swapping chunks whose scores differ by less than that (2026-12-03).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence

import numpy as np

from assistant.index.int8_scan import Int8Scan


class VectorTable:
    """Row ``i`` is chunk ``i`` of the chunk table, scaled to unit length (float16, or float32
    as saved before 2026-12-03); every score is computed in float32.

    From ``scan_from`` rows on, a search first scans int8 codes of the rows and scores in full
    only those that could be among the nearest (int8_scan.py): the same rows, in the same
    order, for a quarter of the bytes read.
    """

    scan_from = 8192
    # onnxruntime threads of the int8 pass; None: one or two, the faster on the first
    # question in this process (int8_scan.py)
    scan_threads: int | None = None

    def __init__(self, vectors: np.ndarray) -> None:
        if vectors.ndim != 2 or vectors.dtype not in (np.float16, np.float32):
            raise ValueError("vector table must be a 2-D float16 or float32 array")
        self.vectors = vectors
        self._float32: np.ndarray | None = None  # for the product over every row
        self._int8: Int8Scan | None = None
        self._scan_failed = False
        self._lock = threading.Lock()

    @classmethod
    def build(cls, vectors: Sequence[Sequence[float]] | np.ndarray) -> VectorTable:
        matrix = np.array(vectors, dtype=np.float32, ndmin=2)
        if matrix.size == 0:
            return cls(np.zeros((0, 0), dtype=np.float32))
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return cls((matrix / np.clip(norms, 1e-12, None)).astype(np.float16))

    def __len__(self) -> int:
        return len(self.vectors)

    @property
    def dimension(self) -> int:
        return int(self.vectors.shape[1])

    def nearest(self, query: Sequence[float], n: int) -> list[tuple[int, float]]:
        """Rows and cosine similarities of the ``n`` rows nearest ``query``, nearest first."""
        n = min(n, len(self.vectors))
        if n <= 0:
            return []
        q = np.asarray(query, dtype=np.float32)
        q = q / max(float(np.linalg.norm(q)), 1e-12)
        rows = self._candidates(q, n)
        if rows is None:
            scores = self._every_row() @ q
        else:  # only the rows that could be among the n nearest, scored in full
            scores = self.vectors[rows].astype(np.float32) @ q
        if n < len(scores):  # every row tied with the n-th too, so that ties go by row
            top = np.flatnonzero(scores >= np.partition(scores, len(scores) - n)[len(scores) - n])
        else:
            top = np.arange(len(scores))
        found = top if rows is None else rows[top]
        order = np.lexsort((found, -scores[top]))[:n]  # best first; equal scores by row
        return [(int(i), float(s)) for i, s in zip(found[order], scores[top[order]], strict=True)]

    def _every_row(self) -> np.ndarray:
        """The table in float32, converted once: numpy has no fast float16 product."""
        if self.vectors.dtype == np.float32:
            return self.vectors
        with self._lock:
            if self._float32 is None:
                self._float32 = self.vectors.astype(np.float32)
            return self._float32

    def _candidates(self, q: np.ndarray, n: int) -> np.ndarray | None:
        """The int8 first pass's rows, its codes made at the first search of a table large
        enough for it; None where the float product is to score every row."""
        if n >= len(self.vectors) or len(self.vectors) < self.scan_from or self._scan_failed:
            return None
        try:
            with self._lock:
                if self._int8 is None:
                    self._int8 = Int8Scan(self.vectors, threads=self.scan_threads)
            return self._int8.candidates(q, n)
        except Exception:  # onnxruntime could not make or run it: the float product still can
            self._scan_failed = True
            return None

    def arrays(self) -> dict[str, np.ndarray]:
        return {"chunk_vectors": self.vectors}

    @classmethod
    def from_arrays(cls, data: Mapping[str, np.ndarray]) -> VectorTable | None:
        """The saved table, or None when the file holds none (written before 2026-12-01)."""
        vectors = data.get("chunk_vectors")
        return cls(vectors) if vectors is not None else None
