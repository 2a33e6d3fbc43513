"""Whether a sentence gives what its question asks for, beyond the question's own words: a
value it did not give, a name when it asks for one, more than a yes or a no."""

from __future__ import annotations

import re

from assistant.answer.wording import SYMBOLIC, stem_in
from assistant.text.mentions import has_name
from assistant.text.sentences import (
    counts,
    key_terms,
    lone_numbers,
    mentions,
    misspelt,
    normalise,
    spelled_out,
    states_count,
    states_number,
    typo_of,
)
from assistant.text.stems import stem, terms

NEGATION = re.compile(r"\b(?:no|not|none|nothing|neither|nor|cannot)\b|n't\b", re.IGNORECASE)
# Question words an answer may repeat without the source using them: verbs of doing, and the
# words that frame what is asked (a downside, an advantage) rather than name it; an abstract
# states a drawback without calling it one.
GENERIC = frozenset(stem(w) for w in """achieve achieves use uses perform performs work works show
    shows improve improves introduce introduces propose proposes train trains evaluate report
    present presents study address reach obtain get make do describe mean means stand stands
    call called name named aim goal main key idea contribution problem result results help allow
    enable tackle solve handle focus type kind explain tell give compare yes downside downsides
    drawback drawbacks disadvantage disadvantages weakness weaknesses shortcoming shortcomings
    advantage advantages benefit benefits strength strengths motivation purpose modify modifies
    modified tweak tweaks tweaked quantity quantities""".split())
# The question's figures of speech for what it asks ("what price do … pay", "the training
# recipe", "what's the trick", "actually"): not a thing a source must speak of when an answer
# repeats them. Only there: "Is there work on price forecasting?" still needs a source that
# speaks of prices. Not "catch": "The catch with UEC is …" claims a limitation it must state.
FIGURES = frozenset(stem(w) for w in """price pay recipe actually basically trick tricks secret
    sauce magic gist core""".split())
# Who made a paper: people and places, which no abstract names (a name it gives is no author)
MAKERS = frozenset(stem(w) for w in """author authors team teams lab labs group groups
    university universities company companies institution institutions organization
    organizations affiliation people person""".split())
# Words an answer adds that claim nothing of their own: the links between its clauses and its
# verbs for using something. Not praise ("significantly better", "particularly relevant"): on
# dev it came with made-up claims, never in a paraphrase of what an abstract says.
LINKING = frozenset(stem(w) for w in """because since therefore thus hence however rather
    instead without whether although though given also well often still made done need
    leverages leverage leveraging employs employ utilizes utilize adopts""".split())
# More words than this that neither the source nor the question uses, and a sentence adds what
# the source does not say.
ADDED_MOST = 2
# "Unlike autoregressive decoding, it …": what the sentence sets its paper against
_CONTRAST = re.compile(r"\b(?:unlike|than|instead\s+of|rather\s+than|compared\s+(?:to|with)|"
                       r"over|prior|previous|existing|conventional|traditional)\b[^.;]{0,40}$")
# "1 camera" is stated by "a single camera" or "monocular videos" ("one" is as often a
# pronoun); "1 billion", "1 point", "1%" are not, nor "1 forward pass" by "a single factor"
_ONE_THING = re.compile(r"(?<![\d.,])\b1\s+(?!(?:%|percent|points?|pp|billion|million|thousand|"
                        r"times|bits?|x)\b)([a-z]+)", re.IGNORECASE)
_MONOCULAR = frozenset(stem(w) for w in ("camera", "view", "video", "image", "frame"))
_NON = re.compile(r"\bnon[\s\-]?([a-z]{4,})\s+([a-z][\w\-]*)")  # "non-invasive eeg"


def _one_thing(sentence: str, source: str) -> bool:
    """Whether the (normalised) ``source`` says there is one of what the sentence counts as
    "1 <thing>": "a single <thing>" (a word or two between), or "monocular" of a camera."""
    found = _ONE_THING.search(sentence)
    if found is None:
        return False
    thing = stem(found[1].lower())
    return bool(re.search(rf"\bsingle\s+(?:[\w\-]+\s+){{0,2}}?{re.escape(thing)}", source)
                or thing in _MONOCULAR and re.search(r"\bmonocular\b", source))


_ONE = re.compile(r"\b(?:one|single)\b(?!\s+of\b)", re.IGNORECASE)  # not "one of the …"
_VERDICT = re.compile(r"\W*(?:yes|no)\b[,.:;!]?", re.IGNORECASE)  # "Yes, …", "No. …"
# "how many …?" asks for a count, which a percentage is not, unless it asks for a share
_PERCENT = re.compile(r"(?<![\d.,])\d[\d.,]*\s*(?:\\?%|percent(?:age)?(?:\s+points?)?\b)", re.IGNORECASE)
_ASKS_SHARE = re.compile(r"%|\b(?:percent\w*|share|fraction|proportion|rate|ratio)\b", re.IGNORECASE)
_SHOUTED = re.compile(r"(?<![\w\-])[A-Z]{4,}(?![\w\-])")  # DIVERSE, SAFER, HUMAINE
# A Dropped reason: the model's yes or no, said in the question's words
BARE_VERDICT = "says yes or no in the question's own words, which no check can verify"


def gives_values(sentence: str, question: str) -> bool:
    """Whether the sentence gives numbers or symbols (pass@k) that the (normalised) question
    does not hold: an answer made of values the source states, whatever the question called
    them. A number counts when it stands on its own: "3" is not given by "2.3K"."""
    return (any(normalise(v) not in question for v in SYMBOLIC.findall(sentence))
            or any(not states_number(n, question) for n in lone_numbers(sentence)))


def gives_names(sentence: str, question: str, titles: str, coined: bool = False) -> bool:
    """Whether the sentence names something that neither the (normalised) question nor a
    shown paper's (normalised) title holds; ``coined``: a name no dictionary has, in mixed
    case or letters and digits (HumanoidBench, ALFWorld, GSM8K; not "Bayesian", "RL", "12")."""
    return any(normalise(t) not in question and normalise(t) not in titles
               and (not coined or _COINED.search(t) is not None) for t in key_terms(sentence))


_COINED = re.compile(r"[a-z][A-Z]|[A-Za-z]\d|\d[A-Za-z]|[A-Z]{2}[a-z]{2}")


def gives_wanted(sentence: str, wanted: str | None, question: str, titles: str,
                 sources: tuple[str, ...] = ()) -> bool:
    """Whether a sentence names what the question asks for by name (a name or a value that
    neither the question nor a paper's title holds: "OLAT"), a number for "how many …?", one
    of the things its ``sources`` list as such ("RL benchmark tasks, including locomotion"),
    or the question asks for none; "SSD-GS uses a real-world dataset" names no dataset."""
    flat = normalise(question)
    if wanted == "number" and not _ASKS_SHARE.search(question):
        sentence = _PERCENT.sub(" ", sentence)  # "65% of participants": a share, no count
    if wanted is None or gives_values(sentence, flat):
        return True
    if wanted == "value":  # "PEA achieves state-of-the-art accuracy": no value given
        return False
    if wanted == "number":  # "three domains", "a single teacher": a count in words
        return bool(counts(sentence) - counts(question)) or (
            _ONE.search(sentence) is not None and _ONE.search(question) is None)
    if gives_names(sentence, flat, titles):
        return True
    thing = stem(wanted.split()[-1])  # "benchmarks", "libraries": benchmar…, librar…
    listed = re.compile(rf"\b{re.escape(thing[:max(4, len(thing) - 1)])}[^.;]{{0,40}}?\b"
                        r"(?:including|such\s+as|e\.g\.,?|namely)\s+(?P<list>[^.;:()]{1,100}?)"
                        r"(?=\s*(?:[.;:()]|$|,?\s+(?:where|which|while|whereas|with|and\s+"
                        r"(?:we|it|they|show|achiev|outperform)\w*)\b))", re.IGNORECASE)
    named: set[str] = set()
    for text in sources:
        for found in listed.finditer(text):  # the list's words, not its head's: "benchmark tasks"
            named |= set(terms(found["list"])) - set(terms(found[0][:found.start("list")
                                                                    - found.start()]))
    return bool((set(terms(sentence)) - set(terms(question)) - GENERIC) & named)


def bare_verdict(sentence: str, question: str, question_words: set[str]) -> bool:
    """"Yes, TEDM relies on an external noise schedule.": the question's own words as a
    statement, with or without a yes or a no. Its words are all in the abstract whichever the
    answer is ("… avoiding external schedules"), so no check can tell a right verdict from a
    wrong one, and the model says "yes" to most such questions; the abstract's own sentences
    answer instead. ``question`` is normalised, ``question_words`` its stems."""
    verdict = _VERDICT.match(sentence)
    rest = sentence[verdict.end():] if verdict else sentence
    asked = re.findall(r"[\w\-]+", question)
    # the name the question misspelt, or abbreviated ("Value Matching (VM)"), is the question's
    if any(not _given(t, question) and not spelled_out(t, question)
           and not any(typo_of(t, w) for w in asked) for t in key_terms(rest)):
        return False
    words = set(terms(NEGATION.sub(" ", rest))) - GENERIC
    # the crude stems of one word may differ in their last letter ("relies": reli, "rely")
    said = [w for w in words if w in question_words or len(w) >= 4 and any(
        len(q) == len(w) and q[:-1] == w[:-1] for q in question_words)]
    return not words or len(said) >= 0.8 * len(words)


def _given(term: str, question: str) -> bool:
    """Whether the (normalised) question gives a sentence's name or number: a number on its
    own ("2" is not given by "12%")."""
    flat = normalise(term)
    return states_number(flat, question) if flat in lone_numbers(term) else flat in question


def unstated(sentence: str, source: str, question: str, raw: str | None = None) -> list[str]:
    """The names and numbers of ``sentence`` that the (normalised) ``source`` does not state,
    and the counts in words ("five teacher LLMs") that neither it nor the question gives; with
    the source as written (``raw``), a name in capitals it holds only as a word ("DIVERSE",
    the paper, against "diverse poses") too."""
    if raw is not None:
        shouted = [w for w in _SHOUTED.findall(sentence) if not has_name(raw, w)]
        if shouted:
            return shouted
    alone = lone_numbers(sentence)  # "2-bit": a "2" in "WikiText-2" does not say it
    missing = [t for t in key_terms(sentence)
               if (not states_number(normalise(t), source)
                   and not _version_of(normalise(t), normalise(sentence), source)
                   if normalise(t) in alone
                   else normalise(t) not in source and not spelled_out(t, source)
                   and not mentions(source, normalise(t)))  # "Gaussians": "3D Gaussian …"
               and not (t.isdigit() and states_count(t, source))
               and not (t == "1" and _one_thing(sentence, source))]
    return missing + [n for n in counts(sentence) - counts(question)
                      if not states_count(n, source)] + _formulae(sentence, source)


# "O(n^2 * a * T)": a bound, stated only if the source writes the same letters and powers
_BIG_O = re.compile(r"(?<![A-Za-z])\{?[Oo\u0398\u03a9\u03b8\u03c9]\}?\s*\((?:[^()]|\([^()]*\))+\)")


def _formulae(sentence: str, source: str) -> list[str]:
    """The bounds in big-O notation the sentence gives that are none of the source's own
    bounds, compared letter by letter and power by power: "O(sqrt(T log T))" is the bound the
    source writes in TeX with the same letters; "O(√T)" is not in a source's "does not"."""
    def skeleton(bound: str) -> str:
        return re.sub(r"[^a-z0-9^]|sqrt|widetilde|tilde|mathcal|left|right", "", bound.lower())
    given = _BIG_O.findall(sentence)
    if not given:  # most sentences: the source is not read
        return []
    written = {skeleton(b) for b in _BIG_O.findall(source)}
    return [b for b in given if skeleton(b) not in written]


def _version_of(number: str, sentence: str, source: str) -> bool:
    """Whether a number the (normalised) sentence writes after a word is that word's version
    as the source writes it, joined: "Gemini 2.5 Pro" of "gemini-2.5-pro", "Qwen 2.5" of
    "qwen2.5"."""
    return any(re.search(rf"\b{re.escape(word)}[-\s]?{re.escape(number)}(?![\d.]*\d)", source)
               for word in re.findall(rf"\b([a-z][a-z\-]*)\s+{re.escape(number)}\b", sentence))


def added_words(sentence: str, source: str, question: str) -> set[str]:
    """The words of ``sentence`` that neither the (normalised) ``source`` nor the question
    uses in any form: what it adds to both ("The online surveys were conducted through a
    platform …", of a paper that names neither; "SAFER needs to fine-tune the LLM because its
    performance … is crucial", asked why it fine-tunes, which it does not). Names and numbers
    are ``unstated``'s; a misspelling of a source's word is that word."""
    given = set(terms(source)) | set(terms(question))
    spellings = set(re.findall(r"[a-z]+", source))
    names = {w for t in key_terms(sentence) for w in terms(t)}
    return {w for w in set(terms(normalise(sentence))) - given - names - GENERIC - LINKING
            if len(w) > 3 and not w.isdigit() and not stem_in(w, given)
            and not misspelt(w, spellings)}


def opposite(sentence: str, source: str) -> str | None:
    """What the (normalised) ``source`` says only with "non-" that the sentence says plainly:
    "MindPilot uses invasive EEG" of "MindPilot leverages non-invasive EEG" gives "non-invasive
    eeg"; None when the source also says it plainly, or the sentence says "non-" too."""
    said = normalise(sentence)
    for word, after in dict.fromkeys(_NON.findall(source)):
        plain = rf"(?<![\w\-\u2010\u2011])(?<!non )\b{re.escape(word)}\s+{re.escape(after)}\b"
        found = re.search(plain, said)
        if found and not re.search(plain, source) and not _CONTRAST.search(said[:found.start()]):
            return f"non-{word} {after}"
    return None


# "… without requiring specialized intermediate reward models": what a paper does without
# (not "with and without …"; what it does without ends where a phrase or clause starts:
# "Guidance Without Classifiers for Human-Object Interaction" does without classifiers)
_WITHOUT = re.compile(r"(?<!with and )(?<!with or )\b(?:without(?:\s+(?:requiring|needing|"
                      r"relying\s+on|using|the\s+need\s+for|any))?|no\s+need\s+(?:for|of)|(?:does|"
                      r"do)\s+not\s+(?:require|need|rely\s+on)|avoid(?:s|ing)?|free\s+of)\s+"
                      r"(?P<x>(?:(?!\b(?:and|or|but|while|which|that|to|so|then|as|the|an?|its|"
                      r"their|this|these|we|it|for|in|on|of|with|from|by|at|via)\b)[^.,;:()])"
                      r"{3,60})")
_DENIES = re.compile(r"\b(?:no|not|without|avoid\w*|eliminat\w*|free|never|instead|rather|"
                     r"unlike|removes?|unnecessar\w*|bypass\w*|dispens\w*|obviat\w*|sidestep\w*|"
                     r"away)\b|n['\u2019]t\b", re.IGNORECASE)


def done_without(sentence: str, source: str) -> str | None:
    """What the (normalised) ``source`` says its paper does without that the sentence, denying
    nothing, says it has: "they had to train a dedicated intermediate reward model" of "…
    without requiring specialized intermediate reward models"; None when nothing."""
    said = set(terms(sentence))
    for found in _WITHOUT.finditer(source):
        x = set(terms(found["x"])) - GENERIC
        if len(x) >= 2 and len(x & said) >= max(2, 0.6 * len(x)) and not _DENIES.search(sentence):
            return found["x"].strip()
    return None


def beyond(sentence: str, source: str, question: str) -> str | None:
    """Why the sentence says what the (normalised) paper ``source`` does not: the opposite of
    what it says with "non-" or "without", or more than ``ADDED_MOST`` words of its own; None
    when neither."""
    flipped = opposite(sentence, source)
    if flipped:
        return f"the source says {flipped}"
    if (lacking := done_without(sentence, source)) is not None:
        return f"the source says it does without: {lacking}"
    added = added_words(sentence, source, question)
    if len(added) > ADDED_MOST:
        return f"adds what the source does not say: {', '.join(sorted(added)[:4])}"
    return None
