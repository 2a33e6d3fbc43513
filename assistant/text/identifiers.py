"""Papers a question gives by identifier rather than by name: an arXiv id or link
("what is arXiv 2603.02619 about?", "https://arxiv.org/abs/2603.01047v2 - summarize this"),
an OpenReview id or link, or a DOI. Each is read as the indexed paper's title, which the
search, the checks and the model all know it by; one not in the index is reported.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Protocol

_ARXIV = r"(\d{4}\.\d{4,5}|[a-z\-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?"
_OPENREVIEW = r"([A-Za-z0-9_\-]{8,14})"
# an OpenReview id after its kind's name without ":" or "=": one that looks like an id (a
# digit, a capital inside, "_" or "-"), not "the openreview discussion"
_OPENREVIEW_LIKE = r"((?=[\w\-]*(?-i:\d|[a-z][A-Z]|[A-Z]{2}|[_\-]))[A-Za-z0-9_\-]{8,14})"
_DOI = r"(10\.\d{4,9}/(?:[^\s\"'<>()]|\([^\s\"'<>()]*\))+?)"  # "…/S0140-6736(20)30183-5"
_END = r"(?=[\s\"'<>)\],;]|[.?!:]?(?:\s|$))"
_QUERY = r"(?:[?#&][^\s]*?)?"  # "?context=cs", "#section", "&noteId=…"
# (kind, an identifier written with what says it is one: a link, or the kind's name before it)
_WRITTEN = [(kind, re.compile(pattern, re.IGNORECASE)) for kind, pattern in (
    ("arxiv", (rf"(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf|html)/{_ARXIV}"
               rf"(?:\.pdf)?/?{_QUERY}{_END}|\barxiv\s*(?:id\s*)?[:#]?\s*{_ARXIV}{_END}")),
    ("openreview", (rf"(?:https?://)?(?:www\.)?openreview\.net/(?:forum|pdf)\?(?:[^\s]*?&)?id="
                    rf"{_OPENREVIEW}{_QUERY}{_END}|\bopenreview(?:\s*id)?\s*[:#=]\s*{_OPENREVIEW}"
                    rf"{_END}|\bopenreview\s+(?:id\s+)?{_OPENREVIEW_LIKE}{_END}")),
    ("doi", rf"(?:https?://)?(?:dx\.)?doi\.org/{_DOI}/?{_END}|\bdoi\s*[:#]?\s*{_DOI}/?{_END}"),
)]
# one written bare, which only the index can say is an identifier ("2603.02619", "kWZTPWrczs")
_BARE = [("arxiv", re.compile(rf"(?<![\w./=&]){_ARXIV}(?![\w/])")),
         ("doi", re.compile(rf"(?<![\w./=&]){_DOI}{_END}")),
         ("openreview", re.compile(rf"(?<![\w./=&\-\"]){_OPENREVIEW}(?![\w\-])"))]
_LABEL = {"arxiv": "arXiv", "openreview": "OpenReview", "doi": "DOI"}


class _Paper(Protocol):
    title: str
    arxiv_id: str | None
    openreview_id: str | None
    doi: str | None


# what could be one: its kind's name, an arXiv number, a DOI prefix, or a word that could be
# an OpenReview id (letters with a digit, or of mixed case)
_MAYBE = re.compile(r"(?i:arxiv|openreview|doi)|\d{4}\.\d{4}|10\.\d{4}|/\d{7}"
                    r"|\b(?=[\w\-]*\d)(?=[\w\-]*[A-Za-z])[\w\-]{8,14}\b"
                    r"|\b(?=(?:[\w\-]*[A-Z]){2})(?=(?:[\w\-]*[a-z]){2})[\w\-]{8,14}\b")


def _stored(kind: str, value: str) -> str:
    """An identifier as it is looked up: an arXiv id without "arXiv:" or its version, a DOI
    without its link, both in lower case (as a BibTeX file may give them)."""
    if kind == "openreview":
        return value.strip()
    value = re.sub(r"^(?:arxiv:|https?://(?:dx\.)?doi\.org/|doi:)", "", value.strip().lower())
    return re.sub(r"v\d+$", "", value) if kind == "arxiv" else value


def written_ids(text: str) -> dict[str, str]:
    """The first arXiv and OpenReview id a text writes as one (a link, "arXiv:2603.02619"),
    by kind ("arxiv_id", "openreview_id"): what an imported record's url or note gives."""
    found: dict[str, str] = {}
    for kind, pattern in _WRITTEN[:2]:
        if match := pattern.search(text):
            found[f"{kind}_id"] = next(g for g in match.groups() if g)
    return found


def with_titles(question: str, papers: Callable[[], Iterable[_Paper]]) -> tuple[str, list[str]]:
    """(the question with each identifier of an indexed paper read as its title, what was
    read so or not found, for the user's warnings); ``papers`` is read only when the
    question has something that could be an identifier."""
    if not _MAYBE.search(question):
        return question, []
    known: dict[tuple[str, str], str] = {}
    for paper in papers():
        for kind, value in (("arxiv", paper.arxiv_id), ("openreview", paper.openreview_id),
                            ("doi", paper.doi)):
            if value:
                known[kind, _stored(kind, value)] = paper.title
    notes: list[str] = []

    def title(kind: str, match: re.Match[str], bare: bool) -> str:
        given = next(g for g in match.groups() if g)
        found = known.get((kind, _stored(kind, given)))
        if found is None:
            if not bare:
                notes.append(f"{_LABEL[kind]} {given} is not in the index")
            return match[0]
        notes.append(f'read {_LABEL[kind]} {given} as "{found}"')
        return f'"{found}"'

    for bare, patterns in ((False, _WRITTEN), (True, _BARE)):
        for kind, pattern in patterns:
            question = pattern.sub(lambda m, k=kind, b=bare: title(k, m, b), question)
    return question, notes
