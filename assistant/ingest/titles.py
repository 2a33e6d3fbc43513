"""Titles: matching a metadata sidecar to abstracts, and deriving a title when none is known."""

from __future__ import annotations

import math
import re
from collections import Counter

_MAX_FUZZY = 2000  # rows matched by title words when their file and ordinal do not fit
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9\-]*")
_STOP = frozenset(
    """a an and are as at be by for from in into is it its of on or our that the their this
    to via we with without using under over between toward towards through when which while
    can than then these those new novel based approach method methods""".split()
)
# Acronyms too common to name a paper's method.
_COMMON = frozenset(
    """LLM LLMs RL AI GPU GPUs CPU NLP CV MLP MLPs CNN CNNs RNN GNN GNNs SOTA API APIs
    QA VQA MDP MDPs KL PDE PDEs ODE ODEs SDE SGD LoRA RAG VLM VLMs MLLM MLLMs I We""".split()
)
_NAME = re.compile(r"\b([A-Z][A-Za-z0-9]*[A-Z0-9][A-Za-z0-9\-]*|[A-Z][a-z]+[A-Z][A-Za-z0-9\-]*)\b")
_CONTRIBUTION = re.compile(
    r"\b(?:we|this paper|this work)\s+(?:first\s+)?(?:propose|introduce|present|develop|"
    r"design|call|term|name|dub)s?\b\s*(.*)",
    re.IGNORECASE,
)
_LEADING = re.compile(r"^(?:(?:a|an|the|novel|new|simple|general|first)\s+)+", re.IGNORECASE)


def _content_words(text: str) -> set[str]:
    words = set()
    for word in _WORD.findall(text):
        for part in {word, *word.split("-")}:
            if part.lower() not in _STOP and len(part) > 2:
                words.add(part.lower()[:5])  # a crude stem
    return words


def title_support(title: str, abstract: str, weight: dict[str, float] | None = None) -> float:
    """Share of the title's content words that the abstract also uses (0 to 1), each word
    weighted by its rarity when ``weight`` is given."""
    words = _content_words(title)
    if not words:
        return 0.0
    w = weight or {}
    total = sum(w.get(x, 1.0) for x in words)
    return sum(w.get(x, 1.0) for x in words & _content_words(abstract)) / total


def _rarity(texts: list[str]) -> dict[str, float]:
    counts: Counter[str] = Counter(word for text in texts for word in _content_words(text))
    return {word: math.log(1 + len(texts) / count) for word, count in counts.items()}


def _fits_elsewhere(title: str, index: int, records: list[tuple[str, int | None, str]]) -> bool:
    """True when the title clearly belongs to another abstract than the one its row names."""
    if not title:
        return False
    here = title_support(title, records[index][2])
    best = max(title_support(title, text) for _, _, text in records)
    return best >= 0.5 and best >= here + 0.3


def match_sidecar(
    records: list[tuple[str, int | None, str]], rows: list[dict[str, str]]
) -> dict[int, dict[str, str]]:
    """Map record index to its sidecar row.

    A row names its abstract by file and ordinal; that match is taken unless the title
    clearly fits another abstract. Rows left over, say after a file was renamed or
    re-ordered, are matched by how well their title's rarer words fit an abstract, most
    confident first, and only where the best fit is clear.
    """
    by_key = {(r, o): i for i, (r, o, _) in enumerate(records) if o is not None}
    matched: dict[int, dict[str, str]] = {}
    leftover: list[dict[str, str]] = []
    for row in rows:
        try:
            key = (row.get("file", ""), int(row.get("ordinal", "")))
        except ValueError:
            key = None
        index = by_key.get(key) if key else None
        title = row.get("title", "")
        if index is not None and index not in matched and not _fits_elsewhere(
            title, index, records
        ):
            matched[index] = row
        elif title:
            leftover.append(row)
    if not leftover or len(leftover) > _MAX_FUZZY:
        return matched
    weight = _rarity([text for _, _, text in records])
    open_records = [i for i in range(len(records)) if i not in matched]
    scores = {
        (r, i): title_support(row["title"], records[i][2], weight)
        for r, row in enumerate(leftover) for i in open_records
    }
    while scores:
        best: dict[int, list[tuple[float, int]]] = {}
        for (r, i), score in scores.items():
            best.setdefault(r, []).append((score, i))
        choices = []
        for r, options in best.items():
            options.sort(reverse=True)
            margin = options[0][0] - (options[1][0] if len(options) > 1 else 0.0)
            if options[0][0] >= 0.45 and margin >= 0.1:
                choices.append((options[0][0], margin, r, options[0][1]))
        if not choices:
            break
        _, _, r, i = max(choices)
        matched[i] = leftover[r]
        scores = {key: v for key, v in scores.items() if key[0] != r and key[1] != i}
    return matched


def _method_name(abstract: str) -> str | None:
    """The name a contribution sentence gives, preferring the one the abstract repeats."""
    candidates: list[tuple[int, int, str]] = []
    for sentence in re.split(r"(?<=[.!?])\s+", abstract):
        if not _CONTRIBUTION.search(sentence):
            continue
        for name in _NAME.findall(sentence):
            name = name.rstrip("-")
            if name not in _COMMON and len(name) >= 3 and not name.isdigit():
                candidates.append((abstract.count(name), -len(candidates), name))
    return max(candidates)[2] if candidates else None


def _topic(abstract: str) -> str | None:
    words = [w.lower() for w in _WORD.findall(abstract)]
    grams: Counter[str] = Counter()
    for n in (3, 2):
        for i in range(len(words) - n + 1):
            gram = words[i : i + n]
            if gram[0] in _STOP or gram[-1] in _STOP or len(gram[-1]) < 3:
                continue
            grams[" ".join(gram)] += n - 1  # longer phrases win ties
    repeated = [(c, g) for g, c in grams.items() if c >= 2 * (len(g.split()) - 1)]
    if not repeated:
        return None
    return max(repeated)[1].capitalize()


def _phrase(abstract: str, words: int = 10) -> str:
    contribution = _CONTRIBUTION.search(abstract)
    text = contribution.group(1) if contribution else abstract
    text = re.split(r"[,.;:()]|\s(?:that|which|to)\s", text)[0]
    text = _LEADING.sub("", text.strip())
    tokens = text.split()
    return " ".join(tokens[:words]) + ("…" if len(tokens) > words else "")


def derive_title(abstract: str) -> str:
    """A display title for an abstract without one: its method name (or topic) and a phrase."""
    abstract = re.sub(r"[*_`$\\]", "", abstract)  # markdown and TeX markup
    head = _method_name(abstract) or _topic(abstract)
    phrase = _phrase(abstract)
    if head and phrase and head.lower() not in phrase.lower():
        return f"{head}: {phrase}"
    return head or phrase or " ".join(abstract.split()[:8]) + "…"
