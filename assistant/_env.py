"""Process settings that must be in place before some third-party modules are imported."""

from __future__ import annotations

import os


def quiet_third_parties() -> None:
    """No telemetry, no hub look-ups: set before onnxruntime or chromadb is imported."""
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def idle_blas_threads() -> None:
    """OpenBLAS's workers sleep as soon as a product ends instead of spinning on.

    By default they spin for 2**28 cycles (about 0.1 s here; 130 ms of a core measured after
    one product over 45,500 vectors), on the core that the next question's embedding or
    llama.cpp's prompt needs. 2**4 cycles is OpenBLAS's smallest setting. It is read when
    OpenBLAS loads, so it is set on importing the package, before numpy; a value of the
    user's own is kept, and a numpy imported earlier keeps what it read.
    """
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
