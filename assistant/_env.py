"""Process settings that must be in place before some third-party modules are imported."""

from __future__ import annotations

import os


def quiet_third_parties() -> None:
    """No telemetry, no hub look-ups: set before onnxruntime or chromadb is imported."""
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

