"""Hybrid retrieval: dense (Chroma) and BM25, fused by reciprocal rank, one entry per paper."""

from __future__ import annotations

import re
import threading
import zipfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assistant.citations import normalise, question_names
from assistant.lexical import BM25
from assistant.store import Store, embed_text
from assistant.types import Source

RRF_K = 20  # small: with tens of candidates per list, the top ranks should count most
_CANDIDATES = 40  # chunks taken from each list before fusion


@dataclass
class _Lexical:
    version: str
    ids: list[str]  # chunk id of each BM25 document
    bm25: BM25


class HybridRetriever:
    """Ranks papers for a question; the BM25 index follows the collection's version.

    A saved BM25 index carries its chunk ids, so a new process loads it without reading any
    chunk text; the texts of the chunks it finds are fetched by id, per question.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self._lexical: _Lexical | None = None
        self._lock = threading.Lock()

    def _lexical_index(self) -> _Lexical:
        version = self.store.version()
        with self._lock:
            if self._lexical is None or self._lexical.version != version:
                bm25 = self._load(version) or self._build(version)
                self._lexical = _Lexical(version, bm25.keys, bm25)
            return self._lexical

    def _path(self, version: str) -> Path | None:
        folder = self.store.cache_dir
        return folder / f"{re.sub(r'[^A-Za-z0-9_-]', '_', version)}.npz" if folder else None

    def _load(self, version: str) -> BM25 | None:
        """The BM25 index saved for this version of the collection, if it is sound."""
        path = self._path(version)
        if path is None or not path.is_file():
            return None
        try:
            index = BM25.load(path)
        except (OSError, ValueError, KeyError, zipfile.BadZipFile):
            return None  # damaged or from another version of the code: build it again
        if len(index.keys) != index.size or index.size != self.store.count():
            return None
        return index

    def _build(self, version: str) -> BM25:
        ids, texts, metas = self.store.all_chunks()
        documents = [embed_text((m or {}).get("title", ""), t or "")
                     for t, m in zip(texts, metas, strict=True)]
        index = BM25.build(documents, keys=ids)
        path = self._path(version)
        if path is not None:
            try:
                for old in path.parent.glob("*.npz"):
                    old.unlink()
                index.save(path)
            except OSError:
                pass  # a read-only store still answers; the index is rebuilt next time
        return index

    def retrieve(self, question: str, k: int = 5) -> list[Source]:
        """The ``k`` best papers, best first, each with its best passages."""
        lexical = self._lexical_index()
        if not question.strip() or not lexical.ids:
            return []
        vector = self.store.embeddings.embed_query(question)
        dense = self.store.query(vector, _CANDIDATES, total=len(lexical.ids))
        bm25 = lexical.bm25.search(question, _CANDIDATES)

        chunks: dict[str, tuple[str, dict[str, Any]]] = {}
        chunk_score: dict[str, float] = defaultdict(float)
        paper_dense: dict[str, float] = {}
        paper_lexical: dict[str, float] = {}
        rankings: list[list[str]] = [[], []]  # dense, lexical
        for chunk_id, text, meta, similarity in dense:
            if not meta or "paper_id" not in meta or text is None:
                continue  # written or deleted by an indexer at this very moment
            chunks[chunk_id] = (text, meta)
            pid = meta["paper_id"]
            if pid not in paper_dense:
                rankings[0].append(pid)
                paper_dense[pid] = similarity
            chunk_score[chunk_id] += similarity
        top_bm25 = bm25[0][1] if bm25 else 1.0
        fetched = self.store.chunks([lexical.ids[i] for i, _ in bm25
                                     if lexical.ids[i] not in chunks])
        for index, score in bm25:
            chunk_id = lexical.ids[index]
            if chunk_id not in chunks and chunk_id in fetched:
                chunks[chunk_id] = fetched[chunk_id]
            meta = chunks.get(chunk_id, ("", {}))[1]
            if not meta or "paper_id" not in meta:
                continue  # deleted since the index was built
            pid = meta["paper_id"]
            if pid not in paper_lexical:
                rankings[1].append(pid)
                paper_lexical[pid] = score
            chunk_score[chunk_id] += score / top_bm25

        # Papers that contain a name from the question (a method, dataset, acronym) rank as
        # a third list: a name match is the surest sign of the paper being asked about.
        names = question_names(question)
        if names:
            hits: dict[str, int] = defaultdict(int)
            for chunk_id, (text, meta) in chunks.items():
                haystack = normalise(f"{meta.get('title', '')} {text}")
                found = sum(1 for name in names if name in haystack)
                hits[meta["paper_id"]] = max(hits[meta["paper_id"]], found)
            rankings.append([p for p in sorted(hits, key=lambda p: -hits[p]) if hits[p]])
            # A paper's passages that carry the question's names come first: they are what
            # the answer must quote (its ranking among papers is unchanged by this).
            for chunk_id, (text, meta) in chunks.items():
                haystack = normalise(text)
                chunk_score[chunk_id] += sum(1.0 for name in names if name in haystack)

        fused: dict[str, float] = defaultdict(float)
        for ranking in rankings:
            for rank, pid in enumerate(ranking):
                fused[pid] += 1.0 / (RRF_K + rank + 1)
        by_paper: dict[str, list[str]] = defaultdict(list)
        for chunk_id in sorted(chunks, key=lambda c: -chunk_score[c]):
            by_paper[chunks[chunk_id][1]["paper_id"]].append(chunk_id)

        sources = []
        for pid in sorted(fused, key=lambda p: -fused[p])[:k]:
            best = by_paper[pid][:2]  # most relevant first
            meta = chunks[best[0]][1]
            passages = tuple(chunks[c][0] for c in best)
            sources.append(
                Source(
                    paper_id=pid,
                    title=str(meta["title"]),
                    text=" … ".join(passages),
                    score=round(fused[pid], 6),
                    title_derived=bool(meta.get("title_derived", False)),
                    arxiv_id=meta.get("arxiv_id") or None,
                    openreview_id=meta.get("openreview_id") or None,
                    passages=passages,
                    chunk_ids=tuple(best),
                    dense=round(paper_dense.get(pid, 0.0), 4),
                    lexical=round(paper_lexical.get(pid, 0.0), 4),
                )
            )
        return sources
