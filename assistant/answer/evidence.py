"""What the model is shown: whether the sources cover the question at all, the one paper it
names, and the numbered sources as it reads them (the excerpts themselves: excerpts.py)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from assistant.answer.asked import GENERIC
from assistant.answer.citations import Evidence
from assistant.answer.intent import (
    FOLLOW_UP,
    asking,
    asks_for_papers,
    asks_for_several,
    identifies,
    strong_names,
)
from assistant.answer.intent.story import without_story
from assistant.answer.support import Calibration, called_by_name
from assistant.config import AnswerSettings
from assistant.text.mentions import described, everyday, paper_names
from assistant.text.sentences import (
    expansions,
    key_terms,
    mentions,
    normalise,
    question_names,
    spelled_out,
    typo_of,
    unmarked,
)
from assistant.text.stems import terms
from assistant.types import Source

_BUDGETS = AnswerSettings()  # the token budgets' defaults, written once in Settings


@dataclass
class AnswerConfig:
    """The knobs of the chain: the token budgets from Settings, the thresholds fitted on dev
    (``support.calibration``), and fixed choices."""

    context_tokens: int = _BUDGETS.context_tokens
    focus_tokens: int = _BUDGETS.focus_tokens  # 0: always show every retrieved paper
    quote_sentences: int = _BUDGETS.quote_sentences  # the abstract's own, under the answer
    # Below this similarity, and with no name from the question found in the sources, no
    # retrieved paper is about the question: abstain without calling the model.
    min_dense: float = 0.2
    min_support: float = 0.0  # a paper's support for the question (support.py); 0: no gate
    relative_support: float = 0.0  # and its share of the best paper's support
    judge_threshold: float = 0.0  # the model's P(yes) that a paper answers "which paper …?"
    judge_papers: int = 2  # the best-supported papers put to the judge, in turn
    judge_on: str = "abstract"  # the judge reads the paper's "abstract" or the "excerpt" shown
    judge_within: float = 0.0  # a paper after the first is judged only at this share of its support
    verdict_threshold: float = 0.0  # P(yes) its abstract says yes or no, to quote it instead
    polarity_threshold: float = 0.0  # P(yes) at which the abstract's answer is yes (0: unchecked)
    list_threshold: float = 0.0  # P(yes) one of a "which papers" list's best papers needs
    list_papers: int = 3  # the best-supported papers of a list put to the judge, in turn
    # a yes/no question's abstract holding less of its words speaks of something else
    verdict_words: float = 0.2

    @classmethod
    def fitted(cls, budgets: AnswerSettings, model: Calibration) -> AnswerConfig:
        """The budgets from Settings and the thresholds fitted on dev."""
        return cls(context_tokens=budgets.context_tokens, focus_tokens=budgets.focus_tokens,
                   quote_sentences=budgets.quote_sentences, min_support=model.threshold,
                   relative_support=model.relative, judge_threshold=model.judge,
                   judge_on=model.judge_on, judge_within=model.judge_within,
                   verdict_threshold=model.verdict, list_threshold=model.listed,
                   polarity_threshold=model.polarity)



def covered(question: str, sources: Sequence[Source], config: AnswerConfig) -> bool:
    """Whether any retrieved paper is about the question: close in meaning, or it names
    something (a method, dataset or number) that a retrieved paper contains."""
    if any(s.dense >= config.min_dense for s in sources):
        return True
    names = {normalise(t) for t in key_terms(question)}
    texts = [normalise(f"{s.title} {s.text}") for s in sources]
    if any(name in text for name in names for text in texts):
        return True
    # "qflex - what's it short for?": a paper's own name, typed in lower case, unless the
    # name is an everyday word too ("Is it safer to fly?" is not about SAFER)
    words = set(re.findall(r"[a-z][\w\-]{2,}", question.lower())) - everyday()
    return any(name.lower() in words for s in sources for name in paper_names(s))


def to_judge(evidence: Sequence[Evidence], config: AnswerConfig) -> list[Evidence]:
    """The papers put to the judge, best supported first: a later one only when its support
    is close to the best's (a clear second place is rarely the answer, and each judgement
    costs the model reading a whole abstract)."""
    ranked = sorted(evidence, key=lambda e: -e.source.support)[: config.judge_papers]
    return [e for e in ranked
            if e.source.support >= config.judge_within * ranked[0].source.support]


def judged_text(item: Evidence, config: AnswerConfig,
                abstract: Callable[[str], str | None]) -> Source:
    """The paper as the judge reads it: its whole abstract, or the excerpt chosen for the
    question (shorter, so read sooner)."""
    if config.judge_on == "excerpt":
        text = item.text
    else:
        text = abstract(item.source.paper_id) or item.source.text
    return replace(item.source, passages=(text,))


def speaks_of(question: str, name: str, abstract: str) -> float:
    """The share of what a question asks in its own words (besides the paper's ``name``,
    words any question uses, the asker's story and an earlier question it follows) that an
    abstract holds: none of "physical", "robot", "run" and "simulation" for "has
    qflex been run on a physical robot?"; 1.0 for a question of fewer than two such words."""
    asked = set(terms(asking(question).split(FOLLOW_UP)[0])) - GENERIC - set(terms(name))
    return len(asked & set(terms(abstract))) / len(asked) if len(asked) >= 2 else 1.0


def called(question: str, evidence: Sequence[Evidence]) -> list[Evidence]:
    """The shown papers the question calls by their own names (``support.called_by_name``),
    one or two, when between them they hold every name it gives: none for "How does DIVERSE
    compare with GlowQ on the HUMAINE leaderboard?" (nor for any question calling three: one
    may be what the other two are compared on, and an answer about each would not say how
    they compare; no stored question compares three papers)."""
    ids = {s.paper_id for s in called_by_name(question, [e.source for e in evidence])}
    found = [e for e in evidence if e.source.paper_id in ids]
    texts = [normalise(f"{e.source.title} {e.source.text}") for e in found]
    if len(found) > 2 or not all(any(mentions(t, n) for t in texts)
                                 for n in question_names(question)):
        return []
    return found


def _holds(source: Source, names: set[str],
           spelled: Mapping[str, set[str]] | None = None) -> bool:
    """Whether each of ``names`` is a word of the source's title or text ("rl" is not in
    "world"), or is written out as ``spelled`` gives it ("RL": "reinforcement learning",
    where a retrieved paper defines it so; ``sentences.expansions``)."""
    haystack = normalise(f"{source.title} {source.text}")
    spelled = spelled or {}
    return all(mentions(haystack, name) or any(full in haystack for full in spelled.get(name, ()))
               for name in names)


def asked_about(question: str, evidence: Sequence[Evidence]) -> Evidence | None:
    """The paper a yes/no question asks about: the one it calls by name, else the best-ranked
    source holding every name of the question, written out or not ("GP": "Gaussian
    processes"), the first when it names none; None when the paper it calls by name does not
    hold them ("Was Avey-B evaluated on GLUE?" is not about the paper that says GLUE)."""
    ids = {s.paper_id for s in called_by_name(question, [e.source for e in evidence])}
    called = [e for e in evidence if e.source.paper_id in ids] or evidence
    return next((e for e in called[:1 if ids else None] if not unheld(question, [e.source])),
                None)


def focus(question: str, sources: Sequence[Source],
          defines: Callable[[str], set[str]] | None = None) -> Source | None:
    """The one retrieved paper that the question names, if there is exactly one.

    "What reward does DrPose maximize?" is about the paper containing "DrPose"; when no
    other retrieved paper contains every name of the question, the others are only noise
    for a small model, and tokens it must read before its first word. So is "the multi-view
    video reward shaping paper" (``mentions.described``), and a paper called by its name
    alone ("does qflex get compared with offline rl baselines?", "what does the Value Matching
    paper need?"), unless a paper is asked for.
    """
    if asks_for_several(question):
        return None
    called, paper_asked = called_by_name(question, sources), identifies(question)
    called += [s for s in (() if paper_asked else described(question, sources))
               if s not in called]
    if len(called) > 1:
        return None  # "What do Qflex and Value Matching have in common?": two papers
    names = question_names(question)
    if not names:
        return called[0] if called and not paper_asked else None
    spelled = expansions(question, [f"{s.title} {s.text}" for s in sources], defines)
    holders = [s for s in sources if _holds(s, names, spelled)]
    # "does rs-grpo improve pass@k on … HumanEval?": the paper holding "HumanEval" is not the
    # one it asks about
    if len(holders) != 1 or (called and called[0].paper_id != holders[0].paper_id):
        return None
    return holders[0]


def unheld(question: str, sources: Sequence[Source]) -> list[str]:
    """The names the question gives (TriviaQA, ETTh1, NeRF) that no retrieved paper holds: the
    question is about something the papers do not speak of. Not those only in the asker's
    story when it asks for papers (``intent.story``), nor a hyphened name whose words a paper
    writes ("near-LP-solver": "linear programming solvers")."""
    texts = [normalise(f"{s.title} {s.text}") for s in sources]
    # an acronym the abstract writes out ("GP": "Gaussian Processes") is held
    acronyms = {normalise(a): a for a in re.findall(r"\b[A-Z]{2,6}s?\b", question)}

    # "Any work on …? In our EHR data …": a name in the asker's story need not be held
    wanted = without_story(question) if asks_for_papers(question) else question
    return sorted(n for n in strong_names(wanted) if not any(
        mentions(t, n) or n in t or (n in acronyms and spelled_out(acronyms[n], t))
        or _in_words(n, t, acronyms) or _contracted(n, t) for t in texts))


def _contracted(name: str, text: str) -> bool:
    """Whether the (normalised) ``text`` has a longer name that ``name`` is a half-remembered
    form of, letters left out and its start and end kept: "GaussFusion" of "GaussianFusion"
    (eight letters or more, and at least seven tenths of it)."""
    if len(name) < 8 or not name.isalpha():
        return False

    def within(word: str) -> bool:
        letters = iter(word)
        return all(c in letters for c in name)  # in order, some left out

    return any(word.startswith(name[:4]) and word.endswith(name[-4:])
               and len(name) >= 0.7 * len(word) and within(word)
               for word in set(re.findall(r"[a-z]{9,}", text)) if len(word) > len(name))


def _in_words(name: str, text: str, acronyms: Mapping[str, str]) -> bool:
    """Whether the (normalised) ``text`` writes a hyphened name's words one after another,
    an acronym among them written out: "near-LP-solver" in "linear programming solvers" (not
    "ImageNet-Sketch" in "ImageNet … sketch-like")."""
    parts = name.split("-")
    if len(parts) < 2 or not all(len(p) > 1 and p.isalpha() for p in parts):
        return False
    words = re.findall(r"[a-z0-9]+", text)
    for start in range(len(words)):
        at = start
        for part in parts:
            if at < len(words) and words[at] in (part, f"{part}s", f"{part}es"):
                at += 1
            elif part in acronyms and spelled_out(acronyms[part],
                                                  " ".join(words[at:at + len(part)])):
                at += len(part)
            else:
                break
        else:
            return True
    return False


def named_paper(question: str, evidence: Sequence[Evidence],
                defines: Callable[[str], set[str]] | None = None) -> Evidence | None:
    """For "which paper proposes X?", when the model failed to say it: the best-ranked
    source that contains every name in the question. Without names there is no such proof,
    and a refusal stands: the nearest paper is not an answer."""
    if not identifies(question):
        return None
    names = question_names(question)
    if not names:
        return None
    spelled = expansions(question, [f"{e.source.title} {e.source.text}" for e in evidence],
                         defines)
    return next((e for e in evidence if _holds(e.source, names, spelled)), None)


def format_sources(evidence: Sequence[Evidence]) -> str:
    return "\n\n".join(
        f"[{e.number}] {e.source.title}\n{' … '.join(e.passages)}" for e in evidence
    )


_WORD = re.compile(r"[A-Za-z][\w\-]*[A-Za-z0-9]")  # a word or hyphened name: "AIGB-Pearl"


def respelled(question: str, sources: Sequence[Source]) -> tuple[str, list[tuple[str, str]]]:
    """The question with each name no retrieved paper holds, but one of them spells a letter
    differently ("AIGB-Perl", "Qfelx", "DIVRESE"), written as that paper spells it, and the
    (written, read) pairs. A name two spellings could be is left as it is."""
    texts = [normalise(f"{s.title} {s.text}") for s in sources]
    # names the name rules skip: shouted ("DIVRESE") or one capital ("Qfelx")
    plain = {normalise(w) for w in re.findall(r"\b[A-Z]{5,}\b", question)} | question_names(
        question)
    unknown = set(unheld(question, sources)) | {
        n for n in plain if not any(mentions(t, n) for t in texts)}
    if not unknown:
        return question, []
    # a name typed in TeX ("$Q$Avatar") as the reader sees it: QAvatar
    words = {w for s in sources for w in _WORD.findall(unmarked(f"{s.title} {s.text}"))}
    fixes = []
    for name in dict.fromkeys(_WORD.findall(question)):
        if normalise(name) not in unknown:
            continue
        near = {w for w in words if typo_of(name, w)}
        if len({w.lower() for w in near}) > 1 and name.isupper():
            # "HUMANE": the paper's "HUMAINE", not the word "human"
            near = {w for w in near if w.isupper()}
        if len({w.lower() for w in near}) == 1:
            fixes.append((name, sorted(near)[0]))
    for name, word in fixes:
        question = re.sub(rf"(?<![\w\-]){re.escape(name)}(?![\w\-])", word, question)
    return question, fixes


# a word in lower case, or with a capital first only ("Qavatar: what is it?")
_LOWER = re.compile(r"(?<![\w\-$])[A-Za-z][a-z0-9\-]*[a-z0-9](?![\w\-])")


def recased(question: str, spelling: Callable[[str], str | None]) -> str:
    """The question with each name typed in lower case ("how was timeomni-1 trained?",
    "does qavatar …", "a glowq-style fix", "ra-lora") written as the papers write it
    (``spelling``: the index's), so that it is searched for, weighed and checked as the name it
    is; not an everyday word that is a paper's name too ("a safer way", "diverse data")."""
    def cased(match: re.Match[str]) -> str:
        word = match.group(0)
        if word.lower() in everyday():
            return word
        if whole := spelling(word.lower()):
            return whole
        if "-" in word and (joined := spelling(word.lower().replace("-", ""))):
            return joined  # "ra-lora": "RaLoRA", which the papers write without the hyphen
        head, dash, tail = word.rpartition("-")  # "glowq-style": the name, then the rest
        name = spelling(head.lower()) if dash and head.lower() not in everyday() else None
        return f"{name}-{tail}" if name else word

    return _LOWER.sub(cased, question)
