"""Building the index from corpus files: read and check everything, then write under a lock."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from assistant import resources
from assistant.index.store import (
    IndexReport,
    delete_collection,
    lock_path,
    open_store,
    writer_lock,
)
from assistant.index.sync import index_papers
from assistant.ingest.corpus import load_papers
from assistant.ingest.formats import Summary
from assistant.ingest.tokens import count_tokens, encoding
from assistant.server_errors import model_errors

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

    from assistant.config import Settings


def build_index(
    settings: Settings,
    paths: Sequence[Path] | None = None,
    *,
    rebuild: bool = False,
    embeddings: Embeddings | None = None,
    progress: Callable[[int, int], None] | None = None,
    limit: int | None = None,
    keep: Callable[[Mapping[str, object]], bool] | None = None,
    summaries: list[Summary] | None = None,
) -> IndexReport:
    """Index ``paths`` (default: the bundled ICLR 2026 corpus) so the store holds exactly them.

    Every file is read and checked before the store is touched, so bad input leaves the
    index as it was. ``limit`` (papers in all) and ``keep`` (a paper's metadata in, whether
    to index it: ``Filter.matches``) apply while reading; ``summaries`` gets each file's.
    """
    papers = load_papers(list(paths) if paths else [resources.bundled_corpus_dir()],
                         limit=limit, keep=keep, summaries=summaries)
    if embeddings is None:
        from assistant.index.embeddings import build_embeddings

        embeddings = build_embeddings(settings)
    enc = encoding(settings.storage.cache_path())
    with writer_lock(lock_path(settings)):
        if rebuild:
            delete_collection(settings)
        store = open_store(settings, embeddings, create=True)
        with model_errors(settings):  # the embeddings may come from a server
            return index_papers(
                store,
                papers,
                lambda text: count_tokens(enc, text),
                chunk_tokens=settings.index.chunk_tokens,
                chunk_overlap=settings.index.chunk_overlap,
                progress=progress,
            )
