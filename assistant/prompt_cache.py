"""Saved llama.cpp prompt states, kept in RAM, so a prompt resumes from the longest one it
shares a beginning with (in a chat: the rewrite from the last rewrite, the answer from the
last answer)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_cpp import LlamaRAMCache


class PromptCache(LlamaRAMCache):
    """llama-cpp-python's RAM cache, without the logits that each saved state carries.

    A state holds the KV cache (about 13 MB for a 460-token prompt) and a copy of the logits of
    every prompt token (about 270 MB at Qwen's 151,936-token vocabulary), which the cache's
    capacity does not count: 256 MB of states held 5 GB. A resumed prompt always evaluates its
    last token again, so the old logits are never read; one row is kept because loading a
    state broadcasts it over the rows it restores.
    """

    def __setitem__(self, key: Sequence[int], value: Any) -> None:
        value.scores = value.scores[-1:].copy()
        super().__setitem__(key, value)

    @property
    def cache_size(self) -> int:
        return sum(s.llama_state_size + s.scores.nbytes for s in self.cache_state.values())
