"""Question answering over paper abstracts with checked citations.

Importing the package is cheap: the public names load their modules on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = [
    "Answer", "Assistant", "AssistantError", "Citation", "Settings", "Source", "ask",
]
__version__ = "0.1.0"

_HOME = {
    "Answer": "assistant.types", "Citation": "assistant.types", "Source": "assistant.types",
    "Assistant": "assistant.api", "ask": "assistant.api", "Settings": "assistant.config",
    "AssistantError": "assistant.errors",
}

if TYPE_CHECKING:
    from assistant.api import Assistant, ask
    from assistant.config import Settings
    from assistant.errors import AssistantError
    from assistant.types import Answer, Citation, Source


def __getattr__(name: str) -> Any:
    if name in _HOME:
        import importlib

        return getattr(importlib.import_module(_HOME[name]), name)
    raise AttributeError(f"module 'assistant' has no attribute {name!r}")
