"""Reading papers: the seed ``.txt`` format, JSONL, CSV, a ``titles.tsv`` sidecar, and the
reference formats of :mod:`assistant.ingest.formats` (BibTeX, RIS, CSL-JSON, OpenReview, arXiv)."""

from __future__ import annotations

import csv
import hashlib
import io
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from assistant.errors import InputFileError
from assistant.ingest.formats import (
    NOT_MATCHED,
    Reference,
    Summary,
    detect_format,
    iter_references,
)
from assistant.ingest.json_formats import json_lines
from assistant.ingest.reference import read_file_text
from assistant.ingest.titles import derive_title, match_sidecar
from assistant.text.sentences import without_instructions

CORPUS_SUFFIXES = {".txt", ".jsonl", ".csv", ".bib", ".ris", ".json"}
_KINDS = ".txt, .jsonl, .csv, .bib, .ris or .json"
SIDECAR_SUFFIXES = {".tsv"}
_LIST_FIELDS = ("authors", "keywords")
# Paper's optional text fields, None when a file gives none
_OPTIONAL_FIELDS = ("arxiv_id", "openreview_id", "url", "venue", "doi", "citation_key",
                    "raw_bibtex")
_TEXT_FIELDS = ("title", "id", "year", *_OPTIONAL_FIELDS)
# A collection header that names a venue and year ("ICLR 2026 Papers"): the venue is the
# header up to the year
_VENUE_YEAR = re.compile(r"^(.*?\b((?:19|20)\d\d))\b")


@dataclass(frozen=True)
class Paper:
    """One abstract with what is known about it; ``id`` comes from the text itself."""

    id: str
    abstract: str
    title: str
    title_derived: bool = False
    collection: str | None = None
    source: str = ""
    arxiv_id: str | None = None
    openreview_id: str | None = None
    url: str | None = None
    authors: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    year: int | None = None
    venue: str | None = None
    doi: str | None = None
    citation_key: str | None = None  # the source's own key (a .bib entry's)
    raw_bibtex: str | None = None  # the entry as written in its .bib file
    slot: str = ""  # where the paper sits (file and position, or its own id): a changed
    # abstract in the same slot is the same paper, updated

    @property
    def content_hash(self) -> str:
        """Hash of everything indexed for this paper; a change re-indexes it."""
        parts = [self.abstract, self.title, str(self.title_derived), self.arxiv_id or "",
                 self.openreview_id or "", self.url or "", "|".join(self.authors),
                 "|".join(self.keywords), str(self.year or ""), self.venue or "", self.doi or "",
                 self.citation_key or "", self.raw_bibtex or ""]
        return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]


@dataclass
class _Record:
    """A paper as read, before titles are settled."""

    abstract: str
    source: str
    file: str
    ordinal: int | None = None
    collection: str | None = None
    meta: dict[str, str] = field(default_factory=dict)
    lists: dict[str, tuple[str, ...]] = field(default_factory=dict)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def normalize(text: str) -> str:
    """NFC text with control characters (a terminal's escapes among them) and runs of
    whitespace collapsed to single spaces."""
    return " ".join(_CONTROL.sub(" ", unicodedata.normalize("NFC", text)).split())


def paper_id(abstract: str) -> str:
    """Stable id from the abstract's content: same text, same id, whatever the file."""
    return hashlib.sha256(normalize(abstract).encode("utf-8")).hexdigest()[:16]


def _not_binary(path: Path) -> None:
    """A binary file (model weights, a PDF) is named as such before any reader sniffs it."""
    try:
        with path.open("rb") as handle:
            head = handle.read(8192)
    except OSError:
        return  # the reader names what is wrong with the path
    if b"\x00" in head:
        raise InputFileError(f"{path}: looks like a binary file, expected UTF-8 text")


def read_txt(path: Path) -> list[_Record]:
    """The seed format: a collection header line, then one abstract per paragraph."""
    lines = read_file_text(path).splitlines()
    paragraphs: list[tuple[int, list[str]]] = []
    current: list[str] = []
    for number, line in enumerate(lines, start=1):
        if line.strip():
            if not current:
                paragraphs.append((number, current))
            current.append(line.strip())
        else:
            current = []
    header_line, header = paragraphs[0]
    collection = " ".join(header)
    if len(header) > 1 or len(collection) > 200:
        raise InputFileError(
            f"{path}:{header_line}: expected a one-line collection name (such as "
            "'ICLR 2026 Papers') before the abstracts, found a paragraph"
        )
    if len(paragraphs) == 1:
        raise InputFileError(
            f"{path}: only a header ('{collection}'), no abstracts; add abstracts as "
            "paragraphs separated by blank lines"
        )
    meta = _venue_year(collection)
    return [
        _Record(" ".join(body), f"{path}:{line}", path.name, ordinal, collection, dict(meta))
        for ordinal, (line, body) in enumerate(paragraphs[1:], start=1)
    ]


def _venue_year(collection: str) -> dict[str, str]:
    """``ICLR 2026 Papers`` names venue ``ICLR 2026`` and year 2026; other headers name none."""
    match = _VENUE_YEAR.match(collection)
    return {"venue": match.group(1), "year": match.group(2)} if match else {}


def _split_list(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, list):
        return tuple(str(v).strip() for v in value if str(v).strip())
    sep = ";" if ";" in str(value) else ","
    return tuple(v.strip() for v in str(value).split(sep) if v.strip())


def _record_from_fields(row: dict[str, object], path: Path, line: int) -> _Record:
    fields = {str(k).strip().lower(): v for k, v in row.items() if k is not None}
    abstract = fields.get("abstract")
    if not isinstance(abstract, str) or not abstract.strip():
        raise InputFileError(f"{path}:{line}: the 'abstract' field is missing or empty")
    meta = {k: str(fields[k]).strip() for k in _TEXT_FIELDS if fields.get(k) not in (None, "")}
    lists = {k: _split_list(fields.get(k)) for k in _LIST_FIELDS}
    return _Record(abstract, f"{path}:{line}", path.name, None, None, meta, lists)


def read_jsonl(path: Path) -> list[_Record]:
    """One JSON object per line with an ``abstract`` and optional metadata fields."""
    records = []
    for number, row in json_lines(path, read_file_text(path).split("\n")):
        if not isinstance(row, dict):
            raise InputFileError(f"{path}:{number}: expected a JSON object with an 'abstract'")
        records.append(_record_from_fields(row, path, number))
    if not records:
        raise InputFileError(f"{path}: no records; expected one JSON object per line")
    return records


def read_csv(path: Path) -> list[_Record]:
    """A CSV file with a header row naming an ``abstract`` column."""
    text = read_file_text(path)
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        columns = [c.strip().lower() for c in reader.fieldnames or []]
        if "abstract" not in columns:
            raise InputFileError(
                f"{path}:1: no 'abstract' column (columns: {', '.join(columns) or 'none'}); "
                "name the column that holds the abstracts 'abstract'"
            )
        records = [_record_from_fields(row, path, reader.line_num) for row in reader]
    except csv.Error as exc:
        raise InputFileError(f"{path}:{reader.line_num}: malformed CSV ({exc})") from exc
    if not records:
        raise InputFileError(f"{path}: a header but no rows; add one row per paper")
    return records


def read_sidecar(path: Path) -> list[dict[str, str]]:
    """A tab-separated metadata file such as ``titles.tsv`` (file, ordinal, title, ids)."""
    reader = csv.DictReader(io.StringIO(read_file_text(path), newline=""), delimiter="\t")
    columns = {c.strip().lower() for c in reader.fieldnames or []}
    if "title" not in columns:
        raise InputFileError(f"{path}:1: a metadata file needs a 'title' column")
    return [
        {str(k).strip().lower(): (v or "").strip() for k, v in row.items() if k is not None}
        for row in reader
    ]


_READERS = {".txt": read_txt, ".jsonl": read_jsonl, ".csv": read_csv}


def _expand(paths: Iterable[Path]) -> tuple[list[Path], list[Path]]:
    corpus: list[Path] = []
    sidecars: list[Path] = []
    for path in paths:
        path = Path(path).expanduser()
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
            files = [p for p in found if p.suffix.lower() in CORPUS_SUFFIXES]
            if not files:
                raise InputFileError(f"{path}: no corpus files ({_KINDS}) in this folder")
            corpus += files
            sidecars += [p for p in found if p.suffix.lower() in SIDECAR_SUFFIXES]
        elif not path.exists():
            raise InputFileError(f"{path}: no such file or folder; check the path")
        elif path.suffix.lower() in SIDECAR_SUFFIXES:
            sidecars.append(path)
        elif path.suffix.lower() in CORPUS_SUFFIXES:
            corpus.append(path)
        else:
            raise InputFileError(
                f"{path}: unknown file type '{path.suffix}'; use {_KINDS} "
                "(abstracts) or .tsv (titles and ids)"
            )
    if not corpus:
        raise InputFileError(f"no corpus files given; pass {_KINDS} files or a folder")
    return corpus, sidecars


def _from_reference(path: Path, ref: Reference) -> _Record:
    """A reference file's record as the corpus reader's own: its fields in ``meta``."""
    meta = {"title": ref.title, "arxiv_id": ref.arxiv_id, "openreview_id": ref.openreview_id,
            "url": ref.url, "venue": ref.venue, "doi": ref.doi, "citation_key": ref.key,
            "raw_bibtex": ref.raw_bibtex, "year": str(ref.year) if ref.year else None,
            # the slot: what names the paper in its library, so an edited abstract updates it
            "id": ref.key or ref.arxiv_id or ref.openreview_id or ref.doi}
    return _Record(ref.abstract, f"{path}:{ref.line}" if ref.line else str(path), path.name,
                   meta={k: v for k, v in meta.items() if v},
                   lists={"authors": ref.authors, "keywords": ref.keywords})


def _metadata(record: _Record) -> dict[str, object]:
    """What a ``--where`` filter reads of a record (``assistant.ingest.where``)."""
    return {"title": record.meta.get("title"), "year": record.meta.get("year"),
            "venue": record.meta.get("venue"), "authors": list(record.lists.get("authors", ())),
            "keywords": list(record.lists.get("keywords", ()))}


Keep = Callable[[Mapping[str, object]], bool]


def read_file(path: Path, *, limit: int | None = None,
              keep: Keep | None = None) -> tuple[list[_Record], Summary]:
    """One corpus file's records, those ``keep`` refuses left out and at most ``limit`` of
    them; a reference file is read as a stream, so reading stops at the limit."""
    _not_binary(path)
    fmt = detect_format(path)
    if fmt is not None:
        summary = Summary(str(path), fmt)
        wanted = (lambda ref: keep(ref.metadata())) if keep else None
        refs = iter_references(path, summary, fmt=fmt, limit=limit, keep=wanted)
        return [_from_reference(path, ref) for ref in refs], summary
    suffix = path.suffix.lower()
    if suffix not in _READERS:
        raise InputFileError(
            f"{path}: not CSL-JSON, OpenReview or arXiv metadata (the first record has none of "
            "their fields); put the project's own records, one object a line, in a .jsonl file"
        )
    summary, records = Summary(str(path), suffix.lstrip(".")), []
    for record in _READERS[suffix](path):
        if keep is not None and not keep(_metadata(record)):
            summary.skipped[NOT_MATCHED] += 1
        elif limit is not None and len(records) >= limit:
            summary.limited = True
            break
        else:
            records.append(record)
    summary.read = len(records)
    return records, summary


def load_papers(paths: Iterable[Path], *, limit: int | None = None, keep: Keep | None = None,
                summaries: list[Summary] | None = None) -> list[Paper]:
    """Read every file (all before anything is indexed), match titles, drop duplicates.

    ``keep`` (a paper's metadata in, whether to index it) and ``limit`` (papers in all) apply
    while reading; ``summaries`` receives what each file gave.
    """
    corpus, sidecars = _expand(paths)
    records: list[_Record] = []
    read: list[Summary] = []
    for path in corpus:
        left = None if limit is None else max(limit - len(records), 0)
        found, summary = read_file(path, limit=left, keep=keep)
        records += found
        read.append(summary)
    if summaries is not None:
        summaries += read
    if not records:  # indexing nothing would empty the index
        raise InputFileError("no papers to index: " + "; ".join(s.describe() for s in read)
                             + ("; loosen --where" if keep else ""))
    return _papers(records, [row for p in sidecars for row in read_sidecar(p)])


def _papers(records: list[_Record], rows: list[dict[str, str]]) -> list[Paper]:
    """Records made papers: titles matched from the sidecar rows, duplicates dropped."""
    meta_by_record = match_sidecar(
        [(r.file, r.ordinal, r.abstract) for r in records], rows
    )
    papers: dict[str, Paper] = {}
    for index, record in enumerate(records):
        meta = {**meta_by_record.get(index, {}), **record.meta}
        abstract = normalize(record.abstract)
        if not abstract:
            raise InputFileError(f"{record.source}: the abstract holds only control characters")
        title = normalize(meta.get("title", ""))
        position = record.ordinal or record.source.rsplit(":", 1)[-1]
        paper = Paper(
            id=paper_id(abstract),
            abstract=abstract,
            # derived from the research sentences, not from orders planted for a model
            title=title or derive_title(without_instructions(abstract) or abstract),
            title_derived=not title,
            collection=record.collection,
            source=record.source,
            authors=record.lists.get("authors", ()),
            keywords=record.lists.get("keywords", ()),
            year=int(meta["year"]) if str(meta.get("year", "")).isdigit() else None,
            slot=meta.get("id") or f"{record.file}#{position}",
            **{k: meta.get(k) or None for k in _OPTIONAL_FIELDS},
        )
        previous = papers.get(paper.id)
        if previous is None or (previous.title_derived and not paper.title_derived):
            papers[paper.id] = paper if previous is None else replace(paper, source=previous.source)
    return list(papers.values())
