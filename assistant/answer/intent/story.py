"""What a question tells of the asker's own situation, around what it asks: "Any work on
policies under unmeasured confounders? In our EHR data there is always stuff we can't
measure …". The story says why they ask; its names (EHR) and its plural nouns ("standard
methods") are not what a paper must hold or a list is of."""

from __future__ import annotations

import re

from assistant.text.sentences import split_sentences

_FIRST_PERSON = re.compile(r"\b(?:i|i['\u2019](?:m|ve|d)|my|we|we['\u2019](?:re|ve)|our|us)\b",
                           re.IGNORECASE)
# "I need all the papers on it.": a request in the first person, not a story
_REQUEST = re.compile(r"\b(?:papers?|works|studies|articles|list|all|every|each)\b", re.IGNORECASE)
# the asking sentence leans on the story: "We fine-tune on ETTh1. Does TEDM work on it?"
# (not "that" starting a clause: "Is there a paper that …?")
_POINTS_BACK = re.compile(r"\b(?:this|these|those|it|they|them|such)\b|\bthat(?=\s*[?.,!]|\s+"
                          r"(?:one|paper|work|method|approach|problem|issue|setup|setting|data|"
                          r"kind|sort|type|case)\b)", re.IGNORECASE)


def without_story(question: str) -> str:
    """The question without its sentences in the first person that ask nothing (no "?", no
    papers wanted), when another sentence asks and does not point back at them; else the
    question."""
    sentences = split_sentences(question)
    asking = [s for s in sentences if s.rstrip().endswith("?")]
    if len(sentences) < 2 or not asking or _POINTS_BACK.search(asking[-1]):
        return question
    kept = [s for s in sentences if s.rstrip().endswith("?") or not _FIRST_PERSON.search(s)
            or _REQUEST.search(s)]
    return " ".join(kept)
