"""Text helpers every stage may use: sentences, normalising, the names and numbers a sentence
holds, and orders planted in text (a leaf: it imports no other module of the package)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])")
# a name, with the capitalised words hyphened before it ("Self-RAG", not "deep-RL")
NAME = re.compile(r"\b(?:[A-Z][a-z]+-)*[A-Za-z]*(?:[A-Z][a-z0-9]*[A-Z0-9]|[a-z][A-Z]|\d[A-Za-z]"
                   r"|[A-Za-z]\d)[A-Za-z0-9\-]*(?:\+\+)?"  # DCFlow++ is not DCFlow
                   # a model size typed in any case: "llama-3-70b", "13B" (not "10x", "128k")
                   r"|(?<![\w.])\d{2,}[Bb](?![\w])")
# "PDDL-style regression", "an IBG-based network": the name is PDDL, IBG
NAME_SUFFIX = re.compile(r"-(?:style|based|like|shaped|type|aware|driven|guided|inspired|"
                         r"specific|oriented|centric|free|only|level|"
                         # "AIGB-something?": a name half remembered, its start given
                         r"something|whatever)$", re.IGNORECASE)
# a capitalised word and a letter or digit: "Avey-B", "Llama-3" (not "person-to-3D")
_HYPHENED = re.compile(r"\b[A-Z][a-z]+-[A-Z0-9](?![a-z])[A-Za-z0-9\-]*")
_CAPITAL = re.compile(r"(?<=[\w,;:)] )[A-Z][a-z]{2,}\b")
# Capitalised words that name nothing in particular.
_PLAIN = frozenset(
    """The This That These Those They Their Its It In On For With By From And But Or As At To
    We Our Both Each Most Some Such When While Which What Who How Also However Moreover
    Furthermore Additionally Finally First Second Third Overall Specifically Source Sources
    Paper Papers Answer Question Yes No Based According Is Are Does Do Did Can Could Name
    Point Any Has Have I""".split()
)


def unmarked(text: str) -> str:
    """``text`` without LaTeX dollars and markdown asterisks: "$Q$Avatar" and "**QAvatar**"
    are the name "QAvatar"."""
    return text.replace("$", "").replace("*", "")


def normalise(text: str) -> str:
    """Lower case, dashes unified, thousands separators and LaTeX dollars dropped."""
    # "$Q$Avatar" in a LaTeX-flavoured abstract is the name "QAvatar"
    text = text.replace("\\%", "%").replace("\u2013", "-").replace("\u2014", "-").replace("$", "")
    return re.sub(r"(?<=\d),(?=\d{3})", "", text).lower()


def key_terms(sentence: str) -> set[str]:
    """Numbers and names (methods, datasets, people, places) that a source must contain."""
    found = {n.replace(",", "") for n in NUMBER.findall(sentence)}
    names = {NAME_SUFFIX.sub("", n.strip("-"))
             for n in NAME.findall(sentence) + _HYPHENED.findall(sentence)}
    found |= {n for n in names if len(n) > 1}
    found |= {w for w in _CAPITAL.findall(sentence) if w not in _PLAIN}
    return {t for t in found if t}


# Where a paper appeared, not what it is about: "Which ICLR 2026 paper …" names no method.
_VENUE = re.compile(r"\b(?:ICLR|NeurIPS|NIPS|ICML|CVPR|ICCV|ECCV|ACL|EMNLP|NAACL|COLING|AAAI|"
                    r"IJCAI|KDD|AISTATS|UAI|CoRL|COLM|TMLR|JMLR|arXiv)(?:\s*'?\d{2,4})?\b")


def without_venues(text: str) -> str:
    """``text`` without the names of venues (ICLR 2026, NeurIPS, arXiv)."""
    return _VENUE.sub(" ", text)


def question_names(question: str) -> set[str]:
    """The names in a question (methods, datasets, acronyms; not bare numbers, not venues),
    normalised."""
    return {normalise(t) for t in key_terms(without_venues(question)) if not t.isdigit()}


# Counts written as words: "five teacher LLMs" is a number the source must give as well.
COUNT_WORDS = {w: str(n) for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty".split()) if n >= 2}


def counts(sentence: str) -> set[str]:
    """The counts a sentence gives in words ("five", "twelve"; not "one", which is as often
    a pronoun)."""
    return {w for w in re.findall(r"[a-z]+", sentence.lower()) if w in COUNT_WORDS}


# A number on its own: not part of a larger one ("0.2" in "0.25", "2" in "2.3K") nor the
# end of a name ("2" in "WikiText-2", "4" in "GPT-4").
_ALONE = r"(?<![\w.])(?<![A-Za-z]-){}(?!\w|[.,]\d)"


def lone_numbers(sentence: str) -> set[str]:
    """The numbers a sentence writes on their own, normalised, with a magnitude ("2" of
    "2-bit", "2.3k" of "2.3K samples", "5x"; nothing of "WikiText-2")."""
    return set(re.findall(_ALONE.format(r"\d+(?:\.\d+)*(?:[kmbx](?![a-z]))?"),
                          normalise(sentence)))


def states_number(number: str, text: str) -> bool:
    """Whether lower-cased ``text`` writes ``number`` on its own, as a number (not "2" in
    "WikiText-2" or "0.25")."""
    return re.search(_ALONE.format(re.escape(number)), text) is not None


def states_count(count: str, text: str) -> bool:
    """Whether lower-cased ``text`` gives the count (digits or a word), in digits or in words."""
    digits = COUNT_WORDS.get(count, count)
    word = next((w for w, n in COUNT_WORDS.items() if n == digits), None)
    return states_number(digits, text) or bool(word and re.search(rf"\b{word}\b", text))


def spelled_out(acronym: str, text: str) -> bool:
    """Whether lower-cased ``text`` spells out an upper-case ``acronym`` in consecutive words
    ("GP" in "a deep kernel gaussian process", "GPs" too): the source says the same thing
    in full, as abstracts often do where a question or an answer abbreviates."""
    letters = acronym[:-1] if acronym.endswith("s") and acronym[:-1].isupper() else acronym
    if not (2 <= len(letters) <= 6 and letters.isalpha() and letters.isupper()):
        return False
    initials = "".join(w[0] for w in re.findall(r"[a-z0-9]+", text))
    # Two letters are met by chance ("SO" in "shares one"): each word must be a long one.
    shortest = 4 if len(letters) == 2 else 1
    return letters.lower() in initials and any(
        "".join(w[0] for w in words) == letters.lower()
        and all(len(w) >= shortest for w in words)
        for words in _windows(re.findall(r"[a-z0-9]+", text), len(letters)))


def defined(acronym: str, texts: Iterable[str]) -> set[str]:
    """What ``texts`` say ``acronym`` stands for where they define it, in lower case:
    "reinforcement learning" for "rl" from "… via reinforcement learning (RL) …", "large
    language models" for "llms", "monte carlo tree search" for "mcts"."""
    forms = {acronym.lower()} | ({acronym.lower()[:-1]} if acronym.lower().endswith("s") else set())
    found = set()
    for text in texts:
        lower = text.lower()
        for letters in (f for f in forms if len(f) >= 2):
            for match in re.finditer(rf"\(\s*{re.escape(letters)}s?\s*\)", lower):
                words = re.findall(r"[a-z0-9]+", lower[max(0, match.start() - 300):match.start()])
                words = words[-len(letters):]
                if len(words) == len(letters) and "".join(w[0] for w in words) == letters:
                    found.add(" ".join(words))
    return found


def expansions(question: str, texts: Iterable[str],
               defines: Callable[[str], set[str]] | None = None) -> dict[str, set[str]]:
    """For each acronym of the question (RL, GNNs), normalised, what ``texts`` (or the whole
    index: ``defines``) define it as ("reinforcement learning" where one says "reinforcement
    learning (RL)"): a text that writes that out holds the acronym, as the corpus itself
    spells it ("SFT" is not "stems from the", nor "MVR" another abstract's "multi-view
    representation")."""
    texts = list(texts)
    return {normalise(a): found for a in set(re.findall(r"\b[A-Z]{2,6}s?\b", question))
            if (found := defined(a, texts) | (defines(a) if defines else set()))}


def _windows(words: list[str], size: int) -> Iterator[list[str]]:
    return (words[i:i + size] for i in range(len(words) - size + 1))


def misspelt(word: str, vocabulary: Iterable[str]) -> bool:
    """Whether a long ``word`` (7 letters or more) is one letter away from a word of
    ``vocabulary`` (a letter dropped, added or changed: "difusion", "adaptaton"): a typo in
    the question that an answer repeats is not a word the source lacks."""
    if len(word) < 7:
        return False
    for other in vocabulary:
        if abs(len(other) - len(word)) > 1 or len(other) < 7 or other[0] != word[0]:
            continue
        if _one_edit(word, other):
            return True
    return False


def _one_edit(a: str, b: str) -> bool:
    """Exactly one letter inserted, deleted or replaced between ``a`` and ``b``, before their
    last two letters ("explorer" and "explored" are two words, not a typo)."""
    if a == b:
        return False
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    if i >= len(b) - 2:
        return False
    if len(a) == len(b):
        return a[i + 1:] == b[i + 1:]
    return a[i:] == b[i + 1:]


def typo_of(word: str, other: str) -> bool:
    """Whether two names of 5 letters or more differ by one typo: a letter dropped, added or
    changed, or two neighbours swapped ("DIVRESE" for "DIVERSE", "Qfelx" for "Qflex"); never
    by their digits alone (versions, sizes)."""
    a, b = word.lower(), other.lower()
    if min(len(a), len(b)) < 5 or a == b or re.sub(r"\d", "", a) == re.sub(r"\d", "", b):
        return False  # CIFAR-100 is not a typo of CIFAR-10, nor GPT-3 of GPT-4
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    if at and a[at - 1].isdigit():
        return False  # a version's or a size's letter: "GPT-4o" and "GPT-4V" or "GPT-4"
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diff) == 2 and diff[1] == diff[0] + 1:
            return a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
        return len(diff) == 1
    if abs(len(a) - len(b)) != 1:
        return False
    short, long_ = sorted((a, b), key=len)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


def mentions(text: str, name: str) -> bool:
    """Whether lower-cased ``text`` has the word ``name``, singular or plural ("vlms" and
    "vlm"; "rl" is not in "world")."""
    base = name[:-1] if name.endswith("s") and len(name) > 3 else name
    return re.search(rf"(?<![a-z0-9]){re.escape(base)}s?(?![a-z0-9])", text) is not None


# Full stops that do not end a sentence.
_ABBREVIATIONS = re.compile(r"\b(?:e\.g|i\.e|et al|etc|vs|cf|Fig|Eq|Sec|approx|resp|Dr|No)\.$")
# A sentence ends at a full stop (or ! ?) and the closing quotes or brackets after it, which it
# keeps: "(see Sec. 3.)" is one sentence, and the chunks joined give back the whole text.
_BOUNDARY = re.compile(r"(?<=[.!?])([\"')\]]*)\s+(?=[\"'(\[]?[A-Z0-9])")


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``; abbreviations such as "e.g." and "et al." do not end one."""
    sentences: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        candidate = text[start : match.end(1)].strip()
        if _ABBREVIATIONS.search(text[start : match.start()]):
            continue
        if candidate:
            sentences.append(candidate)
        start = match.end()
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences


# "The authors of PEA are [1].": a sentence the model broke off where its claim should be
# "… can be found at [1].", "… by [1].": a place, a value or a name the model left out
_UNFINISHED = re.compile(r"\b(?:is|are|was|were|be|been|the|(?-i:an?)|and|or|of|such\s+as|including|"
                         r"includes?|namely|e\.g|i\.e|(?-i:at|from|by|than|via))\W*$", re.IGNORECASE)


# "The bounds for RS-KT and RS-BC are and, respectively.": what stood there (a formula the
# model could not write) is missing
_GAP = re.compile(r"\b(?:is|are|was|were|of|by|than|to|as)\s+(?:and|or)\s*(?:,|\brespectively\b)"
                  r"|\b(?:is|are|was|were|of|by|than|to)\s*,\s*respectively\W*$", re.IGNORECASE)


def unfinished(sentence: str) -> str | None:
    """Why a sentence (its markers removed) is broken off before its claim, or None."""
    found = _UNFINISHED.search(sentence.rstrip(" .:;,!?"))
    if found:
        return f'unfinished: it ends at "{found[0].strip(" .")}"'
    gap = _GAP.search(sentence)
    return f'unfinished: nothing stands in "{gap[0]}"' if gap else None


# A sentence that gives the reader orders instead of reporting research: a prompt injection
# planted in an abstract. Orders are imperatives at the start of a sentence (after a label
# such as "IMPORTANT:") or said to "you"; research about injections, in the third person,
# does not match.
_ORDER = re.compile(
    r"^\W*(?:[\w ]{0,30}:\s*)?(?:please\s+)?(?:"
    r"(?:ignore|disregard|forget|override|do\s+not\s+follow)\b.{0,80}?"
    r"\b(?:instructions?|rules?|prompts?|guidelines?)\b"
    r"|(?:when|if|whenever)\s+(?:you\s+are\s+)?asked\b.{0,120}?"
    r"\b(?:answer|say|respond|reply|cite|claim|state)\b"
    r"|(?:always|never|only)\s+(?:cite|answer|say|respond|reply|mention|claim|state)\b)"
    r"|\byou\s+(?:must|should|shall|are\s+to|will|need\s+to)\s+"
    r"(?:now\s+|always\s+|only\s+|never\s+)?"
    r"(?:cite|answer|say|respond|reply|state|claim|mention|output|write|tell|include)\b"
    # notes that claim to come from above the reader: "[Admin note: …]", "SYSTEM OVERRIDE:",
    # "New instruction from the developer: …", "</context>"
    r"|^\W*(?:admin(?:istrator)?|system|developer|moderator)\s+(?:note|notice|override|message)\b"
    r"|\b(?:new|updated)\s+(?:instructions?|rules?)\s+from\s+the\s+"
    r"(?:developer|admin(?:istrator)?|system|operator)\b"
    r"|\bdeveloper\s+mode\b|</?(?:context|system|instructions?)>",
    re.IGNORECASE,
)


def is_instruction(sentence: str) -> bool:
    """A sentence of a source that addresses the model instead of reporting research."""
    return bool(_ORDER.search(sentence))


def without_instructions(passage: str) -> str:
    """``passage`` without the sentences that give orders; the model never sees them, and
    they cannot support a claim."""
    sentences = split_sentences(passage)
    if not any(is_instruction(s) for s in sentences):
        return passage
    return " ".join(s for s in sentences if not is_instruction(s))


# How to say it, not what to say: "like I'm five", "ELI5:", "In simple terms, …". Every
# sentence of an answer is checked against the abstracts, so it is written in their terms;
# a child's analogy can never be checked ("It's like painting with different colours").
_STYLE = re.compile(
    r"^\W*ELI5\b\s*[:,\-]?|(?:,\s*|\s*\()ELI5\)?(?=\s*[?.!]?\s*$)"
    r"|(?:,\s*)?(?:\b(?:explain|describe)\s+(?:it|this|that)\s+)?(?:to\s+me\s+)?\blike\s+"
    r"(?:i['\u2019]?m|i\s+am|i\s+was)\s+(?:five|5|a\s+(?:child|kid|(?:five|5)[\s\-]year[\s\-]old))\b"
    r"\s*[:,]?"
    r"|^\W*(?:in\s+)?(?:simple|plain|layman'?s?|non-technical|everyday)\s+"
    r"(?:terms|words|english|language)\s*[:,]"
    r"|,\s*in\s+(?:simple|plain|layman'?s?|non-technical|everyday)\s+"
    r"(?:terms|words|english|language)(?=\s*[?.!]?\s*$)",
    re.IGNORECASE)


def without_style(question: str) -> str:
    """``question`` without requests about the answer's style ("Explain HAQO like I'm
    five." -> "Explain HAQO.")."""
    return _tidied(_STYLE.sub(" ", question))


def _tidied(text: str) -> str:
    """``text`` with a part cut out: single spaces, none before punctuation."""
    return re.sub(r"\s+([?.!,])", r"\1", " ".join(text.split())).strip()


# "Which papers use diffusion models? (not counting flow matching)", "… Don't count GFlowNets,
# optical flow or network flow.": what follows is what the answer must leave out, not what
# to search for.
_EXCLUDES = re.compile(
    # at a clause's start only: "a method for excluding outliers" excludes nothing
    r"(?:\s*(?P<open>\(|[,;:\u2014]|\s-)\s*|(?:(?<=[.?!])|^)\s*)"
    r"(?:(?:but\s+)?(?:not|without)\s+counting|(?:don['\u2019]?t|do\s+not)\s+(?:count|include)"
    r"|excluding|leaving\s+out|(?:but\s+)?except(?:\s+for)?|but\s+leave\s+out"
    # "Skip the 3D one.": an order opening a sentence ("which papers skip the critic?" is none)
    r"|(?<![,;:(\u2014-]\s)(?<![,;:(\u2014-])(?:leave\s+out|skip|ignore))\s+"
    r"(?P<what>[^.?!;()]+?)\s*(?:\)\s*[.?!]?|(?=[.?!;])|$)",
    re.IGNORECASE)
# What an excluded description says around the thing: "the one about X", "anything involving X"
_EXCLUDED_FRAME = re.compile(
    r"^(?:the\s+ones?\s+(?:about|on|that|which|with)\s+|anything\s+(?:that\s+)?"
    r"(?:involving|about|on|with|that)?\s*|the\s+|an?\s+|any\s+)|\s+(?:ones?|papers?|works?)$",
    re.IGNORECASE)
# "… with a learned Q-function? GFlowNets don't count.": the same, as a sentence of its own
# (not a question, nor "the ones that don't count", nor after "e.g.")
_COUNTS_NOT = re.compile(
    r"(?<=[.?!])(?<!e\.g\.)(?<!i\.e\.)(?<!etc\.)(?<!vs\.)\s*(?P<open>)"
    r"(?!(?:which|what|who|how|why|the\s+ones?|ones?|that|this|these|those|it|they)\b)"
    r"(?P<what>[^\s.?!;()][^.?!;()]*?)\s+(?:do|does|will|wo)(?:\s+not|n['\u2019]?t)\s+count"
    r"\s*(?:[.!]|$)", re.IGNORECASE)
_NOT_A_THING = re.compile(r"^(?:it|them|this|that|these|those|they|one|ones|me|us)$", re.I)


def exclusions(question: str) -> tuple[str, tuple[str, ...]]:
    """(the question without what it says to leave out, the things left out): "Which papers
    use flows? Don't count GFlowNets or optical flow." -> ("Which papers use flows?",
    ("GFlowNets", "optical flow")). A clause that is not a short list of things ("except
    for DrPose, do 3D reconstruction") is left as it is."""
    left: list[str] = []
    broken: list[bool] = []

    def cut(match: re.Match[str]) -> str:
        what = match.group("what")
        if match.group("open") in (",", ";", ":", "\u2014", " -") and "," in what:
            broken.append(True)  # "Which papers, except X, do RL?": where it ends is unsure
        for part in re.split(r",\s*(?:or\s+|and\s+)?|\s+(?:or|and|nor)\s+", what):
            while part.strip() and _EXCLUDED_FRAME.search(part.strip()):
                part = _EXCLUDED_FRAME.sub("", part.strip(), count=1)
            if part.strip():
                left.append(part.strip())
        return " "
    rest = _EXCLUDES.sub(cut, _COUNTS_NOT.sub(cut, question))
    rest = _tidied(re.sub(r"([?.!])(?:\s*[?.!])+", r"\1", rest)).lstrip(".?!, ")
    if (broken or not left or not re.search(r"[A-Za-z]", rest)
            or any(len(t.split()) > 4 or _NOT_A_THING.match(t) for t in left)
            or re.search(r"\b(?:for|of|on|in|with|to|by|from|about|that|the|an?|and|or)\W*$",
                         rest, re.IGNORECASE)):
        return question, ()
    return rest, tuple(left)


# "… whether through adapters, RL post-training or distillation?", "(e.g. GRPO)", "like
# 'Something-10K'": examples of what is asked about, of which a paper needs only one.
_EXAMPLES = re.compile(r"[,(]?\s*(?:,\s*whether\s+(?:through|via|by|with|using)\b|\b(?:e\.g\."
                       r"|such\s+as|for\s+(?:example|instance)|including)\s)"
                       r"[^.?!;)]*?(?=,\s*(?:and|which|or)\b|[.?!;)]|$)\)?", re.IGNORECASE)
_QUOTED = r"(?:'[^']*'|\"[^\"]*\"|\u2018[^\u2019]*\u2019|\u201c[^\u201d]*\u201d)"
_QUOTED_EXAMPLE = re.compile(rf",\s*like\s+{_QUOTED}(?:\s*(?:,|\band\b|\bor\b)\s*{_QUOTED})*,?")


def without_examples(question: str) -> str:
    """``question`` without the examples it gives ("Which papers train LLMs, e.g. with RL
    or adapters?" -> "Which papers train LLMs?")."""
    return _tidied(_EXAMPLES.sub(" ", _QUOTED_EXAMPLE.sub(" ", question)))
