"""Files that other processes read while we write them: written whole, or not at all."""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from pathlib import Path

import numpy as np


def save_arrays(path: Path, arrays: Mapping[str, np.ndarray]) -> None:
    """Write ``arrays`` to the ``.npz`` file ``path`` atomically: a reader sees all or nothing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # A name of its own per writer: two indexers saving at once must not write one file.
    tmp = path.with_name(f"{path.name}.{os.getpid()}-{uuid.uuid4().hex}.tmp")
    try:
        with open(tmp, "wb") as handle:  # a handle, so numpy does not add ".npz" to the name
            np.savez(handle, **arrays)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
