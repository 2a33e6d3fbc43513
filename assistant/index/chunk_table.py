"""Every indexed chunk's id, text and paper, kept in memory beside the BM25 index.

With it a question reads Chroma once, for the ids of its dense neighbours: the text and the
paper of every candidate, dense or lexical, are looked up here. The texts are one UTF-8
byte string with offsets, so a saved table of 47,000 chunks loads in one read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

# What retrieval needs to know of a chunk's paper; the rest of the metadata stays in Chroma.
PAPER_FIELDS = ("paper_id", "title", "title_derived", "arxiv_id", "openreview_id",
                "year", "venue", "authors", "keywords")  # the last four for --where


class ChunkTable:
    """Chunk ``i`` is ``ids[i]``; the table's order is the BM25 index's document order."""

    def __init__(self, ids: Sequence[str], text: bytes | np.ndarray, offsets: np.ndarray,
                 paper: np.ndarray, papers: Sequence[str]) -> None:
        """``text`` is every chunk's UTF-8 bytes end to end; ``papers`` one JSON object each."""
        if not (len(ids) + 1 == len(offsets) and len(ids) == len(paper)):
            raise ValueError("chunk table arrays disagree in length")
        if len(paper) and not 0 <= int(paper.min()) <= int(paper.max()) < len(papers):
            raise ValueError("chunk table names a paper it does not hold")
        if offsets[0] != 0 or offsets[-1] != len(text) or bool(np.any(offsets[1:] < offsets[:-1])):
            raise ValueError("chunk table offsets do not fit its text")
        self.ids = list(ids)
        self._text = text
        self._offsets = offsets
        self._paper = paper
        # Python lists: a question looks up tens of chunks, and a list index is several
        # times faster than a numpy scalar's.
        self._starts: list[int] = offsets.tolist()
        self._paper_of: list[int] = paper.tolist()
        self._paper_json = list(papers)
        self._papers: list[dict[str, Any] | None] = [None] * len(self._paper_json)
        self._position = {chunk_id: i for i, chunk_id in enumerate(self.ids)}

    @classmethod
    def build(cls, ids: Sequence[str], texts: Sequence[str],
              metas: Sequence[Mapping[str, Any] | None]) -> ChunkTable:
        encoded = [(t or "").encode() for t in texts]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(e) for e in encoded], out=offsets[1:])
        papers: list[str] = []
        number: dict[str, int] = {}
        paper = np.empty(len(encoded), dtype=np.int32)
        for i, meta in enumerate(metas):
            meta = meta or {}
            pid = str(meta.get("paper_id", ""))
            if pid not in number:
                number[pid] = len(papers)
                papers.append(json.dumps({k: meta[k] for k in PAPER_FIELDS if k in meta}))
            paper[i] = number[pid]
        return cls(ids, b"".join(encoded), offsets, paper, papers)

    def __len__(self) -> int:
        return len(self.ids)

    def position(self, chunk_id: str) -> int | None:
        return self._position.get(chunk_id)

    def text(self, i: int) -> str:
        return bytes(self._text[self._starts[i]:self._starts[i + 1]]).decode()

    def meta(self, i: int) -> dict[str, Any]:
        """The chunk's paper: its id, title and identifiers (shared: do not change it)."""
        number = self._paper_of[i]
        paper = self._papers[number]
        if paper is None:  # two threads may both decode it: the same dict either way
            paper = self._papers[number] = json.loads(self._paper_json[number])
        return paper

    def arrays(self) -> dict[str, np.ndarray]:
        """The table as plain arrays; ``from_arrays`` reads them back."""
        text = self._text
        if not isinstance(text, np.ndarray):
            text = np.frombuffer(text, dtype=np.uint8)
        lines = "\n".join(self._paper_json).encode()  # json.dumps escapes every newline
        ids = "\n".join(self.ids).encode()  # "<paper id>:<n>", never with a newline
        return {"chunk_text": text, "chunk_offsets": self._offsets, "chunk_paper": self._paper,
                "chunk_paper_lines": np.frombuffer(lines, dtype=np.uint8),
                "chunk_ids": np.frombuffer(ids, dtype=np.uint8)}

    @classmethod
    def from_arrays(cls, data: Mapping[str, np.ndarray]) -> ChunkTable:
        lines = data["chunk_paper_lines"].tobytes().decode()
        ids = data["chunk_ids"].tobytes().decode()
        return cls(ids.split("\n") if len(data["chunk_paper"]) else [], data["chunk_text"],
                   data["chunk_offsets"], data["chunk_paper"], lines.split("\n") if lines else [])
