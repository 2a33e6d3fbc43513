"""BibTeX/BibLaTeX (Zotero, Better BibTeX, JabRef) and RIS files read as references."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import bibtexparser
import rispy
from bibtexparser import middlewares

from assistant.errors import InputFileError
from assistant.ingest.reference import (
    Item,
    clean_text,
    clean_texts,
    first_text,
    ids_in,
    person_name,
    read_file_text,
    reference_or_skip,
    year_of,
)


def _bib_stack() -> list[middlewares.BlockMiddleware]:
    # LaTeX decoded before names are split: the decoder does not reach into lists of names
    return [middlewares.NormalizeFieldKeys(), middlewares.LatexDecodingMiddleware(),
            middlewares.SeparateCoAuthors(), middlewares.SplitNameParts(),
            middlewares.MergeNameParts(style="first")]


def read_bibtex(path: Path) -> Iterator[Item]:
    """BibTeX and BibLaTeX (Zotero, Better BibTeX, JabRef) entries that have an abstract."""
    library = bibtexparser.parse_string(read_file_text(path), append_middleware=_bib_stack())
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
        archive = clean_text(value.get("archiveprefix") or value.get("eprinttype")).lower()
        eprint = clean_text(value.get("eprint")) if archive == "arxiv" else ""
        ids = ids_in(value.get("url"), value.get("note"), value.get("journal"))
        yield reference_or_skip(
            path, entry.start_line + 1, value.get("title"), value.get("abstract"),
            authors=clean_texts(value.get("author")),
            year=year_of(value.get("year") or value.get("date")),
            venue=first_text(value.get("journal"), value.get("journaltitle"),
                         value.get("booktitle"), value.get("eventtitle")),
            keywords=clean_texts(value.get("keywords")),
            doi=first_text(value.get("doi")), url=first_text(value.get("url")),
            arxiv_id=eprint or ids.get("arxiv_id"), openreview_id=ids.get("openreview_id"),
            key=entry.key, raw_bibtex=entry.raw,
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
    text = read_file_text(path)
    records = rispy.loads(text, implementation=_LineRisParser, skip_unknown_tags=True)
    starts = [n for n, line in enumerate(text.split("\n"), start=1) if line.startswith("TY  -")]
    if not starts:
        raise InputFileError(f"{path}:1: no RIS records; each starts with a line 'TY  - JOUR'")
    if len(records) < len(starts):
        line = starts[len(records)]
        raise InputFileError(f"{path}:{line}: this record has no end line 'ER  - '; add it")
    for r in records:
        urls = r.get("urls") or []
        ids = ids_in(*urls, r.get("notes"))
        names = clean_texts(r.get("authors") or r.get("first_authors"))
        yield reference_or_skip(
            path, r.get("start_line"), first_text(r.get("title"), r.get("primary_title")),
            first_text(r.get("abstract"), r.get("notes_abstract")),
            authors=tuple(map(person_name, names)),
            year=year_of(r.get("year") or r.get("publication_year") or r.get("date")),
            venue=first_text(r.get("secondary_title"), r.get("journal_name"),
                             r.get("alternate_title3")),
            keywords=clean_texts(r.get("keywords")), doi=first_text(r.get("doi")),
            url=first_text(*urls), key=first_text(r.get("id")), **ids,
        )

