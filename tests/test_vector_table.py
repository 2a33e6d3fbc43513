"""The local dense search over saved vectors (assistant/vector_table.py)."""

from __future__ import annotations

import os
import textwrap

import numpy as np
import pytest
from conftest import cpu_after_ms

from assistant.files import load_mapped, save_mapped
from assistant.vector_table import VectorTable


def test_nearest_rows_are_the_exact_cosine_ranking(tmp_path) -> None:
    rng = np.random.default_rng(0)
    raw = rng.normal(size=(500, 24)) * rng.uniform(0.1, 5, size=(500, 1))  # unequal lengths
    table = VectorTable.build(raw.tolist())
    query = rng.normal(size=24)
    cosine = raw @ query / (np.linalg.norm(raw, axis=1) * np.linalg.norm(query))
    expected = list(np.argsort(-cosine)[:40])
    found = table.nearest(query.tolist(), 40)
    assert [i for i, _ in found] == expected
    assert [s for _, s in found] == pytest.approx(cosine[expected], abs=1e-5)
    assert len(table.nearest(query, 900)) == 500  # at most every row
    assert table.nearest(query, 0) == []

    save_mapped(tmp_path / "v.arrays", table.arrays())
    again = VectorTable.from_arrays(load_mapped(tmp_path / "v.arrays"))
    assert again is not None and again.nearest(query, 40) == found
    assert VectorTable.from_arrays({}) is None  # a file saved before the vectors were


def test_an_empty_or_malformed_table() -> None:
    assert len(VectorTable.build([])) == 0
    with pytest.raises(ValueError):
        VectorTable(np.zeros(5, dtype=np.float32))
    with pytest.raises(ValueError):
        VectorTable(np.zeros((2, 3), dtype=np.float64))


_BLAS_PROBE = textwrap.dedent("""
    import time
    {first}
    import numpy as np
    from assistant.vector_table import VectorTable

    rng = np.random.default_rng(0)
    table = VectorTable.build(rng.standard_normal((20_000, 384)).astype(np.float32))
    table.nearest(rng.standard_normal(384), 40)
    time.sleep(0.3)
    table.nearest(rng.standard_normal(384), 40)
""")


def _cpu_after_search_ms(first: str, **env: str) -> float:
    clean = {k: v for k, v in os.environ.items() if not k.endswith("THREAD_TIMEOUT")}
    return cpu_after_ms(_BLAS_PROBE.format(first=first), {**clean, **env})


@pytest.mark.skipif(os.cpu_count() == 1, reason="OpenBLAS runs no worker thread on one core")
def test_blas_workers_sleep_once_a_search_ends() -> None:
    """OpenBLAS's workers spin about 0.1 s after a product by default, on the core that the
    next embedding or llama.cpp needs; importing the assistant first makes them sleep."""
    ours = _cpu_after_search_ms("import assistant")
    default = _cpu_after_search_ms("import assistant", OPENBLAS_THREAD_TIMEOUT="28")
    assert ours < 10.0, f"{ours} ms of CPU in the 0.5 s after a search"
    assert default > ours + 20.0, (default, ours)  # the user's own value is kept
