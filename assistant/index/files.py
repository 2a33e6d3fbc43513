"""Files that other processes read while we write them: written whole, or not at all."""

from __future__ import annotations

import json
import mmap
import os
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

import numpy as np


@contextmanager
def _replacing(path: Path) -> Iterator[BinaryIO]:
    """A handle on a private temporary file that replaces ``path`` when the block succeeds."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # A name of its own per writer: two indexers saving at once must not write one file.
    tmp = path.with_name(f"{path.name}.{os.getpid()}-{uuid.uuid4().hex}.tmp")
    try:
        with open(tmp, "wb") as handle:
            yield handle
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def save_arrays(path: Path, arrays: Mapping[str, np.ndarray]) -> None:
    """Write ``arrays`` to the ``.npz`` file ``path`` atomically: a reader sees all or nothing."""
    with _replacing(path) as handle:  # a handle, so numpy does not add ".npz" to the name
        np.savez(handle, **arrays)


_MAGIC = b"ASSTARR1"
_ALIGN = 64


def save_mapped(path: Path, arrays: Mapping[str, np.ndarray]) -> None:
    """Write ``arrays`` atomically in a layout ``load_mapped`` maps without reading or copying.

    The file is a magic string, the length of a JSON header naming each array's dtype, shape
    and offset, the header, then each array's bytes at a 64-byte boundary.
    """
    header: dict[str, dict[str, object]] = {}
    offset = 0
    parts: list[tuple[int, np.ndarray]] = []
    for name, value in arrays.items():
        array = np.ascontiguousarray(value)
        if array.dtype.hasobject:
            raise ValueError(f"array {name!r} holds Python objects; only plain dtypes map")
        offset = -(-offset // _ALIGN) * _ALIGN
        header[name] = {"dtype": array.dtype.str, "shape": list(array.shape), "offset": offset}
        parts.append((offset, array))
        offset += array.nbytes
    encoded = json.dumps(header).encode()
    start = -(-(len(_MAGIC) + 8 + len(encoded)) // _ALIGN) * _ALIGN
    with _replacing(path) as handle:
        handle.write(_MAGIC + len(encoded).to_bytes(8, "little") + encoded)
        for at, array in parts:
            handle.seek(start + at)
            handle.write(array.tobytes())
        handle.truncate(start + offset)


def load_mapped(path: Path) -> dict[str, np.ndarray]:
    """The arrays of a ``save_mapped`` file, read-only views of the file mapped in memory.

    Raises ``ValueError`` for a file that is not one, or is cut short.
    """
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size < len(_MAGIC) + 8:
            raise ValueError(f"{path} is too short to hold arrays")
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    if mapped[: len(_MAGIC)] != _MAGIC:
        raise ValueError(f"{path} is not an arrays file")
    length = int.from_bytes(mapped[len(_MAGIC): len(_MAGIC) + 8], "little")
    end = len(_MAGIC) + 8 + length
    if end > size:
        raise ValueError(f"{path} is cut short")
    try:
        header = json.loads(mapped[len(_MAGIC) + 8: end])
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} has a damaged header") from exc
    start = -(-end // _ALIGN) * _ALIGN
    arrays = {}
    try:
        for name, spec in header.items():
            dtype = np.dtype(spec["dtype"])
            shape = tuple(int(n) for n in spec["shape"])
            count = int(np.prod(shape, dtype=np.int64))
            # frombuffer raises ValueError when the file ends before the array does
            view = np.frombuffer(mapped, dtype, count, start + int(spec["offset"]))
            arrays[name] = view.reshape(shape)
    except (AttributeError, KeyError, TypeError) as exc:
        raise ValueError(f"{path} has a damaged header") from exc
    return arrays
