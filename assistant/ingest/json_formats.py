"""JSON references: CSL-JSON (Zotero), OpenReview notes (API v1 and v2) and arXiv's metadata
snapshot. JSON Lines files are read a line at a time, so memory stays flat however large."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from functools import lru_cache
from itertools import chain
from pathlib import Path
from typing import Any

import bibtexparser
from pylatexenc.latex2text import LatexNodes2Text
from pylatexenc.latexwalker import get_default_latex_context_db

from assistant.errors import InputFileError
from assistant.ingest.reference import (
    Item,
    clean_text,
    clean_texts,
    first_text,
    ids_in,
    read_file_text,
    reference_or_skip,
    year_of,
)

_LATEX = LatexNodes2Text(math_mode="verbatim")
_LATEX_CONTEXT = get_default_latex_context_db()  # built once: it costs as much as a parse
_BETWEEN = re.compile(r"[\s,]*")  # between the records of a JSON array


def json_records(path: Path) -> Iterator[tuple[int, object]]:
    """``(line, record)`` from a JSON array (or ``{"notes": [...]}``), or from JSON Lines
    read a line at a time."""
    try:
        with path.open(encoding="utf-8-sig") as stream:
            head = stream.read(1)
            while head.isspace():
                head = stream.read(1)
            if head == "{":
                stream.seek(0)
                first = stream.readline()
                try:
                    json.loads(first)
                except json.JSONDecodeError:  # one pretty-printed object, not JSON Lines
                    head = "["
                else:
                    yield from json_lines(path, chain([first], stream))
                    return
    except (OSError, UnicodeDecodeError) as exc:
        read_file_text(path)  # raises the error naming the file (and the line)
        raise InputFileError(f"{path}: cannot be read ({exc})") from exc
    if head in ("[", "{"):
        yield from _json_array(path, read_file_text(path))
    else:
        read_file_text(path)  # an empty file says so
        raise InputFileError(f"{path}:1: expected a JSON array or one JSON object per line")


def json_lines(path: Path, lines: Iterable[str]) -> Iterator[tuple[int, object]]:
    """``(line, record)`` of JSON Lines, ``lines`` cut at line feeds only (str.splitlines
    would also cut at U+2028, which JSON strings may hold)."""
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputFileError(
                    f"{path}:{number}: not valid JSON ({exc.msg} at column {exc.colno})"
                ) from exc


def _json_array(path: Path, text: str) -> Iterator[tuple[int, object]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputFileError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from exc
    if isinstance(data, dict) and isinstance(data.get("notes"), list):
        data = data["notes"]
    if not isinstance(data, list):
        raise InputFileError(f"{path}:1: expected a JSON array of records")
    # json gives no positions: find the line each top-level record starts on, for messages
    decoder, at = json.JSONDecoder(), text.index("[") + 1
    line = text.count("\n", 0, at) + 1
    for record in data:
        start = _BETWEEN.match(text, at).end()
        line += text.count("\n", at, start)
        yield line, record
        at = decoder.raw_decode(text, start)[1]
        line += text.count("\n", start, at)


def _value(content: dict, name: str) -> Any:
    """An OpenReview content field: API v2 wraps it as ``{"value": ...}``, v1 does not."""
    item = content.get(name)
    return item.get("value") if isinstance(item, dict) else item


def _csl(path: Path, line: int, r: dict) -> Item:
    authors = tuple(
        clean_text(a.get("literal") or " ".join(p for p in (a.get("given"), a.get("family")) if p))
        for a in r.get("author") or [] if isinstance(a, dict)
    )
    issued = (r.get("issued") or {}).get("date-parts") or [[None]]
    year = issued[0][0] if issued and issued[0] else None
    url = first_text(r.get("URL"))
    return reference_or_skip(
        path, line, r.get("title"), r.get("abstract"), authors=tuple(a for a in authors if a),
        year=year_of(year or (r.get("issued") or {}).get("raw")),
        venue=first_text(r.get("container-title"), r.get("event-title")),
        keywords=clean_texts(r.get("keyword")), doi=first_text(r.get("DOI")), url=url,
        key=first_text(r.get("citation-key"), _key_like(r.get("id"))),
        **ids_in(url, r.get("note"), r.get("number")),
    )


def _key_like(value: object) -> str | None:
    """A CSL ``id`` that is a citation key (Better BibTeX's), not a Zotero item URI."""
    return value if isinstance(value, str) and re.fullmatch(r"[\w\-.+]+", value) else None


def _openreview(path: Path, line: int, r: dict) -> Item:
    content = r.get("content") or {}
    venue, venueid = first_text(_value(content, "venue")), first_text(_value(content, "venueid"))
    stamp = r.get("pdate") or r.get("odate") or r.get("cdate") or r.get("tcdate")
    year = year_of(venue) or year_of(venueid)
    if year is None and isinstance(stamp, int | float):
        year = datetime.fromtimestamp(stamp / 1000, UTC).year
    note_id = first_text(r.get("id"))
    raw = _value(content, "_bibtex")  # OpenReview's own entry, kept when it parses
    parsed = bibtexparser.parse_string(raw).entries if isinstance(raw, str) else []
    key = parsed[0].key if parsed else None
    return reference_or_skip(
        path, line, _value(content, "title"), _value(content, "abstract"),
        authors=clean_texts(_value(content, "authors")), year=year, venue=venue or venueid,
        keywords=clean_texts(_value(content, "keywords")),
        url=f"https://openreview.net/forum?id={r.get('forum') or note_id}" if note_id else None,
        openreview_id=note_id, key=key, raw_bibtex=raw.strip() if key else None,
    )


@lru_cache(maxsize=8192)  # names recur across a snapshot; the decoder is slow
def _detex(text: str) -> str:
    """LaTeX accents and braces to text; plain text (most names) is returned as it is."""
    if not any(c in text for c in "\\{}~"):
        return text
    return _LATEX.latex_to_text(text, latex_context=_LATEX_CONTEXT)


def _arxiv_author(parts: list[str]) -> str:
    last, first, suffix = (list(parts) + ["", "", ""])[:3]
    return _detex(" ".join(p for p in (first, last, suffix) if p))


def _arxiv(path: Path, line: int, r: dict) -> Item:
    if r.get("authors_parsed"):
        authors = tuple(_arxiv_author(p) for p in r["authors_parsed"])
    else:
        names = _detex(str(r.get("authors") or ""))
        authors = tuple(re.split(r",\s*(?:and\s+)?|\s+and\s+", names))
    versions = r.get("versions") or [{}]
    year = year_of(versions[0].get("created")) or year_of(r.get("update_date"))
    arxiv_id = first_text(r.get("id"))
    return reference_or_skip(
        path, line, r.get("title"), r.get("abstract"), authors=clean_texts(authors), year=year,
        venue=first_text(r.get("journal-ref")) or "arXiv", keywords=clean_texts(
            str(r.get("categories") or "").split()),
        doi=first_text(r.get("doi")), arxiv_id=arxiv_id,
        url=f"https://arxiv.org/abs/{arxiv_id}" if arxiv_id else None,
    )


def _json_reader(convert: Callable[[Path, int, dict], Item]) -> Callable[[Path], Iterator[Item]]:
    def read(path: Path) -> Iterator[Item]:
        count = 0
        for line, record in json_records(path):
            if not isinstance(record, dict):
                raise InputFileError(f"{path}:{line}: expected a JSON object for each paper")
            count += 1
            yield convert(path, line, record)
        if not count:
            raise InputFileError(f"{path}: no records; the file holds no papers")
    return read


read_csl_json = _json_reader(_csl)
read_openreview = _json_reader(_openreview)
read_arxiv = _json_reader(_arxiv)

