"""The Chroma store: opening it (embedded folder or server), reading it, the writer's lock.

Indexing papers into it is ``assistant.index.sync``."""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant._env import quiet_third_parties
from assistant.errors import IndexBusyError, IndexMissingError, StoreError
from assistant.index.chroma_faults import Guarded, forget_system, open_failure, remove_chroma_files
from assistant.index.embeddings import embeddings_name
from assistant.index.paper_info import PaperInfo, paper_info
from assistant.ingest.chunking import join_chunks

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

    from assistant.config import Settings, StorageSettings

# 2: the paper's fields on its first chunk only. 3: the abstract is the chunks joined (each
# records how much of it repeats the chunk before), kept whole only where they differ from it.
SCHEMA = 3
# A paper's fields, kept on its first chunk and not on the others.
PAPER_KEYS = ("n_chunks", "title", "title_derived", "source", "slot", "arxiv_id",
              "openreview_id", "url", "collection", "authors", "doi", "citation_key",
              "raw_bibtex")
_CLIENTS_LOCK = threading.Lock()


@dataclass(frozen=True)
class IndexReport:
    """What an indexing run did."""

    papers: int
    chunks: int
    added: int
    updated: int
    removed: int
    unchanged: int
    seconds: float
    location: str

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Store:
    """A Chroma collection of chunks, with the embedding model it was built with."""

    collection: Any
    embeddings: Embeddings
    location: str
    client: Any  # to read the collection's metadata afresh
    cache_dir: Path | None = None  # where derived indexes (BM25) are kept
    _version: tuple[float, str] | None = field(default=None, repr=False)

    def count(self) -> int:
        return int(self.collection.count())

    def version(self, max_age: float = 1.0) -> str:
        """Changes whenever an indexing run changes the collection.

        Read from the store at most once per ``max_age`` seconds: another process may have
        re-indexed since we opened it, and a retrieval sees that within a second.
        """
        now = time.monotonic()
        if self._version is not None and now - self._version[0] < max_age:
            return self._version[1]
        collection = self.client.get_collection(self.collection.name, embedding_function=None)
        metadata = collection.metadata or {}
        version = f"{metadata.get('index_version', '')}_{self.count()}"
        self._version = (now, version)
        return version

    def papers(self, abstracts: bool = True) -> list[PaperInfo]:
        """Every paper in the index, in title order; a paper whose chunks are not all there
        (a build cut off) has no abstract. Without ``abstracts`` none has one, and only the
        first chunks' metadata is read, which is faster."""
        if not abstracts:
            found = self.get_all(["metadatas"], where={"chunk": 0})
            return sorted((paper_info(m, "") for m in found["metadatas"] or []),
                          key=lambda p: p.title.lower())
        found = self.get_all(["documents", "metadatas"])
        chunks: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        for text, meta in zip(found["documents"] or [], found["metadatas"] or [], strict=True):
            if meta and "paper_id" in meta:
                chunks.setdefault(str(meta["paper_id"]), []).append((text or "", meta))
        papers = []
        for of_paper in chunks.values():
            first = next((m for _, m in of_paper if m.get("chunk") == 0), None)
            if first is not None:
                papers.append(paper_info(first, _abstract(of_paper)))
        return sorted(papers, key=lambda p: p.title.lower())

    def get_all(self, include: list[str], where: dict[str, Any] | None = None,
                page: int = 5000) -> dict[str, list[Any]]:
        """Every matching record, read in pages: one unpaged read of a large collection
        (about 32,000 chunks and up) fails in Chroma with "too many SQL variables"."""
        out: dict[str, list[Any]] = {"ids": [], "documents": [], "metadatas": [], "embeddings": []}
        offset = 0
        while True:
            found = self.collection.get(where=where, include=include, limit=page, offset=offset)
            ids = list(found["ids"])
            out["ids"] += ids
            for key in ("documents", "metadatas", "embeddings"):
                value = found.get(key)
                out[key] += list(value) if value is not None else []
            if len(ids) < page:
                return out
            offset += page

    def all_chunks(self) -> tuple[list[str], list[str], list[dict[str, Any]]]:
        """Ids, texts and metadata of every chunk (for lexical search), each chunk's metadata
        with its paper's fields."""
        found = self.get_all(["documents", "metadatas"])
        metas = [m or {} for m in found["metadatas"] or []]
        papers = {m["paper_id"]: m for m in metas if m.get("chunk") == 0 and "paper_id" in m}
        return list(found["ids"]), list(found["documents"] or []), _with_papers(metas, papers)

    def abstract(self, paper_id: str) -> str | None:
        """The whole abstract of one paper, or None when it is not all there."""
        found = self.collection.get(where={"paper_id": paper_id},
                                    include=["documents", "metadatas"])
        return _abstract(list(zip(found["documents"] or [], found["metadatas"] or [],
                                  strict=True))) or None

    def chunks(self, ids: list[str]) -> dict[str, tuple[str, dict[str, Any]]]:
        """Text and metadata of the chunks ``ids`` that exist (a deleted id is left out)."""
        if not ids:
            return {}
        found = self.collection.get(ids=ids, include=["documents", "metadatas"])
        kept = [(i, d, m) for i, d, m in zip(found["ids"], found["documents"] or [],
                                             found["metadatas"] or [], strict=True)
                if d is not None and m]
        wanted = sorted({str(m.get("paper_id")) for _, _, m in kept if "title" not in m})
        papers: dict[str, dict[str, Any]] = {}
        if wanted:  # chunks after the first carry only their paper's id: read its first chunk
            papers = self.first_chunks(wanted)
        metas = _with_papers([m for _, _, m in kept], papers)
        return {i: (d, m) for (i, d, _), m in zip(kept, metas, strict=True)}

    def first_chunks(self, paper_ids: list[str]) -> dict[str, dict[str, Any]]:
        """The first chunk's metadata (the paper's fields) of each of ``paper_ids`` indexed."""
        if not paper_ids:
            return {}
        first = self.collection.get(
            where={"$and": [{"paper_id": {"$in": list(paper_ids)}}, {"chunk": 0}]},
            include=["metadatas"],
        )
        return {m["paper_id"]: m for m in first["metadatas"] or [] if m}

    def nearest(self, vector: list[float], n: int, total: int | None = None,
                where: dict[str, Any] | None = None) -> list[tuple[str, float]]:
        """Ids and cosine similarities of the ``n`` nearest chunks (of ``total`` when known;
        among those the metadata ``where`` keeps).

        Only ids and distances: reading the chunks' texts and metadata from Chroma's SQLite
        would cost more than the vector search itself.
        """
        n = min(n, self.count() if total is None else total)
        if n <= 0:
            return []
        found = self.collection.query(query_embeddings=[vector], n_results=n, where=where,
                                      include=["distances"])
        return [(i, 1.0 - float(d))
                for i, d in zip(found["ids"][0], found["distances"][0], strict=True)]


def _abstract(chunks: Sequence[tuple[str | None, dict[str, Any] | None]]) -> str:
    """A paper's abstract from its chunks (any order): the whole text where the first chunk
    keeps it (stores before schema 3, or chunks that do not join back to it), else the chunks
    joined; "" when a chunk is missing."""
    by_index = {int(m["chunk"]): (t or "", m) for t, m in chunks if m and "chunk" in m}
    first = by_index.get(0, ("", {}))[1]
    if isinstance(first.get("abstract"), str):
        return first["abstract"]
    n = first.get("n_chunks")
    if not isinstance(n, int) or n <= 0 or sorted(by_index) != list(range(n)):
        return ""
    return join_chunks([by_index[i][0] for i in range(n)],
                       [int(by_index[i][1].get("overlap", 0)) for i in range(n)])


def embed_text(title: str, text: str) -> str:
    """What is embedded and searched for a chunk: its paper's title, then the passage."""
    return f"{title}\n{text}"


def _server_key(storage: StorageSettings) -> str:
    """A short name for a collection on a Chroma server, for the files kept about it here."""
    return hashlib.sha1(f"{storage.chroma_url}/{storage.collection}".encode()).hexdigest()[:16]


def lock_path(settings: Settings) -> Path:
    """The lock file that keeps a second indexer off the same store."""
    storage = settings.storage
    if storage.chroma_url:
        return storage.cache_path() / "locks" / f"{_server_key(storage)}.lock"
    return storage.vectorstore_path() / ".assistant-index.lock"


def _client(settings: Settings, create: bool) -> tuple[Any, str]:
    storage = settings.storage
    quiet_third_parties()
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
    if storage.chroma_url:
        from urllib.parse import urlparse

        url = urlparse(storage.chroma_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise StoreError(
                f"ASSISTANT_CHROMA_URL={storage.chroma_url!r} is not an http(s)://host:port URL"
            )
        try:
            with _CLIENTS_LOCK:
                client = chromadb.HttpClient(
                    host=url.hostname, port=url.port or (443 if url.scheme == "https" else 80),
                    ssl=url.scheme == "https", settings=chroma_settings,
                )
            client.heartbeat()
        except Exception as exc:
            raise StoreError(
                f"cannot reach the Chroma server at {storage.chroma_url} ({type(exc).__name__}); "
                "start it with `chroma run --path DIR --port PORT` or unset ASSISTANT_CHROMA_URL"
            ) from exc
        return client, storage.chroma_url
    path = storage.vectorstore_path()
    if not create and not (path / "chroma.sqlite3").is_file():
        raise IndexMissingError(f"No index at {path} - run `assistant index` first")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with _CLIENTS_LOCK:  # Chroma's per-path client cache is not safe to fill from threads
            client = chromadb.PersistentClient(path=str(path), settings=chroma_settings)
    except Exception as exc:
        forget_system(path)
        raise open_failure(path, exc) from exc
    return client, str(path)


def open_store(settings: Settings, embeddings: Embeddings, *, create: bool = False) -> Store:
    """Open the collection; with ``create`` make it when missing.

    The collection records the embedding model and dimension it was built with, and
    opening it with another is refused rather than mixing vectors of different models.
    """
    storage = settings.storage
    client, location = _client(settings, create)
    name = embeddings_name(embeddings)
    try:
        if create:
            collection = client.get_or_create_collection(
                storage.collection,
                metadata={"embedding_model": name, "schema": SCHEMA, "hnsw:space": "cosine"},
                embedding_function=None,
            )
        else:
            collection = client.get_collection(storage.collection, embedding_function=None)
    except Exception as exc:
        text = str(exc).lower()
        if not create and ("does not exist" in text or "not found" in text):
            raise IndexMissingError(
                f"No collection '{storage.collection}' at {location} - run `assistant index` first"
            ) from exc
        raise StoreError(
            f"cannot open collection '{storage.collection}' at {location}: {exc}") from exc
    recorded = collection.metadata or {}
    built_with = recorded.get("embedding_model")
    if built_with and built_with != name:
        raise IndexMissingError(
            f"The index at {location} was built with the embedding model {built_with!r}, "
            f"not {name!r}; run `assistant index --rebuild` to rebuild it with the current one"
        )
    dimension = recorded.get("embedding_dimension")
    expected = getattr(embeddings, "dimension", None)
    if dimension and expected and int(dimension) != int(expected):
        raise IndexMissingError(
            f"The index at {location} holds {dimension}-dimensional vectors but the embedding "
            f"model gives {expected}; run `assistant index --rebuild`"
        )
    if storage.chroma_url:
        cache = storage.cache_path() / "bm25" / _server_key(storage)
    else:
        cache = storage.vectorstore_path() / "bm25" / storage.collection
    guarded = Guarded(collection, location, client=client)
    return Store(guarded, embeddings, location, Guarded(client, location), cache)


@contextmanager
def writer_lock(path: Path) -> Iterator[None]:
    """Only one indexer per store: a second one fails fast instead of corrupting it."""
    from filelock import FileLock, Timeout

    lock = FileLock(str(path))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock.acquire(timeout=0)
    except Timeout as exc:
        raise IndexBusyError(
            f"another `assistant index` is writing to this store (lock {path}); wait for it to "
            "finish and run again"
        ) from exc
    except OSError as exc:
        raise StoreError(
            f"cannot write to {path.parent} ({exc.strerror}); indexing needs a writable store "
            "folder (set ASSISTANT_VECTORSTORE or ASSISTANT_HOME to one)"
        ) from exc
    try:
        yield
    finally:
        lock.release()


def _with_papers(metas: list[dict[str, Any]], papers: dict[str, dict[str, Any]]
                 ) -> list[dict[str, Any]]:
    """Each chunk's metadata with its paper's fields, taken from ``papers`` (first chunks by
    paper id) where the chunk lacks them. A store written before schema 2 has them on every
    chunk; a chunk whose first chunk is gone keeps what it has."""
    out = []
    for meta in metas:
        paper = papers.get(meta.get("paper_id"))
        if paper is None or "title" in meta:
            out.append(meta)
        else:
            out.append({**{k: paper[k] for k in PAPER_KEYS if k in paper}, **meta})
    return out


def delete_collection(settings: Settings) -> None:
    """Drop the collection (for ``--rebuild``); missing is fine, and so is a damaged folder."""
    storage = settings.storage
    try:
        client, _ = _client(settings, create=True)
    except StoreError:
        if storage.chroma_url:
            raise
        remove_chroma_files(storage.vectorstore_path())  # Chroma cannot open it: start over
        return
    try:
        client.delete_collection(storage.collection)
    except Exception:  # noqa: BLE001 - absent already: nothing to drop
        pass
