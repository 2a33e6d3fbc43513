"""What a question wants: a thing named, a number, a value ("Which dataset does SSD-GS use?",
"How many annotators …?", "What accuracy does PEA get?"; an answer that names none does not
answer it: ``asked.gives_wanted``), a yes or a no, or a ranking."""

from __future__ import annotations

import re

from assistant.answer.intent.kinds import AUX, asked, asking_sentence, kind_of

# "Which dataset does SSD-GS use?": a name (OLAT), not "a real-world dataset"; not "what kinds …"
_NAMED_THING = (r"datasets?|benchmarks?|encoders?|llms?|baselines?|backbones?|optimi[sz]ers?"
                r"|librar(?:y|ies)|hardware|gpus?|universit(?:y|ies)|compan(?:y|ies)|institutions?"
                r"|generators?|robots?|simulators?|tokeni[sz]ers?|scanners?|phones?"
                r"|(?:language|pretrained|base|teacher|student|foundation)\s+"
                r"(?:[\w\-]+\s+){0,2}?models?")
_ASKS_NAME = re.compile(
    r"(?:^\W*(?:(?:tell\s+me|and|also|so|just|please)\s+)?(?:which|what|name|list)"
    # "DrPose15K built from which dataset?", "In the off-policy paper, which dataset …?" (not
    # "GlowQ vs GPTQ, which baseline is stronger?")
    r"|(?<=\w\s)(?:which|what)|^\W*(?:in|for|on|from|about|regarding)\b[^?]*?,\s+(?:which|what))"
    r"\s+(?:the\s+)?"
    rf"(?:(?!(?:a|an|any|some|kinds?|types?|sorts?)(?![\w\-]))[\w\-]+\s+){{0,2}}?"
    rf"(?P<thing>{_NAMED_THING})\b"
    rf"(?=\s+(?:{AUX}|or|and|used|that|which|(?-i:[A-Z][\w\-]*|[a-z]+[A-Z0-9][\w\-]*))\b"
    r"|\s*[?.,]|\s*$)",
    re.IGNORECASE)


_WHICH_THING = re.compile(rf"\b(?:which|what)\s+(?:[\w\-]+\s+)?(?:{_NAMED_THING})\b",
                          re.IGNORECASE)


def asks_which_thing(question: str) -> bool:
    """Whether the question asks which things of a kind that has names ("mvr - which
    benchmarks were experiments on"), wherever it asks it."""
    return _WHICH_THING.search(question) is not None


# "What learning rate does RS-GRPO use?", "what's PEA's accuracy on ImageNet-C?": a value (not
# "what accuracy gain …", nor "what score …", which may be a name: PoseScore)
_ASKS_VALUE = re.compile(
    r"^\W*what(?:'s|\s+(?:is|was|are|were))?\s+(?:(?:the|its|their|[\w\-]+'s)\s+)?"
    r"(?:(?:top-[15]|final|average|reported|overall|exact|absolute)\s+)?"
    r"(?:learning\s+rates?|batch\s+sizes?|accurac(?:y|ies)|perplexit(?:y|ies)"
    r"|(?:F1|BLEU|NDS|mAP|mIoU|GLUE)(?:\s+scores?)?)\b"
    r"(?!\s+(?:improvements?|gains?|benefits?|drops?|trade-?offs?|boosts?|loss(?:es)?)\b)",
    re.IGNORECASE)
# "How many …", "Quick check: into how many …"; not "… matched to how many directions"
_HOW_MANY = re.compile(r"(?:^|[.?!:;,]\s*)\W*(?:\w+\s+)?how\s+many\b", re.IGNORECASE)
_WH_BEFORE = re.compile(r"\b(?:what|which|who|how|why|where|when)\b", re.IGNORECASE)


def asks_for_name(question: str) -> str | None:
    """The kind of thing a question wants named ("dataset" for "Which dataset does SSD-GS
    use?", "number" for "How many annotators …?", "value" for "What accuracy does PEA get?"),
    or None; questions for a paper ("which paper …", "name a method …") are not."""
    own = asked(question)
    if kind_of(question) != "fact":
        return None
    if _ASKS_VALUE.search(own):
        return "value"
    found = _ASKS_NAME.search(own) or _HOW_MANY.search(own)
    if found is None or _WH_BEFORE.search(own[:found.start()]):
        return None  # "What does GlowQ do, and which baseline …?" asks for more than a name
    return "number" if found.re is _HOW_MANY else " ".join(found["thing"].lower().split())


_YES_NO = re.compile(rf"^\W*(?:[\w ]{{1,30}}:\s*)?(?i:{AUX}|may|might)\b")  # "New topic: does …"
# after a clause ("If I use SAFER, can I …?", "X vs Y: does either …?"); not "…, but is there …?"
_YES_NO_AFTER = re.compile(rf"^(?!\W*(?i:what|which|who|whom|whose|how|why|when|where)\b)[^?.!]"
                           rf"{{1,120}}?[,:;]\s*(?:(?:but|so|and|then)\s+)?(?i:{AUX})\b(?!\s+"
                           r"(?i:there|any(?:one|body)|some(?:one|body)|people|others|anything)\b)")


# a question of its own before that clause: "PEA — how many forward passes does it need, and …"
# (not a clause inside it: "In PEA, when the backbone is frozen, does it …?")
_WH_CLAUSE = re.compile(r"(?:[—–:;,]|\s-+\s)\s*(?i:what|which|who|whom|whose|how|why|when|"
                        r"where)\b.*[,;]\s*(?i:and|but|so|also)\s+\w+$")


def asks_yes_or_no(question: str) -> bool:
    """Whether a question about what the papers say wants a yes or a no ("Does TEDM rely on
    an external noise schedule?"; not "Is there work on …?", which asks for papers, nor
    "How many passes does PEA need, and does it use backprop?", which asks for more)."""
    own = asked(question)
    last = asking_sentence(own)  # "My team …. Does X …?"
    after = _YES_NO_AFTER.match(last)
    return kind_of(question) == "fact" and bool(
        _YES_NO.match(own) or _YES_NO.match(last)
        or (after and not _WH_CLAUSE.search(after.group())))


_RANKS = re.compile(
    r"\b(?:more|less|fewer|better|worse|higher|lower|bigger|smaller|larger|faster|slower|"
    r"cheaper|longer|shorter|stronger|weaker|greater|most|least|best|worst|highest|lowest|"
    r"biggest|smallest|largest|fastest|newer|older|earlier|later|superior|inferior|"
    r"outperforms?|beats?|wins?|recommend|prefer|choose|pick)\b", re.IGNORECASE)


def ranks(question: str) -> bool:
    """Whether the question asks which of them is more of something ("Which one needs less
    memory, Value Matching or GlowQ?"): what each paper says alone does not answer it."""
    return _RANKS.search(asked(question)) is not None
