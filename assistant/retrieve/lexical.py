"""Words for the lexical half of hybrid retrieval, and for the grounding checks.

The lexical search is bm25s's Okapi BM25 over Snowball stems (PyStemmer), saved with bm25s's
own ``save`` as ``.npy`` files that ``load`` maps. ``terms`` and ``stem`` (``assistant.text.stems``)
are this project's crude stems, which the grounding checks (citations, intent, support) compare words with; so
that those checks read the same stems as before, the index also keeps how many documents use
each such stem, for ``rarity`` and ``knows``, and how the texts write their names
(``spelling``: "timeomni-1" is "TimeOmni-1", "qavatar" is "$Q$Avatar", read as "QAvatar").
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import uuid
from collections import Counter
from pathlib import Path

import bm25s
import numpy as np
import Stemmer

from assistant.text.sentences import unmarked
from assistant.text.stems import STOP_WORDS, terms

_STOP_LIST = sorted(STOP_WORDS)
# atire's term weight keeps Okapi's (k1 + 1), which lucene's drops, so scores stay on the
# scale of the idf sums the support model compares them with; k1 and b are bm25s's defaults.
_PARAMS = {"k1": 1.5, "b": 0.75, "method": "atire", "idf_method": "lucene"}
_STEMS = "stems.json"  # beside bm25s's files: the crude stems' document frequencies
_SPELLINGS = "spellings.json"  # and how the texts write their names
# Written last: the number of documents, the format, and whether bm25s's files are there
# (not when no document has a word to index).
_ABOUT = "index.json"


def _tokens(texts: list[str]) -> list[list[str]]:
    # A stemmer of its own per call: a PyStemmer object must not be shared between threads.
    return bm25s.tokenize(texts, stopwords=_STOP_LIST, stemmer=_Stems(), return_ids=False,
                          show_progress=False)


class _Stems:
    """Snowball's English stems, with an acronym's plural read as the acronym: Snowball keeps
    a word without a vowel whole, so "LLMs" and "MDPs" would never meet "LLM" and "MDP"."""

    def __init__(self) -> None:
        self._snowball = Stemmer.Stemmer("english")

    def stemWords(self, words: list[str]) -> list[str]:  # noqa: N802  (bm25s calls it so)
        return self._snowball.stemWords([w[:-1] if _PLURAL_ACRONYM.match(w) else w for w in words])


# A word or hyphened name, whole: "TimeOmni-1", "RS-GRPO", "GFlowNets"
_WORD = re.compile(r"(?<![\w\-])[A-Za-z][\w\-]*[A-Za-z0-9](?![\w\-])")
# written as only a name is, capitals and small letters mixed past the first letter ("DrPose",
# "QAvatar", "TimeOmni-1"); not a word in capitals ("SOTA", "PEFT", "CNNs", "HAQO"), which
# typed in lower case is as likely the field's term as a name
_NAME_LIKE = re.compile(r"[a-z][A-Z]|[A-Z]{2,}[a-z]")
_ACRONYMS = re.compile(r"(?<=[A-Z])s$")  # "CNNs": capitals, plural
_PLURAL_ACRONYM = re.compile(r"[b-df-hj-np-tv-xz]{2,}s$")  # "llms", "mdps"; not "gpus", "ss"
# A saved index made with other words, weights or name rules is built again.
_FORMAT = hashlib.sha1(json.dumps([_PARAMS, _STOP_LIST, "english", _WORD.pattern,
                                   _NAME_LIKE.pattern, _ACRONYMS.pattern,
                                   _PLURAL_ACRONYM.pattern]).encode()
                       ).hexdigest()[:12]


def spellings(texts: list[str], owners: list[str] | None = None) -> dict[str, str]:
    """Each name that one paper alone uses (``owners``: each text's paper; without them each
    text is its own) and that the texts write one way only, by its lower-case form
    ("drpose": "DrPose"); not a word they also write otherwise ("low-rank" beside a title's
    "LOw-Rank"), nor a name in capitals ("SOTA"), nor one several papers use. LaTeX dollars
    and emphasis are dropped: "$Q$Avatar" is "QAvatar"."""
    seen: dict[str, set[str]] = {}
    users: dict[str, set[str]] = {}
    for at, text in enumerate(texts):
        for word in _WORD.findall(unmarked(text)):
            seen.setdefault(word.lower(), set()).add(word)
            users.setdefault(word.lower(), set()).add(owners[at] if owners else str(at))
    one_way = {low: way for low, (way, *others) in seen.items()
               if not others and len(users[low]) == 1}
    return {low: way for low, way in one_way.items()
            if way != low and _NAME_LIKE.search(_ACRONYMS.sub("", way))}


class BM25:
    """Okapi BM25; ``search`` returns (document index, score), best first."""

    def __init__(self, index: bm25s.BM25 | None, size: int, stems: dict[str, int],
                 names: dict[str, str] | None = None) -> None:
        self.index = index  # None when no document has a word to index
        self.size = size
        self.stems = stems  # how many documents use each crude stem (``terms``)
        self.names = names or {}  # lower case -> how the texts write it (``spellings``)

    @classmethod
    def build(cls, texts: list[str], owners: list[str] | None = None) -> BM25:
        """The index of ``texts``; ``owners``: the paper each text is from (``spellings``)."""
        tokens = _tokens(texts)
        index = None
        if any(tokens):
            index = bm25s.BM25(**_PARAMS)
            index.index(tokens, show_progress=False)
        return cls(index, len(texts), dict(Counter(t for text in texts for t in set(terms(text)))),
                   spellings(texts, owners))

    def rarity(self, term: str) -> float:
        """The inverse document frequency of a crude stem; a stem never seen is the rarest."""
        found = self.stems.get(term, 0)
        return math.log(1 + (self.size - found + 0.5) / (found + 0.5))

    def knows(self, term: str) -> bool:
        """Whether any document uses a crude stem."""
        return term in self.stems

    def spelling(self, word: str) -> str | None:
        """How the texts write a name given in lower case ("timeomni-1": "TimeOmni-1"); None
        for a word they write in lower case too, or in several ways."""
        return self.names.get(word.lower())

    def search(self, query: str, n: int) -> list[tuple[int, float]]:
        if self.index is None or n < 1:
            return []
        words = list(dict.fromkeys(_tokens([query])[0]))  # a repeated word counts once
        ids = self.index.get_tokens_ids(words)
        if not ids:
            return []
        scores = self.index.get_scores(ids)
        hits = np.flatnonzero(scores)  # only documents with a word of the query
        if len(hits) > n:
            hits = hits[np.argpartition(-scores[hits], n - 1)[:n]]
        hits = hits[np.lexsort((hits, -scores[hits]))]  # best first; ties by position
        return [(int(i), float(scores[i])) for i in hits]

    def save(self, folder: Path) -> None:
        """Write the index to ``folder`` whole, or leave the one there (an index of the same
        documents, saved by another process meanwhile)."""
        tmp = folder.with_name(f"{folder.name}.{os.getpid()}-{uuid.uuid4().hex}.tmp")
        try:
            tmp.mkdir(parents=True)
            if self.index is not None:
                self.index.save(tmp, show_progress=False)
            (tmp / _STEMS).write_text(json.dumps(self.stems))
            (tmp / _SPELLINGS).write_text(json.dumps(self.names))
            (tmp / _ABOUT).write_text(json.dumps({"size": self.size, "format": _FORMAT,
                                                  "indexed": self.index is not None}))
            try:
                tmp.rename(folder)
            except OSError:
                if not (folder / _ABOUT).is_file():
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    @classmethod
    def load(cls, folder: Path) -> BM25:
        """The index ``save`` wrote, its arrays mapped from the files; ``ValueError`` when it
        is not whole."""
        try:
            about = json.loads((folder / _ABOUT).read_text())
            if about["format"] != _FORMAT:
                raise ValueError(f"{folder} was made with other words or weights")
            size = int(about["size"])
            stems = json.loads((folder / _STEMS).read_text())
            names = json.loads((folder / _SPELLINGS).read_text())
            if not isinstance(stems, dict) or not isinstance(names, dict):
                raise TypeError("the stems or the spellings are not a mapping")
            index = None
            if about["indexed"]:
                index = bm25s.BM25.load(folder, mmap=True, show_progress=False)
                if index.scores["num_docs"] != size:
                    raise ValueError(f"{folder}: the index does not hold {size} documents")
        except (OSError, json.JSONDecodeError, TypeError, KeyError) as exc:
            raise ValueError(f"{folder} is not a whole BM25 index") from exc
        return cls(index, size, stems, names)
