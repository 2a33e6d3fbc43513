"""Researchers' own libraries: BibTeX, RIS, CSL-JSON, OpenReview notes and arXiv metadata.

Each reader yields :class:`Reference` records; :func:`iter_references` applies a limit and a
record predicate while reading and fills a :class:`Summary` of what was read and skipped.
JSON Lines files (the arXiv snapshot among them) are read a line at a time, so memory stays
flat however large the file.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import bibtexparser
import rispy
from bibtexparser import middlewares
from pylatexenc.latex2text import LatexNodes2Text
from pylatexenc.latexwalker import get_default_latex_context_db

from assistant.errors import InputFileError

FORMATS = ("bibtex", "ris", "csl-json", "openreview", "arxiv")
SUFFIXES = {".bib": "bibtex", ".ris": "ris"}
JSON_SUFFIXES = {".json", ".jsonl"}
NO_ABSTRACT = "no abstract"
NOT_MATCHED = "did not match the filter"


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
    entry_type: str | None = None
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


Item = Reference | str  # a reader yields a record, or the reason it skipped one


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


def read_references(path: Path, *, fmt: str | None = None, limit: int | None = None,
                    keep: Callable[[Reference], bool] | None = None,
                    ) -> tuple[list[Reference], Summary]:
    """All references of ``path`` (see :func:`iter_references`) and the file's summary."""
    fmt = fmt or detect_format(Path(path))
    summary = Summary(str(path), fmt or "unknown")
    refs = list(iter_references(path, summary, fmt=fmt, limit=limit, keep=keep))
    return refs, summary


def detect_format(path: Path) -> str | None:
    """The format from the suffix, and for ``.json``/``.jsonl`` from the first record;
    ``None`` for the project's own layouts (read by the existing corpus readers)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in SUFFIXES:
        return SUFFIXES[suffix]
    if suffix not in JSON_SUFFIXES:
        return None
    first = next(_json_records(path), None)
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


# --- shared helpers ---------------------------------------------------------------------

_LATEX = LatexNodes2Text(math_mode="verbatim")
_LATEX_CONTEXT = get_default_latex_context_db()  # built once: it costs as much as a parse
_ARXIV_ID = re.compile(
    r"(?:arxiv\.org/(?:abs|pdf)/|arXiv:\s*)([a-z\-.]*/?\d{4}\.?\d{3,5})(?:v\d+)?", re.IGNORECASE)
_OPENREVIEW_ID = re.compile(r"openreview\.net/(?:forum|pdf)\?id=([\w\-]+)")
_BETWEEN = re.compile(r"[\s,]*")  # between the records of a JSON array
_YEAR = re.compile(r"\b(1[89]\d\d|2[01]\d\d)\b")


def _text(value: object) -> str:
    """Whitespace collapsed; the corpus reader's ``normalize()`` does the rest later."""
    return " ".join(str(value).split()) if value is not None else ""


def _texts(values: object) -> tuple[str, ...]:
    if values is None:
        return ()
    if isinstance(values, str):
        values = re.split(r"[;,]", values)
    return tuple(t for t in (_text(v) for v in values) if t)


def _person(name: str) -> str:
    """``Last, First`` (as RIS writes names) turned to ``First Last``, as the other readers give."""
    last, comma, first = name.partition(",")
    return f"{first.strip()} {last.strip()}" if comma and first.strip() and "," not in first \
        else name


def _year(value: object) -> int | None:
    match = _YEAR.search(str(value)) if value not in (None, "") else None
    return int(match.group(1)) if match else None


def _first(*values: object) -> str | None:
    return next((_text(v) for v in values if _text(v)), None)


def _read(path: Path) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise InputFileError(f"{path}: no such file; check the path") from exc
    except OSError as exc:
        raise InputFileError(f"{path}: cannot be read ({exc.strerror})") from exc
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputFileError(f"{path}:{line}: not valid UTF-8; export the file as UTF-8") from exc
    if not text.strip():
        raise InputFileError(f"{path}: the file is empty; it must contain references")
    return text


def _reference(path: Path, line: int | None, title: object, abstract: object,
               **fields: Any) -> Item:
    abstract = _text(abstract)
    if not abstract:
        return NO_ABSTRACT
    return Reference(title=_text(title), abstract=abstract, file=path.name, line=line, **fields)


def _ids_in(*texts: object) -> dict[str, str]:
    """arXiv and OpenReview ids found in urls, notes and journal fields."""
    found: dict[str, str] = {}
    for text in texts:
        if text and (m := _ARXIV_ID.search(str(text))):
            found.setdefault("arxiv_id", m.group(1))
        if text and (m := _OPENREVIEW_ID.search(str(text))):
            found.setdefault("openreview_id", m.group(1))
    return found


# --- BibTeX -----------------------------------------------------------------------------

def _bib_stack() -> list[middlewares.BlockMiddleware]:
    # LaTeX decoded before names are split: the decoder does not reach into lists of names
    return [middlewares.NormalizeFieldKeys(), middlewares.LatexDecodingMiddleware(),
            middlewares.SeparateCoAuthors(), middlewares.SplitNameParts(),
            middlewares.MergeNameParts(style="first")]


def read_bibtex(path: Path) -> Iterator[Item]:
    """BibTeX and BibLaTeX (Zotero, Better BibTeX, JabRef) entries that have an abstract."""
    library = bibtexparser.parse_string(_read(path), append_middleware=_bib_stack())
    for block in library.failed_blocks:
        if isinstance(block, bibtexparser.model.DuplicateBlockKeyBlock):
            continue
        error = block.error
        reason = getattr(error, "abort_reason", None) or str(error).strip() or "a syntax error"
        raise InputFileError(
            f"{path}:{block.start_line + 1}: this entry cannot be parsed ({reason}); "
            "check its braces, quotes and commas"
        )
    duplicates = {b.start_line for b in library.failed_blocks}
    for entry in library.entries:
        value = {k: f.value for k, f in entry.fields_dict.items()}
        archive = _text(value.get("archiveprefix") or value.get("eprinttype")).lower()
        eprint = _text(value.get("eprint")) if archive == "arxiv" else ""
        ids = _ids_in(value.get("url"), value.get("note"), value.get("journal"))
        yield _reference(
            path, entry.start_line + 1, value.get("title"), value.get("abstract"),
            authors=_texts(value.get("author")),
            year=_year(value.get("year") or value.get("date")),
            venue=_first(value.get("journal"), value.get("journaltitle"),
                         value.get("booktitle"), value.get("eventtitle")),
            keywords=_texts(value.get("keywords")),
            doi=_first(value.get("doi")), url=_first(value.get("url")),
            arxiv_id=eprint or ids.get("arxiv_id"), openreview_id=ids.get("openreview_id"),
            key=entry.key, entry_type=entry.entry_type.lower(), raw_bibtex=entry.raw,
        )
    yield from ["duplicate citation key"] * len(duplicates)


# --- RIS --------------------------------------------------------------------------------

class _LineRisParser(rispy.RisParser):
    """rispy's parser, noting the line each record starts on."""

    def parse_lines(self, lines: Any) -> list[dict]:
        self.line = 0

        def counted() -> Iterator[str]:
            for self.line, text in enumerate(lines, start=1):
                yield text

        return super().parse_lines(counted())

    def _iter_till_start(self, lines: Any) -> dict:
        record = super()._iter_till_start(lines)
        record["start_line"] = self.line
        return record


def read_ris(path: Path) -> Iterator[Item]:
    """RIS records (``TY`` to ``ER``) with an ``AB`` or ``N2`` abstract."""
    text = _read(path)
    records = rispy.loads(text, implementation=_LineRisParser, skip_unknown_tags=True)
    starts = [n for n, line in enumerate(text.split("\n"), start=1) if line.startswith("TY  -")]
    if not starts:
        raise InputFileError(f"{path}:1: no RIS records; each starts with a line 'TY  - JOUR'")
    if len(records) < len(starts):
        line = starts[len(records)]
        raise InputFileError(f"{path}:{line}: this record has no end line 'ER  - '; add it")
    for r in records:
        urls = r.get("urls") or []
        ids = _ids_in(*urls, r.get("notes"))
        yield _reference(
            path, r.get("start_line"), _first(r.get("title"), r.get("primary_title")),
            _first(r.get("abstract"), r.get("notes_abstract")),
            authors=tuple(_person(a) for a in _texts(r.get("authors") or r.get("first_authors"))),
            year=_year(r.get("year") or r.get("publication_year") or r.get("date")),
            venue=_first(r.get("secondary_title"), r.get("journal_name"),
                         r.get("alternate_title3")),
            keywords=_texts(r.get("keywords")), doi=_first(r.get("doi")),
            url=_first(*urls), key=_first(r.get("id")),
            entry_type=_first(r.get("type_of_reference")), **ids,
        )


# --- JSON: CSL-JSON, OpenReview, arXiv --------------------------------------------------

def _json_records(path: Path) -> Iterator[tuple[int, object]]:
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
                    yield from _json_lines(path, stream, first)
                    return
    except (OSError, UnicodeDecodeError) as exc:
        _read(path)  # raises the error naming the file (and the line)
        raise InputFileError(f"{path}: cannot be read ({exc})") from exc
    if head in ("[", "{"):
        yield from _json_array(path, _read(path))
    else:
        _read(path)  # an empty file says so
        raise InputFileError(f"{path}:1: expected a JSON array or one JSON object per line")


def _json_lines(path: Path, stream: Any, first: str) -> Iterator[tuple[int, object]]:
    # "\n"-separated; str.splitlines would also cut at U+2028, which JSON strings may hold
    number, line = 1, first
    while line:
        if line.strip():
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputFileError(
                    f"{path}:{number}: not valid JSON ({exc.msg} at column {exc.colno})"
                ) from exc
        number, line = number + 1, stream.readline()


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
        _text(a.get("literal") or " ".join(p for p in (a.get("given"), a.get("family")) if p))
        for a in r.get("author") or [] if isinstance(a, dict)
    )
    issued = (r.get("issued") or {}).get("date-parts") or [[None]]
    year = issued[0][0] if issued and issued[0] else None
    url = _first(r.get("URL"))
    return _reference(
        path, line, r.get("title"), r.get("abstract"), authors=tuple(a for a in authors if a),
        year=_year(year or (r.get("issued") or {}).get("raw")),
        venue=_first(r.get("container-title"), r.get("event-title")),
        keywords=_texts(r.get("keyword")), doi=_first(r.get("DOI")), url=url,
        key=_first(r.get("citation-key"), _key_like(r.get("id"))), entry_type=_first(r.get("type")),
        **_ids_in(url, r.get("note"), r.get("number")),
    )


def _key_like(value: object) -> str | None:
    """A CSL ``id`` that is a citation key (Better BibTeX's), not a Zotero item URI."""
    return value if isinstance(value, str) and re.fullmatch(r"[\w\-.+]+", value) else None


def _openreview(path: Path, line: int, r: dict) -> Item:
    content = r.get("content") or {}
    venue, venueid = _first(_value(content, "venue")), _first(_value(content, "venueid"))
    stamp = r.get("pdate") or r.get("odate") or r.get("cdate") or r.get("tcdate")
    year = _year(venue) or _year(venueid)
    if year is None and isinstance(stamp, int | float):
        year = datetime.fromtimestamp(stamp / 1000, UTC).year
    note_id = _first(r.get("id"))
    raw = _value(content, "_bibtex")  # OpenReview's own entry, kept when it parses
    parsed = bibtexparser.parse_string(raw).entries if isinstance(raw, str) else []
    key = parsed[0].key if parsed else None
    return _reference(
        path, line, _value(content, "title"), _value(content, "abstract"),
        authors=_texts(_value(content, "authors")), year=year, venue=venue or venueid,
        keywords=_texts(_value(content, "keywords")),
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
    year = _year(versions[0].get("created")) or _year(r.get("update_date"))
    arxiv_id = _first(r.get("id"))
    return _reference(
        path, line, r.get("title"), r.get("abstract"), authors=_texts(authors), year=year,
        venue=_first(r.get("journal-ref")) or "arXiv", keywords=_texts(
            str(r.get("categories") or "").split()),
        doi=_first(r.get("doi")), arxiv_id=arxiv_id,
        url=f"https://arxiv.org/abs/{arxiv_id}" if arxiv_id else None,
    )


def _json_reader(convert: Callable[[Path, int, dict], Item]) -> Callable[[Path], Iterator[Item]]:
    def read(path: Path) -> Iterator[Item]:
        count = 0
        for line, record in _json_records(path):
            if not isinstance(record, dict):
                raise InputFileError(f"{path}:{line}: expected a JSON object for each paper")
            count += 1
            yield convert(path, line, record)
        if not count:
            raise InputFileError(f"{path}: no records; the file holds no papers")
    read.__doc__ = convert.__doc__
    return read


read_csl_json = _json_reader(_csl)
read_openreview = _json_reader(_openreview)
read_arxiv = _json_reader(_arxiv)

_READERS: dict[str, Callable[[Path], Iterator[Item]]] = {
    "bibtex": read_bibtex, "ris": read_ris, "csl-json": read_csl_json,
    "openreview": read_openreview, "arxiv": read_arxiv,
}
