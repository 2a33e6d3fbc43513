"""The local dense search over saved vectors (assistant/index/vector_table.py)."""

from __future__ import annotations

import os
import textwrap

import numpy as np
import pytest
from conftest import cpu_after_ms

from assistant.index import int8_scan
from assistant.index.files import load_mapped, save_mapped
from assistant.index.int8_scan import Int8Scan, matmul_integer_model
from assistant.index.vector_table import VectorTable


def test_nearest_rows_are_the_exact_cosine_ranking(tmp_path) -> None:
    rng = np.random.default_rng(0)
    raw = rng.normal(size=(500, 24)) * rng.uniform(0.1, 5, size=(500, 1))  # unequal lengths
    table = VectorTable.build(raw.tolist())
    assert table.vectors.dtype == np.float16  # half the bytes of float32, on disk and in memory
    query = rng.normal(size=24)
    unit = query / np.linalg.norm(query)
    held = table.vectors.astype(np.float64)  # the rows as rounded to float16
    cosine = held @ unit
    expected = list(np.argsort(-cosine, kind="stable")[:40])
    found = table.nearest(query.tolist(), 40)
    assert [i for i, _ in found] == expected
    assert [s for _, s in found] == pytest.approx(cosine[expected], abs=1e-6)
    # Rounding each component of a unit row by at most 2**-11 of itself moves its cosine with
    # a unit question by at most 2**-11 (Cauchy-Schwarz), whatever the dimension.
    true = raw @ unit / np.linalg.norm(raw, axis=1)
    assert np.abs(true[expected] - [s for _, s in found]).max() <= 2.0**-11 + 1e-6
    assert len(table.nearest(query, 900)) == 500  # at most every row
    assert table.nearest(query, 0) == []

    save_mapped(tmp_path / "v.arrays", table.arrays())
    saved = load_mapped(tmp_path / "v.arrays")
    assert saved["chunk_vectors"].dtype == np.float16
    again = VectorTable.from_arrays(saved)
    assert again is not None and again.nearest(query, 40) == found
    assert VectorTable.from_arrays({}) is None  # a file saved before the vectors were
    # a float32 table, as saved before 2026-12-03, is read and searched as it is
    older = VectorTable.from_arrays({"chunk_vectors": held.astype(np.float32)})
    assert older is not None and older.vectors.dtype == np.float32
    assert older.nearest(query, 40) == found


def test_an_empty_or_malformed_table() -> None:
    assert len(VectorTable.build([])) == 0
    with pytest.raises(ValueError):
        VectorTable(np.zeros(5, dtype=np.float32))
    with pytest.raises(ValueError, match="float16 or float32"):
        VectorTable(np.zeros((2, 3), dtype=np.float64))


_BLAS_PROBE = textwrap.dedent("""
    import time
    {first}
    import numpy as np
    from assistant.index.vector_table import VectorTable

    rng = np.random.default_rng(0)
    table = VectorTable.build(rng.standard_normal((20_000, 384)).astype(np.float32))
    table.scan_from = {scan_from}
    table.nearest(rng.standard_normal(384), 40)
    time.sleep(0.3)
    table.nearest(rng.standard_normal(384), 40)
""")


def _cpu_after_search_ms(first: str, scan_from: int = 10**9, **env: str) -> float:
    clean = {k: v for k, v in os.environ.items() if not k.endswith("THREAD_TIMEOUT")}
    return cpu_after_ms(_BLAS_PROBE.format(first=first, scan_from=scan_from), {**clean, **env})


@pytest.mark.skipif(os.cpu_count() == 1, reason="OpenBLAS runs no worker thread on one core")
def test_blas_workers_sleep_once_a_search_ends() -> None:
    """OpenBLAS's workers spin about 0.1 s after a product by default, on the core that the
    next embedding or llama.cpp needs; importing the assistant first makes them sleep."""
    ours = _cpu_after_search_ms("import assistant")
    default = _cpu_after_search_ms("import assistant", OPENBLAS_THREAD_TIMEOUT="28")
    assert ours < 10.0, f"{ours} ms of CPU in the 0.5 s after a search"
    assert default > ours + 20.0, (default, ours)  # the user's own value is kept
    # the int8 scan's onnxruntime workers sleep after a search too
    scanned = _cpu_after_search_ms("import assistant", scan_from=0)
    assert scanned < 10.0, f"{scanned} ms of CPU in the 0.5 s after an int8 search"


def _float_only(vectors: np.ndarray) -> VectorTable:
    table = VectorTable(vectors)
    table.scan_from = len(vectors) + 1
    return table


def _scanned(vectors: np.ndarray) -> VectorTable:
    table = VectorTable(vectors)
    table.scan_from = 0
    return table


def test_the_int8_graph_computes_the_exact_integer_product() -> None:
    """At the codes' width the probe picks for this CPU: ±127 with VNNI, ±63 without, where
    onnxruntime's 16-bit kernel overflows on ±127 (as run under QEMU, docs/performance.md)."""
    import onnxruntime

    levels = int8_scan.exact_levels()
    rng = np.random.default_rng(3)
    codes = rng.integers(-levels, levels + 1, size=(50, 7), dtype=np.int8)  # 50 dims, 7 rows
    session = onnxruntime.InferenceSession(matmul_integer_model(codes),
                                           providers=["CPUExecutionProvider"])
    q = rng.integers(1, 256, size=(1, 50), dtype=np.uint8)
    product = session.run(None, {"q": q})[0]
    assert product.dtype == np.int32 and product.shape == (1, 7)
    assert product.tolist() == ((q.astype(np.int32) - 128) @ codes.astype(np.int32)).tolist()


def test_the_int8_scan_finds_the_rows_and_order_of_the_float_search() -> None:
    """Crowded rows (a few centres, little noise) are the hard case for a first pass: the
    40th best score is close to hundreds of others, and every one must be kept."""
    rng = np.random.default_rng(4)
    centres = rng.standard_normal((12, 64))
    raw = centres[rng.integers(0, 12, 6000)] + 0.15 * rng.standard_normal((6000, 64))
    raw[17] = 0.0  # a zero row has no direction; it must not break the codes
    raw[18:22] = raw[30]  # duplicates: equal scores, ordered by row in both searches
    table = VectorTable.build(raw)
    full, scanned = _float_only(table.vectors), _scanned(table.vectors)
    sizes = []
    for i in range(60):
        query = raw[rng.integers(6000)] + 0.5 * rng.standard_normal(64)
        for n in (1, 40, 333):
            expected, found = full.nearest(query, n), scanned.nearest(query, n)
            assert [r for r, _ in found] == [r for r, _ in expected], (i, n)
            assert [s for _, s in found] == pytest.approx([s for _, s in expected], abs=1e-6)
        unit = (query / np.linalg.norm(query)).astype(np.float32)
        sizes.append(len(scanned._int8.candidates(unit, 40)))
    assert scanned._int8 is not None  # the scan, not the float product, answered
    # the bounds leave a small share of the rows to score in full
    assert max(sizes) < len(raw) // 4, sizes
    duplicates = [r for r, _ in scanned.nearest(raw[30], 10) if r in (18, 19, 20, 21, 30)]
    assert duplicates == [18, 19, 20, 21, 30]


def test_a_query_the_codes_cannot_bound_falls_back_to_the_float_product() -> None:
    rng = np.random.default_rng(5)
    table = _scanned(VectorTable.build(rng.standard_normal((300, 16))).vectors)
    zero = np.zeros(16)
    assert table.nearest(zero, 5) == _float_only(table.vectors).nearest(zero, 5)
    assert table._int8 is not None and table._int8.candidates(zero.astype(np.float32), 5) is None
    assert len(table.nearest(rng.standard_normal(16), 300)) == 300  # every row: no scan needed


def test_the_scan_starts_at_scan_from_rows_and_a_failure_leaves_the_float_search(
        monkeypatch) -> None:
    rng = np.random.default_rng(6)
    vectors = VectorTable.build(rng.standard_normal((400, 16))).vectors
    small = VectorTable(vectors)
    small.scan_from = 401
    small.nearest(rng.standard_normal(16), 10)
    assert small._int8 is None  # below the threshold the float product is used

    def broken(*args, **kwargs):
        raise RuntimeError("onnxruntime cannot create the session")

    monkeypatch.setattr("assistant.index.vector_table.Int8Scan", broken)
    table = _scanned(vectors)
    query = rng.standard_normal(16)
    assert table.nearest(query, 10) == _float_only(vectors).nearest(query, 10)
    assert table._int8 is None and table._scan_failed


def _question_codes(q: np.ndarray) -> tuple[np.ndarray, float, float]:
    """The question's codes as ``Int8Scan.candidates`` makes them."""
    scales, steps = int8_scan.code_rows(q[None, :], 127)
    t = float(scales[0])
    return steps[0], t, float(np.linalg.norm(q.astype(np.float64) - steps[0] * t))


@pytest.mark.parametrize("kind", ["random", "worst"])
def test_int8_scan_bounds_hold_for_every_row(kind) -> None:
    """The bound is what makes the scan exact: the integer product is exact (also for the
    codes that overflow a 16-bit kernel: every code at its limit, a question of all 255s),
    and each row's stored bound is at least its true rounding error."""
    rng = np.random.default_rng(7)
    if kind == "random":
        raw = rng.standard_normal((2000, 384))
        questions = rng.standard_normal((20, 384))
    else:  # every coordinate at the same magnitude: every code at ±levels
        raw = np.sign(rng.standard_normal((500, 384)))
        raw[0] = 1.0
        questions = np.vstack([np.ones(384), -np.ones(384), np.sign(rng.standard_normal(384))])
    vectors = VectorTable.build(raw).vectors
    scan = Int8Scan(vectors)
    assert scan.levels in (63, 127)
    scale, codes = int8_scan.code_rows(vectors, scan.levels)
    assert np.array_equal(scale, scan.scale)
    rows = vectors.astype(np.float64)
    residual = rows - codes * scale[:, None].astype(np.float64)
    # rounded to nearest; s is rounded to float32, which moves s·c by up to |c|·2**-24·s
    assert np.all(np.abs(residual) <= scale[:, None] * (0.5 + 127 * 2.0**-24))
    assert np.all(scan.residual >= np.linalg.norm(residual, axis=1))
    assert np.all(scan.code_norm >= scale * np.linalg.norm(codes, axis=1))
    for q in questions:
        q = (q / np.linalg.norm(q)).astype(np.float32)
        steps, t, error = _question_codes(q)
        product = scan.session.run(None, {"q": (steps + int8_scan._ZERO).astype(np.uint8)[None]})
        assert product[0][0].tolist() == (codes.astype(np.int64) @ steps.astype(np.int64)).tolist()
        estimate = product[0][0] * scale.astype(np.float64) * t
        bound = scan.code_norm.astype(np.float64) * error + scan.residual
        true = rows @ q.astype(np.float64)
        assert np.all(np.abs(true - estimate) <= bound)
        assert np.all(bound < 0.05)  # and it is tight enough to prune


def test_ties_at_the_last_place_go_by_row_in_both_searches() -> None:
    rng = np.random.default_rng(8)
    raw = rng.standard_normal((3000, 32))
    raw[[2900, 40, 1234, 7, 500]] = raw[99]  # six equal rows, the nearest to raw[99]
    table = VectorTable.build(raw)
    full, scanned = _float_only(table.vectors), _scanned(table.vectors)
    for n in (1, 3, 6, 8):
        expected = full.nearest(raw[99], n)
        assert [r for r, _ in expected][: min(n, 6)] == [7, 40, 99, 500, 1234, 2900][:n]
        assert [r for r, _ in scanned.nearest(raw[99], n)] == [r for r, _ in expected]
    assert scanned._int8 is not None


def test_a_table_with_a_nan_keeps_the_float_search() -> None:
    rng = np.random.default_rng(9)
    vectors = VectorTable.build(rng.standard_normal((300, 16))).vectors.copy()
    vectors[5, 3] = np.nan  # a damaged saved file
    table = _scanned(vectors)
    query = rng.standard_normal(16)
    assert table.nearest(query, 10) == _float_only(vectors).nearest(query, 10)
    assert table._int8 is None and table._scan_failed


def test_retrieval_with_the_int8_scan_is_retrieval_without_it(bundled_home, minilm,
                                                              monkeypatch) -> None:
    """End to end: the real model's vectors of the bundled corpus, the evaluation's questions,
    the whole hybrid retrieval, once with the scan forced on and once with it off."""
    from assistant.api import Assistant
    from assistant.config import Settings
    from assistant.eval.questions import load_questions
    from assistant.resources import eval_questions

    questions = [q.text for q in load_questions(eval_questions())]
    results = {}
    for scan_from in (10**9, 0):
        monkeypatch.setattr(VectorTable, "scan_from", scan_from)
        assistant = Assistant(Settings(home=bundled_home), embeddings=minilm)
        results[scan_from] = [
            [(s.paper_id, s.chunk_ids, s.dense) for s in assistant.retrieve(q, k=5)]
            for q in questions]
        vectors = assistant.retriever._lexical_index().vectors
        assert vectors is not None and (vectors._int8 is not None) == (scan_from == 0)
    assert len(questions) > 50
    assert results[0] == results[10**9]


class _SixteenBitKernel:
    """onnxruntime's u8×s8 product as its x86 kernels without VNNI compute it: adjacent pairs
    of products added in 16 bits with saturation (pmaddubsw), then summed in 32 bits."""

    def __init__(self, codes_t: np.ndarray, threads: int | None = None, _model=None) -> None:
        self.codes = codes_t.astype(np.int64)  # (dimension, rows)

    def run(self, _outputs, feeds):
        q = feeds["q"].astype(np.int64)[0]  # uint8 codes, zero point 128
        terms = q[:, None] * self.codes
        if len(terms) % 2:
            terms = np.vstack([terms, np.zeros((1, terms.shape[1]), dtype=np.int64)])
        pairs = np.clip(terms[0::2] + terms[1::2], -32768, 32767).sum(axis=0)
        product = pairs - int8_scan._ZERO * self.codes.sum(axis=0)
        return [product[None, :].astype(np.int32)]


def test_without_vnni_the_codes_narrow_to_63_and_the_scan_stays_exact(monkeypatch) -> None:
    """This CPU may have VNNI; the ±63 path is run here on a model of the 16-bit kernel: the
    probe must find that ±127 codes overflow it, and the scan with ±63 codes must still give
    the float search's rows and order. onnxruntime's own kernel is not run here; under QEMU's
    emulation of a CPU without VNNI it gave this model's products on 200 of 200 random tables
    (benchmarks/without_vnni.py, docs/performance.md)."""
    monkeypatch.setattr(int8_scan, "_session", _SixteenBitKernel)
    int8_scan.exact_levels.cache_clear()
    try:
        assert int8_scan.exact_levels() == 63
        rng = np.random.default_rng(11)
        centres = rng.standard_normal((12, 64))
        raw = centres[rng.integers(0, 12, 3000)] + 0.15 * rng.standard_normal((3000, 64))
        table = VectorTable.build(raw)
        full, scanned = _float_only(table.vectors), _scanned(table.vectors)
        for i in range(30):
            query = raw[rng.integers(3000)] + 0.5 * rng.standard_normal(64)
            for n in (1, 40):
                assert ([r for r, _ in scanned.nearest(query, n)]
                        == [r for r, _ in full.nearest(query, n)]), (i, n)
        assert scanned._int8 is not None and scanned._int8.levels == 63
        # ±127 codes on the same kernel give wrong products: what the probe guards against
        wide = _SixteenBitKernel(np.full((64, 1), 127, dtype=np.int8))
        product = wide.run(None, {"q": np.full((1, 64), 255, dtype=np.uint8)})[0][0, 0]
        assert product != 127 * 127 * 64
    finally:
        int8_scan.exact_levels.cache_clear()


def _assert_same(found: list[tuple[int, float]], expected: list[tuple[int, float]]) -> None:
    """The same rows in the same order; scores to float32 rounding (the product over fewer
    rows may add in another order)."""
    assert [r for r, _ in found] == [r for r, _ in expected]
    assert [x for _, x in found] == pytest.approx([x for _, x in expected], abs=1e-6)


class _TimedKernel:
    """An exact integer product whose every run takes ``cost[threads]`` milliseconds of a
    fake clock, so that the choice of threads can be checked without a real machine's noise."""

    clock = 0.0
    cost: dict[int, float] = {}
    runs: list[int] = []

    def __init__(self, codes_t: np.ndarray, threads: int | None = None, _model=None) -> None:
        self.codes = codes_t.astype(np.int64)
        self.threads = threads or 1

    def run(self, _outputs, feeds):
        _TimedKernel.clock += _TimedKernel.cost[self.threads] / 1e3
        _TimedKernel.runs.append(self.threads)
        product = (feeds["q"].astype(np.int64) - int8_scan._ZERO) @ self.codes
        return [product.astype(np.int32)]


@pytest.fixture
def timed_kernel(monkeypatch):
    int8_scan.exact_levels(None)  # the codes' width, probed on the real kernel, not timed
    monkeypatch.setattr(int8_scan, "_session", _TimedKernel)
    monkeypatch.setattr(int8_scan, "_clock", lambda: _TimedKernel.clock)
    monkeypatch.setattr(int8_scan, "thread_choices", lambda: (1, 2))
    _TimedKernel.runs = []
    yield _TimedKernel
    int8_scan.exact_levels.cache_clear()  # probed on the fake kernel for other thread counts


def _crowded_table(seed: int) -> tuple[np.ndarray, np.random.Generator]:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((8, 32))
    raw = centres[rng.integers(0, 8, 2000)] + 0.2 * rng.standard_normal((2000, 32))
    return raw, rng


@pytest.mark.parametrize(("cost", "chosen"), [
    ({1: 1.0, 2: 0.6}, 2),     # two threads clearly faster: kept
    ({1: 1.0, 2: 0.88}, 2),    # just under the margin (0.9)
    ({1: 1.0, 2: 0.92}, 1),    # just over: one thread, which leaves a core free
    ({1: 0.8, 2: 3.6}, 1),     # two threads slow, as in some processes on a Zen 5
])
def test_the_int8_pass_keeps_the_faster_thread_count_on_its_first_question(
        timed_kernel, cost, chosen) -> None:
    timed_kernel.cost = cost
    raw, rng = _crowded_table(12)
    table = VectorTable.build(raw)
    full, scanned = _float_only(table.vectors), _scanned(table.vectors)
    query = raw[5] + 0.3 * rng.standard_normal(32)
    _assert_same(scanned.nearest(query, 10), full.nearest(query, 10))  # the choosing call answers
    scan = scanned._int8
    assert scan is not None and scan.threads == chosen
    assert scan.timings == pytest.approx(cost)
    # both warmed, then timed in turns, each first in every other round
    turns = [[2, 1], [1, 2]] * (int8_scan._CHOICE_ROUNDS // 2 + 1)
    assert timed_kernel.runs == [1, 2] + [n for pair in turns[:int8_scan._CHOICE_ROUNDS]
                                          for n in pair]
    timed_kernel.runs = []
    for _ in range(5):
        query = raw[rng.integers(2000)] + 0.3 * rng.standard_normal(32)
        _assert_same(scanned.nearest(query, 10), full.nearest(query, 10))
    assert timed_kernel.runs == [chosen] * 5  # chosen once; later questions run only that
    # one thread is kept beside two, to go back to; the other sessions are let go
    assert set(scan._sessions) == ({1, 2} if chosen == 2 else {1})


def test_two_threads_that_become_slower_than_one_go_back_to_one_for_good(timed_kernel) -> None:
    timed_kernel.cost = {1: 1.0, 2: 0.5}
    raw, rng = _crowded_table(13)
    table = VectorTable.build(raw)
    full, scanned = _float_only(table.vectors), _scanned(table.vectors)
    scanned.nearest(raw[0], 10)
    scan = scanned._int8
    assert scan is not None and scan.threads == 2
    timed_kernel.cost = {1: 1.0, 2: 1.4}  # slower than one in the choice, within the margin
    for _ in range(int8_scan._WATCH * 2):
        scanned.nearest(raw[rng.integers(2000)], 10)
    assert scan.threads == 2
    timed_kernel.cost = {1: 1.0, 2: 3.5}  # now much slower than one thread was
    timed_kernel.runs = []
    for i in range(int8_scan._WATCH * 2):
        query = raw[rng.integers(2000)] + 0.3 * rng.standard_normal(32)
        _assert_same(scanned.nearest(query, 10), full.nearest(query, 10)), i
    # the median of the last 16 calls is over one thread's at the 8th slow one; one from then on
    assert timed_kernel.runs == [2] * (int8_scan._WATCH // 2) + [1] * (
        int8_scan._WATCH * 2 - int8_scan._WATCH // 2)
    assert scan.threads == 1 and set(scan._sessions) == {1}
    timed_kernel.cost = {1: 1.0, 2: 0.1}
    scanned.nearest(raw[1], 10)
    assert scan.threads == 1  # for good: no second choice


def test_threads_given_or_one_core_mean_no_choice(timed_kernel, monkeypatch) -> None:
    timed_kernel.cost = {1: 5.0, 2: 0.5, 3: 0.1}
    raw, _ = _crowded_table(14)
    vectors = VectorTable.build(raw).vectors
    given = _scanned(vectors)
    given.scan_threads = 3
    given.nearest(raw[2], 10)
    assert given._int8 is not None and given._int8.threads == 3 and given._int8.timings == {}
    assert set(timed_kernel.runs) == {3}
    monkeypatch.setattr(int8_scan, "thread_choices", lambda: (1,))
    timed_kernel.runs = []
    single = _scanned(vectors)
    single.nearest(raw[2], 10)
    assert single._int8 is not None and single._int8.threads == 1
    assert timed_kernel.runs == [1]


def test_questions_from_several_threads_during_the_choice_are_all_answered_exactly(
        timed_kernel) -> None:
    """A server or a chat may ask from several threads while the first question chooses: the
    others run on one thread meanwhile, and every answer is the float search's."""
    import threading

    timed_kernel.cost = {1: 1.0, 2: 0.5}
    raw, rng = _crowded_table(15)
    table = VectorTable.build(raw)
    full, scanned = _float_only(table.vectors), _scanned(table.vectors)
    queries = [raw[rng.integers(2000)] + 0.3 * rng.standard_normal(32) for _ in range(48)]
    expected = [full.nearest(q, 10) for q in queries]
    found: dict[int, list] = {}
    start = threading.Barrier(6)

    def ask(worker: int) -> None:
        start.wait()
        for i in range(worker, len(queries), 6):
            found[i] = scanned.nearest(queries[i], 10)

    workers = [threading.Thread(target=ask, args=(w,)) for w in range(6)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    for i, rows in enumerate(expected):
        _assert_same(found[i], rows)
    scan = scanned._int8
    assert scan is not None and set(scan.timings) == {1, 2}  # one choice, made once
    assert scan.threads in (1, 2)


def test_threads_below_one_are_refused() -> None:
    vectors = VectorTable.build(np.random.default_rng(16).standard_normal((50, 8))).vectors
    with pytest.raises(ValueError, match="threads must be 1 or more"):
        Int8Scan(vectors, threads=0)


def test_the_thread_choices_follow_the_cores_this_process_may_use(monkeypatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0}, raising=False)
    assert int8_scan.thread_choices() == (1,)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1, 2, 3}, raising=False)
    assert int8_scan.thread_choices() == (1, 2)
