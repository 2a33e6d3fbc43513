"""The local dense search over saved vectors (assistant/vector_table.py)."""

from __future__ import annotations

import numpy as np
import pytest

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
