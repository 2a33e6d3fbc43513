"""How a sentence's words are compared with a source's: names, titles, values, stems."""

from __future__ import annotations

import re
from collections.abc import Sequence

from assistant.text.sentences import NUMBER, normalise
from assistant.types import Source

SYMBOLIC = re.compile(r"\w+@\w+")  # pass@k, recall@5


def display(source: Source) -> str:
    return f"{source.title} (derived title)" if source.title_derived else source.title


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = sum(x * x for x in a) ** 0.5
    nb = sum(y * y for y in b) ** 0.5
    return dot / (na * nb) if na and nb else 0.0


def flat(text: str) -> str:
    """Lower-case words and digits only, one space apart: for comparing names and titles."""
    return re.sub(r"[^a-z0-9]+", " ", normalise(text)).strip()


def values_in(sentence: str) -> list[str]:
    """The numbers and symbols (pass@k) a sentence gives."""
    return NUMBER.findall(sentence) + SYMBOLIC.findall(sentence)


def stem_in(word: str, words: set[str]) -> bool:
    """Whether ``words`` has ``word`` under another ending ('analys' and 'analysi'): the
    crude stemmer does not always meet itself. Same word: they share all but at most the
    last letter of the shorter one, and at least 5 letters ('exploit' is not 'explore')."""
    if len(word) < 5:
        return False
    for other in words:
        shorter = min(len(word), len(other))
        if shorter < 5:
            continue
        need = max(5, shorter - 1)
        if word[:need] == other[:need]:
            return True
    return False


def is_title(sentence: str, titles: Sequence[str], exact: bool = False) -> bool:
    """Whether the sentence is one of ``titles`` and little more ("Yes: <title>", "The paper
    <title>", the title with a word or two changed unless ``exact``)."""
    said = flat(re.sub(r"^\W*(?:yes|the\s+paper|see)\b\W*", "", sentence, flags=re.IGNORECASE))
    words = said.split()
    for full in titles:
        title = flat(full).split()
        if said == " ".join(title):
            return True
        if not exact and len(title) >= 4 and len(words) <= len(title) + 2 and (
                sum(w in title for w in words) >= 0.8 * max(len(words), len(title))):
            return True
    return False
