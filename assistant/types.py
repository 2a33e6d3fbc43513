"""Typed, immutable results: answers, citations, sources."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


def reference_label(title: str, title_derived: bool, arxiv_id: str | None,
                    openreview_id: str | None) -> str:
    """How a paper is named under an answer: its title and the best id we have."""
    ids = []
    if title_derived:
        ids.append("derived title")
    if arxiv_id:
        ids.append(f"arXiv {arxiv_id}")
    elif openreview_id:
        ids.append(f"OpenReview {openreview_id}")
    return f"{title} ({'; '.join(ids)})" if ids else title


@dataclass(frozen=True)
class Source:
    """A retrieved paper with its best passages; ``score`` is the fused rank score."""

    paper_id: str
    title: str
    text: str
    score: float
    title_derived: bool = False
    arxiv_id: str | None = None
    openreview_id: str | None = None
    passages: tuple[str, ...] = ()
    chunk_ids: tuple[str, ...] = ()
    dense: float = 0.0
    lexical: float = 0.0
    support: float = 0.0  # how well the paper supports the question (0 to 1): support.py

    @property
    def label(self) -> str:
        return reference_label(self.title, self.title_derived, self.arxiv_id, self.openreview_id)


@dataclass(frozen=True)
class Citation:
    """A paper the answer cites, with the passage that supports the cited sentences."""

    number: int
    paper_id: str
    title: str
    text: str
    title_derived: bool = False
    arxiv_id: str | None = None
    openreview_id: str | None = None

    @property
    def label(self) -> str:
        return reference_label(self.title, self.title_derived, self.arxiv_id, self.openreview_id)


@dataclass(frozen=True)
class Dropped:
    """A sentence of the model's draft that the checks removed, and why."""

    sentence: str
    reason: str


@dataclass(frozen=True)
class Timings:
    """Seconds spent per stage."""

    retrieve: float = 0.0
    first_token: float | None = None
    total: float = 0.0


@dataclass(frozen=True)
class Usage:
    """Tokens sent to and received from the model (0 when the model was not called)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True)
class Answer:
    """The checked answer: ``text`` cites ``citations`` as [n]; ``abstained`` when uncovered."""

    question: str
    text: str
    citations: tuple[Citation, ...]
    sources: tuple[Source, ...]
    abstained: bool
    dropped: tuple[Dropped, ...] = ()
    warnings: tuple[str, ...] = ()
    timings: Timings = field(default_factory=Timings)
    usage: Usage = field(default_factory=Usage)
    model: str = ""

    @property
    def references(self) -> str:
        """The cited titles, one per line, as shown under the answer."""
        return "\n".join(f"[{c.number}] {c.label}" for c in self.citations)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``answer`` is the text)."""
        data = asdict(self)
        data["answer"] = data.pop("text")
        for item in (*data["citations"], *data["sources"]):
            item["label"] = reference_label(
                item["title"], item["title_derived"], item["arxiv_id"], item["openreview_id"]
            )
        return data
