"""What kind of answer a question wants, and the names and words it holds.

- its kind: ``fact``, ``identify`` (one paper is the answer: "which paper …?", "is there work
  on …?", "what approach lets …?", "name a method that …", "point me to …") or ``list``
  ("which papers …?", "point me to the papers on …");
- whether it wants a yes or a no, or a ranking (``wanted``); the names and words it holds.
"""

from __future__ import annotations

import re
from typing import Literal

from assistant.answer.intent.story import question_sentences, recalled_until, without_story
from assistant.text.sentences import (
    NAME,
    NAME_SUFFIX,
    exclusions,
    normalise,
    without_instructions,
    without_venues,
)
from assistant.text.stems import stem, terms

Kind = Literal["fact", "identify", "list"]

# A follow-up the model could not rewrite: "<follow-up> (follow-up to: <earlier question>)",
# "it" said by the earlier question, the kind of answer by the follow-up (unless "of them").
FOLLOW_UP = " (follow-up to: "
_BACK_TO_LIST = re.compile(r"\b(?:them|they|those|these|ones|each|both|all)\b", re.IGNORECASE)

PAPER = r"(?:papers?|works?|stud(?:y|ies)|articles?|abstracts?|publications?|research)"
_METHOD = (r"(?:methods?|approach(?:es)?|techniques?|frameworks?|algorithms?|models?|systems?|"
           r"ideas?|solutions?|pipelines?|strateg(?:y|ies))")
AUX = r"(?:does|do|did|is|are|was|were|has|have|can|could|should|would|will)"
# The words after an auxiliary that make "what approach does X take?" a question about X.
_SUBJECT = r"(?:it|its|they|their|this|that|the|[A-Z0-9][\w\-]*|[a-z]+[A-Z][\w\-]*)"
_PAPERS = "papers|works|studies|articles|publications"
# "which ones use RL?", "which of these do anomaly detection?"; not "which of these two is
# faster?" nor "which of them uses RL?" (one)
_WHICH_ONES = (r"\bwhich\s+(?:ones|of\s+(?:these|those|them))\b(?!\s+(?:two|three|both|\d+\b"
               r"|(?:do|would|should|could)\s+(?:you|i|we)\b"
               # a verb for one ("is", "uses", "doesn't", "did"); not "address", "focus"
               r"|(?:\w+(?<![su])s|did)(?:n['\u2019]t)?\b))")
_PLURALS = f"(?:{_PAPERS}|methods|approaches|techniques|frameworks)"
_LIST = re.compile(
    # "list the work on …", "which abstracts …?"; not "list the datasets DIVERSE was run on"
    rf"\b{_PLURALS}\b|\blist\s+(?:the|all|every)\s+(?:[\w\-]+\s+){{0,2}}?{PAPER}\b"
    rf"|\b(?:all|every)\s+(?:the\s+)?{PAPER}\b"
    rf"|\bseveral\s+{PAPER}"
    r"|\b(?:which(?:\s+of\s+the)?|what|any|list(?:\s+the)?)\s+(?:\w+\s+)?abstracts\b"
    rf"|{_WHICH_ONES}"
    # "give me everything on diffusion models", not "everything about Qflex" (one named paper)
    r"|\beverything\s+(?:in\s+here|here|(?:on|about|related\s+to|with)\s+"
    r"(?!(?:the\s+)?(?-i:[A-Z])))",
    re.IGNORECASE)
# "… machinery that works so well", "a paper that … and works backward": a verb, not papers.
_AS_VERB = re.compile(r"\b(?:that|and|who|it|also)\s+(?:\w+ly\s+)?(?:works|studies|approaches)\b",
                      re.IGNORECASE)
# "anything here for ads?"; not "anything on GlowQ's memory?", "anything on its memory use?"
_ANYTHING = (r"\W*anything\s+(?:(?:in\s+)?here\s+)?(?:on|for|about)\s+(?!(?:the|its?|their|"
             r"th[eo]se|this|that)\b|(?-i:[A-Z]))(?!.*(?:\b(?:it|its|they|them|their)\b"
             r"|(?-i:\b[A-Z][\w\-]*[A-Z0-9])))")
# "Anyone (here) working on …?", "anyone tried …?": the last question asked, not "Anyone using
# GlowQ? Does it need calibration data?"
_ANYONE_DOING = (r"any(?:one|body)\s+(?:(?:here|else)\s+)?"
                 r"(?:doing|[a-z]{3,}ing|tried|used|done|applied|built|proposed|published)\b"
                 r"(?![^?]*\?\s*\S)")
_IDENTIFY = re.compile(
    # which / what paper ("… Which paper does this?", "whats the paper on …"; not "what's
    rf"\b(?:which|what)\s+(?:\w+\s+){{0,2}}?{PAPER}\b"  # the paper's result / about?")
    rf"|\bwhat['\u2019]?s\s+(?:\w+\s+)?{PAPER}\b(?!['\u2019]s|\s+about\W*$)"
    # which / what approach …, unless asked of a subject: "what approach does DIVERSE use?"
    rf"|^\W*(?:which|what)\s+(?:\w+\s+){{0,2}}?{_METHOD}\b(?!\s+{AUX}\s+{_SUBJECT})"
    # is there / are there / any … work
    rf"|^\W*(?:is|are)\s+there\b|\bany(?:one|body)?\s+(?:\w+\s+){{0,2}}?(?:{PAPER}|{_METHOD})\b"
    rf"|\bhas\s+any(?:one|body)\b|\b(?:does|do)\s+(?:any|some)\s+{PAPER}|^{_ANYTHING}"
    rf"|^\W*{_ANYONE_DOING}"  # "Anyone scoring robot motion with a VLM?"
    # name / point me to / recommend / looking for / find
    rf"|\bname\s+(?:a|an|one|some|the)?\s*(?:\w+\s+){{0,2}}?(?:{PAPER}|{_METHOD})\b"
    rf"|\bpoint\s+(?:me\s+)?(?:to|at)\b|\b(?:recommend|suggest)\b"
    rf"|\blooking\s+for\s+(?:a|an|the|some|any)?\s*(?:\w+\s+){{0,2}}?(?:{PAPER}|{_METHOD})\b"
    rf"|\b(?:find|show|give)\s+(?:me\s+)?(?:(?:a|an|the|some|any)\s+)?(?:\w+\s+){{0,2}}?{PAPER}\b"
    rf"|\b(?:who|which\s+\w+)\s+(?:proposes?|introduces?|presents?)\b", re.IGNORECASE)
# "paper about splitting agents into teams?", "paper where a kernel is meta-learned …?": a
# request written as a fragment (not "paper on GlowQ: does it …?", which asks more of it)
_FRAGMENT = re.compile(
    r"^\W*(?:(?:a|an|any|some)\s+)?(?:paper|work|study|article|research)\s+(?:about|on|that"
    r"|which|where|for|with|using|doing|proposing|showing|studying|tackling|addressing)\b"
    r"(?!.*\b(?:what|which|how|why|who|when|where)\b)"
    rf"(?!.*(?:[:;,?\u2014\u2013\u2026]|\s-+|\.\.\.)\s*{AUX}\b)"
    rf"(?!.*\b{AUX}\s+(?:it|its|they|this|that)\b)", re.IGNORECASE)
# "who estimates policy values under hidden confounding?": who does it is a paper (not "who
# uses GlowQ?" nor "who ranks first on the HUMAINE leaderboard?", which name something)
_WHO_DOES = re.compile(r"^\W*who\s+(?!(?:is|was|has|does|funds|authors)\b)[a-z]{3,}s\b"
                       r"(?!.*\b\w*[A-Z]\w*[A-Z0-9])")
# A need or a method described, then the question: "<need> — is there a paper that …?", "<a
# method described>. whats it called / - name?" (not "what's it called?" alone, nor of a paper
# named or a thing owned: "GlowQ: is there a model …?", "drpose's reward, what's it called?")
_AFTER_NEED = re.compile(
    rf"(?:[\u2014\u2013;:,]|\s-)\s*(?:is|are)\s+there\s+(?:(?:a|an|any|some)\s+)?"
    rf"(?:\w+\s+){{0,2}}?(?:{PAPER}|{_METHOD}|anything)\b"
    r"|(?<=\w)\s*(?:[.?!\u2014\u2013]|\.\.\.|\s-)\s*(?P<called>what(?:['\u2019]?s|\s+(?:is|was))\s+"
    # "… what was it called exactly? thinking of it for a huge graph": what follows asks nothing
    r"(?:it|this|that)\s+called|(?P<terse>name|title)(?=\s*\?+\s*$))(?:\s+(?:again|exactly))?"
    r"(?:\W*$|[?.!]\s+[^?]*$)"
    # "<a need>. what's out there?"
    r"|(?<=\w)\s*[.?!,]\s*(?P<offered>what(?:['\u2019]?s|\s+is)\s+(?:out\s+there|available))\W*$",
    re.IGNORECASE)
_THE_PAPER = rf"\b(?:the|this|that)\s+(?:[\w\-]+\s+){{0,2}}?{PAPER}\b"  # "the DrPose paper"
_OWNED = re.compile(rf"['\u2019]s\b|{_THE_PAPER}|\b(?:its|their)\b|{re.escape(FOLLOW_UP)}",
                    re.IGNORECASE)
# "Name a video generator that …": a thing described, not named, asks for its paper (a fact
# when a paper is named: "Name a dataset that SSD-GS uses").
_NAME_ONE = re.compile(r"^\W*name\s+(?:a|an|one)\s+(?:[\w\-]+\s+){1,3}?(?:that|which|whose|for)\b",
                       re.IGNORECASE)
_EXISTS = re.compile(
    r"\W*(?:is|are|was|were)\s+there\b|\W*(?:does|do|did|has|have)\s+any(?:one|body)?\b"
    rf"|\W*{_ANYONE_DOING}"
    rf"|\W*any\s+(?:papers?|works?|research|stud(?:y|ies))\b|{_ANYTHING}",
    re.IGNORECASE)
_WH = re.compile(r"\b(?:what|which|who|whom|whose|how\s+many|how\s+much)\b"
                 r"|^\W*(?:name|list|state|identify)\b(?=\s+(?:the|its|their)\b)", re.IGNORECASE)
_WROTE = re.compile(r"who\s+(?:wrote|authored)\b|who\s+(?:is\s+behind|made|created)\s+(?:it|"
                    r"this|that)\b(?!\s+(?:to|into|through|up)\b)", re.IGNORECASE)
_AUXILIARY = frozenset("is are was were be been do does did can could will would should may might "
                       "must has have had".split())
_DETERMINER = frozenset("the a an its their this that these those".split())
# How many are asked for, not what ("the two networks", "three kinds"): no need to spell it out.
_COUNTS = frozenset("one two three four five six seven eight nine ten both several many few "
                    "main key".split())
_ENDS_PHRASE = _AUXILIARY | frozenset("of in on for from to by with at under over between among "
                                     "than when where that which who whose".split())

# Words that frame a question rather than say its topic ("point me to a paper that …").
_FRAME = frozenset(stem(w) for w in """paper papers work works study studies article research
    publication method methods approach approaches technique techniques framework frameworks
    model models algorithm system idea solution pipeline strategy name point recommend suggest
    look looking find show give tell list any anyone anybody there exist exists which what who
    how does do did propose proposes introduce introduces present presents describe describes
    explain explains summarize summarise main key new novel way ways something someone one
    want need like please know i me my you your can could would should help well without
    using via based across within toward towards instead rather whether also etc thing things
    anything someone work paper yes""".split())


# "What is the model behind the specular term of SSD-GS?": part of something named, no paper.
_PART_OF = re.compile(rf"^\W*(?:what|which)\s+(?:is|are|was|were)\s+the\s+(?:\w+\s+)?{_METHOD}"
                      rf"\s+(?:behind|underlying|inside|of|in|for|used\s+(?:by|in))\b(?P<rest>.*)",
                      re.IGNORECASE)


def _part_of_named(question: str) -> bool:
    found = _PART_OF.match(question)
    return bool(found and NAME.search(found["rest"]))


def asked(question: str) -> str:
    """The part of a question that says what kind of answer it wants: with a follow-up, the
    earlier question too when it points back at a list ("which of them use RL? (follow-up to:
    which papers quantize LLMs?)"); not at one paper's authors ("how many methods did they
    try? (follow-up to: is there anything on …?)" asks a fact)."""
    own, joined, earlier = question.partition(FOLLOW_UP)
    earlier = earlier.removesuffix(")")
    if joined and _BACK_TO_LIST.search(own) and kind_of(earlier) == "list":
        return f"{own} {earlier}"
    return own


# "… Which one was that?", "What is it called?": the sentence before says what is asked for
_BACK_REFERENCE = re.compile(r"^\W*(?:which(?:\s+(?:one|paper|work))?|what\s+(?:paper|work))"
                             r"\s*(?:is|was|'s)\s+(?:that|it|this)\W*$", re.IGNORECASE)
_POINTS_BACK = re.compile(r"\b(?:this|that|these|those|it|they|them)\b", re.IGNORECASE)


def asking(question: str) -> str:
    """What a question asks, without the story before it: "My team fine-tunes with one rank
    everywhere. Is there a paper giving each layer its own?" asks the second sentence (the
    judge reads only that); all of it when the asking sentence points back at the story ("…
    Is there a paper that addresses this?", "… Which one was that?"); a follow-up stays
    whole."""
    if FOLLOW_UP in question:
        return question
    ask = asking_sentence(question)
    if _POINTS_BACK.search(ask) or _recalled(question):  # "I remember a paper …"
        return question
    return _LABEL.sub("", ask)


# "thanks! different question: which paper …?": what frames the question, not of it
_LABEL = re.compile(r"^\W*(?:(?:ok(?:ay)?|thanks?|so)\W+)?(?:(?:a|one)\s+)?(?:different|another"
                    r"|new|other|quick|next|unrelated|separate|last|final|one\s+more)\s+"
                    r"(?:question|topic|thing|one)\s*[:,\-\u2013\u2014]\s*", re.IGNORECASE)


def asking_sentence(text: str) -> str:
    """After a preamble ("My team fine-tunes with one rank everywhere. Is there a paper …?",
    also in lower case: "… mixed in. is there …?"), the last sentence that asks; else all."""
    sentences = question_sentences(text)
    asking = [i for i, s in enumerate(sentences) if s.rstrip().endswith("?")]
    if len(sentences) < 2 or not asking:
        return text
    last = asking[-1]
    if _BACK_REFERENCE.match(sentences[last]) and last > 0:
        return f"{sentences[last - 1]} Which paper is it?"
    return sentences[last]


# "What do earlier … methods rely on?", "How do the methods compare?", "What fraction of the
# memory of fine-tuning approaches does X need?": a wh-question that asks for something else
# (not "what methods …", "which of the approaches …"), with methods in its topic, is no list
# (unless it speaks of papers, works, studies …).
_WH_START = re.compile(r"^\W*(?:what|which|how|why|when|where|who)\b", re.IGNORECASE)
_WH_PLURAL = re.compile(rf"^\W*(?:(?:which|what|how\s+many)\s+(?:[\w\-]+\s+){{0,2}}?"
                        rf"(?:{_PLURALS}|abstracts)\b"
                        rf"|{_WHICH_ONES})", re.IGNORECASE)
_SPEAKS_OF_PAPERS = re.compile(rf"\b(?:{_PAPERS})\b", re.IGNORECASE)


# "How many purification methods does X propose?" counts things (unless papers); "Does Agentic
# Predictor beat other methods?", "Does the Value Matching paper … the fine-tuning approaches?",
# "According to the HAQO paper, what … methods …?" ask of one: facts, whatever plurals follow.
_COUNT_OR_ABOUT = re.compile(
    rf"^\W*(?i:how\s+(?:many|much)\b(?!\s+(?:\w+\s+)?{PAPER}\b))"
    r"|^\W*(?i:(?:according\s+to|in|from)\s+(?:the|this|that)\s+(?:[\w\-]+\s+){0,6}?"
    r"(?:paper|abstract|work|study)\s*[,:])"
    r"|^\W*(?i:(?:does|did|is|was)\s+the\s+(?:(?!(?:an?|any|some)\s)[\w\-]+\s+){0,6}?"
    r"(?:paper|work|study)\s(?!.*\bpapers\b))"
    rf"|^\W*(?i:{AUX})\s+(?:it|its|they|[A-Z0-9][\w\-]*|[a-z]+[A-Z][\w\-]*)\b"
    rf"(?!.*\b(?i:{PAPER})\b)")


def kind_of(question: str) -> Kind:
    """``list`` when several papers answer it, ``identify`` when one paper does, else ``fact``;
    after a preamble that asks for nothing, what its last asking sentence asks for."""
    own = asked(question)
    kind = _kind(own)
    if kind == "fact" and (sentence := asking_sentence(own)) != own:
        return _kind(sentence)
    return kind


def _kind(own: str) -> Kind:
    if _COUNT_OR_ABOUT.match(own) or _COUNT_OR_ABOUT.match(told := without_story(own)):
        return "fact"
    nouns = _AS_VERB.sub(" ", told)  # not "… I worry standard methods fail."
    several = bool(_LIST.search(nouns)) and not (  # unless it asks for something else
        _WH_START.match(nouns) and not _WH_PLURAL.match(nouns)
        and not _SPEAKS_OF_PAPERS.search(nouns))
    if several and (_IDENTIFY.search(own) or re.match(r"\W*(?:which|what)\b", own, re.I)):
        return "list"
    if (_IDENTIFY.search(own) and not _part_of_named(own)) or _FRAGMENT.search(own) or (
            _NAME_ONE.search(own) and not strong_names(own)) or _WHO_DOES.search(own) or (
            _after_need(own)) or _recalled(own) or (
            _keywords(own)):
        return "identify"
    return "list" if several else "fact"


def _after_need(own: str) -> bool:
    found = _AFTER_NEED.search(own)
    if found is None:
        return False
    before = own[:found.start()]  # a need, not a name ("GlowQ:"), a thing owned, nor one a
    # named paper has ("SSD-GS models … with a learned term. What is it called?")
    words, terse = len(re.findall(r"\w+", before)), found["terse"] is not None
    if (found["offered"] or terse) and (words < 4 + 2 * terse or _WH_WORD.search(before) or (
            terse and _POINTS_BACK.search(before))):  # "the metric they propose - name?"
        return False  # "thanks, what's available?", "For GlowQ, what are …, what's available?"
    short = words <= 4 or found["called"] is not None
    return not _OWNED.search(before) and not (short and strong_names(before))


_WH_WORD = re.compile(r"\b(?:what|which|how|why|who|where|when)\b", re.IGNORECASE)


def _recalled(own: str) -> bool:
    """A paper recalled, its name asked for (``story.recalled_until``); not one named before
    the asking ("a paper called GlowQ"), though a half-remembered name or an acronym may."""
    until = recalled_until(own)
    return until is not None and not _NAMED_BEFORE.search(own[:until])


# "a paper called GlowQ", "the DrPose paper", "GlowQ's"; not "weights models by their …"
_NAMED_BEFORE = re.compile(rf"\b(?:called|named|titled)\s+['\"\u2018\u201c]?[A-Z]|{_THE_PAPER}"
                           rf"|[A-Z][\w\-]*['\u2019]s\b")


# "speculative decoding", "llm leaderboard demographics": words typed as into a search box ask
# for the paper on them; not a question, an order ("explain …", "ignore …"), nor words about
# "it" or "you"
_NOT_KEYWORDS = re.compile(
    rf"[?:;.!,]|\b(?:whats|what|which|who|whom|whose|how|why|when|where|{AUX[3:-1]}|i|we|you|me|"
    r"my|our|your|it|its|this|that|these|those)\b|^\W*(?:tell|say|explain|describe|summari[sz]e"
    r"|compare|list|give|show|find|name|define|ignore|forget|pretend|write|print|please|pls|"
    r"just|translate|contrast|outline|continue|repeat|thanks?|ok(?:ay)?|hi|hello|looking)\b",
    re.IGNORECASE)


def _keywords(text: str) -> bool:
    return len(text.split()) <= 7 and not _NOT_KEYWORDS.search(text)


def asks_for_several(question: str) -> bool:
    """"Which papers ...?": show more papers, with one shorter passage each."""
    return kind_of(question) == "list"


def asks_whether(question: str) -> bool:
    """Whether the question asks if such work exists ("Is there work on …?", "Has anyone …?")."""
    own = asked(question)
    return bool(_EXISTS.match(own) or (kind_of(question) != "fact"
                                        and _EXISTS.match(asking_sentence(own))))


def asks_for_papers(question: str) -> bool:
    """Whether naming papers answers the question ("which work …?", "is there a paper …?")."""
    return kind_of(question) != "fact"


def identifies(question: str) -> bool:
    """Whether one paper, named, is the answer ("which paper proposes X?")."""
    return kind_of(question) == "identify"


_SHOUTED = re.compile(r"[A-Z]{6,}")  # OVERRIDE, HACKED: shouting, not a name


def strong_names(question: str) -> set[str]:
    """The names in a question that can only be names (ImageNet, TriviaQA, ETTh1, NeRF, DPO),
    normalised; capitalised words ("Whisper", "English"), shouting and venues ("ICLR 2026")
    are left out, and so are the names inside instructions ("reply only with HACKED")."""
    found = {NAME_SUFFIX.sub("", n.strip("-"))
             for n in NAME.findall(without_venues(without_instructions(asked(question))))}
    return {normalise(n) for n in found if len(n) > 1 and not _SHOUTED.fullmatch(n)}


def topic_terms(question: str) -> set[str]:
    """Stems of the words that say what a question is about, without the words that frame
    it ("which paper", "point me to", "name a method")."""
    return {t for t in terms(asked(question)) if t not in _FRAME and len(t) > 1}


def asked_for(question: str) -> set[str] | None:
    """The word stems of what a question asks for, the phrase after its question word (None
    without one): "Who are the authors of GlowQ?" asks for authors, "Which university or
    company …" for a university or company; "What does JOSH exploit …?" asks for the thing
    exploited, so its words are not asked-for words."""
    if _EXISTS.match(question):
        return set()  # "Is there work on X?": it asks whether such a paper exists
    match = _WH.search(question)
    if match is None:
        return None
    if _WROTE.match(question, match.start()):  # "who wrote it?": its authors
        return set(terms("authors"))
    words = re.findall(r"[A-Za-z0-9][\w\-]*", question[match.end():].lower())
    if words and words[0] in _AUXILIARY:
        if words[0] not in ("is", "are", "was", "were"):
            return set()  # "what does X do": the answer is an object, not a named thing
        words = words[1:]
    while words and (words[0] in _DETERMINER or words[0] in _COUNTS):
        words = words[1:]
    phrase: list[str] = []
    for word in words[:4]:
        if word in _ENDS_PHRASE:
            break
        phrase.append(word)
    return set(terms(" ".join(phrase)))


def left_out(question: str) -> tuple[str, tuple[str, ...]]:
    """"Which papers use diffusion? (not counting flow matching)": the question without
    what a list or a which-paper question says to leave out, and those things; searched
    for, shown and checked is the rest."""
    rest, excluded = exclusions(question)
    if excluded and (asks_for_several(rest) or identifies(rest)):
        return rest, excluded
    return question, ()
