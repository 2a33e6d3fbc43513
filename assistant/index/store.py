"""The Chroma store: opening it (embedded folder or server) and indexing papers into it."""

from __future__ import annotations

import hashlib
import queue
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from assistant._env import quiet_third_parties
from assistant.errors import IndexBusyError, IndexMissingError, StoreError
from assistant.index.chroma_faults import Guarded, forget_system, open_failure, remove_chroma_files
from assistant.index.embeddings import embeddings_name, run_lengths
from assistant.ingest.chunking import Chunk, chunk_paper, chunking_label, join_chunks
from assistant.ingest.corpus import Paper

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

    from assistant.config import Settings

# 2: the paper's fields on its first chunk only. 3: the abstract is the chunks joined (each
# records how much of it repeats the chunk before), kept whole only where they differ from it.
SCHEMA = 3
# A paper's fields, kept on its first chunk and not on the others.
PAPER_KEYS = ("n_chunks", "title", "title_derived", "source", "slot", "arxiv_id",
              "openreview_id", "url", "collection", "authors")
_CLIENTS_LOCK = threading.Lock()
_BATCH = 256  # chunks embedded per call
_WINDOW = 2048  # chunks sorted by length together, so that each call's texts are alike


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


@dataclass(frozen=True)
class PaperInfo:
    """A paper as recorded in the index."""

    id: str
    title: str
    title_derived: bool
    arxiv_id: str | None
    openreview_id: str | None
    url: str | None
    collection: str | None
    source: str
    abstract: str
    chunks: int

    @property
    def display_title(self) -> str:
        return f"{self.title} (derived title)" if self.title_derived else self.title

    def as_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "display_title": self.display_title}


@dataclass
class Store:
    """A Chroma collection of chunks, with the embedding model it was built with."""

    collection: Any
    embeddings: Embeddings
    location: str
    client: Any = None
    cache_dir: Path | None = None  # where derived indexes (BM25) are kept
    local: bool = False  # a folder of this machine's (not a Chroma server)
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
        collection = self.collection
        if self.client is not None:
            collection = self.client.get_collection(collection.name, embedding_function=None)
        metadata = collection.metadata or {}
        version = f"{metadata.get('index_version', '')}_{self.count()}"
        self._version = (now, version)
        return version

    def papers(self, abstracts: bool = True) -> list[PaperInfo]:
        """Every paper in the index, in title order; a paper whose chunks are not all there
        (a build cut off) has no abstract. Without ``abstracts`` none has one, and only the
        first chunks' metadata is read (at 20,000 papers 1.4 s against 1.9 s)."""
        if not abstracts:
            found = self.get_all(["metadatas"], where={"chunk": 0})
            return sorted((_paper_info(m, "") for m in found["metadatas"] or []),
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
                papers.append(_paper_info(first, _abstract(of_paper)))
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
        ids, texts, metas, _ = self._read_all(["documents", "metadatas"])
        return ids, texts, metas

    def all_chunks_and_vectors(self) -> tuple[list[str], list[str], list[dict[str, Any]],
                                              list[Any]]:
        """As ``all_chunks``, with each chunk's vector (for the local dense search)."""
        return self._read_all(["documents", "metadatas", "embeddings"])

    def _read_all(self, include: list[str]) -> tuple[list[str], list[str], list[dict[str, Any]],
                                                     list[Any]]:
        found = self.get_all(include)
        metas = [m or {} for m in found["metadatas"] or []]
        papers = {m["paper_id"]: m for m in metas if m.get("chunk") == 0 and "paper_id" in m}
        return (list(found["ids"]), list(found["documents"] or []), _with_papers(metas, papers),
                found["embeddings"])

    def abstract(self, paper_id: str) -> str | None:
        """The whole abstract of one paper, or None when it is not all there."""
        found = self.collection.get(where={"paper_id": paper_id},
                                    include=["documents", "metadatas"])
        return _abstract(list(zip(found["documents"] or [], found["metadatas"] or [],
                                  strict=True))) or None

    def chunk_ids(self) -> list[str]:
        """Every chunk's id, nothing else (cheap even for a large collection)."""
        return self.get_all([])["ids"]

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
            first = self.collection.get(
                where={"$and": [{"paper_id": {"$in": wanted}}, {"chunk": 0}]},
                include=["metadatas"],
            )
            papers = {m["paper_id"]: m for m in first["metadatas"] or [] if m}
        metas = _with_papers([m for _, _, m in kept], papers)
        return {i: (d, m) for (i, d, _), m in zip(kept, metas, strict=True)}

    def nearest(self, vector: list[float], n: int, total: int | None = None) -> list[tuple[str, float]]:
        """Ids and cosine similarities of the ``n`` nearest chunks (of ``total`` when known).

        Only ids and distances: reading the chunks' texts and metadata from Chroma's SQLite
        would cost more than the vector search itself.
        """
        n = min(n, self.count() if total is None else total)
        if n <= 0:
            return []
        found = self.collection.query(query_embeddings=[vector], n_results=n, include=["distances"])
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


def _paper_info(m: dict[str, Any], abstract: str) -> PaperInfo:
    return PaperInfo(
        id=str(m["paper_id"]),
        title=str(m["title"]),
        title_derived=bool(m.get("title_derived", False)),
        arxiv_id=m.get("arxiv_id") or None,
        openreview_id=m.get("openreview_id") or None,
        url=m.get("url") or None,
        collection=m.get("collection") or None,
        source=str(m.get("source", "")),
        abstract=abstract,
        chunks=int(m.get("n_chunks", 0)),
    )


def embed_text(title: str, text: str) -> str:
    """What is embedded and searched for a chunk: its paper's title, then the passage."""
    return f"{title}\n{text}"


def lock_path(settings: Settings) -> Path:
    """The lock file that keeps a second indexer off the same store."""
    if settings.chroma_url:
        key = hashlib.sha1(f"{settings.chroma_url}/{settings.collection}".encode()).hexdigest()
        return settings.cache_path() / "locks" / f"{key[:16]}.lock"
    return settings.vectorstore_path() / ".assistant-index.lock"


def _client(settings: Settings, create: bool) -> tuple[Any, str]:
    quiet_third_parties()
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
    if settings.chroma_url:
        from urllib.parse import urlparse

        url = urlparse(settings.chroma_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise StoreError(
                f"ASSISTANT_CHROMA_URL={settings.chroma_url!r} is not an http(s)://host:port URL"
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
                f"cannot reach the Chroma server at {settings.chroma_url} ({type(exc).__name__}); "
                "start it with `chroma run --path DIR --port PORT` or unset ASSISTANT_CHROMA_URL"
            ) from exc
        return client, settings.chroma_url
    path = settings.vectorstore_path()
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
    client, location = _client(settings, create)
    name = embeddings_name(embeddings)
    try:
        if create:
            collection = client.get_or_create_collection(
                settings.collection,
                metadata={"embedding_model": name, "schema": SCHEMA, "hnsw:space": "cosine"},
                embedding_function=None,
            )
        else:
            collection = client.get_collection(settings.collection, embedding_function=None)
    except Exception as exc:
        text = str(exc).lower()
        if not create and ("does not exist" in text or "not found" in text):
            raise IndexMissingError(
                f"No collection '{settings.collection}' at {location} - run `assistant index` first"
            ) from exc
        raise StoreError(f"cannot open collection '{settings.collection}' at {location}: {exc}") from exc
    built_with = (collection.metadata or {}).get("embedding_model")
    if built_with and built_with != name:
        raise IndexMissingError(
            f"The index at {location} was built with the embedding model {built_with!r}, "
            f"not {name!r}; run `assistant index --rebuild` to rebuild it with the current one"
        )
    dimension = (collection.metadata or {}).get("embedding_dimension")
    expected = getattr(embeddings, "dimension", None)
    if dimension and expected and int(dimension) != int(expected):
        raise IndexMissingError(
            f"The index at {location} holds {dimension}-dimensional vectors but the embedding "
            f"model gives {expected}; run `assistant index --rebuild`"
        )
    if settings.chroma_url:
        key = hashlib.sha1(f"{settings.chroma_url}/{settings.collection}".encode()).hexdigest()
        cache = settings.cache_path() / "bm25" / key[:16]
    else:
        cache = settings.vectorstore_path() / "bm25" / settings.collection
    guarded = Guarded(collection, location, client=client)
    return Store(guarded, embeddings, location, Guarded(client, location), cache,
                 local=not settings.chroma_url)


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


def _metadata(paper: Paper, chunk: Chunk, n_chunks: int, whole: bool, chunking: str
              ) -> dict[str, Any]:
    """A chunk's metadata: on every chunk what tells whether it is current and, after the
    first, how much of its text repeats the chunk before; the paper's fields (``PAPER_KEYS``)
    on its first chunk only, with the whole abstract where ``whole`` (the chunks joined do
    not give it back).

    Each key is a row in Chroma's SQLite, and a text also an entry of its index: at 45,000
    chunks, 5 keys instead of 12 on the chunks after the first wrote 12% faster and read back
    twice as fast (schema 2). The abstracts, which the chunks hold already, were 28 MB of text
    at 20,000 papers; left out, Chroma's SQLite file fell from 362 to 238 MB (schema 3).
    """
    meta: dict[str, Any] = {
        "paper_id": paper.id, "chunk": chunk.index, "tokens": chunk.tokens,
        "paper_hash": paper.content_hash, "chunking": chunking,
    }
    if chunk.index:  # 0 too: a chunk written again over one cut another way keeps old keys
        meta["overlap"] = chunk.overlap
    else:
        meta.update(n_chunks=n_chunks, title=paper.title, title_derived=paper.title_derived,
                    source=paper.source, slot=paper.slot)
        if whole:
            meta["abstract"] = paper.abstract
        for key in ("arxiv_id", "openreview_id", "url", "collection"):
            if getattr(paper, key):
                meta[key] = getattr(paper, key)
        if paper.authors:
            meta["authors"] = "; ".join(paper.authors)
    return meta


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


def index_papers(
    store: Store,
    papers: Sequence[Paper],
    count_tokens: Callable[[str], int],
    *,
    chunk_tokens: int,
    chunk_overlap: int,
    progress: Callable[[int, int], None] | None = None,
) -> IndexReport:
    """Make the collection hold exactly ``papers``: add new, replace changed, drop removed.

    Unchanged papers are neither embedded nor written; a paper chunked another way (its
    chunks' :func:`chunking_label` is not that of ``chunk_tokens``/``chunk_overlap``) counts
    as changed. Each paper's chunks are written in one call and carry the paper's hash and
    chunk count, so a run killed part-way leaves papers either complete or detectably
    incomplete, and the next run repairs them.
    The caller holds :func:`writer_lock`.
    """
    started = time.perf_counter()
    existing: dict[str, dict[str, Any]] = {}
    found = store.get_all(["metadatas"])
    for chunk_id, meta in zip(found["ids"], found["metadatas"] or [], strict=True):
        entry = existing.setdefault(
            str(meta.get("paper_id")), {"ids": set(), "hashes": set(), "n": None, "slot": None}
        )
        entry["ids"].add(chunk_id)
        entry["hashes"].add((meta.get("paper_hash"), meta.get("chunking")))
        if "n_chunks" in meta:  # on the first chunk: a paper without one is incomplete
            entry["n"] = meta["n_chunks"]
            entry["slot"] = meta.get("slot")

    wanted = {p.id for p in papers}
    chunking = chunking_label(chunk_tokens, chunk_overlap)
    todo: list[tuple[Paper, list[Chunk], bool]] = []
    unchanged = 0
    for paper in papers:
        old = existing.get(paper.id)
        if (old and old["hashes"] == {(paper.content_hash, chunking)}
                and old["n"] == len(old["ids"])):
            unchanged += 1
            continue
        todo.append((paper, chunk_paper(paper, count_tokens, chunk_tokens, chunk_overlap), bool(old)))

    stale = [i for pid, e in existing.items() if pid not in wanted for i in e["ids"]]
    for paper, chunks, was_there in todo:
        if was_there:
            keep = {c.id for c in chunks}
            stale += [i for i in existing[paper.id]["ids"] if i not in keep]
    if stale:
        store.collection.delete(ids=stale)

    total = sum(len(chunks) for _, chunks, _ in todo)
    done = 0
    window: list[tuple[Paper, Chunk, int, bool]] = []
    with _Writer(store.collection, background=BACKGROUND_WRITES) as writer:
        for paper, chunks, _ in todo:
            joined = join_chunks([c.text for c in chunks], [c.overlap for c in chunks])
            whole = joined != paper.abstract
            window += [(paper, c, len(chunks), whole) for c in chunks]
            if len(window) >= _WINDOW:
                done = _embed_and_write(store, writer, window, chunking, done, total, progress)
                window = []
        if window:
            _embed_and_write(store, writer, window, chunking, done, total, progress)

    gone_slots = {e["slot"] for pid, e in existing.items() if pid not in wanted and e["slot"]}
    # A new text where a removed one sat is that paper, changed: count it as updated.
    replaced = sum(1 for p, _, was_there in todo if not was_there and p.slot in gone_slots)
    removed = sum(1 for pid in existing if pid not in wanted) - replaced
    if todo or removed or replaced:
        _stamp(store)
        if store.local:
            compact(Path(store.location), changed=len(todo) + removed, papers=len(papers))
    added = sum(1 for _, _, was_there in todo if not was_there) - replaced
    return IndexReport(
        papers=len(papers), chunks=store.count(), added=added, updated=len(todo) - added,
        removed=removed, unchanged=unchanged, seconds=round(time.perf_counter() - started, 3),
        location=store.location,
    )


def _embed_and_write(store: Store, writer: _Writer, window: list[tuple[Paper, Chunk, int, bool]],
                     chunking: str, done: int, total: int,
                     progress: Callable[[int, int], None] | None) -> int:
    """Embed ``window`` (whole papers) shortest text first, ``_BATCH`` chunks a call, and write
    each paper, all its chunks in one call, as soon as all of them are embedded.

    Texts of similar length batched together waste less padding: sorting 2,048 chunks instead
    of 256 cuts the word pieces the embedder runs by 5% at 1,000 papers, and sorting them by
    the embedder's own word pieces instead of characters cuts the padding from 3.2% to 1.1%.
    """
    texts = [embed_text(p.title, c.text) for p, c, _, _ in window]
    lengths = run_lengths(store.embeddings, texts)
    order = sorted(range(len(window)), key=lengths.__getitem__)
    vectors: list[list[float] | None] = [None] * len(window)
    waiting = {p.id: n for p, _, n, _ in window}  # chunks of each paper not yet embedded
    for start in range(0, len(order), _BATCH):
        part = order[start : start + _BATCH]
        for i, vector in zip(part, store.embeddings.embed_documents([texts[i] for i in part]),
                             strict=True):
            vectors[i] = vector
        complete = set()
        for i in part:
            pid = window[i][0].id
            waiting[pid] -= 1
            if not waiting[pid]:
                complete.add(pid)
        ready = [i for i, (p, *_) in enumerate(window) if p.id in complete]
        if ready:
            writer.upsert(
                ids=[window[i][1].id for i in ready],
                documents=[window[i][1].text for i in ready],
                metadatas=[_metadata(*window[i], chunking) for i in ready],
                embeddings=[vectors[i] for i in ready],
            )
        done += len(part)
        if progress:
            progress(done, total)
    return done


# Chroma's writes on a thread of their own while the embedder runs (False: in the indexing
# thread; benchmarks/index_turns.py compares the two).
BACKGROUND_WRITES = True


class _Writer:
    """Chroma's writes, in order, on one thread of their own while the embedder runs on.

    A write is mostly one core's work (SQLite, the HNSW insert) and the embedder leaves
    gaps on the cores between its steps, so the two overlap. At most ``depth`` writes
    wait. The first failing write stops the rest and is raised in the indexing thread, by
    the next ``upsert`` or on leaving the ``with`` block, which waits for every write. When
    the indexing thread fails (or is interrupted), the writes still waiting are dropped and
    only the one under way finishes: each write holds whole papers, so the store is left
    with papers either complete or absent, as a foreground write would leave it.
    """

    def __init__(self, collection: Any, *, background: bool = True, depth: int = 2) -> None:
        self._collection = collection
        self._error: BaseException | None = None
        self._queue: queue.Queue[dict[str, Any] | None] | None = None
        self._thread: threading.Thread | None = None
        if background:
            self._queue = queue.Queue(maxsize=depth)
            self._thread = threading.Thread(target=self._run, name="assistant-index-writer",
                                            daemon=True)
            self._thread.start()

    def _run(self) -> None:
        assert self._queue is not None
        while (item := self._queue.get()) is not None:
            if self._error is None:
                try:
                    self._collection.upsert(**item)
                except BaseException as exc:  # raised again in the indexing thread
                    self._error = exc

    def upsert(self, **write: Any) -> None:
        if self._queue is None:
            self._collection.upsert(**write)
            return
        if self._error is not None:
            raise self._error
        self._queue.put(write)

    def __enter__(self) -> _Writer:
        return self

    def __exit__(self, kind: Any, value: Any, trace: Any) -> None:
        if self._queue is None or self._thread is None:
            return
        if value is not None:
            while True:
                try:
                    self._queue.get_nowait()
                except queue.Empty:
                    break
        self._queue.put(None)
        self._thread.join()
        if self._error is not None and value is None:
            raise self._error


def _stamp(store: Store) -> None:
    """Record a new index version, and the vector size, in the collection's metadata."""
    metadata = {k: v for k, v in (store.collection.metadata or {}).items() if not k.startswith("hnsw:")}
    metadata["index_version"] = uuid.uuid4().hex[:12]
    sample = store.collection.get(limit=1, include=["embeddings"])
    if sample["embeddings"] is not None and len(sample["embeddings"]):
        metadata["embedding_dimension"] = len(sample["embeddings"][0])
    store.collection.modify(metadata=metadata)


# Run in a process of its own: Chroma's Rust bindings carry their own copy of SQLite, and two
# copies in one process do not see each other's locks (closing one's connection even drops
# the other's), so a VACUUM here could rewrite the file under this process's Chroma client.
# Exit status: 0 compacted, 3 not worth it, anything else not done.
_COMPACT = """
import sqlite3, sys
uri, changed, papers, timeout = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
db = sqlite3.connect(uri, uri=True, timeout=timeout)
free, pages = (db.execute("PRAGMA " + name).fetchone()[0]
               for name in ("freelist_count", "page_count"))
if changed * 10 < papers and free * 20 < pages:
    sys.exit(3)
db.execute("VACUUM")
"""


def compact(folder: Path, *, changed: int, papers: int, timeout: float = 1.0) -> bool:
    """VACUUM Chroma's SQLite file after a run that rewrote much of it; True if it ran.

    Rows written in batches leave B-tree pages part-full and free pages behind: at 20,000
    generated papers the file went from 238 to 224 MB, in 2.2 s of a 20-minute build
    (2026-12-03). It runs when the papers added, changed or removed are a tenth of the store's
    or more, or when free pages are a twentieth of the file, so a small update does not pay
    for rewriting a large store. It waits at most ``timeout`` seconds for readers in other
    processes to finish; new readers wait meanwhile and while it runs (a Chroma client reading
    in a loop in another process waited at most 1.1 s through a compaction of the 20,000-paper
    store, with no error, and 8 s through an exclusive lock). SQLite's VACUUM is one
    transaction: should it fail (a reader still there, the disk full), the file is as it was.
    """
    import subprocess
    import sys

    path = folder / "chroma.sqlite3"
    if not path.is_file():
        return False
    uri = f"{path.resolve().as_uri()}?mode=rw"  # never creates a file
    try:
        done = subprocess.run([sys.executable, "-I", "-c", _COMPACT, uri, str(changed),
                               str(papers), str(timeout)], capture_output=True, check=False)
    except OSError:
        return False  # compacting is a saving, not a step the index depends on
    return done.returncode == 0


def delete_collection(settings: Settings) -> None:
    """Drop the collection (for ``--rebuild``); missing is fine, and so is a damaged folder."""
    try:
        client, _ = _client(settings, create=True)
    except StoreError:
        if settings.chroma_url:
            raise
        remove_chroma_files(settings.vectorstore_path())  # Chroma cannot open it: start over
        return
    try:
        client.delete_collection(settings.collection)
    except Exception:  # noqa: BLE001 - absent already: nothing to drop
        pass
