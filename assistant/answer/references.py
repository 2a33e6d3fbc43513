"""BibTeX of the papers an answer cites: the original entry when the paper came from a
``.bib`` file, otherwise one made from what is known, under a stable key."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

import bibtexparser
from bibtexparser.model import Entry, Field
from pylatexenc.latexencode import (
    RULE_REGEX,
    UnicodeToLatexConversionRule,
    UnicodeToLatexEncoder,
)

# Words a key never starts its title part with (Better BibTeX skips the same kind).
STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "by", "can", "do", "does", "for", "from", "how", "in",
    "into", "is", "of", "on", "or", "our", "over", "the", "to", "toward", "towards", "under",
    "via", "we", "what", "when", "why", "with", "without",
})
_CONFERENCE = re.compile(
    r"conference|proceedings|symposium|workshop|\b(iclr|neurips|nips|icml|aaai|ijcai|acl|"
    r"emnlp|naacl|cvpr|iccv|eccv|colm|aistats|uai|kdd|sigir|www)\b", re.IGNORECASE)
# $...$ stays as written (titles carry math); the rest becomes LaTeX, {\"u} and {\&}
_ENCODER = UnicodeToLatexEncoder(
    conversion_rules=[
        UnicodeToLatexConversionRule(RULE_REGEX, [(re.compile(r"(?<!\\)(\$[^$]*[^\\$]\$)"),
                                                   r"\1")]),
        "defaults",
    ],
    replacement_latex_protection="braces-all", unknown_char_policy="keep",
    unknown_char_warning=False,
)


def _get(ref: Mapping[str, Any] | Any, name: str) -> Any:
    value = ref.get(name) if isinstance(ref, Mapping) else getattr(ref, name, None)
    return value if value not in ("", (), []) else None


# letters NFKD does not take apart into a base letter and an accent
_LETTERS = str.maketrans({"ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "æ": "ae", "Æ": "AE",
                          "œ": "oe", "Œ": "OE", "ß": "ss", "đ": "d", "Đ": "D", "ð": "d",
                          "þ": "th", "ı": "i"})


def _ascii_word(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text.translate(_LETTERS))
    folded = folded.encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]", "", folded.lower())


def surname(author: str) -> str:
    """The family name: before the comma of ``Last, First``, else the last word."""
    author = author.strip()
    if "," in author:
        return author.split(",", 1)[0].strip()
    return author.split()[-1] if author.split() else ""


def citation_key(ref: Mapping[str, Any] | Any) -> str:
    """``surname{year}{firstword}``: ascii, lower case, the title's first non-stopword."""
    authors = _get(ref, "authors") or ()
    name = _ascii_word(surname(authors[0])) if authors else ""
    title = re.sub(r"\$[^$]*\$", " ", str(_get(ref, "title") or ""))  # no math in keys
    words = [_ascii_word(w) for w in re.split(r"[\s\-/:]+", title)]
    word = next((w for w in words if w and w not in STOPWORDS), "")
    year = _get(ref, "year")
    return f"{name or 'anon'}{year or ''}{word}"


def _entry_type(venue: str | None, arxiv_id: str | None) -> tuple[str, str | None]:
    if not venue or venue.lower() in ("arxiv", "arxiv preprint", "corr"):
        return "misc", None
    return ("inproceedings", "booktitle") if _CONFERENCE.search(venue) else ("article", "journal")


def _verbatim(value: str) -> str:
    """URLs and DOIs as written: braces and backslashes percent-encoded so the entry stays
    balanced, and ``%`` escaped, since BibTeX parsers take a bare one for a comment."""
    for char, code in (("\\", "%5C"), ("{", "%7B"), ("}", "%7D")):
        value = value.replace(char, code)
    return value.replace("%", r"\%")


def generated_entry(ref: Mapping[str, Any] | Any, key: str | None = None) -> Entry:
    """A bibtexparser ``Entry`` made from the paper's title, authors, year, venue and ids."""
    venue, arxiv_id = _get(ref, "venue"), _get(ref, "arxiv_id")
    entry_type, venue_field = _entry_type(venue, arxiv_id)
    fields = [("title", _ENCODER.unicode_to_latex(str(_get(ref, "title") or "")))]
    if _get(ref, "authors"):
        names = [_ENCODER.unicode_to_latex(str(a)) for a in _get(ref, "authors")]
        fields.append(("author", " and ".join(names)))
    if _get(ref, "year"):
        fields.append(("year", str(_get(ref, "year"))))
    if venue_field:
        fields.append((venue_field, _ENCODER.unicode_to_latex(str(venue))))
    if _get(ref, "doi"):
        fields.append(("doi", _verbatim(str(_get(ref, "doi")))))
    if _get(ref, "url"):
        fields.append(("url", _verbatim(str(_get(ref, "url")))))
    if arxiv_id:
        fields += [("eprint", _verbatim(str(arxiv_id))), ("archivePrefix", "arXiv")]
    return Entry(entry_type, key or citation_key(ref), [Field(k, v) for k, v in fields])


def bibtex_entry(ref: Mapping[str, Any] | Any, key: str | None = None) -> str:
    """The paper's BibTeX: its original entry when ``raw_bibtex`` is known, else a made one
    (under ``key`` when given: ``unique_keys``)."""
    raw = _get(ref, "raw_bibtex")
    if raw:
        return str(raw).strip()
    return _write(generated_entry(ref, key))


def unique_keys(keys: Iterable[str]) -> list[str]:
    """``keys`` in order, a repeated one given ``a``, ``b``, … (case ignored, as BibTeX does)."""
    seen: set[str] = set()
    out = []
    for key in keys:
        unique = next(key + s for s in _suffixes() if (key + s).lower() not in seen)
        seen.add(unique.lower())
        out.append(unique)
    return out


def _suffixes() -> Iterable[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    yield ""
    yield from letters
    yield from (a + b for a in letters for b in letters)


def _write(entry: Entry) -> str:
    return bibtexparser.write_string(bibtexparser.Library([entry])).strip()
