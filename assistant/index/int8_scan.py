"""An exact first pass for the dense search of a large table: int8 codes with error bounds.

Every row ``v`` (unit length) is kept as int8 codes ``c`` (±127, or ±63 where the CPU's kernel
needs it: ``exact_levels``) and a scale ``s`` with ``v = s·c + r``; a question ``q`` (unit length) as uint8 codes ``a`` and a scale ``t`` with
``q = t·(a - 128) + e``. Then

    v·q = s·t·(c·(a - 128)) + s·(c·e) + r·q,   |s·(c·e) + r·q| ≤ s·|c|·|e| + |r|,

so the integer product gives each row's score within a bound known for that row. A row whose
upper bound is below the ``n``-th best lower bound cannot be among the ``n`` nearest; the few
rows left are scored again with their float vectors. The result is the exact search's, and
the scan reads a quarter of the bytes: over 42,243 rows of 384 dimensions onnxruntime's
integer product (``MatMulInteger``, the codes packed once per session, one thread) took about
0.9 ms after a question's embedding where the float product took 1.7-2.0 ms on two threads
(docs/performance.md).

Whether the product runs faster on one thread or two depends on the machine, and on some on
the process: on an AMD Zen 4 two threads saved 0.3-0.4 ms in 8 of 8 processes, on a Zen 5
they took 3.5-3.8 ms instead of 0.8 in 3 of 4. So unless told, the scan times both on its
first question, in the process that asks, and keeps the faster (``_choose``); and where it
kept two, it goes back to one for good if two become much slower than one was.

onnxruntime is already here for the embedder; the one-node ONNX graph is written below in
protobuf's wire format, since the ``onnx`` package is not a dependency.
"""

from __future__ import annotations

import functools
import os
import statistics
import threading
import time
from collections import deque
from typing import Any

import numpy as np

from assistant.index.embeddings import SPIN_STOP_KEY

# Added to every bound: the float32 arithmetic of the scores themselves (a 384-term float32
# dot product of unit vectors is off by well under 1e-5), so that rounding cannot drop a row.
_SLACK = 1e-4
_ZERO = 128  # uint8 zero point of the question's codes
_BLOCK = 2048  # rows coded at a time
# The choice of threads: rounds of each timed in turns on the first question, and how much
# faster more threads must be to be kept (a tie keeps one thread, which leaves a core free).
_CHOICE_ROUNDS = 7
_CHOICE_MARGIN = 0.9
# The last calls on more threads, whose median is checked against one thread's in the choice:
# over _FALLBACK times it, one thread for good. Not 1: the choice's runs follow each other,
# with the codes in cache, where a question's follow its embedding (and the slow mode seen on
# the Zen 5 was four times one thread's).
_WATCH = 16
_FALLBACK = 1.5
_clock = time.perf_counter


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if not value:
            out.append(byte)
            return bytes(out)
        out.append(byte | 0x80)


# A message is kept as a list of byte strings, so that the codes (16 MB for 42,000 rows) are
# copied once, when the model is joined, and not once per level of nesting.
_Message = list[bytes]


def _field(number: int, payload: _Message | bytes | str | int) -> _Message:
    """One protobuf field: an int as a varint; a message, bytes or a string length-delimited."""
    if isinstance(payload, int):
        return [_varint(number << 3), _varint(payload)]
    parts = payload if isinstance(payload, list) else [
        payload.encode() if isinstance(payload, str) else payload]
    return [_varint(number << 3 | 2), _varint(sum(len(p) for p in parts)), *parts]


def _message(*fields: _Message) -> _Message:
    return [part for f in fields for part in f]


_UINT8, _INT8, _INT32 = 2, 3, 6  # ONNX TensorProto data types


def _tensor(name: str, array: np.ndarray, data_type: int) -> _Message:
    raw = bytes(np.ascontiguousarray(array).reshape(-1).data.cast("B"))
    return _message(*(_field(1, int(d)) for d in array.shape), _field(2, data_type),
                    _field(8, name), _field(9, raw))


def _value_info(name: str, data_type: int, shape: tuple[int, ...]) -> _Message:
    dims = _message(*(_field(1, _field(1, int(d))) for d in shape))
    tensor_type = _message(_field(1, data_type), _field(2, dims))
    return _message(_field(1, name), _field(2, _field(1, tensor_type)))


def matmul_integer_model(codes_t: np.ndarray) -> bytes:
    """An ONNX model: ``y = (q - 128) @ codes_t`` in int32, for ``q`` uint8 of shape (1, D)
    and ``codes_t`` int8 of shape (D, N), C-contiguous, the codes a constant of the graph."""
    dimension, rows = codes_t.shape
    node = _message(_field(1, "q"), _field(1, "codes"), _field(1, "zero"), _field(2, "y"),
                    _field(3, "product"), _field(4, "MatMulInteger"))
    graph = _message(_field(1, node), _field(2, "int8_scan"),
                     _field(5, _tensor("codes", codes_t, _INT8)),
                     _field(5, _tensor("zero", np.array(_ZERO, dtype=np.uint8), _UINT8)),
                     _field(11, _value_info("q", _UINT8, (1, dimension))),
                     _field(12, _value_info("y", _INT32, (1, rows))))
    opset = _message(_field(1, ""), _field(2, 13))
    return b"".join(_message(_field(1, 7), _field(8, opset), _field(7, graph)))


def code_rows(rows: np.ndarray, levels: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's scale ``s`` and codes ``c`` in [-levels, levels], ``rows ≈ s·c``, rounding
    to nearest (so ``|rows - s·c| ≤ s/2`` in every dimension). A zero row gets scale 1."""
    rows = np.asarray(rows, dtype=np.float32)  # float16 rows are converted exactly
    peak = np.abs(rows).max(axis=1)
    scale = np.where(peak > 0, peak / np.float32(levels), np.float32(1)).astype(np.float32)
    return scale, np.clip(np.rint(rows / scale[:, None]), -levels, levels)


def thread_choices() -> tuple[int, ...]:
    """The thread counts the scan chooses among: one, and two where this process may run on
    two cores or more (only two-core machines were measured)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return (1, 2) if cores >= 2 else (1,)


def _session(codes_t: np.ndarray, threads: int | None, model: bytes | None = None) -> Any:
    """A session of ``matmul_integer_model(codes_t)`` (or of ``model``, that graph already
    written) on ``threads`` threads."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    # Never more threads than asked: with a pool of two beside the embedder's, the scan over
    # 42,243 rows took 3.6 ms in some processes and 0.9 ms in others on a Zen 5, on its own
    # 0.9-1.05 ms in each (benchmarks/dense_search.py, 2026-12-02); Int8Scan chooses.
    options.intra_op_num_threads = threads or 1
    options.log_severity_level = 3
    options.add_session_config_entry(SPIN_STOP_KEY, "1")  # as the embedder's workers
    return onnxruntime.InferenceSession(model or matmul_integer_model(codes_t), options,
                                        providers=["CPUExecutionProvider"])


@functools.lru_cache(maxsize=None)
def exact_levels(threads: int | None = None) -> int:
    """The widest codes whose product this CPU's kernel computes exactly: 127, or 63.

    Without VNNI, onnxruntime's u8×s8 kernels on x86 add pairs of products in 16 bits with
    saturation, which codes of ±127 against 255 overflow (2·255·127 > 32,767); codes of ±63
    cannot (2·255·63 = 32,130). The worst cases are tried on a small table of the same graph.
    """
    for levels in (127, 63):
        codes_t = np.full((64, 4), levels, dtype=np.int8)
        codes_t[:, 1] = -levels
        codes_t[::2, 2] = -levels
        codes_t[:, 3] = np.arange(64) % (2 * levels + 1) - levels
        session = _session(codes_t, threads)
        expected = (np.array([[255] * 64, [1] * 64]) - _ZERO) @ codes_t.astype(np.int64)
        found = np.vstack([session.run(None, {"q": np.full((1, 64), v, dtype=np.uint8)})[0]
                           for v in (255, 1)])
        if np.array_equal(found, expected):
            return levels
    raise RuntimeError("onnxruntime's integer product is not exact on this CPU")


class Int8Scan:
    """Candidate rows for the ``n`` nearest of a table of vectors, always a superset."""

    def __init__(self, vectors: np.ndarray, threads: int | None = None) -> None:
        """``threads``: onnxruntime's threads for the product; None to choose at the first
        question among ``thread_choices()``."""
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be 1 or more, or None to choose; got {threads}")
        count, self.dimension = vectors.shape
        self.levels = exact_levels(threads)
        self.scale = np.empty(count, dtype=np.float32)
        self.code_norm = np.empty(count, dtype=np.float32)
        self.residual = np.empty(count, dtype=np.float32)
        codes_t = np.empty((self.dimension, count), dtype=np.int8)
        # In blocks: temporaries of the whole table's size would cost more in page faults
        # than the arithmetic (0.5 s against 0.1 s for 42,000 rows here).
        for start in range(0, count, _BLOCK):
            rows = np.asarray(vectors[start:start + _BLOCK], dtype=np.float32)  # float16 exactly
            if not np.isfinite(rows).all():
                raise ValueError("the vector table holds a NaN or an infinity")
            scale, codes = code_rows(rows, self.levels)
            error = np.linalg.norm(rows - codes * scale[:, None], axis=1)
            part = slice(start, start + len(rows))
            self.scale[part] = scale
            # Row i's bound is code_norm[i]·|e| + residual[i]. Both are rounded up, and the
            # slack (float32 rounding of the scores, which grows with a row's length) added.
            self.code_norm[part] = scale * np.linalg.norm(codes, axis=1) * np.float32(1 + 1e-5)
            self.residual[part] = (error * np.float32(1 + 1e-5)
                                   + np.float32(_SLACK) * np.maximum(
                                       np.linalg.norm(rows, axis=1), np.float32(1)))
            codes_t[:, part] = codes.T
        choices = (threads,) if threads is not None else thread_choices()
        model = matmul_integer_model(codes_t)  # written once; each session packs the codes
        self._sessions = {n: _session(codes_t, n, model) for n in choices}
        del model, codes_t
        self.threads = choices[0]  # the product's threads, chosen at the first question
        self.session = self._sessions[self.threads]
        self.timings: dict[int, float] = {}  # the choice's median ms for each thread count
        self._choosing = threading.Lock()
        self._watching = threading.Lock()
        self._recent: deque[float] = deque(maxlen=_WATCH)

    def __len__(self) -> int:
        return len(self.scale)

    def candidates(self, query: np.ndarray, n: int) -> np.ndarray | None:
        """Rows (ascending) that hold the ``n`` nearest to the unit vector ``query``, ties at
        the ``n``-th place included, or None when the codes cannot bound the question (all
        zeros, not finite, of another dimension) or ``n`` is every row."""
        if query.shape != (self.dimension,) or n >= len(self) or n <= 0:
            return None
        if not np.isfinite(query).all() or not query.any():
            return None
        scales, steps = code_rows(query[None, :], 127)
        t = scales[0]
        error = float(np.linalg.norm(query - steps[0] * t))
        codes = (steps + _ZERO).astype(np.uint8)
        product = self._product({"q": codes})
        estimate = product.astype(np.float32) * (self.scale * t)
        bound = self.code_norm * np.float32(error * (1 + 1e-6)) + self.residual
        floor = np.partition(estimate - bound, len(self) - n)[len(self) - n]
        return np.flatnonzero(estimate + bound >= floor)

    def _product(self, feeds: dict[str, np.ndarray]) -> np.ndarray:
        if len(self._sessions) > 1 and not self.timings and self._choosing.acquire(False):
            # One thread chooses; a question asked meanwhile runs on one thread, which on two
            # cores slows both choices' runs and so leans the choice towards one thread.
            try:
                if not self.timings:
                    return self._choose(feeds)
            finally:
                self._choosing.release()
        if self.threads == 1 or 1 not in self._sessions:  # nothing to go back to
            return self.session.run(None, feeds)[0][0]
        session = self.session
        start = _clock()
        product = session.run(None, feeds)[0][0]
        spent = _clock() - start
        with self._watching:
            self._recent.append(spent)
            if (len(self._recent) == _WATCH and 1 in self._sessions
                    and statistics.median(self._recent) * 1e3 > _FALLBACK * self.timings[1]):
                self.threads, self.session = 1, self._sessions[1]  # slower than one: for good
                self._sessions = {1: self.session}
        return product

    def _choose(self, feeds: dict[str, np.ndarray]) -> np.ndarray:
        """Each session's product timed in turns on this question, the faster kept: more
        threads only if their median is under ``_CHOICE_MARGIN`` of one thread's."""
        sessions = list(self._sessions.items())
        for _, session in sessions:  # warm: the first run of a session sets up its pool
            session.run(None, feeds)
        spent: dict[int, list[float]] = {n: [] for n, _ in sessions}
        products: dict[int, np.ndarray] = {}
        for round_ in range(_CHOICE_ROUNDS):
            for n, session in sessions if round_ % 2 else reversed(sessions):
                start = _clock()
                products[n] = session.run(None, feeds)[0][0]
                spent[n].append(_clock() - start)
        product = products[1]
        timings = {n: statistics.median(times) * 1e3 for n, times in spent.items()}
        best = min(timings, key=timings.get)  # type: ignore[arg-type]
        if best != 1 and (timings[best] >= _CHOICE_MARGIN * timings[1]
                          or not np.array_equal(products[best], product)):
            best = 1  # not faster enough; or (never seen) a product that differs from one's
        # One thread is kept beside more, to go back to if more become slower. In this order,
        # since other threads read ``timings`` as "chosen" and then ``threads``.
        self._sessions = {n: s for n, s in self._sessions.items() if n in (1, best)}
        self.timings = timings
        self.threads, self.session = best, self._sessions[best]
        return product
