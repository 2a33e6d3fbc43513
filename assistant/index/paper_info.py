"""A paper as the index records it: what ``assistant papers`` lists."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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
    authors: tuple[str, ...] = ()
    year: int | None = None
    venue: str | None = None
    keywords: tuple[str, ...] = ()
    doi: str | None = None
    citation_key: str | None = None
    raw_bibtex: str | None = None

    @property
    def display_title(self) -> str:
        return f"{self.title} (derived title)" if self.title_derived else self.title

    def as_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "display_title": self.display_title}

    def listed(self) -> dict[str, Any]:
        """As `assistant papers --json` and `GET /v1/papers` list it: without the abstract and
        the original BibTeX entry (the paper's own commands give those)."""
        return {k: v for k, v in self.as_dict().items() if k not in ("abstract", "raw_bibtex")}


def paper_info(m: dict[str, Any], abstract: str) -> PaperInfo:
    """A paper as its first chunk's metadata records it."""
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
        authors=_names(m.get("authors")),
        year=m.get("year"), venue=m.get("venue"), keywords=tuple(m.get("keywords") or ()),
        doi=m.get("doi"), citation_key=m.get("citation_key"), raw_bibtex=m.get("raw_bibtex"),
    )


def _names(value: object) -> tuple[str, ...]:
    """Authors as a list (what --where filters need), or "; "-joined as stores before held them."""
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    return tuple(str(value).split("; ")) if value else ()
