"""Text helpers every stage may use: normalising, the names and numbers a sentence holds."""

from __future__ import annotations

import re

NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])")
_NAME = re.compile(r"\b[A-Za-z]*(?:[A-Z][a-z0-9]*[A-Z0-9]|[a-z][A-Z]|\d[A-Za-z]|[A-Za-z]\d)[A-Za-z0-9\-]*")
_CAPITAL = re.compile(r"(?<=[\w,;:)] )[A-Z][a-z]{2,}\b")
# Capitalised words that name nothing in particular.
_PLAIN = frozenset(
    """The This That These Those They Their Its It In On For With By From And But Or As At To
    We Our Both Each Most Some Such When While Which What Who How Also However Moreover
    Furthermore Additionally Finally First Second Third Overall Specifically Source Sources
    Paper Papers Answer Question Yes No Based According Is Are Does Do Did Can Could Name
    Point Any Has Have I""".split()
)


def normalise(text: str) -> str:
    """Lower case, dashes unified, thousands separators and LaTeX dollars dropped."""
    # "$Q$Avatar" in a LaTeX-flavoured abstract is the name "QAvatar"
    text = text.replace("\\%", "%").replace("\u2013", "-").replace("\u2014", "-").replace("$", "")
    return re.sub(r"(?<=\d),(?=\d{3})", "", text).lower()


def key_terms(sentence: str) -> set[str]:
    """Numbers and names (methods, datasets, people, places) that a source must contain."""
    found = {n.replace(",", "") for n in NUMBER.findall(sentence)}
    found |= {n.strip("-") for n in _NAME.findall(sentence) if len(n.strip("-")) > 1}
    found |= {w for w in _CAPITAL.findall(sentence) if w not in _PLAIN}
    return {t for t in found if t}


def mentions(text: str, name: str) -> bool:
    """Whether lower-cased ``text`` has the word ``name``, singular or plural ("vlms" and
    "vlm"; "rl" is not in "world")."""
    base = name[:-1] if name.endswith("s") and len(name) > 3 else name
    return re.search(rf"(?<![a-z0-9]){re.escape(base)}s?(?![a-z0-9])", text) is not None
