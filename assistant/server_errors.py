"""Failures of a model server as errors that say what to do; light to import.

Kept apart from ``assistant.models.llm`` so that retrieval and indexing, which only need these,
do not import LangChain's chat-model stack (about 2 s of a cold start).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from assistant.errors import AssistantError, ModelError

if TYPE_CHECKING:
    from assistant.config import Settings

def redact_url(url: str) -> str:
    """``url`` without a user name or password in it (they can hold a key)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"***@{host}" + (f":{parts.port}" if parts.port else "")
    return parts._replace(netloc=netloc).geturl()


@contextmanager
def model_errors(settings: Settings) -> Iterator[None]:
    """Failures of a model server raised inside, as a ModelError that says what to do."""
    try:
        yield
    except AssistantError:
        raise
    except Exception as exc:
        failure = model_failure(exc, settings)
        if failure is None:
            raise
        raise failure from exc


def model_failure(exc: BaseException, settings: Settings) -> ModelError | None:
    """A clear ModelError for a failure of the model server, or None for other errors."""
    try:
        import openai
    except ImportError:  # pragma: no cover - openai is a dependency
        return None
    where = redact_url(settings.models.openai_base_url or "the OpenAI API")
    if isinstance(exc, openai.AuthenticationError):
        return ModelError(f"{where} rejected the API key (401); check OPENAI_API_KEY")
    if isinstance(exc, openai.PermissionDeniedError):
        return ModelError(f"{where} refused the request (403); check the key's permissions")
    if isinstance(exc, openai.NotFoundError):
        return ModelError(
            f"{where} does not know the model {settings.models.model!r} (404); "
            "set ASSISTANT_MODEL or --model to a model it serves"
        )
    if isinstance(exc, openai.RateLimitError):
        return ModelError(f"{where} is rate-limiting requests (429) after retries; try again later")
    if isinstance(exc, openai.APITimeoutError):
        return ModelError(
            f"{where} did not answer within {settings.models.timeout:g} s after retries; check the "
            "server or raise ASSISTANT_TIMEOUT"
        )
    if isinstance(exc, openai.APIConnectionError):
        return ModelError(
            f"cannot connect to {where}; check that the server is running and OPENAI_BASE_URL"
        )
    if isinstance(exc, openai.APIStatusError):
        return ModelError(f"{where} failed with HTTP {exc.status_code} after retries")
    if isinstance(exc, openai.APIError):
        return ModelError(f"the model server failed mid-answer ({type(exc).__name__}); the answer is incomplete")
    return None
