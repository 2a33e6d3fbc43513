"""Hybrid retrieval: dense (Chroma) and BM25, fused by reciprocal rank, one entry per paper."""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant.config import RetrievalSettings
from assistant.index.store import Store, embed_text
from assistant.ingest.where import Filter
from assistant.retrieve.lexical import BM25
from assistant.text.sentences import defined, mentions, normalise, question_names
from assistant.types import Source

# What retrieval needs to know of a chunk's paper; the rest of the metadata stays in Chroma.
PAPER_FIELDS = ("paper_id", "title", "title_derived", "arxiv_id", "openreview_id",
                "year", "venue", "authors", "keywords")  # the last four for --where


class _Chunks:
    """Every indexed chunk's id, text and paper; chunk ``i`` is document ``i`` of the BM25
    index. Saved as JSON beside it, so a new process reads neither from Chroma."""

    def __init__(self, ids: list[str], texts: list[str], papers: list[dict[str, Any]],
                 paper_of: list[int]) -> None:
        if not len(ids) == len(texts) == len(paper_of):
            raise ValueError("chunk lists disagree in length")
        self.ids, self.texts, self.papers, self.paper_of = ids, texts, papers, paper_of
        self.metas = [papers[p] for p in paper_of]  # IndexError: names a paper it lacks
        self._position = {chunk_id: i for i, chunk_id in enumerate(ids)}

    @classmethod
    def build(cls, ids: list[str], texts: list[str | None],
              metas: list[dict[str, Any] | None]) -> _Chunks:
        papers: list[dict[str, Any]] = []
        number: dict[str, int] = {}
        paper_of = []
        for meta in metas:
            meta = meta or {}
            pid = str(meta.get("paper_id", ""))
            if pid not in number:
                number[pid] = len(papers)
                papers.append({k: meta[k] for k in PAPER_FIELDS if k in meta})
            paper_of.append(number[pid])
        return cls(list(ids), [t or "" for t in texts], papers, paper_of)

    def __len__(self) -> int:
        return len(self.ids)

    def position(self, chunk_id: str) -> int | None:
        return self._position.get(chunk_id)

    def save(self, path: Path) -> None:
        """Write the file whole or not at all: other processes may be reading it."""
        tmp = path.with_name(f"{path.name}.{os.getpid()}-{uuid.uuid4().hex}.tmp")
        try:
            tmp.write_text(json.dumps({"ids": self.ids, "texts": self.texts,
                                       "papers": self.papers, "paper_of": self.paper_of}))
            tmp.replace(path)
        finally:
            tmp.unlink(missing_ok=True)

    @classmethod
    def load(cls, path: Path) -> _Chunks:
        data = json.loads(path.read_text())
        return cls(data["ids"], data["texts"], data["papers"], data["paper_of"])


@dataclass
class _Lexical:
    version: str
    bm25: BM25
    table: _Chunks  # document i of the BM25 index is chunk i of the table
    normalised: dict[int, str] = field(default_factory=dict)  # texts seen, for name matching
    definitions: dict[str, set[str]] = field(default_factory=dict)  # acronym -> written out

    def normalised_text(self, i: int) -> str:
        text = self.normalised.get(i)  # one lookup: another thread may clear it meanwhile
        if text is None:
            if len(self.normalised) >= 20_000:
                self.normalised.clear()  # bounded, for a long-running server
            text = self.normalised[i] = normalise(self.table.texts[i])
        return text


class HybridRetriever:
    """Ranks papers for a question; the BM25 index follows the collection's version.

    The BM25 index (bm25s's files) is saved beside every chunk's id, text and paper, so a
    new process loads both without reading the collection, and a question asks Chroma only
    for the ids of its nearest chunks (Chroma's own search).
    """

    def __init__(self, store: Store, config: RetrievalSettings | None = None) -> None:
        self.store = store
        self.config = config or RetrievalSettings()
        self._lexical: _Lexical | None = None
        self._lock = threading.Lock()

    def _lexical_index(self) -> _Lexical:
        version = self.store.version()
        with self._lock:
            if self._lexical is None or self._lexical.version != version:
                self._lexical = self._load(version) or self._build(version)
            return self._lexical

    def _paths(self, version: str) -> tuple[Path, Path] | None:
        """The saved chunks and BM25 index of a version."""
        folder = self.store.cache_dir
        if folder is None:
            return None
        name = re.sub(r"[^A-Za-z0-9_-]", "_", version)
        return folder / f"{name}.chunks.json", folder / f"{name}.bm25"

    def _load(self, version: str) -> _Lexical | None:
        """The index saved for this version of the collection, if it is sound."""
        paths = self._paths(version)
        if paths is None or not paths[0].is_file():
            return None
        try:
            table = _Chunks.load(paths[0])
            bm25 = BM25.load(paths[1])
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            return None  # damaged or from another version of the code: build it again
        if len(table) != bm25.size or bm25.size != self.store.count():
            return None
        return _Lexical(version, bm25, table)

    def _build(self, version: str) -> _Lexical:
        ids, texts, metas = self.store.all_chunks()
        documents = [embed_text((m or {}).get("title", ""), t or "")
                     for t, m in zip(texts, metas, strict=True)]
        bm25 = BM25.build(documents, [str((m or {}).get("paper_id", "")) for m in metas])
        table = _Chunks.build(ids, texts, metas)
        paths = self._paths(version)
        if paths is not None:
            try:
                # .arrays and .npz: the formats of earlier versions
                for pattern in ("*.arrays", "*.npz", "*.bm25", "*.chunks.json"):
                    for old in paths[0].parent.glob(pattern):
                        if old.is_dir():
                            shutil.rmtree(old, ignore_errors=True)
                        else:
                            old.unlink()
                bm25.save(paths[1])  # first: chunks without their index are built again
                table.save(paths[0])
            except OSError:
                pass  # a read-only store still answers; the index is rebuilt next time
        return _Lexical(version, bm25, table)

    def _dense(self, table: _Chunks, vector: list[float], where: Filter | None = None
               ) -> list[tuple[str, float]]:
        """Ids and similarities of the nearest chunks (Chroma's own search); with a filter,
        among the chunks its metadata ``where`` keeps."""
        clause = _chroma_clause(where, table) if where else None
        if where and clause is None:
            return []
        return self.store.nearest(vector, self.config.candidates, total=len(table), where=clause)

    def rarity(self, term: str) -> float:
        """How rare a stemmed term is among the indexed chunks (its BM25 idf)."""
        return self._lexical_index().bm25.rarity(term)

    def knows(self, term: str) -> bool:
        """Whether any indexed chunk uses a stemmed term."""
        return self._lexical_index().bm25.knows(term)

    def defines(self, acronym: str) -> set[str]:
        """What the indexed texts define an acronym as, lower case ("RL": "reinforcement
        learning", from "… reinforcement learning (RL) …"); read once per acronym."""
        lexical = self._lexical_index()
        found = lexical.definitions.get(acronym)
        if found is None:
            if len(lexical.definitions) >= 1_000:
                lexical.definitions.clear()  # bounded: a server reads whatever users type
            found = lexical.definitions[acronym] = defined(acronym, lexical.table.texts)
        return found

    def spelling(self, word: str) -> str | None:
        """How the indexed texts write a name typed in lower case ("drpose": "DrPose")."""
        return self._lexical_index().bm25.spelling(word)

    def retrieve(self, question: str, k: int = 5, where: Filter | None = None) -> list[Source]:
        """The ``k`` best papers, best first, each with its best passages; with ``where``,
        only papers it matches."""
        lexical = self._lexical_index()
        table = lexical.table
        if not question.strip() or not len(table):
            return []
        vector = self.store.embeddings.embed_query(question)
        dense = self._dense(table, vector, where)
        candidates = self.config.candidates
        bm25 = lexical.bm25.search(question, len(table) if where else candidates)
        if where:  # filtered before the top candidates are taken, so that enough are left
            bm25 = [(i, s) for i, s in bm25 if where.matches(table.metas[i])][:candidates]
        # Chunks that Chroma's search finds but were written since the index was built (it
        # follows within a second) are read from the store; every other text comes from the
        # table.
        fetched = self.store.chunks([c for c, _ in dense if table.position(c) is None])
        found = _Found.gather(table, dense, bm25, fetched, where)

        def text(chunk_id: str) -> str:
            at = table.position(chunk_id)
            return table.texts[at] if at is not None else fetched[chunk_id][0]

        def normalised(chunk_id: str) -> str:
            at = table.position(chunk_id)
            return lexical.normalised_text(at) if at is not None else normalise(text(chunk_id))

        names = question_names(question)
        if names:
            found.rank_by_names(names, normalised, self.config.name_papers)
        return found.sources(k, self.config.fusion_k, text)


@dataclass
class _Found:
    """The chunks the two searches found, each with its paper; the papers in the order of
    each search (and of the names they hold); what fusion ranks."""

    papers: dict[str, dict[str, Any]] = field(default_factory=dict)  # chunk id -> paper
    chunk_score: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    paper_dense: dict[str, float] = field(default_factory=dict)
    paper_lexical: dict[str, float] = field(default_factory=dict)
    rankings: list[list[str]] = field(default_factory=lambda: [[], []])  # dense, lexical

    @classmethod
    def gather(cls, table: _Chunks, dense: list[tuple[str, float]],
               bm25: list[tuple[int, float]], fetched: dict[str, tuple[str, dict[str, Any]]],
               where: Filter | None) -> _Found:
        """Each candidate's paper now; its text only if it is returned or name-matched."""
        found = cls()
        for chunk_id, similarity in dense:
            at = table.position(chunk_id)
            meta = table.metas[at] if at is not None else fetched.get(chunk_id, ("", {}))[1]
            if "paper_id" not in meta or (where and not where.matches(meta)):
                continue  # deleted by an indexer at this very moment, or filtered out
            found.papers[chunk_id] = meta
            pid = meta["paper_id"]
            if pid not in found.paper_dense:
                found.rankings[0].append(pid)
                found.paper_dense[pid] = similarity
            found.chunk_score[chunk_id] += similarity
        top_bm25 = bm25[0][1] if bm25 else 1.0
        for index, score in bm25:
            chunk_id = table.ids[index]
            meta = found.papers.setdefault(chunk_id, table.metas[index])
            pid = meta.get("paper_id")
            if pid is None:
                continue
            if pid not in found.paper_lexical:
                found.rankings[1].append(pid)
                found.paper_lexical[pid] = score
            found.chunk_score[chunk_id] += score / top_bm25
        return found

    def rank_by_names(self, names: set[str], normalised: Callable[[str], str],
                      most: int) -> None:
        """Papers that contain a name from the question (a method, dataset, acronym) rank as
        a third list: a name match is the surest sign of the paper being asked about, when at
        most ``most`` of the candidate papers hold it."""
        titles: dict[str, str] = {}
        in_chunk: dict[str, set[str]] = {}  # chunk id -> the names its title and text hold
        held: dict[str, set[str]] = defaultdict(set)  # name -> the papers holding it
        for chunk_id, meta in self.papers.items():
            pid = meta["paper_id"]
            if pid not in titles:
                titles[pid] = normalise(str(meta.get("title", "")))
            body = normalised(chunk_id)
            haystack = f"{titles[pid]} {body}"
            # a word: "rl" is not in "world"
            in_chunk[chunk_id] = {name for name in names if mentions(haystack, name)}
            for name in in_chunk[chunk_id]:
                held[name].add(pid)
            # A paper's passages that carry the question's names come first: they are
            # what the answer must quote (its ranking among papers is unchanged by this).
            self.chunk_score[chunk_id] += sum(1.0 for name in names if name in body)
        # "RL", "LLM": a name that many candidate papers hold is a word here, and ranking by
        # it would put the papers that happen to write it above the one both searches found
        rare = {n for n, papers in held.items() if len(papers) <= most}
        hits: dict[str, int] = defaultdict(int)
        for chunk_id, meta in self.papers.items():
            pid = meta["paper_id"]
            hits[pid] = max(hits[pid], len(in_chunk[chunk_id] & rare))
        self.rankings.append([p for p in sorted(hits, key=lambda p: -hits[p]) if hits[p]])

    def sources(self, k: int, fusion_k: int, text: Callable[[str], str]) -> list[Source]:
        """The ``k`` papers first by reciprocal rank fusion, each with its two best chunks."""
        fused: dict[str, float] = defaultdict(float)
        for ranking in self.rankings:
            for rank, pid in enumerate(ranking):
                fused[pid] += 1.0 / (fusion_k + rank + 1)
        by_paper: dict[str, list[str]] = defaultdict(list)
        for chunk_id in sorted(self.papers, key=lambda c: -self.chunk_score[c]):
            by_paper[self.papers[chunk_id]["paper_id"]].append(chunk_id)
        sources = []
        for pid in sorted(fused, key=lambda p: -fused[p])[:k]:
            best = by_paper[pid][:2]  # most relevant first
            meta = self.papers[best[0]]
            passages = tuple(text(c) for c in best)
            sources.append(Source(
                paper_id=pid, title=str(meta["title"]), text=" … ".join(passages),
                score=round(fused[pid], 6), title_derived=bool(meta.get("title_derived", False)),
                arxiv_id=meta.get("arxiv_id") or None,
                openreview_id=meta.get("openreview_id") or None, passages=passages,
                chunk_ids=tuple(best), dense=round(self.paper_dense.get(pid, 0.0), 4),
                lexical=round(self.paper_lexical.get(pid, 0.0), 4),
            ))
        return sources


def _chroma_clause(where: Filter, table: _Chunks) -> dict[str, Any] | None:
    """The Chroma ``where`` that keeps the chunks of the papers ``where`` matches (``None``
    when none does). Chroma decides years, venues, authors and keywords compared exactly
    itself; a ``~`` (which its metadata filters cannot say) or a title (kept on first chunks
    only) is decided here, over the table's papers, and sent as their ids."""
    if where.papers == frozenset():
        return None  # among no papers (Chroma refuses an empty "$in")
    if all(c.op != "~" and c.field != "title" for c in where.conditions):
        return where.chroma_where()
    ids = sorted({m["paper_id"] for m in table.metas
                  if "paper_id" in m and where.matches(m)})
    return {"paper_id": {"$in": ids}} if ids else None
