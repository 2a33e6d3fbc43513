"""A question in a conversation: made standalone by the model when it leans on "it", and
asked of the previous answer's papers when it points back at them, or when it names nothing
and they answer it best.

- "Which of these does relighting?" after a list: asked among the papers the list gave
  (``intent.among_earlier`` reads the words);
- "what are the four components?" right after an answer about SSD-GS names no paper, and on
  its own it finds the paper whose components are best known to the search (TimeOmni-1's);
  SSD-GS supports it better (its abstract: "decomposes reflectance into four components"), so
  it is asked of SSD-GS, together with the question before it (``intent.join_follow_up``). A
  question the previous paper does not support ("any paper on combining text embedding
  models?" after SSD-GS) is a new topic, and so is one that names a paper or asks for papers.

The user is told which papers it was asked of (``api.Assistant._read``'s warning).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage

from assistant.answer.chain import ABSTAIN_TEXT, recap
from assistant.answer.intent import (
    among_earlier,
    asked_again,
    asks_of_them_together,
    bare_follow_up,
    join_follow_up,
    kind_of,
    needs_rewrite,
    strong_names,
)
from assistant.answer.prompts import load_prompt
from assistant.text.mentions import (
    has_name,
    introduced_name,
    mentioned_papers,
    paper_names,
    short_names,
)
from assistant.text.sentences import mentions, normalise
from assistant.types import Source

# the papers found for a question, with how well each supports it: among these ids when given
Find = Callable[[str, frozenset[str] | None], Sequence[Source]]


class Scope(NamedTuple):
    """A question asked of the previous answer's papers."""

    question: str  # as it is asked: "Which paper does relighting?", or joined to the one before
    papers: frozenset[str]  # the ids of the papers it is asked among
    # the user's own words point at them ("what optimizer?", "and the results?", "the third
    # one"), rather than the search finding them best: they are the subject, whatever the
    # support gate would say of the question's few words
    pointed: bool = False


def asked_of_earlier(question: str, history: Sequence[tuple[str, str]],
                     titles: Callable[[], Mapping[str, str]], find: Find,
                     min_support: float) -> Scope | None:
    """The question as it is asked and the previous answer's papers it is asked among, or
    None when it is asked of every paper. ``titles`` gives every paper's id and
    title (read only when the question may be asked among them); ``min_support`` is the
    support a paper needs to answer (the calibrated gate)."""
    if not history:
        return None
    asked = among_earlier(question)
    together = asks_of_them_together(question)  # "compare them"
    nth = _NTH.match(question) if asked is None and together is None else None
    bare = asked is None and (nth is not None or bare_follow_up(question))
    if asked is None and not bare and together is None and (
            kind_of(question) != "fact" or needs_rewrite(question, history)
            or strong_names(question)):
        return None  # asks for papers, leans on "it" (rewritten), or names its own subject
    names = titles()
    said = history[-1][1]
    # by title or short name, else by the name an abstract gives ("JOSH is …")
    papers = frozenset(mentioned_papers(said, names)) or _called_in(said, find)
    if not papers:
        return None
    if asked is not None:
        return Scope(asked, papers)
    ordered = sorted(papers, key=lambda i: _first_at(said, names.get(i, "")))  # as the answer
    if together is not None:  # "compare GaussianFusion and SSD-GS", in the answer's order
        if len(papers) < 2:
            return None
        called = [(short_names(names[i]) or [names[i]])[0] for i in ordered]
        return Scope(f"{together} {', '.join(called[:-1])} and {called[-1]}.", papers)
    if nth is not None:  # "what about the third one?": the third paper the answer named
        at = -1 if nth[2].lower() == "last" else _ORDINALS.index(nth[2].lower())
        if len(ordered) < 2 or at >= len(ordered):
            return None
        papers = frozenset({ordered[at]})
        # asked of that paper by its title: the model is shown it alone, with no list to count
        question = question.replace(nth[1], names.get(ordered[at], nth[1]))
    if bare or _leans_on(question, names, papers, find, min_support):
        # pointed at the one paper just discussed; after a list, "why?" keeps the gate
        return Scope(join_follow_up(question, history[-1][0]), papers, bare and len(papers) == 1)
    return None


_ORDINALS = ["first", "second", "third", "fourth", "fifth"]
# the whole question points at one of the list ("which is the first paper to use X?" does not)
_NTH = re.compile(rf"^\W*(?:(?:and|so|ok(?:ay)?|but|now)\W+)?(?:(?:what|how)\s+about\s+|tell\s+me"
                  rf"\s+(?:more\s+)?about\s+|more\s+(?:on|about)\s+|(?:explain|summari[sz]e|describe)"
                  rf"\s+)?(the\s+({'|'.join(_ORDINALS)}|last)(?:\s+(?:one|paper|work|method|study))?)"
                  rf"\W*$", re.IGNORECASE)


def _first_at(answer: str, title: str) -> int:
    """Where an answer first names a paper: by its title, else its short name (at the end
    when it does neither)."""
    at = answer.lower().find(title.lower()) if title else -1
    if at < 0:
        found = [m.start() for n in short_names(title)
                 if (m := re.search(rf"(?<![\w\-]){re.escape(n)}(?![\w\-])", answer))]
        at = min(found, default=len(answer))
    return at


def _called_in(answer: str, find: Find) -> frozenset[str]:
    """The papers an answer calls by the names their abstracts give them ("JOSH is an
    optimisation-based method …": the title says "Joint Optimization …"), among those found
    for the answer itself."""
    if not answer.strip() or answer.startswith(ABSTAIN_TEXT):
        return frozenset()  # nothing was answered: no paper to lean on
    return frozenset(s.paper_id for s in find(answer, None) if any(
        has_name(answer, n) for n in [*paper_names(s), introduced_name(s.text, s.title, True)]
        if n))  # "HUMAINE", which its title says too ("… with the HUMAINE Framework")


def _leans_on(question: str, titles: Mapping[str, str], papers: frozenset[str], find: Find,
              min_support: float) -> bool:
    """Whether a fact question that names nothing is about the previous answer's papers: one
    of them supports it, better than any other paper found for it alone (found first or not:
    "and the results?" after TEDM finds TEDM, but alone it is about nothing)."""
    if mentioned_papers(question, titles):
        return False  # calls a paper by its title
    alone = find(question, None)
    if not alone:
        return False
    theirs = max((s.support for s in find(question, papers)), default=0.0)
    others = max((s.support for s in alone if s.paper_id not in papers), default=0.0)
    return theirs >= min_support and theirs > others


def standalone(question: str, history: Sequence[tuple[str, str]], llm: BaseChatModel) -> str:
    """A follow-up that leans on the conversation ("What does it calibrate?") made standalone
    by the model; other questions are returned as they are."""
    again = asked_again(question, history)  # "same question for TEDM": no model needed
    if again is not None:
        return again
    if not needs_rewrite(question, history):
        return question
    context = recap(history)
    prompt = load_prompt("rewrite").format(history=context, question=question)
    reply = llm.invoke([HumanMessage(prompt)], max_tokens=48)
    lines = str(reply.content).strip().splitlines() or [""]
    rewritten = " ".join(lines[0].removeprefix("Standalone:").strip().strip('"').split())
    if _words(rewritten) in ([], _words(question)):
        # The model left it as it was ("the approach" still unnamed; "ok." dropped, "they"
        # kept): the previous question says what it is about (flat when it was itself such
        # a follow-up).
        return join_follow_up(question, history[-1][0])
    if invented(rewritten, f"{context} {question}"):
        # It named what nobody said (the prompt's own example, "GraphRAG", for "its planning
        # cost" after two turns on NL-PDDL): the last question that names something says
        # what it is about.
        named = next((q for q, _ in reversed(history) if strong_names(q)), history[-1][0])
        return join_follow_up(question, named)
    if unnamed(rewritten):
        # It kept "they"/"it" and named nothing ("Did they try it on any medical images?",
        # "Which benchmarks did they evaluate on?"): as if it had left the question as it was.
        return join_follow_up(question, history[-1][0])
    return rewritten


_STILL_LEANS = re.compile(r"\b(?:they|it)\b", re.IGNORECASE)
_CAPITAL = re.compile(r"(?<=[^.?!\s]\s)(?!I\b)[A-Z]")  # not starting a sentence, not "I"


def unnamed(rewritten: str) -> bool:
    """Whether a rewritten follow-up still leans on "they" or "it" and names nothing: no
    name and no word written with a capital but where a sentence starts."""
    text = rewritten.strip()
    return bool(_STILL_LEANS.search(text)) and not strong_names(text) and not _CAPITAL.search(text)


def invented(rewritten: str, said: str) -> list[str]:
    """The names in a rewritten question ("GraphRAG", "NL-PDDL"; not a capitalised word
    such as "English") that neither the conversation nor the follow-up gave."""
    flat = normalise(said)
    return [n for n in strong_names(rewritten) if not mentions(flat, normalise(n))]


_LEAD = re.compile(r"^\W*(?:(?:ok(?:ay)?|so|and|but|also|now|well|right|then)\b\W*)+", re.IGNORECASE)


def _words(text: str) -> list[str]:
    """The words of a question after the ones that only lead into it ("ok.", "so", "and")."""
    return re.findall(r"\w+", _LEAD.sub("", text).lower())
