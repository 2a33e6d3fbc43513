"""How well each retrieved paper supports a question: the evidence that decides abstention.

A paper is scored on what retrieval measured and on what its abstract holds:

- ``dense``: cosine of the question to the paper's closest chunk;
- ``lexical``: its best chunk's BM25 score over the most the question's terms could score;
- ``coverage``: the share of the question's topic words (``intent.topic_terms``, weighted
  by rarity) that the title and the retrieved passages contain: "speculative decoding for
  quantized LLMs" is less covered by a quantization paper that never speaks of decoding;
- ``names``: the share of the names the question gives (GlowQ, ImageNet) that it contains.

These are combined by a logistic model whose weights, the threshold under which a paper does
not answer, and the share of the best paper's support another paper needs to be shown beside
it (``relative``: "which papers" lists hold the supported papers, not the whole top 5), are
fitted on the dev split of the question set by
``benchmarks/calibrate.py`` and kept as data in ``assistant/data/support.json``. A question
that no retrieved paper supports is answered "not covered" without asking the model.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from assistant import resources
from assistant.answer.intent import asked, strong_names, topic_terms
from assistant.text.mentions import (
    described,
    everyday,
    has_name,
    introduced_name,
    paper_names,
)
from assistant.text.sentences import (
    expansions,
    mentions,
    misspelt,
    normalise,
    question_names,
    without_instructions,
)
from assistant.text.stems import stem, terms
from assistant.types import Source

FEATURES = ("dense", "lexical", "coverage", "names")


@dataclass(frozen=True)
class Calibration:
    """The fitted model: a weight per feature, a bias, and the threshold on its output."""

    weights: dict[str, float]
    bias: float
    threshold: float
    relative: float = 0.0  # a paper shown beside a better one needs this share of its support
    judge: float = 0.0  # the model's P(yes) a "which paper" answer needs (0: no judge)
    judge_on: str = "abstract"  # what the judge reads: the whole "abstract" or the "excerpt"
    judge_within: float = 0.0  # a paper after the first is judged only at this share of its support
    judge_band: tuple[float, float] = (0.0, 0.0)  # a first P(yes) here is asked again (from, below)
    verdict: float = 0.0  # P(yes) that an abstract says yes or no, to quote it (0: never asked)
    listed: float = 0.0  # P(yes) one of a "which papers" list's best papers needs (0: not asked)
    polarity: float = 0.0  # P(yes) at which the abstract's answer to a yes/no question is yes

    def score(self, features: dict[str, float]) -> float:
        z = self.bias + sum(self.weights[f] * features[f] for f in FEATURES)
        return 1.0 / (1.0 + math.exp(-z))


@lru_cache(maxsize=1)
def calibration() -> Calibration:
    """The calibration shipped with the package (``assistant/data/support.json``)."""
    data = json.loads(resources.package_data("support.json").read_text(encoding="utf-8"))
    band = data.get("judge_band") or (0.0, 0.0)
    return Calibration({f: float(data["weights"][f]) for f in FEATURES}, float(data["bias"]),
                       float(data["threshold"]), float(data.get("relative", 0.0)),
                       float(data.get("judge_threshold", 0.0)),
                       str(data.get("judge_on", "abstract")),
                       float(data.get("judge_within", 0.0)),
                       (float(band[0]), float(band[1])),
                       float(data.get("verdict_threshold", 0.0)),
                       float(data.get("list_threshold", 0.0)),
                       float(data.get("polarity_threshold", 0.0)))


def _has_term(term: str, words: set[str]) -> bool:
    """The stem itself, or one sharing all but its last letters (the crude stemmer does not
    always meet itself: 'analys' and 'analysi'), at least 5 letters alike."""
    if term in words:
        return True
    if len(term) < 5:
        return False
    need = max(5, len(term) - 2)
    return any(len(w) >= need and w[:need] == term[:need] for w in words)


def features(question: str, source: Source, rarity: Callable[[str], float],
             spelled: Mapping[str, set[str]] | None = None) -> dict[str, float]:
    """The four measurements of one paper against one question (from what retrieval read:
    no store is touched); ``spelled``: what the retrieved papers define the question's
    acronyms as (``sentences.expansions``), which a paper holds the acronym by writing."""
    text = f"{source.title} {source.text}"
    words = set(terms(text))
    topic = topic_terms(question)
    weight = {t: rarity(t) for t in topic}
    total = sum(weight.values())
    spellings = set(re.findall(r"[a-z]+", normalise(text)))
    typos = {stem(x) for x in re.findall(r"[a-z]+", normalise(question)) if misspelt(x, spellings)}
    covered = sum(w for t, w in weight.items() if _has_term(t, words) or t in typos)
    names = question_names(question)
    flat = normalise(text)
    spelled = spelled or {}
    found = sum(1 for n in names if mentions(flat, n) or n in flat
                or any(full in flat for full in spelled.get(n, ())))
    most = sum(rarity(t) for t in set(terms(question))) or 1.0
    return {
        "dense": source.dense,
        "lexical": min(source.lexical / most, 1.0),
        "coverage": covered / total if total else 0.0,
        "names": found / len(names) if names else 1.0,
    }


def named(question: str, source: Source) -> bool:
    """Whether the question gives names (DrPose, ETTh1) and the paper holds every one: asked
    about by name, in whatever language the rest of the question is; or, giving none of those,
    it writes the paper's own name as the paper does ("HUMAINE", "DIVERSE"), even where its
    title holds that name ("… with the HUMAINE Framework")."""
    names = strong_names(question)
    if names:
        return all(_holds(source, n) for n in names)
    own = without_instructions(asked(question))
    titled = introduced_name(source.text, source.title, titled=True)  # "HUMAINE"
    return bool(called_by_name(own, [source])) or bool(titled and has_name(own, titled))


def called_by_name(question: str, sources: Sequence[Source]) -> list[Source]:
    """The papers the question calls by their own names ("PEA vs DIVERSE: …", "what do
    value matching and MindPilot have in common?"); a name that is an everyday word too
    ("diverse", "safer") only as the paper writes it."""
    said = normalise(question)
    return [s for s in sources if any(
        mentions(said, normalise(n)) if n.lower() not in everyday() else
        has_name(question, n)
        for n in paper_names(s))]


def named_each(question: str, sources: Sequence[Source]) -> set[str]:
    """The papers a question names one each ("What's the difference between GlowQ and
    RaLoRA?", or "GlowQ vs the gradient intrinsic dimensionality alignment paper"): every name
    it gives is held by exactly one of ``sources``, and more than one paper holds them. Empty
    when any name is held by none (a near miss: "GlowQ on Whisper-v3") or by several (a word,
    not a paper's name)."""
    names = strong_names(question)
    holders = [{s.paper_id for s in sources if _holds(s, n)} for n in sorted(names)]
    if not all(holders):
        return set()
    papers = set().union(*holders) if len(names) > 1 and all(len(h) == 1 for h in holders) \
        else set()
    # and those called by names that are words too ("Value Matching", "DIVERSE"), or by the
    # words of their titles ("the return distribution matching paper")
    papers |= {s.paper_id for s in [*called_by_name(question, sources),
                                    *described(question, sources)]}
    return papers if len(papers) > 1 else set()


def _holds(source: Source, name: str) -> bool:
    flat = normalise(f"{source.title} {source.text}")
    return mentions(flat, name) or name in flat


def score_sources(question: str, sources: Sequence[Source], rarity: Callable[[str], float],
                  model: Calibration | None = None,
                  defines: Callable[[str], set[str]] | None = None) -> list[Source]:
    """``sources`` with their ``support`` filled in (0 to 1), in the same order. A paper the
    question names is supported at least at the threshold; when it names several papers one
    each, each of them also at the share of the best paper's support that keeps it beside it."""
    model = model or calibration()
    spelled = expansions(question, [f"{s.title} {s.text}" for s in sources], defines)
    scored = [model.score(features(question, source, rarity, spelled)) for source in sources]
    each = named_each(question, sources)
    # beside the best paper as its support is kept (to 4 places): rounded up, not away
    beside = math.ceil(model.relative * round(max(scored, default=0.0), 4) * 1e4) / 1e4
    out = []
    for source, support in zip(sources, scored, strict=True):
        if source.paper_id in each:
            support = max(support, model.threshold, beside)
        elif named(question, source):
            support = max(support, model.threshold)
        out.append(replace(source, support=round(support, 4)))
    return out


def backing(sources: Sequence[Source], threshold: float, relative: float) -> list[Source]:
    """The sources that support the question: at the threshold, and not far behind the best."""
    top = max((s.support for s in sources), default=0.0)
    return [s for s in sources if s.support >= threshold and s.support >= relative * top]
