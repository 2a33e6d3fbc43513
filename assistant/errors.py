"""One small exception hierarchy; every message says how to fix the problem."""

from __future__ import annotations


class AssistantError(Exception):
    """Base class for every error the assistant raises on purpose."""


class ConfigurationError(AssistantError):
    """A setting or environment variable is missing or wrong."""


class InputFileError(AssistantError):
    """A corpus or metadata file cannot be read; the message names the file (and line)."""


class InputError(AssistantError):
    """A question or argument cannot be used as given."""


class IndexMissingError(AssistantError):
    """There is no index yet, or it was built with another embedding model."""


class IndexBusyError(AssistantError):
    """Another process is writing to the same store."""


class ModelError(AssistantError):
    """The language or embedding model failed, or cannot be loaded."""


class StoreError(AssistantError):
    """The vector store cannot be opened or used."""
