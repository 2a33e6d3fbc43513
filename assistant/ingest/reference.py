"""One paper as a reference manager or an archive describes it, and the field cleaning the
readers of :mod:`assistant.ingest.bibtex_ris` and :mod:`assistant.ingest.json_formats` share."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assistant.errors import InputFileError
from assistant.text.identifiers import written_ids

NO_ABSTRACT = "no abstract"


@dataclass(frozen=True)
class Reference:
    """One paper as a reference manager or an archive describes it."""

    title: str
    abstract: str
    authors: tuple[str, ...] = ()
    year: int | None = None
    venue: str | None = None
    keywords: tuple[str, ...] = ()
    doi: str | None = None
    url: str | None = None
    arxiv_id: str | None = None
    openreview_id: str | None = None
    key: str | None = None  # the source's own citation key
    raw_bibtex: str | None = None  # the entry as written in the .bib file
    file: str = ""
    line: int | None = None

    @property
    def source(self) -> str:
        """``file:line`` (or the file alone), as the existing readers name a record."""
        return f"{self.file}:{self.line}" if self.line else self.file

    def metadata(self) -> dict[str, Any]:
        """The fields a ``--where`` filter looks at, lists as lists."""
        return {"title": self.title, "year": self.year, "venue": self.venue,
                "authors": list(self.authors), "keywords": list(self.keywords)}


Item = Reference | str  # a reader yields a record, or the reason it skipped one

YEAR = re.compile(r"\b(1[89]\d\d|2[01]\d\d)\b")


def clean_text(value: object) -> str:
    """Whitespace collapsed; the corpus reader's ``normalize()`` does the rest later."""
    return " ".join(str(value).split()) if value is not None else ""


def clean_texts(values: object) -> tuple[str, ...]:
    if values is None:
        return ()
    if isinstance(values, str):
        values = re.split(r"[;,]", values)
    return tuple(t for t in (clean_text(v) for v in values) if t)


def person_name(name: str) -> str:
    """``Last, First`` (as RIS writes names) turned to ``First Last``, as the other readers give."""
    last, comma, first = name.partition(",")
    return f"{first.strip()} {last.strip()}" if comma and first.strip() and "," not in first \
        else name


def year_of(value: object) -> int | None:
    match = YEAR.search(str(value)) if value not in (None, "") else None
    return int(match.group(1)) if match else None


def first_text(*values: object) -> str | None:
    return next((clean_text(v) for v in values if clean_text(v)), None)


def read_file_text(path: Path) -> str:
    """A corpus or reference file's text: UTF-8 (a byte-order mark dropped), or an error that
    names the file, the line and how to fix it (an empty file is one too)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise InputFileError(f"{path}: no such file; check the path") from exc
    except IsADirectoryError as exc:
        raise InputFileError(f"{path}: is a folder, expected a file") from exc
    except OSError as exc:
        raise InputFileError(f"{path}: cannot be read ({exc.strerror})") from exc
    if b"\x00" in data[:8192]:
        raise InputFileError(f"{path}: looks like a binary file, expected UTF-8 text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputFileError(
            f"{path}:{line}: not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset "
            f"{exc.start}); convert it, e.g. `iconv -f latin1 -t utf-8`"
        ) from exc
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise InputFileError(f"{path}: the file is empty; it must contain abstracts")
    return text


def reference_or_skip(path: Path, line: int | None, title: object, abstract: object,
                      **fields: Any) -> Item:
    abstract = clean_text(abstract)
    if not abstract:
        return NO_ABSTRACT
    return Reference(clean_text(title), abstract, file=path.name, line=line, **fields)


def ids_in(*texts: object) -> dict[str, str]:
    """arXiv and OpenReview ids found in urls, notes and journal fields."""
    found: dict[str, str] = {}
    for text in texts:
        for kind, value in written_ids(str(text or "")).items():
            found.setdefault(kind, value)
    return found

