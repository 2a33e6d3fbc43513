"""Which papers a text names: by title, by short name, by [n] marker, or by the words of a
title ("the multi-view video reward shaping paper"); and the names a paper goes by.

Used to read which papers a question is about, to score answers whose citations are not data
(the baseline's), and to find titles an answer presents that no indexed paper has.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

from assistant import resources
from assistant.text.sentences import NAME_SUFFIX, unmarked
from assistant.types import Source

_MARKER = re.compile(r"\[(\d+(?:\s*[,;]\s*\d+)*)\]")
_QUOTED = (
    re.compile(r"\"([^\"\n]{8,240})\""),
    re.compile(r"\u201c([^\u201d\n]{8,240})\u201d"),
    re.compile(r"(?<![\w'])'([^'\n]{8,240})'(?![\w'])"),
    re.compile(r"\u2018([^\u2019\n]{8,240})\u2019"),
    re.compile(r"\*\*([^*\n]{8,240})\*\*"),
    re.compile(r"(?<![*\w])\*([^*\n]{8,240})\*(?![*\w])"),
    # 'titled X' without quotes (quoted titles are caught above, and end at the quote)
    re.compile(r"(?im)\btitled?\b\s*:?\s*(?![\"\u201c'\u2018*\s])([^\n.;]{8,240})"),
)
_SMALL = frozenset("a an and as at by for from in of on or the to under via vs with".split())


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def short_names(title: str) -> list[str]:
    """Names a paper goes by: the part of its title before a colon ("GlowQ"), a title of two
    words or fewer ("Avey-B") and acronyms in parentheses ("NL-PDDL"), when they look like
    names (a capital after the first letter, or a digit)."""
    names = []
    head, colon, _ = title.partition(":")
    if colon and 1 <= len(head.split()) <= 5:
        names.append(head.strip())
    elif not colon and len(title.split()) <= 2 and re.search(r"[\w\-][A-Z0-9]", title):
        names.append(title.strip())  # "Avey-B"; not "Deep Learning"
    names += re.findall(r"\(([A-Za-z][\w\-]{1,20})\)", title)
    return [n for n in names if re.search(r".[A-Z0-9]", n) or len(n.split()) > 1]


_INTRODUCES = re.compile(
    r"\b(?:[Ww]e|[Tt]his\s+(?:paper|work))\s+(?:\w+ly\s+|also\s+|further\s+|then\s+)?"
    r"(?:propose|introduce|present|develop|derive)s?\s+"
    r"(?:(?:a\s+|an\s+|the\s+)?(?:novel\s+|new\s+)?(?:[A-Z][\w\-]*\s+){1,6}"
    r"\(([A-Za-z][\w\-]{1,20})\)"  # Value Matching (VM), a novel Risk-Sensitive GRPO (RS-GRPO)
    # DrPose, a … (right after the verb: "a new Transformer, which" names nothing)
    r"|(?!(?:Equation|Theorem|Lemma|Proposition|Corollary|Section|Algorithm|Definition)\b)"
    r"([A-Z][\w\-]{2,30})\s*[,(\u2014])"
)


def introduced_name(abstract: str, title: str, titled: bool = False) -> str | None:
    """The name an abstract gives its own method ("we propose Progressive Embedding
    Alignment (PEA), …", "we introduce DrPose, a …", "we derive a novel Risk-Sensitive GRPO
    (RS-GRPO) algorithm"), when the title does not carry it (or, ``titled``, even so: "… with
    the HUMAINE Framework")."""
    flat = unmarked(abstract)
    for match in _INTRODUCES.finditer(flat):
        name = match.group(1) or match.group(2)
        if len(name) >= 3 and (titled or not has_name(title.replace("$", ""), name)):
            return name
        if len(name) >= 3:
            return None  # the title already says it
    return None


def has_name(text: str, name: str) -> bool:
    """Whether ``text`` writes ``name`` as a whole word, as it is spelled."""
    return bool(re.search(rf"(?<![\w\-]){re.escape(name)}(?![\w\-])", text))


def _matches_title(candidate: str, title: str) -> bool:
    words = [w for w in _words(candidate) if w not in _SMALL]
    target = set(_words(title))
    return bool(words) and sum(w in target for w in words) / len(words) >= 0.8


def _title_like(candidate: str) -> bool:
    words = [w for w in re.findall(r"[A-Za-z][\w\-']*", candidate) if w.lower() not in _SMALL]
    if len(words) < 4:
        return False
    return sum(w[0].isupper() for w in words) / len(words) >= 0.6


def _candidates(text: str) -> list[str]:
    return [m.strip(" .,:;") for pattern in _QUOTED for m in pattern.findall(text)]


def mentioned_papers(text: str, titles: Mapping[str, str], *, names: bool = True) -> list[str]:
    """Ids of the papers (``titles``: id -> title) that ``text`` names by title, or with
    ``names`` also by short name, in the order of ``titles``."""
    flat = f" {' '.join(_words(text))} "
    found = []
    candidates = [c for c in _candidates(text) if _title_like(c)]
    for paper_id, title in titles.items():
        whole = " ".join(_words(title))
        if (
            (whole and f" {whole} " in flat)
            or any(_matches_title(c, title) for c in candidates)
            or (names and any(has_name(text, name) for name in short_names(title)))
        ):
            found.append(paper_id)
    return found


# "the multi-view video reward shaping paper": words before "paper" after each "the"; not
# after "besides", "other than", "like", "similar to" (another paper is asked for)
_THE_WORDS_PAPER = re.compile(r"(?=(?<!\bthan\s)(?<!\bto\s)(?<!\blike\s)(?<!\bbesides\s)"
                              r"(?<!\bunlike\s)\bthe\s+((?:[\w\-]+\s+){2,8}?)"
                              r"(?:paper|work|study|one)\b)", re.IGNORECASE)


def described(text: str, sources: Sequence[Source]) -> list[Source]:
    """The sources ``text`` calls by the words of their title ("the multi-view video reward
    shaping paper": MVR's): three words or more, 80 % of them in the title, that make up at
    least 40 % of what its title says after any name and colon, and fit no other source's
    title ("the large language models work" names none of the papers on LLMs)."""
    found: list[Source] = []
    for match in _THE_WORDS_PAPER.finditer(text):
        words = [w for w in _words(match.group(1)) if w not in _SMALL]
        fits = [s for s in sources if _matches_title(match.group(1), s.title)]
        if len(words) >= 3 and len(fits) == 1 and fits[0] not in found:
            told = {w for w in _words(fits[0].title.rpartition(":")[2]) if w not in _SMALL}
            if len(told & set(words)) >= 0.4 * len(told):
                found.append(fits[0])
    return found


def typed_small(question: str, texts: Sequence[str]) -> set[str]:
    """The words a question types in small letters that ``texts`` write only with a capital
    inside a word ("grpo": "GRPO", "lora": "LoRA", "llm" of "llm-based": "LLM"): names; not
    everyday words ("safer", "diverse") nor those only capitalised ("Fine-Tuning")."""
    written: dict[str, set[str]] = {}
    for text in texts:
        for word in re.findall(r"[A-Za-z][\w\-]*", unmarked(text)):
            written.setdefault(word.lower(), set()).add(word)
    typed = re.findall(r"(?<![\w\-])[a-z][a-z0-9\-]{2,}(?![\w\-])", question)
    return {w for w in (NAME_SUFFIX.sub("", t) for t in typed)
            if w in written and w not in everyday()
            and all(re.search(r"[A-Za-z][A-Z]", way) for way in written[w])}


def unknown_titles(text: str, titles: Mapping[str, str]) -> list[str]:
    """Quoted or emphasised title-like phrases of ``text`` that are no paper's title."""
    unknown = []
    for candidate in _candidates(text):
        if not _title_like(candidate):
            continue
        known = any(
            _matches_title(candidate, title)
            or any(has_name(candidate, name) for name in short_names(title))
            for title in titles.values()
        )
        if not known and candidate not in unknown:
            unknown.append(candidate)
    return unknown


def marked_sources(text: str, count: int) -> tuple[list[int], list[int]]:
    """The [n] markers of ``text``: (valid positions 1..count, numbers out of range)."""
    valid: list[int] = []
    invalid: list[int] = []
    for group in _MARKER.findall(text):
        for part in re.split(r"\s*[,;]\s*", group):
            number = int(part)
            bucket = valid if 1 <= number <= count else invalid
            if number not in bucket:
                bucket.append(number)
    return valid, invalid


def cited_by_text(
    text: str, shown: Sequence[str], titles: Mapping[str, str]
) -> tuple[list[str], list[str]]:
    """Papers a free-text answer cites and the citations that are fabricated.

    ``shown`` holds the paper id of each numbered source the model saw. A paper is cited by
    a [n] marker, by its title, or by its short name when it was shown (a name alone, such
    as one the question asked about, is a mention rather than a citation). A citation is
    fabricated when it names a title that no indexed paper has, names the title of a paper
    that was not among the sources shown, or uses a source number that was not given.
    """
    valid, invalid = marked_sources(text, len(shown))
    retrieved = set(shown)
    named = [p for p in mentioned_papers(text, titles) if p in retrieved]
    by_title = mentioned_papers(text, titles, names=False)
    cited = list(dict.fromkeys([shown[n - 1] for n in valid] + by_title + named))
    fabricated = [f"[{n}]" for n in invalid]
    fabricated += [f"{titles[p]} (not retrieved)" for p in cited if p not in retrieved]
    fabricated += [f"{t} (not in the corpus)" for t in unknown_titles(text, titles)]
    return cited, fabricated


@lru_cache(maxsize=1)
def everyday() -> frozenset[str]:
    """Everyday English words: the whole words of the embedding model's 30,000-piece
    vocabulary ("safer", "diverse", "pea"; not "qflex" or "glowq")."""
    data = json.loads(resources.package_data("minilm-tokenizer.json").read_text("utf-8"))
    return frozenset(w for w in data["model"]["vocab"] if w.isalpha())


def paper_names(source: Source) -> list[str]:
    """The names a paper goes by: its title's ("GlowQ", "NL-PDDL") and the one its abstract
    gives its method ("we propose Qflex, …"; "we introduce HUMAINE" of "… with the HUMAINE
    Framework", a name inside its title)."""
    names = short_names(source.title)
    own = introduced_name(source.text, source.title, titled=True)
    return names + ([own] if own and own not in names else [])
