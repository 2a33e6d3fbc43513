"""Chroma's failures made clear: a server that went away, a collection re-created elsewhere,
a store folder that cannot be opened."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from assistant.errors import IndexMissingError, StoreError


class Guarded:
    """A Chroma client or collection whose failures become errors that say what to do.

    A collection replaced by another process (``assistant index --rebuild``) is looked up
    again by name. A Chroma server that stopped gives a StoreError, and the same object
    works again once the server is back: every call is a fresh HTTP request.
    """

    def __init__(self, target: Any, location: str, *, client: Any = None) -> None:
        self._target = target
        self._location = location
        self._client = client  # for a collection: where to find it again

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if not callable(value):
            return value

        def call(*args: Any, **kwargs: Any) -> Any:
            from chromadb.errors import NotFoundError

            with _reported(self._location):
                try:
                    return getattr(self._target, name)(*args, **kwargs)
                except NotFoundError:
                    if self._client is None:
                        raise
                    self._target = self._client.get_collection(
                        self._target.name, embedding_function=None
                    )
                    return getattr(self._target, name)(*args, **kwargs)

        return call


@contextmanager
def _reported(location: str) -> Iterator[None]:
    import httpx
    from chromadb.errors import NotFoundError

    try:
        yield
    except NotFoundError as exc:
        raise IndexMissingError(
            f"the collection at {location} is gone (is `assistant index --rebuild` running?); "
            "run `assistant index`"
        ) from exc
    except (httpx.TransportError, ConnectionError) as exc:
        raise StoreError(
            f"lost the Chroma server at {location} ({type(exc).__name__}); check that it is "
            "running: the same command works again once it is back"
        ) from exc


def open_failure(path: Path, exc: Exception) -> StoreError:
    """Why a store folder could not be opened, and what to do about it."""
    text = str(exc).lower()
    if isinstance(exc, PermissionError) or "readonly" in text or "read-only" in text:
        return StoreError(
            f"the index at {path} is read-only; Chroma writes to its folder even to read it: "
            "make it writable, or copy it to a writable folder and set ASSISTANT_VECTORSTORE"
        )
    return StoreError(
        f"cannot open the index at {path} ({type(exc).__name__}: {exc}); if it is damaged, "
        "run `assistant index --rebuild`"
    )


def forget_system(path: Path) -> None:
    """Drop the Chroma system cached for ``path`` after it failed to start.

    Chroma keeps one system per path even when starting it failed, so without this a
    repaired store could not be opened again in the same process.
    """
    from chromadb.api.shared_system_client import SharedSystemClient

    systems = getattr(SharedSystemClient, "_identifier_to_system", None)
    if isinstance(systems, dict):
        systems.pop(str(path), None)


def remove_chroma_files(path: Path) -> None:
    """Delete the files Chroma keeps in ``path`` (for ``--rebuild`` of a damaged store).

    Only Chroma's database and its segment folders go; anything else in the folder stays.
    """
    try:
        for item in path.iterdir():
            if item.name.startswith("chroma.sqlite3"):
                item.unlink()
            elif item.is_dir() and _is_uuid(item.name):
                shutil.rmtree(item)
    except OSError as exc:
        raise StoreError(
            f"cannot remove the damaged index at {path} ({exc.strerror}); delete the folder "
            "and run `assistant index` again"
        ) from exc
    forget_system(path)


def _is_uuid(name: str) -> bool:
    try:
        uuid.UUID(name)
    except ValueError:
        return False
    return True
