"""Saved llama.cpp prompt states, kept in RAM, so a prompt resumes from the longest one it
shares a beginning with (in a chat: the rewrite from the last rewrite, the answer from the
last answer).

With a ``folder``, one state per kind of prompt (the prompts' first tokens: the template and
the system prompt's start) is also written to disk and read back by the next process, so a
one-shot ``assistant ask`` does not read the system prompt again. llama.cpp reuses a loaded
state only for the tokens it shares, exactly, with the new prompt, so a stale or unrelated
state costs a load and never changes an answer.
"""

from __future__ import annotations

import hashlib
import os
import uuid
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from llama_cpp import LlamaRAMCache, LlamaState

_KIND_TOKENS = 64  # prompts that begin alike this far share a system prompt
_FILES = 8  # saved states kept on disk, the newest


class PromptCache(LlamaRAMCache):
    """llama-cpp-python's RAM cache, without the logits that each saved state carries.

    A state holds the KV cache and a copy of the logits of every prompt token (a row of the
    whole vocabulary each, far larger than the KV cache), which the cache's capacity does not
    count. A resumed prompt always evaluates its
    last token again, so the old logits are never read; one row is kept because loading a
    state broadcasts it over the rows it restores.
    """

    def __init__(self, capacity_bytes: int = 2 << 30, folder: Path | None = None) -> None:
        super().__init__(capacity_bytes=capacity_bytes)
        self.folder = folder
        self.loaded_from_disk = 0
        if folder is not None:
            self._read_saved(folder)

    def __setitem__(self, key: Sequence[int], value: Any) -> None:
        value.scores = value.scores[-1:].copy()
        super().__setitem__(key, value)
        if self.folder is not None and len(key) > _KIND_TOKENS:
            self._write(self.folder, key, value)

    @property
    def cache_size(self) -> int:
        return sum(s.llama_state_size + s.scores.nbytes for s in self.cache_state.values())

    def forget(self) -> None:
        """Drop every saved state, in RAM and on disk."""
        self.cache_state.clear()
        if self.folder is not None:
            for path in self.folder.glob("*.npz"):
                path.unlink(missing_ok=True)

    def _read_saved(self, folder: Path) -> None:
        for path in sorted(folder.glob("*.npz"), key=_mtime, reverse=True):
            try:
                with np.load(path, allow_pickle=False) as data:
                    state = LlamaState(
                        input_ids=data["input_ids"].astype(np.intc), scores=data["scores"],
                        n_tokens=int(data["n_tokens"][0]), llama_state=data["llama_state"].tobytes(),
                        llama_state_size=int(data["llama_state"].size), seed=int(data["seed"][0]),
                    )
            except (OSError, ValueError, KeyError, zipfile.BadZipFile):
                path.unlink(missing_ok=True)  # damaged: the next answer writes it again
                continue
            if self.cache_size + state.llama_state_size > self.capacity_bytes:
                break
            super().__setitem__(tuple(int(t) for t in state.input_ids), state)
            self.loaded_from_disk += 1

    def _write(self, folder: Path, key: Sequence[int], state: Any) -> None:
        kind = hashlib.sha1(np.asarray(key[:_KIND_TOKENS], dtype=np.int64).tobytes()).hexdigest()
        path = folder / f"{kind[:16]}.npz"
        if path.is_file():
            return  # this kind of prompt is saved already: its beginning is what counts
        try:
            _save(path, {
                "input_ids": np.asarray(state.input_ids, dtype=np.int32),
                "scores": np.asarray(state.scores, dtype=np.float32),
                "n_tokens": np.array([state.n_tokens]), "seed": np.array([state.seed]),
                "llama_state": np.frombuffer(state.llama_state, dtype=np.uint8),
            })
            for old in sorted(folder.glob("*.npz"), key=_mtime, reverse=True)[_FILES:]:
                old.unlink(missing_ok=True)
        except OSError:
            pass  # a read-only cache folder: the states stay in RAM only


def _save(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write the ``.npz`` file ``path`` whole or not at all: another process may read it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}-{uuid.uuid4().hex}.tmp")
    try:
        with open(tmp, "wb") as handle:  # a handle, so numpy does not add ".npz" to the name
            np.savez(handle, **arrays)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def state_folder(cache_dir: Path, model_path: str, context: str) -> Path:
    """Where saved states of this model file and ``context`` (the llama.cpp build and the
    context's parameters) are kept: a state is valid only where it was made."""
    model = Path(model_path)
    key = f"{model.name}|{model.stat().st_size}|{context}"
    return cache_dir / "prompt-states" / hashlib.sha1(key.encode()).hexdigest()[:16]
