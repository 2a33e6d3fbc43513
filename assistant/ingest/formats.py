"""Researchers' own libraries: BibTeX, RIS, CSL-JSON, OpenReview notes and arXiv metadata.

Each reader yields :class:`Reference` records; :func:`iter_references` applies a limit and a
record predicate while reading and fills a :class:`Summary` of what was read and skipped.
JSON Lines files (the arXiv snapshot among them) are read a line at a time, so memory stays
flat however large the file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from assistant.errors import InputFileError
from assistant.ingest.bibtex_ris import read_bibtex, read_ris
from assistant.ingest.json_formats import (
    json_records,
    read_arxiv,
    read_csl_json,
    read_openreview,
)
from assistant.ingest.reference import NO_ABSTRACT, Item, Reference

__all__ = [
    "FORMATS",
    "NOT_MATCHED",
    "NO_ABSTRACT",
    "Reference",
    "Summary",
    "detect_format",
    "iter_references",
    "read_references",
    "sniff",
]

FORMATS = ("bibtex", "ris", "csl-json", "openreview", "arxiv")
SUFFIXES = {".bib": "bibtex", ".ris": "ris"}
JSON_SUFFIXES = {".json", ".jsonl"}
NOT_MATCHED = "did not match the filter"


@dataclass
class Summary:
    """What one file gave: records read, records skipped and why."""

    file: str
    format: str
    read: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    limited: bool = False  # reading stopped at the limit

    def describe(self) -> str:
        """One line for ``assistant index``: ``refs.bib (bibtex): 5 read, 1 skipped (...)``."""
        text = f"{self.file} ({self.format}): {self.read} read"
        if self.skipped:
            reasons = ", ".join(f"{n} {why}" for why, n in sorted(self.skipped.items()))
            text += f", {sum(self.skipped.values())} skipped ({reasons})"
        return text + (", stopped at the limit" if self.limited else "")

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form, for ``assistant index --json``."""
        return {"file": self.file, "format": self.format, "read": self.read,
                "skipped": dict(self.skipped), "limited": self.limited}


def iter_references(path: Path, summary: Summary | None = None, *, fmt: str | None = None,
                    limit: int | None = None,
                    keep: Callable[[Reference], bool] | None = None) -> Iterator[Reference]:
    """Stream the references of ``path``; stop after ``limit`` kept; count skips in ``summary``."""
    path = Path(path)
    fmt = fmt or detect_format(path)
    if fmt not in _READERS:
        raise InputFileError(
            f"{path}: not a reference file this reader knows ({', '.join(FORMATS)}); "
            "the project's own .txt, .jsonl and .csv layouts are read by the corpus reader"
        )
    summary = summary if summary is not None else Summary(str(path), fmt)
    if limit is not None and limit <= 0:
        summary.limited = True
        return
    for item in _READERS[fmt](path):
        if isinstance(item, str):
            summary.skipped[item] += 1
        elif keep is not None and not keep(item):
            summary.skipped[NOT_MATCHED] += 1
        else:
            summary.read += 1
            yield item
            if limit is not None and summary.read >= limit:
                summary.limited = True
                return


def read_references(path: Path, *, fmt: str | None = None) -> tuple[list[Reference], Summary]:
    """All references of ``path`` (see :func:`iter_references`) and the file's summary."""
    fmt = fmt or detect_format(Path(path))
    summary = Summary(str(path), fmt or "unknown")
    return list(iter_references(path, summary, fmt=fmt)), summary


def detect_format(path: Path) -> str | None:
    """The format from the suffix, and for ``.json``/``.jsonl`` from the first record;
    ``None`` for the project's own layouts (read by the existing corpus readers)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in SUFFIXES:
        return SUFFIXES[suffix]
    if suffix not in JSON_SUFFIXES:
        return None
    first = next(json_records(path), None)
    return sniff(first[1]) if first is not None else None


def sniff(record: object) -> str | None:
    """Which JSON format one record is in; ``None`` for the project's own JSONL layout."""
    if not isinstance(record, dict):
        return None
    if "categories" in record and ("update_date" in record or "authors_parsed" in record):
        return "arxiv"
    content = record.get("content")
    if isinstance(content, dict) and (
        any(isinstance(v, dict) and "value" in v for v in content.values())
        or {"forum", "invitation", "invitations"} & record.keys()
    ):
        return "openreview"
    if {"issued", "container-title"} & record.keys() or (
        "type" in record and ({"author", "DOI", "URL"} & record.keys())
    ):
        return "csl-json"
    return None


_READERS: dict[str, Callable[[Path], Iterator[Item]]] = {
    "bibtex": read_bibtex, "ris": read_ris, "csl-json": read_csl_json,
    "openreview": read_openreview, "arxiv": read_arxiv,
}
