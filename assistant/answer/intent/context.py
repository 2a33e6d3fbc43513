"""What a question says about its context: whether it leans on the conversation (a follow-up)
or starts a new topic, whether it is asked of the previous answer's papers ("which of
these …?"), and whether it asks about the collection itself ("what papers do you have?").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from assistant.answer.intent.kinds import (
    AUX,
    FOLLOW_UP,
    PAPER,
    asks_for_several,
    kind_of,
    strong_names,
    topic_terms,
)
from assistant.text.stems import stem

# A follow-up leans on the conversation through a pronoun, or "that"/"the" + a generic noun.
_DEPENDENT = re.compile(
    r"\b(?:it|its|they|them|their|theirs|this|these|those|the\s+same|the\s+(?:former|latter))\b"
    r"|\b(?:the|that)\s+(?:method|paper|model|approach|framework|work|authors|dataset|"
    r"algorithm|first|second|other|one|technique|system|study|benchmark)s?\b"
    rf"|\b(?:{AUX[3:-1]}|about|of|from|with|on|in|to|for|like)\s+that\b(?!\s+[a-z]+s\b)",
    re.IGNORECASE)
_NAMED = re.compile(r"\b[A-Za-z]*[A-Z][a-z]*[A-Z0-9][A-Za-z0-9\-]*\b")
# "papers that …" / "works which …": a list with its own topic, whose "they" is its own.
_OWN_LIST = re.compile(rf"(?i)\b{PAPER}\b.*\b(?:they|them|their|theirs|these|those)\b")


def join_follow_up(question: str, earlier: str) -> str:
    """A follow-up asked together with the earlier question, flat when that was itself one."""
    own, joined, before = earlier.partition(FOLLOW_UP)
    flat = f"{own} {before.removesuffix(')')}" if joined else earlier
    return f"{question}{FOLLOW_UP}{flat})"


# "Which of these does relighting?", "Do any of them use RL?", "Of those, which …?": asked of
# the papers the previous answer gave; not "which of these datasets …", "papers like any of these"
_EARLIER = (r"(?:these|those|them|the\s+above)(?:\s+(?:papers|ones|methods|approaches))?"
            rf"(?!\s+\w+s\s+{AUX}\b)")
_AMONG = re.compile(rf"^\W*(?:of|among|from)\s+{_EARLIER}\s*,\s*(?P<rest>.+)|\b(?P<w>w)hich"
                    rf"\s+(?:ones?\s+)?of\s+{_EARLIER}(?:\s+(?:two|three|both|\d+))?\b|^\W*(?P<aux>"
                    rf"{AUX}\s+)?(?P<some>any|none|all|each|both|one|some|either|neither|most)\s+"
                    rf"of\s+{_EARLIER}\b", re.IGNORECASE | re.DOTALL)


# "compare them", "summarize both", "contrast the two": the previous answer's papers, together
_TOGETHER = re.compile(r"^\W*(?:(?:and|so|ok(?:ay)?|now|then)\W+)?(?:(?:can|could)\s+you\s+|please\s+)?"
                       r"(?P<verb>compare|contrast|summari[sz]e|describe|explain)\s+(?:them|both|the\s+"
                       r"(?:two|three)|these(?:\s+two)?|those(?:\s+two)?|(?:all|both)\s+of\s+them)"
                       r"(?:\s+(?:please|for\s+me))?\W*$", re.IGNORECASE)


def asks_of_them_together(question: str) -> str | None:
    """The verb of a request about the previous answer's papers together ("compare them":
    "compare"), or None; in lower case, as "Compare" inside a later follow-up's "(follow-up
    to: …)" would be read as a name one letter off "compared"."""
    found = _TOGETHER.match(question)
    return found["verb"].lower() if found else None


def among_earlier(question: str) -> str | None:
    """The question asked of the papers the previous answer gave, without pointing at them
    ("Which of these does relighting?": "Which paper does relighting?"), or None."""
    found = _AMONG.search(question)
    if found is None or _OWN_LIST.search(question):  # "Find papers on X; which of them …?"
        return None
    if found["rest"]:  # "Of these, which one is …?": "which of these is …?"
        rest = re.sub(r"^which\s+(?:ones?\s+)?(?!of\b)", "which of these ", found["rest"],
                      count=1, flags=re.IGNORECASE)
        asked = among_earlier(rest) if rest != found["rest"] else rest
        return asked[:1].upper() + asked[1:]
    head, tail = question[:found.start()], question[found.end():]
    if found["some"]:
        return f"{head}{found['aux'] or ''}{found['some']} of the papers{tail}"
    several = asks_for_several(f"{head}which of these{tail}")  # not "these papers": a list
    return f"{head}{found['w']}hich paper{'s' * several}{tail}"


# "why?", "how so?", "tell me more", "more details please": about what was just said, with no
# topic of its own (not "who are you?", nor a question in a script the stems cannot read)
_BARE = re.compile(
    r"^\W*(?:and|so|ok(?:ay)?|but)?\W*(?:why(?:\s+(?:so|not))?|how(?:\s+so)?|really|go\s+on|"
    r"continue|elaborate|explain(?:\s+more)?|(?:tell\s+me|say)\s+more|more(?:\s+details?)?|"
    r"(?:any\s+)?details?|what\s+else|anything\s+else|(?:for\s+)?(?:an\s+)?examples?|"
    r"such\s+as|like\s+what|and)?\W*(?:please|pls)?\W*$", re.IGNORECASE)


def bare_follow_up(question: str) -> bool:
    """Whether the question is only "why?", "tell me more" or the like, or a few words that
    ask a fact of nothing named ("what optimizer?", "and how many models?", "which datasets?"):
    too short to be a topic of its own, in a conversation they ask about what was just said."""
    if not re.search(r"\w", question):
        return False
    if len(question) <= 60 and _BARE.match(question) is not None:  # short, and no backtracking
        return True
    words = re.findall(r"[\w\-']+", question)
    lead = int(bool(words) and words[0].lower() in ("and", "so", "ok", "okay", "but"))
    return (len(words) - lead <= 4 and _TERSE.match(question) is not None
            and not _POINTS.search(question)  # "what does it measure?" is rewritten
            and not any(w[1:] != w[1:].lower() or w[0].isupper() and i for i, w in enumerate(words))
            and kind_of(question) == "fact")


_POINTS = re.compile(r"\b(?:it|its|they|them|their|this|that|these|those)\b", re.IGNORECASE)
# "what optimizer?", "and how many models?", "any limitations?": a question word and a thing,
# nothing more; "and the results?", "what about the datasets?": a thing with "the", which only
# the conversation says the thing of (not "what about diffusion models?": the previous
# question, on a new topic)
_TERSE = re.compile(r"^\W*(?:(?:and|so|ok(?:ay)?|but)\W+)?(?:any\s+(?=\w+\W*$)|(?:what|which|"
                    r"how\s+(?:many|much))\b(?!\s*(?:'s|is|are|was|were|about)\b)|"
                    r"(?:and\s+|(?:what|how)\s+about\s+)the\s+"
                    r"(?!(?:others?|rest|remaining|former|latter|first|second|third|last)\b))",
                    re.IGNORECASE)


# "same question for TEDM", "and for GaussianFusion?", "what about SSD-GS?", "no, I meant GlowQ":
# the previous question, asked of another subject (not "what about the datasets?": of this one)
_AGAIN = re.compile(
    r"^\W*(?:(?:and|but|so|ok(?:ay)?|now|then)\W+)?(?:(?:what|how)\s+about\s+(?:for\s+|with\s+)?"
    r"|(?:the\s+)?same\s+(?:question\s+|thing\s+)?(?:for|about|with|of)\s+|(?:for|with)\s+"
    r"|(?:(?:no|nope|sorry|oops|wait)\W+)?i\s+meant\s+|(?<=\band\s)(?=\S+\W*$))"
    r"(?P<subject>(?!(?:the|its?|their|them|they|this|that|these|those)\b)[^?.!,;]{1,60}?)"
    r"(?:\s+instead)?\W*$", re.IGNORECASE)


def asked_again(question: str, history: Sequence[tuple[str, str]]) -> str | None:
    """The previous question asked of the paper this follow-up names instead ("same question
    for TEDM" after "what datasets does DIVERSE use?": "what datasets does TEDM use?"), when
    that question named one paper and this one names another; else None."""
    found = _AGAIN.match(question) if history else None
    if found is None or len(found["subject"].split()) > 5 or not _NAMED.search(found["subject"]):
        return None
    before = history[-1][0]
    before = asked_again(before, history[:-1]) or before  # "and for GlowQ?" after "same for X"
    names = set(_NAMED.findall(before))
    if len(names) != 1:
        return None  # several, or none to swap: the model rewrites it, as any follow-up
    [name] = names
    return re.sub(rf"(?<![\w\-]){re.escape(name)}(?![\w\-])", found["subject"].strip(), before)


# "how is that different from RaLoRA?", "does it beat GlowQ?": "it" set against a named one
_MORE = "better|worse|faster|slower|cheaper"
_SET_AGAINST = re.compile(
    rf"\b(?:it|that|this)\s+(?:\w+\s+){{0,3}}?(?:compare[sd]?|differ(?:s|ent)?|{_MORE}|"
    rf"beats?|outperforms?)\b|\b(?:is|does)\s+(?:it|that|this)\s+"
    rf"(?:\w+\s+){{0,2}}?(?:compare|differ|{_MORE}|beat|outperform)\b"
    # "how much faster than the LP solvers is it?", "how much faster is it than GPTQ?"
    rf"|\b(?:{_MORE})\s+than\b[^?,;]{{0,40}}?\b(?:is|does)\s+(?:it|that|this)\b(?=\s*(?:[?,.]|$))"
    rf"|\b(?:{_MORE})\s+(?:is|does)\s+(?:it|that|this)\s+than\b",
    re.IGNORECASE)


def needs_rewrite(question: str, history: Sequence[tuple[str, str]]) -> bool:
    """A follow-up that leans on the conversation (and names no method of its own); not
    "Summarize every paper about diffusion models that …" after a question on SAFER: its
    "that" starts a clause, and a list whose "they" are its own papers stands alone."""
    if not history or (_NAMED.search(question) and not _SET_AGAINST.search(question)):
        return False  # a name of its own, unless "it" is set against it
    if bare_follow_up(question):  # "why?", "tell me more", "how so?"
        return True
    if not _DEPENDENT.search(question):
        return False
    return not (_OWN_LIST.search(question) and len(topic_terms(question)) >= 2
                and not re.search(r"\b(?:it|its|this|that\s+\w+)\b", question, re.IGNORECASE))


# "what papers do you have?", "how many papers are indexed?", "what topics does this
# collection cover?": about the collection, not a topic in it
_COLLECTION = re.compile(rf"\b(?:{PAPER}|topics?|subjects?|collection|corpus|index(?:ed)?)\b",
                         re.IGNORECASE)
_THIS_SET = re.compile(r"\b(?:this|these|the|your)\s+(?:collection|corpus|index|set|library|"
                       r"database)\b", re.IGNORECASE)
_DOING = re.compile(r"\b(?:use[sd]?|using|appl(?:y|ies|ied)|build(?:s|ing)?|propose[sd]?)\b",
                    re.IGNORECASE)
_OF_COLLECTION = frozenset(stem(w) for w in """topic topics subject subjects collection corpus
    index indexed library cover covers covered contain contains include includes available
    list all every whole entire many number count total here there show""".split())


def about_collection(question: str) -> bool:
    """Whether a question asks what the collection holds (its papers, how many, their
    topics) and nothing about what they say: the index answers it ("Which papers are about
    RL?" has a topic, "Pretend the corpus contains a paper proving P = NP …" orders)."""
    return (_COLLECTION.search(question) is not None and not strong_names(question)
            and not topic_terms(question) - _OF_COLLECTION
            and not _DEPENDENT.search(_THIS_SET.sub(" ", question))  # "… does it cover?"
            and not _DOING.search(question)  # "how many papers use an index?"
            and kind_of(question) != "identify")  # "is there a paper on indexing?"


# "give me the bibtex for GlowQ", "how do I cite SAFER?", "arxiv link for TEDM": the paper's
# reference, which the index holds, not anything its abstract says
# ("what is the reference model in GlowQ?", "what does GlowQ cite?", "is there a link between
# X and Y?" ask about the paper, not for it)
_ENTRY = re.compile(
    r"\b(?:bibtex|bib(?:\s+entry)?|citation|(?:full\s+)?reference\s+(?:entry|for|of)"
    r"|how\s+(?:do|should|can|would|to)\s+(?:i\s+|we\s+|you\s+)?cite)\b|^\W*cite\b",
    re.IGNORECASE)
_REFERENCE = re.compile(
    rf"{_ENTRY.pattern}|\b(?:url|arxiv|openreview|doi|pdf)\b"
    r"|\b(?:the|a|its|paper|arxiv|openreview|pdf|web)\s+link\b(?!\s+between)"
    r"|\blink\s+(?:to|for)\s+(?:the\s+)?(?:paper|pdf|it)\b", re.IGNORECASE)
_OF_REFERENCE = frozenset(stem(w) for w in """bibtex bib entry cite citing citation reference
    link url doi arxiv openreview pdf id page number format key""".split())


def asks_for_reference(question: str, paper_words: set[str]) -> str | None:
    """``"entry"`` (its BibTeX) or ``"link"`` when a question asks for one paper's reference
    and nothing else, ``paper_words`` the stems of that paper's title and names (the question
    must name it: "which papers have arXiv links?" does not); else None."""
    if not _REFERENCE.search(question) or kind_of(question) == "list":
        return None
    rest = topic_terms(question) - _OF_REFERENCE
    if not rest or rest - paper_words:
        return None
    return "entry" if _ENTRY.search(question) else "link"
