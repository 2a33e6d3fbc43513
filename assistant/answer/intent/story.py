"""What a question tells of the asker, around what it asks: their own situation ("Any work on
policies under unmeasured confounders? In our EHR data there is always stuff we can't
measure …"), whose names (EHR) and plural nouns ("standard methods") are not what a paper must
hold or a list is of; or a paper they remember ("I remember a paper about … what was it
called?"), which asks for that paper."""

from __future__ import annotations

import re

from assistant.text.sentences import split_sentences

# "… mixed in. is there …?": a sentence typed in lower case starts after a stop too (not "i.e.")
_LOWER_START = re.compile(r"(?<=\w\w[.!?])\s+(?=(?:is|are|does|do|can|has|have|which|what|"
                          r"how|any|who|in|i|we|my|our)\b)")
_FIRST_PERSON = re.compile(r"\b(?:(?i:i['\u2019](?:m|ve|d)|my|we|we['\u2019](?:re|ve)|our)|I"
                           r"|i(?!\.)|us)\b")
# "I need all the papers on it.", "I'm looking for methods that …": a request, not a story
_REQUEST = re.compile(r"\b(?:papers?|works|studies|articles|list|every|looking\s+for|searching"
                      r"|all\s+(?:the\s+)?(?:papers|works|studies|methods|approaches|of\s+them)"
                      r"|each\s+(?:paper|one|method))\b", re.IGNORECASE)
# the asking sentence leans on the story: "We fine-tune on ETTh1. Does TEDM work on it?" (not
# "that" starting a clause: "Is there a paper that …?")
_LEANS_ON = re.compile(r"\b(?:this|these|those|it|they|them|such)\b|\bthat(?=\s*[?.,!]|\s+"
                       r"(?:one|paper|work|method|approach|problem|issue|setup|setting|data|"
                       r"kind|sort|type|case)\b)", re.IGNORECASE)
_ASKS_LITTLE = 6  # words: "Which paper should I read?" asks what the story says
# "I remember a paper about … what was it called?", "there was something using … what's the
# exact title?", "Someone told me about a method that …. Is that paper in here?": a paper
# recalled, its name asked (not "I read the GlowQ paper. What is the name of its cache?")
_RECALL = re.compile(
    r"(?:^|(?<=[.!?])\s)\W*(?:i\s+(?:(?:vaguely|think\s+i)\s+|half-)?(?:remember|recall|saw|read|"
    r"came\s+across|heard)"
    r"|there\s+(?:was|is)|(?:someone|somebody|a\s+(?:friend|colleague))\s+(?:told|showed)\s+me)"
    r"\s+(?:(?:about|of)\s+)?(?:(?:a|an|some|one|this)\s+(?:[\w\-]+\s+){0,3}?(?:paper|work|study|"
    r"article|method|approach|model|algorithm|technique|framework|system|trick|idea)s?|something)"
    r"\b.*?(?P<ask>\bwhat(?:['\u2019]?s|\s+(?:is|was))\s+(?:it|this|that|the\s+paper)(?:\s+called\b"
    r"|\s*\?)"
    r"|\b(?:its|the)\s+(?:(?:exact|full)\s+)?(?:title|name)(?:\s+of\s+(?:it|that|the\s+paper))?"
    r"(?:\s+(?:please|pls))?\W*$|\b(?:is|was)\s+(?:it|that|this)(?:\s+(?:paper|one|work))?\s+"
    r"(?:in\s+)?here\b)", re.IGNORECASE | re.DOTALL)


def recalled_until(question: str) -> int | None:
    """Where the asking starts in a question that recalls a paper and asks its name ("I
    remember a paper about … what was it called?"); None in any other."""
    found = _RECALL.search(question)
    return found.start("ask") if found else None


def question_sentences(text: str) -> list[str]:
    """The sentences of a question, also where one typed in lower case starts."""
    return [p for s in split_sentences(text) for p in _LOWER_START.split(s)]


def without_story(question: str) -> str:
    """The question without its sentences in the first person that neither ask (no "?") nor
    request papers, when its last asking sentence says what it asks (six words or more) and
    does not lean on them; else the question. A paper recalled after a story ("building
    NPCs for a game. … I remember a paper on …, what was it?"): from where it is recalled."""
    found = _RECALL.search(question)
    if found is not None and found.start() > 0 and not _LEANS_ON.search(
            question[found.start():found.start("ask")]):  # "… fine-tuned it with GRPO"
        return question[found.start():].strip()
    sentences = question_sentences(question)
    asking = [s for s in sentences if s.rstrip().endswith("?")]
    if (len(sentences) < 2 or not asking or _LEANS_ON.search(asking[-1])
            or len(asking[-1].split()) < _ASKS_LITTLE):
        return question
    kept = [s for s in sentences if s.rstrip().endswith("?") or not _FIRST_PERSON.search(s)
            or _REQUEST.search(s)]
    return " ".join(kept)
