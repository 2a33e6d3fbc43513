"""``--where`` filters: ``FIELD OP VALUE`` over a paper's year, venue, authors, keywords, title.

``=`` and ``!=`` compare exactly (case counts), ``~`` looks for the value inside the field
ignoring case, and ``> >= < <=`` compare years. On the list fields (``author``, ``keyword``)
a condition holds when any author or keyword satisfies it, and ``!=`` when none equals the
value. A paper that lacks a field fails every condition on it except ``!=``.

It sits in the ingest stage because that is the first to apply it (an arXiv snapshot is
filtered while it is read); the store writes :func:`chroma_metadata` and retrieval applies
:meth:`Filter.chroma_where` and :meth:`Filter.matches`.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from typing import Any

from assistant.errors import InputError

FIELDS = {"year": "year", "venue": "venue", "title": "title", "author": "authors",
          "keyword": "keywords"}  # as written in --where: the metadata key it reads
ALIASES = {"authors": "author", "keywords": "keyword"}
OPERATORS = ("=", "!=", ">", ">=", "<", "<=", "~")
LIST_KEYS = {"authors", "keywords"}
_COMPARE = {"=": operator.eq, "!=": operator.ne, ">": operator.gt, ">=": operator.ge,
            "<": operator.lt, "<=": operator.le}
_CHROMA_OPS = {"=": "$eq", "!=": "$ne", ">": "$gt", ">=": "$gte", "<": "$lt", "<=": "$lte"}
_EXPRESSION = re.compile(r"^\s*([A-Za-z_]+)\s*(>=|<=|!=|=|>|<|~)\s*(.*?)\s*$", re.DOTALL)
_HELP = (f"fields: {', '.join(FIELDS)}; operators: {' '.join(OPERATORS)} "
         "(e.g. year>=2024, author~smith, venue=\"ICLR 2026\")")


class FilterError(InputError, ValueError):
    """A ``--where`` expression that cannot be used; the message names the bad part."""


@dataclass(frozen=True)
class Condition:
    """One ``FIELD OP VALUE``; ``value`` is an int for ``year``."""

    field: str
    op: str
    value: str | int

    @property
    def key(self) -> str:
        """The metadata key the condition reads (``authors`` for ``author``)."""
        return FIELDS[self.field]

    def __str__(self) -> str:
        return f"{self.field}{self.op}{self.value}"

    def holds(self, metadata: dict[str, Any]) -> bool:
        """Whether a paper with this metadata satisfies the condition."""
        found = metadata.get(self.key)
        if self.field == "year":
            year = _as_year(found)
            if year is None:
                return self.op == "!="
            return _COMPARE[self.op](year, int(self.value))
        values = [str(v) for v in found] if isinstance(found, list | tuple) else (
            [] if found in (None, "") else [str(found)])
        if self.op == "~":
            needle = str(self.value).casefold()
            return any(needle in v.casefold() for v in values)
        if self.op == "!=":
            return self.value not in values
        return self.value in values

    def chroma(self) -> dict[str, Any] | None:
        """This condition as a Chroma ``where`` clause, or ``None`` if Chroma cannot say it."""
        if self.op == "~":
            return None
        if self.key in LIST_KEYS:
            return {self.key: {"$contains" if self.op == "=" else "$not_contains": self.value}}
        return {self.key: {_CHROMA_OPS[self.op]: self.value}}


@dataclass(frozen=True)
class Filter:
    """All conditions must hold, and with ``papers`` the paper must be one of them (by id:
    "which of these …?" asks among the papers of the previous answer); an empty filter keeps
    every paper."""

    conditions: tuple[Condition, ...] = ()
    papers: frozenset[str] | None = None

    def __bool__(self) -> bool:
        return bool(self.conditions) or self.papers is not None

    def __str__(self) -> str:
        among = [] if self.papers is None else [f"one of {len(self.papers)} papers"]
        return " and ".join([str(c) for c in self.conditions] + among)

    def among(self, papers: frozenset[str]) -> Filter:
        """This filter, keeping only ``papers`` (ids) too."""
        return Filter(self.conditions, papers if self.papers is None else self.papers & papers)

    def matches(self, metadata: dict[str, Any]) -> bool:
        """Whether a paper's metadata (``authors``/``keywords`` as lists) passes every condition."""
        paper = metadata.get("paper_id", metadata.get("id"))  # a chunk's, or a PaperInfo's
        if self.papers is not None and paper not in self.papers:
            return False
        return all(c.holds(metadata) for c in self.conditions)

    def chroma_where(self) -> dict[str, Any] | None:
        """The Chroma metadata ``where`` for the conditions Chroma can express, or ``None``.

        ``~`` is left out: Chroma's metadata filters have no case-insensitive substring match
        (``$contains`` on a list is exact membership). Apply :meth:`matches` to what Chroma
        returns in any case; it agrees with this clause on everything Chroma decides.
        """
        clauses = [w for w in (c.chroma() for c in self.conditions) if w is not None]
        if self.papers is not None:
            clauses.append({"paper_id": {"$in": sorted(self.papers)}})
        if not clauses:
            return None
        return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def chroma_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """The filterable fields as the store should write them for :meth:`Filter.chroma_where`:
    ``year`` an int, lists as lists, and a field left out rather than ``None`` or ``[]``
    (Chroma refuses empty lists; a missing field fails every condition but ``!=``, as in
    :meth:`Filter.matches`)."""
    out: dict[str, Any] = {}
    for key in FIELDS.values():
        value = metadata.get(key)
        if key == "year":
            value = _as_year(value)
        elif key in LIST_KEYS:
            value = [str(v) for v in value or () if str(v)] or None
        elif value is not None:
            value = str(value) or None
        if value is not None:
            out[key] = value
    return out


def parse(exprs: list[str] | str | None) -> Filter:
    """Parse ``--where`` expressions (all must hold) into a :class:`Filter`."""
    if not exprs:
        return Filter()
    if isinstance(exprs, str):
        exprs = [exprs]
    return Filter(tuple(parse_condition(e) for e in exprs))


def parse_condition(expr: str) -> Condition:
    """One ``FIELD OP VALUE`` expression; a :class:`FilterError` says what is wrong."""
    match = _EXPRESSION.match(expr)
    if not match:
        raise FilterError(f"cannot read the filter '{expr}': expected FIELD OP VALUE; {_HELP}")
    name, op, raw = match.groups()
    name = ALIASES.get(name.lower(), name.lower())
    if name not in FIELDS:
        raise FilterError(f"unknown field '{match.group(1)}' in '{expr}'; {_HELP}")
    value = _unquote(raw)
    if not value:
        raise FilterError(f"no value after '{op}' in '{expr}'; {_HELP}")
    if op[0] in "<>" and name != "year":
        raise FilterError(
            f"'{op}' in '{expr}' compares numbers and only 'year' is a number; use = != or ~ "
            f"for {name}"
        )
    if name == "year":
        if op == "~":
            raise FilterError(f"'~' in '{expr}' looks inside text; compare a year with "
                              "= != > >= < <=")
        if not re.fullmatch(r"\d{1,4}", value):
            raise FilterError(f"the year in '{expr}' must be a whole number such as 2024")
        return Condition(name, op, int(value))
    if any(o in value for o in ("=", "<", ">", "~")) and raw == value:
        # "venue=a=b" is allowed when quoted; unquoted it is more likely a typo
        raise FilterError(f"'{expr}' holds more than one operator; quote the value if it "
                          f"contains one, e.g. {name}{op}\"{value}\"")
    return Condition(name, op, value)


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1].strip()
    return value


def _as_year(value: object) -> int | None:
    if isinstance(value, bool) or value in (None, ""):
        return None
    try:
        return int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return None

