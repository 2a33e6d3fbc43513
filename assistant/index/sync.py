"""Indexing papers into the Chroma store: add new, replace changed, drop removed; the writes on
a thread of their own."""

from __future__ import annotations

import queue
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import Any

from assistant.index.embeddings import run_lengths
from assistant.index.store import IndexReport, Store, embed_text
from assistant.ingest.chunking import Chunk, chunk_paper, chunking_label, join_chunks
from assistant.ingest.corpus import Paper
from assistant.ingest.where import chroma_metadata

_BATCH = 256  # chunks embedded per call
_WINDOW = 2048  # chunks sorted by length together, so that each call's texts are alike


def _metadata(paper: Paper, chunk: Chunk, n_chunks: int, whole: bool, chunking: str
              ) -> dict[str, Any]:
    """A chunk's metadata: on every chunk what tells whether it is current and, after the
    first, how much of its text repeats the chunk before; the paper's fields (``PAPER_KEYS``)
    on its first chunk only, with the whole abstract where ``whole`` (the chunks joined do
    not give it back). Each key is a row in Chroma's SQLite: fewer keys write and read faster.
    """
    meta: dict[str, Any] = {
        "paper_id": paper.id, "chunk": chunk.index, "tokens": chunk.tokens,
        "paper_hash": paper.content_hash, "chunking": chunking,
        # what --where reads, on every chunk, so that Chroma can filter any chunk it finds
        # (the title, on the first chunk only, is matched after the search)
        **{k: v for k, v in chroma_metadata(paper.__dict__).items() if k != "title"},
    }
    if chunk.index:  # even 0: a chunk written over one cut another way keeps its old keys
        meta["overlap"] = chunk.overlap
    else:
        meta.update(n_chunks=n_chunks, title=paper.title, title_derived=paper.title_derived,
                    source=paper.source, slot=paper.slot)
        if whole:
            meta["abstract"] = paper.abstract
        for key in ("arxiv_id", "openreview_id", "url", "collection", "doi", "citation_key",
                    "raw_bibtex"):
            if getattr(paper, key):
                meta[key] = getattr(paper, key)
    return meta


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
    existing = _existing(store)
    chunking = chunking_label(chunk_tokens, chunk_overlap)
    todo: list[_Todo] = []
    for paper in papers:
        old = existing.get(paper.id)
        if (old and old["hashes"] == {(paper.content_hash, chunking)}
                and old["n"] == len(old["ids"])):
            continue  # unchanged: neither embedded nor written
        chunks = chunk_paper(paper, count_tokens, chunk_tokens, chunk_overlap)
        todo.append((paper, chunks, bool(old)))
    wanted = {p.id for p in papers}
    gone = [pid for pid in existing if pid not in wanted]
    _delete_stale(store, existing, gone, todo)
    _write(store, todo, chunking, progress)
    if todo or gone:
        _stamp(store)

    gone_slots = {existing[pid]["slot"] for pid in gone if existing[pid]["slot"]}
    new = [paper for paper, _, was_there in todo if not was_there]
    # A new text where a removed one sat is that paper, changed: count it as updated.
    replaced = sum(paper.slot in gone_slots for paper in new)
    added = len(new) - replaced
    return IndexReport(
        papers=len(papers), chunks=store.count(), added=added, updated=len(todo) - added,
        removed=len(gone) - replaced, unchanged=len(papers) - len(todo),
        seconds=round(time.perf_counter() - started, 3), location=store.location,
    )


_Todo = tuple[Paper, list[Chunk], bool]  # a paper to write, its chunks, whether it was there


def _existing(store: Store) -> dict[str, dict[str, Any]]:
    """What the collection holds, by paper: its chunk ids, the (hash, chunking) its chunks
    carry, and from its first chunk the chunk count and slot (None: incomplete)."""
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
    return existing


def _delete_stale(store: Store, existing: dict[str, dict[str, Any]], gone: list[str],
                  todo: Sequence[_Todo]) -> None:
    """Delete the chunks of removed papers (``gone``), and those of changed papers that the
    new chunking does not write again."""
    stale = [i for pid in gone for i in existing[pid]["ids"]]
    for paper, chunks, was_there in todo:
        if was_there:
            keep = {c.id for c in chunks}
            stale += [i for i in existing[paper.id]["ids"] if i not in keep]
    if stale:
        store.collection.delete(ids=stale)


def _write(store: Store, todo: Sequence[_Todo], chunking: str,
           progress: Callable[[int, int], None] | None) -> None:
    """Embed and write the papers' chunks, a window of chunks at a time."""
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


def _embed_and_write(store: Store, writer: _Writer, window: list[tuple[Paper, Chunk, int, bool]],
                     chunking: str, done: int, total: int,
                     progress: Callable[[int, int], None] | None) -> int:
    """Embed ``window`` (whole papers) shortest text first (less padding), ``_BATCH`` chunks a
    call, and write each paper, all its chunks in one call, as soon as all are embedded."""
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


BACKGROUND_WRITES = True  # False: write in the indexing thread (benchmarks/index_turns.py)


class _Writer:
    """Chroma's writes, in order, on one thread of their own while the embedder runs on
    (a write is mostly one core's work, SQLite and the HNSW insert). At most two wait.

    The first failing write stops the rest and is raised in the indexing thread, by the next
    ``upsert`` or on leaving the ``with`` block, which waits for every write. When the
    indexing thread fails, the writes still waiting are dropped: each holds whole papers, so
    the store is left with papers either complete or absent.
    """

    def __init__(self, collection: Any, *, background: bool = True) -> None:
        self._collection = collection
        self._error: BaseException | None = None
        self._queue: queue.Queue[dict[str, Any] | None] | None = None
        self._thread: threading.Thread | None = None
        if background:
            self._queue = queue.Queue(maxsize=2)
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
        if value is not None:  # drop the writes still waiting
            with suppress(queue.Empty):
                while True:
                    self._queue.get_nowait()
        self._queue.put(None)
        self._thread.join()
        if self._error is not None and value is None:
            raise self._error


def _stamp(store: Store) -> None:
    """Record a new index version, and the vector size, in the collection's metadata."""
    metadata = {k: v for k, v in (store.collection.metadata or {}).items()
                if not k.startswith("hnsw:")}
    metadata["index_version"] = uuid.uuid4().hex[:12]
    sample = store.collection.get(limit=1, include=["embeddings"])
    if sample["embeddings"] is not None and len(sample["embeddings"]):
        metadata["embedding_dimension"] = len(sample["embeddings"][0])
    store.collection.modify(metadata=metadata)

