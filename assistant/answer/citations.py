"""Citations the system owns: map [n] to papers, check each sentence against its passage."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from assistant.answer.asked import (BARE_VERDICT, FIGURES, GENERIC, MAKERS, NEGATION, bare_verdict,
                                    beyond, gives_names, gives_values, gives_wanted, unstated)
from assistant.answer.contrast import ONE_OF_TWO, by_halves, by_subjects, of_both
from assistant.answer.intent import (asked_for, asks_for_name, asks_which_thing, asks_yes_or_no,
                                     topic_terms)
from assistant.answer.markers import (Listed, and_join, cited_numbers, is_refusal, listed,
                                      strip_markers)
from assistant.answer.wording import cosine, display, flat, is_title, stem_in, values_in
from assistant.text.mentions import introduced_name, short_names, typed_small
from assistant.text.sentences import (counts, defined, key_terms, mentions, misspelt,
                                      normalise, question_names, split_sentences,
                                      spelled_out, unfinished, without_examples)
from assistant.text.stems import stem, terms
from assistant.types import Dropped, Source

# Source numbers as a sentence's subject: "[1] and [2] are about time series."
_SUBJECT = re.compile(r"^\W*?(?:(?i:yes)\s*[,:]\s*)?"  # "Yes, [1] has …"
                      r"((?:\[(?:(?i:sources?)\s*)?\d+(?:\s*[,;\u2013-]\s*\d+)*\]\s*"
                      r"(?:(?:,|;|&|and\b)\s*)?)+)(?=[a-z])")
# Words that cannot start the predicate after a subject: "[1] in particular …" is no subject.
_NOT_VERB = frozenset("""the a an in on at for of to with by from as and or but this that these
    those it its their which who whose where when while if than then so such""".split())
# A sentence that says what the paper itself does: "we propose", "this paper presents"
_PROPOSES = re.compile(r"\b(?:we|this (?:paper|work))\s+(?:\w+\s+)?"
                       r"(?:propose|introduce|present|develop|design)", re.IGNORECASE)
_JOINS = re.compile(r"\b(?:and|or)\b", re.IGNORECASE)  # what joins markers listed alone
_EXAMPLE = re.compile(r"\be\.\s?g\.|\bfor\s+instance\b", re.IGNORECASE)  # a source's example


@dataclass(frozen=True)
class Evidence:
    """A numbered source as the model saw it, with vectors of its passages."""

    number: int
    source: Source
    passages: tuple[str, ...]
    vectors: tuple[Sequence[float], ...]

    @property
    def text(self) -> str:
        return " ".join(self.passages)


@dataclass(frozen=True)
class Verdict:
    """What the check made of one sentence."""

    sentence: str
    numbers: tuple[int, ...] = ()  # prompt numbers of the supporting sources
    passages: tuple[str, ...] = ()
    dropped: Dropped | None = None
    refusal: bool = False
    pointer: bool = False  # the model gave source numbers alone


@dataclass
class CitationChecker:
    """Checks sentences against the numbered evidence.

    A sentence is supported by a source when every number and name in it appears in the
    source's title or passages, and its meaning is close to one of those passages (cosine
    at least ``threshold``, or most of its content words found there).
    """

    evidence: Sequence[Evidence]
    embed: Callable[[str], Sequence[float]]
    question: str = ""
    threshold: float = 0.35
    overlap: float = 0.6
    several: bool = False  # "which papers …?": each paper listed must be about the question
    papers: bool = False  # titles answer the question ("which work …?", "is there …?")
    abstract: Callable[[str], str | None] | None = None  # a paper's whole abstract, by id
    known: Callable[[str], bool] | None = None  # whether any indexed paper uses a word stem
    invalid_markers: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        # What a wh-question asks for ("Who are the authors …?"): a sentence giving it must
        # have a source that speaks of it. Which-paper questions ask for a paper, and yes/no,
        # "how" and "tell me" questions for no named thing.
        asked = None if self.papers else asked_for(self.question)
        self._asked = (asked or set()) - GENERIC - FIGURES
        # "Is there work on X for Y?": a sentence that says a paper does Y needs a source that
        # speaks of Y when no indexed paper uses the word (speculative decoding, in a corpus
        # without it); the nearest paper, about X alone, is not an answer. A sentence that
        # only repeats the question ("Yes, there is work on X for Y") becomes the paper's
        # title and the abstract's own sentence instead (``_answer``).
        known = self.known or (lambda word: True)
        self._topic = ({w for w in topic_terms(self.question) - GENERIC if not known(w)}
                       if self.papers else set())
        self._question_words = set(terms(self.question))
        self._question_text = normalise(self.question)
        self._titles = normalise(" ".join(e.source.title for e in self.evidence))
        self._initials = "".join(w[0] for w in re.findall(r"[a-z0-9]+", self._question_text))
        self._names = question_names(asked := without_examples(self.question)) | (  # "grpo" too
            typed_small(asked, [e.source.text for e in self.evidence]) if self.several else set())
        # "Which dataset does SSD-GS use?": the answer names one (``names_wanted``)
        self.wanted = None if self.papers else asks_for_name(self.question)
        self._yes_no = not self.papers and asks_yes_or_no(self.question)
        self._introduced: dict[str, str | None] = {}
        self._abstracts: dict[str, str | None] = {}  # whole abstracts, by paper id
        self._spelled: set[str] | None = None  # what shown papers define a list's names as

    def label(self, item: Evidence) -> str:
        """How an answer names a paper: its title, with the name the abstract gives its
        method when the title lacks it ("Architecture-Agnostic … Alignment (PEA)")."""
        source = item.source
        if source.paper_id not in self._introduced:
            self._introduced[source.paper_id] = introduced_name(
                self._whole(item) or source.text, source.title)
        name = self._introduced[source.paper_id]
        if name is None:
            return display(source)
        if source.title_derived:
            return f"{name}: {source.title} (derived title)"
        return f"{source.title} ({name})"

    def short_label(self, item: Evidence) -> str:
        """A paper as the subject of a sentence: its short name ("TEDM"), else its title."""
        names = short_names(item.source.title)
        if names:
            return names[0]
        self.label(item)
        return self._introduced[item.source.paper_id] or display(item.source)

    def pointer(self, items: Sequence[Evidence], lead: str = "") -> Verdict:
        """The answer "these papers": their names, cited. One paper named as the answer (to
        "which paper …?", or to any question) also says, in its abstract's words, what it
        does that answers the question: a title alone is a claim nobody checked."""
        if len(items) == 1 and not self.several:
            passage, said = self.claim(items[0])
            quoted = " … ".join(f'"{s}"' for s in said)
            return Verdict(f"{lead}{self.label(items[0])}: {quoted}", (items[0].number,),
                           (passage,), pointer=True)
        return Verdict(
            lead + "; ".join(self.label(e) for e in items) + ".",
            tuple(e.number for e in items), tuple(e.passages[0] for e in items), pointer=True,
        )

    def claim(self, item: Evidence) -> tuple[str, tuple[str, ...]]:
        """(passage, sentences): what the paper does, in its abstract's words (or, without the
        abstract, its passages'): the sentence that says what it proposes ("we propose …",
        "this paper presents …") sharing the most of the question's words, and, when another
        sentence shares more of them, that one too, in the abstract's order."""
        whole = self._whole(item)
        scored = []  # (shared words, proposes, position, sentence, passage)
        for passage in ([whole] if whole else item.passages):
            for sentence in split_sentences(passage):
                shared = len(set(terms(sentence)) & self._question_words)
                scored.append((shared, bool(_PROPOSES.search(sentence)), len(scored),
                               sentence.strip(), passage))
        if not scored:
            return item.passages[0], (item.passages[0],)
        proposing = [s for s in scored if s[1]] or scored
        main = max(proposing, key=lambda s: (s[0], -s[2]))
        closest = max(scored, key=lambda s: (s[0], -s[2]))
        both = closest[0] > main[0] and (whole or closest[4] is main[4])
        picked = sorted({main, closest} if both else {main}, key=lambda s: s[2])
        passage = whole if whole else main[4]
        return passage, tuple(s[3] for s in picked)

    def relevant(self, item: Evidence) -> bool:
        """For "which papers …?" questions that name something (GRPO, ImageNet), whether the
        source mentions any of it, or what a shown paper defines it as ("RL": "reinforcement
        learning (RL)"): a paper listed without it is not an answer."""
        if not self.several or not self._names:
            return True
        haystack = normalise(f"{item.source.title} {item.source.text} {item.text}")
        if any(mentions(haystack, name) for name in self._names):
            return True
        if self._spelled is None:
            texts = [self._whole(e) or e.source.text for e in self.evidence]
            self._spelled = {full for name in self._names for full in defined(name, texts)}
        words = " ".join(re.findall(r"[a-z0-9]+", normalise(self._whole(item) or item.text)))
        content = " ".join(terms(words))  # "graph neural networks": GNNs; not "requires a
        return any(mentions(words, full) for full in self._spelled) or any(  # good": RAG, nor
            spelled_out(n[:-1].upper() + "s" if n.endswith("s") else n.upper(), content)
            for n in self._names if n.isalpha() and len(n) > 2)  # "robot learning": RL

    def _whole(self, item: Evidence) -> str | None:
        """A shown paper's whole abstract when the store gives it (read once)."""
        if item.source.paper_id not in self._abstracts:
            self._abstracts[item.source.paper_id] = (
                self.abstract(item.source.paper_id) if self.abstract else None)
        return self._abstracts[item.source.paper_id]

    def _supports(self, item: Evidence, sentence: str,
                  vector: Sequence[float]) -> tuple[float, str, str]:
        raw = f"{item.source.title} {item.text}"
        haystack = normalise(raw)
        missing = unstated(sentence, haystack, self.question, raw)
        if missing:
            return 0.0, "", f"not in the source: {', '.join(sorted(missing)[:4])}"
        beyond_source = beyond(sentence, normalise(f"{item.source.title} {self._whole(item) or raw}"),
                               self.question)
        if beyond_source:
            return 0.0, "", beyond_source
        words = set(terms(normalise(sentence)))  # "23,404" as the source reads: "23404"
        source_words = set(terms(haystack)) | set(terms("example") if _EXAMPLE.search(raw) else ())
        # Words of the question that the sentence repeats but the source never uses: the
        # sentence claims what the question asked for, and the source does not say it.
        source_spellings = set(re.findall(r"[a-z]+", haystack))
        typos = {stem(x) for x in re.findall(r"[a-z]+", normalise(sentence))
                 if misspelt(x, source_spellings)}

        def unsaid(asked: set[str]) -> set[str]:
            return {w for w in (words & asked) - source_words - typos
                    if len(w) > 2 and not stem_in(w, source_words)}

        # What the wh-question asked for counts as unsaid when at least half of its words in
        # the sentence are not in the source ("the authors"; not "what the HUMAINE authors
        # release", whose "HUMAINE" and "release" are); a topic word no paper uses, if missing.
        echoed = unsaid(self._asked)
        gives = gives_values(sentence, self._question_text) or bool(  # or "five", how many
            self.wanted == "number" and counts(sentence) - counts(self.question))
        if 2 * len(echoed) < len({w for w in words & self._asked if len(w) > 2}):
            if self._asked and not gives and not {w for w in words - GENERIC - self._question_words
                                                  if not self._abbreviates(w)}:
                return 0.0, "", "says no more than the question"
            echoed = set()
        one_thing = len(self._asked) == 1 and not self._asked & MAKERS
        if echoed and one_thing and asks_which_thing(self.question) and gives_names(
                sentence, self._question_text, self._titles, coined=True):
            echoed = set()  # "which benchmarks?": names its source gives, never called so
        if not self._echoes(sentence):
            echoed |= unsaid(self._topic)
        if echoed and not gives:
            return 0.0, "", f"the source says nothing of: {', '.join(sorted(echoed)[:4])}"
        scores = [(cosine(vector, v), p) for v, p in zip(item.vectors, item.passages, strict=True)]
        best, passage = max(scores) if scores else (0.0, item.text)
        shared = len(words & source_words) / len(words) if words else 0.0
        if best >= self.threshold or shared >= self.overlap:
            return max(best, shared), passage, ""
        if len(self.evidence) == 1 and gives_values(sentence, self._question_text) and all(
            w in source_words or w in self._question_words
            or stem_in(w, source_words | self._question_words)
            for w in words if len(w) > 2
        ):
            # One paper shown, and the sentence is the question's words plus values that
            # paper states ("The metric it improves, keeping pass@1, is pass@k."): nothing in
            # it is new but what the source says, however little it resembles the passage.
            value = next((p for p in item.passages if any(
                normalise(v) in normalise(p) for v in values_in(sentence))), passage)
            return self.threshold, value, ""
        return 0.0, "", f"not close to the source (similarity {best:.2f})"

    def names_wanted(self, sentence: str, sources: tuple[str, ...] = ()) -> bool:
        """Whether a sentence gives what the question asks for by name (``asked.gives_wanted``),
        ``sources`` the passages it was checked against."""
        return gives_wanted(sentence, self.wanted, self.question, self._titles, sources)

    def _abbreviates(self, word: str) -> bool:
        """Whether a word of a sentence only abbreviates the question's words ("MLM" for
        "multimodal language model"): that is no answer either."""
        return 3 <= len(word) <= 6 and word.isalpha() and word in self._initials

    def _off_topic(self) -> str:
        return f"the source does not mention: {', '.join(sorted(self._names)[:4])}"

    def _answer(self, sentence: str, items: list[Evidence], passages: tuple[str, ...]) -> Verdict:
        """A supported sentence; when titles answer the question and the sentence only
        repeats the question or a title, the answer is those papers, by name."""
        titles = [e.source.title for e in items]
        if (self.papers and self._echoes(sentence)) or is_title(sentence, titles, not self.papers):
            lead = "Yes: " if re.match(r"\W*yes\b", sentence, re.IGNORECASE) else ""
            return replace(self.pointer(items, lead), pointer=False)  # the model's own answer
        return Verdict(sentence, tuple(e.number for e in items), passages)

    def _echoes(self, sentence: str) -> bool:
        """Whether the sentence says no more than the question (80 % of its words, and no
        name the question lacks: "Yes, GlowQ does …" says which paper does it)."""
        if NEGATION.search(sentence):
            return False  # "No, there is no work on …" is not a paper
        if any(normalise(t) not in self._question_text for t in key_terms(sentence)):
            return False
        words = set(terms(sentence)) - GENERIC
        return bool(words) and len(words & self._question_words) >= 0.8 * len(words)

    def _named_by(self, sentence: str) -> Evidence | None:
        """The source whose short name (its title before a colon) is all the sentence says."""
        said = flat(sentence)
        if not said:
            return None
        for item in self.evidence:
            short = flat(item.source.title.split(":")[0])
            if said == short and ":" in item.source.title:
                return item
        return None

    def check(self, raw: str) -> Verdict:
        """Keep, re-attribute or drop one sentence of the model's answer.

        Source numbers used as the subject ("[1] and [2] are about …") are checked as the
        citations of the rest of the sentence, and the papers' names take their place.
        """
        listing = listed(raw)
        if listing is not None:
            return self._listing(listing)
        lead = _SUBJECT.match(raw)
        first = re.match(r"[a-z][\w\-]*", raw[lead.end():]) if lead else None
        if lead is None or first is None or first.group(0) in _NOT_VERB:
            verdict = self._check(raw)  # "X does A, while Y does B": each half, alone
            if of_both(raw) and not verdict.dropped and len(set(verdict.numbers)) < 2:
                return Verdict(verdict.sentence, dropped=Dropped(verdict.sentence, ONE_OF_TWO))
            if not verdict.dropped:
                return verdict
            names = [(self.short_label(e), e.number) for e in self.evidence]
            return by_halves(raw, self._check) or by_subjects(raw, self._check, names) or verdict
        subject = cited_numbers(lead.group(1))
        rest = f"{raw[lead.end():].rstrip()} " + "".join(f"[{n}]" for n in subject)
        verdict = self._check(rest)
        if verdict.dropped or verdict.refusal or verdict.pointer:
            return verdict
        if verdict.sentence != strip_markers(rest):
            return verdict  # already rewritten, as the papers' names
        names = self._names_of([n for n in subject if n in verdict.numbers] or verdict.numbers,
                               verdict.sentence)
        if not names:
            return verdict
        yes = "Yes, " if lead.start(1) and "yes" in raw[:lead.start(1)].lower() else ""
        return replace(verdict, sentence=f"{yes}{and_join(names)} {verdict.sentence}")

    def _names_of(self, numbers: Sequence[int], sentence: str = "") -> list[str]:
        """The papers' short names; the title, where the sentence names the method itself
        ("[1] has tested RS-GRPO": not "RS-GRPO has tested RS-GRPO")."""
        by_number, said = {e.number: e for e in self.evidence}, normalise(sentence)
        short = [(self.short_label(by_number[n]), by_number[n]) for n in numbers if n in by_number]
        return [display(e.source) if mentions(said, normalise(s)) else s for s, e in short]

    def _listing(self, listing: Listed) -> Verdict:
        """"…, including [1] and [2].": the rest of the sentence is checked with those papers
        as its citations, and the names of the ones it holds for take the markers' place."""
        rest = listing.rest + "".join(f"[{n}]" for n in listing.numbers)
        verdict = self.check(rest)
        if verdict.dropped or verdict.refusal or verdict.pointer:
            return verdict
        if verdict.sentence != strip_markers(rest):
            return verdict  # already rewritten, as the papers' names
        names = self._names_of([n for n in listing.numbers if n in verdict.numbers])
        return replace(verdict, sentence=listing.naming(names)) if names else verdict

    def _check(self, raw: str) -> Verdict:
        numbers = cited_numbers(raw)
        valid = {e.number for e in self.evidence}
        self.invalid_markers += [n for n in numbers if n not in valid]
        sentence = strip_markers(raw)
        if not _JOINS.sub("", sentence).strip("*_#-:;,.& "):  # "[1] and [2]."
            pointed = [e for e in self.evidence if e.number in numbers]
            if pointed and not any(map(self.relevant, pointed)):
                return Verdict(sentence, dropped=Dropped(sentence, self._off_topic()))
            if pointed:  # the model answered with source numbers alone: name those papers
                return self.pointer([e for e in pointed if self.relevant(e)])
            return Verdict(sentence, dropped=Dropped(sentence, "empty"))
        if is_refusal(sentence):
            return Verdict(sentence, refusal=True)
        if self._yes_no and bare_verdict(sentence, self._question_text, self._question_words):
            return Verdict(sentence, dropped=Dropped(sentence, BARE_VERDICT))
        named = self._named_by(sentence)
        if named is not None:  # "MindPilot." for "which work …?": the paper, by its name
            return self.pointer([named])
        if self.papers and self._echoes(sentence):
            # "Yes, there are several works that …": the answer is the papers, shown because
            # they support the question; the sentence itself says nothing to check
            pointed = [e for e in self.evidence if e.number in numbers] or (
                list(self.evidence) if self.several else list(self.evidence[:1]))
            pointed = [e for e in pointed if self.relevant(e)]
            if pointed:
                lead = "Yes: " if re.match(r"\W*yes\b", sentence, re.IGNORECASE) else ""
                return replace(self.pointer(pointed, lead), pointer=False)
        if (cut := not self.papers and unfinished(sentence)) or len(set(terms(sentence))) < 2:
            return Verdict(sentence, dropped=Dropped(sentence, cut or "no claim to check"))
        vector = self.embed(sentence)
        results = {e.number: (e, self._supports(e, sentence, vector)) for e in self.evidence}
        supported = [n for n in numbers if n in results and results[n][1][0] > 0]
        cited = [n for n in supported if self.relevant(results[n][0])]
        if supported and not cited:
            return Verdict(sentence, dropped=Dropped(sentence, self._off_topic()))
        if cited:
            return self._answer(sentence, [results[n][0] for n in cited],
                                tuple(results[n][1][1] for n in cited))
        ranked = sorted(results.values(), key=lambda r: -r[1][0])
        backing = [r for r in ranked if r[1][0] > 0]
        on_topic = [r for r in backing if self.relevant(r[0])]
        if on_topic:
            item, (_, passage, _) = on_topic[0]
            return self._answer(sentence, [item], (passage,))
        if backing:
            return Verdict(sentence, dropped=Dropped(sentence, self._off_topic()))
        reasons = [results[n][1][2] for n in numbers if n in results] or [
            r[1][2] for r in ranked[:1]
        ]
        reason = reasons[0] if reasons else "no source to check against"
        return Verdict(sentence, dropped=Dropped(sentence, reason))
