"""The evidence under an answer: the cited paper's own sentences closest to the question.

The model's answer is a paraphrase, checked sentence by sentence; what the abstract says in
its own words is what a reader wants to see next to it (and often holds the detail that the
short answer left out). The sentences quoted are chosen like the excerpts (meaning and shared
words), those the answer already says are skipped, and they keep the abstract's order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from assistant.answer.citations import CitationChecker, Verdict
from assistant.answer.excerpts import EmbedMany, relevance
from assistant.text.mentions import paper_names
from assistant.text.sentences import mentions, normalise, split_sentences, without_instructions
from assistant.text.stems import terms

if TYPE_CHECKING:
    from assistant.answer.evidence import AnswerConfig
    from assistant.answer.writing import Render

LEAD = "From the abstract: "
_SAID = 0.8  # a sentence with this share of its words already in the answer is not quoted


def closest_sentences(question: str, text: str, answer: str, embed_many: EmbedMany,
                      count: int, rare: bool = False) -> tuple[str, ...]:
    """Up to ``count`` sentences of ``text`` nearest the question that ``answer`` does not
    already say, in ``text``'s order; none for a passage that gives orders and nothing
    else. ``rare``: first those sharing the question's words that few of the text's
    sentences use ("uncertainty", not the "kernel" every sentence names): where the quote
    is the whole answer to a yes/no question, what it asks about, not what it is about."""
    if count <= 0:
        return ()
    fresh = unsaid(split_sentences(without_instructions(text)), answer)
    if not fresh:
        return ()
    query, *vectors = embed_many([question, *fresh])
    asked = set(terms(question))
    words = [set(terms(s)) for s in fresh]

    def weight(i: int) -> float:
        return sum(1 / sum(w in other for other in words) for w in words[i] & asked)

    ranked = sorted(range(len(fresh)), reverse=True, key=lambda i: (
        round(weight(i), 6) if rare else 0.0,
        relevance(fresh[i], vectors[i], query, asked, set())))
    return tuple(fresh[i] for i in sorted(ranked[:count]))


_RESULT = re.compile(r"\b(?:experiments?|experimental|empirical(?:ly)?|results?|outperforms?|"
                     r"achieves?|surpass(?:es)?|state-of-the-art|demonstrat\w*|we\s+show|"
                     r"benchmarks?)\b", re.IGNORECASE)


def workings(text: str, names: Sequence[str], answer: str) -> str | None:
    """How the paper's method works, in its abstract's words: the first sentence after the
    one that names the method ("We propose DIVERSE, …") to name it again ("DIVERSE augments a
    pretrained model with FiLM layers and uses CMA-ES …") other than to report a result,
    unless ``answer`` says it already. None when there is no such sentence."""
    flat = [normalise(n) for n in names]
    naming = [s for s in split_sentences(without_instructions(text))
              if any(mentions(normalise(s), n) for n in flat)]
    # what it achieves is not how it works: "Experiments show that X outperforms …"
    how = [s for s in naming[1:] if not _RESULT.search(s)]
    return next(iter(unsaid(how[:1], answer)), None)


def unsaid(sentences: Sequence[str], answer: str) -> list[str]:
    """``sentences`` (once each, stripped) that ``answer`` does not already say, and that are
    not orders planted in the text."""
    said = set(terms(answer))
    kept = (s.strip() for s in sentences if without_instructions(s).strip())
    return [s for s in dict.fromkeys(kept) if s and _share(s, said) < _SAID]


def _share(sentence: str, said: set[str]) -> float:
    words = set(terms(sentence))
    return len(words & said) / len(words) if words else 1.0


def quoted(sentences: Sequence[str]) -> str:
    """The line under the answer: 'From the abstract: "…" … "…"'."""
    return LEAD + " … ".join(f'"{s}"' for s in sentences)


def quote_under(question: str, render: Render, answer: str,
                abstract: Callable[[str], str | None], embed_many: EmbedMany,
                config: AnswerConfig, rare: bool = False, how: bool = False) -> str:
    """The first cited paper's sentences closest to the question, quoted and cited under an
    answer (under a which-paper answer too: its quote says what the paper proposes, these what
    the question asked about; ``how``: the last of them is how its method works, when the
    abstract names the method again after proposing it)."""
    if not config.quote_sentences or not render.display:
        return ""
    number = min(render.display, key=render.display.__getitem__)
    item = render.evidence[number]
    text = abstract(item.source.paper_id) or " ".join(item.passages)
    # its names as the whole abstract gives them ("we introduce … (Qflex)")
    works = workings(text, paper_names(replace(item.source, text=text)), answer) if how else None
    sentences = closest_sentences(question, text, f"{answer} {works or ''}", embed_many,
                                  config.quote_sentences - (works is not None), rare)
    if works:  # in the abstract's order
        sentences = tuple(sorted([*sentences, works], key=text.find))
    if not sentences:
        return ""
    return render.sentence(Verdict(quoted(sentences), (number,), (item.passages[0],)))


def each_paper(checker: CitationChecker, render: Render, answer: str,
               config: AnswerConfig, numbers: Sequence[int] | None = None) -> str:
    """Under a list of papers, a line for each (or for the papers ``numbers``: those a
    comparison names and the answer left out): its short name and what it does in its
    abstract's words (``CitationChecker.claim``: the sentence saying what it proposes, and the
    one sharing most of the question's words), leaving out what the answer already says. A
    title says which paper; this says why it is on the list."""
    if not config.quote_sentences:
        return ""
    lines = []
    if numbers is None:  # every cited paper, in the order cited
        numbers = sorted(render.display, key=render.display.__getitem__)
    for number in numbers:
        item = render.evidence[number]
        passage, sentences = checker.claim(item)
        fresh = unsaid(sentences, answer)
        if fresh:
            said = f"{checker.short_label(item)}: " + " … ".join(f'"{s}"' for s in fresh)
            lines.append(render.sentence(Verdict(said, (number,), (passage,))))
    return "\n".join(lines)
