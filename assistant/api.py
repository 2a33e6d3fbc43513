"""The public API: an injectable ``Assistant`` and a thin ``ask()``."""

from __future__ import annotations

import re
import threading
import time
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

from assistant.config import Settings
from assistant.errors import InputError
from assistant.types import Answer, Citation, Response, Source

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import Runnable

    from assistant.answer.conversation import Scope
    from assistant.answer.judge import Judge
    from assistant.index.store import PaperInfo, Store
    from assistant.ingest.where import Filter
    from assistant.retrieve.retrieval import HybridRetriever

    Where = str | Sequence[str] | Filter | None  # --where expressions, all must hold

History = Sequence[tuple[str, str]]


def parse_where(where: Where) -> Filter:
    """``--where`` expressions as a filter; a ``FilterError`` names the bad part."""
    from assistant.ingest.where import Filter, parse

    if isinstance(where, Filter):
        return where
    return parse(list(where) if where is not None and not isinstance(where, str) else where)


def _no_match(flt: Filter) -> InputError:
    return InputError(f"no indexed paper matches --where {flt}; `assistant papers --json` "
                      "lists their years, venues and authors (an index built before filters "
                      "existed has none: run `assistant index` again)")


def clean_question(question: str) -> str:
    """The question without control characters, markdown emphasis and surplus whitespace;
    empty is an error."""
    if not isinstance(question, str):
        raise InputError("the question must be text")
    text = "".join(
        " " if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") else ch for ch in question
    )
    # markdown emphasis pasted from a chat window ("**Which** paper proposes *Qflex*?")
    text = _EMPHASIS.sub(r"\2", text)
    text = " ".join(text.split())
    if not text:
        raise InputError("the question is empty; ask something about the indexed papers")
    return text


# **bold**, *italic*, __bold__, `code`: the marks in pairs around words (not "A* search")
_EMPHASIS = re.compile(r"(?<![\w*_`])(\*{1,3}|__|`)(?=[^\s*_`])(.+?)(?<=[^\s*_`])\1(?![\w*_`])")


class Assistant:
    """Question answering over the indexed papers; every part can be injected.

    Parts left ``None`` are built from ``settings`` when first needed, so creating an
    Assistant is cheap and tests can pass fakes for the model, embeddings or store.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        llm: BaseChatModel | None = None,
        embeddings: Embeddings | None = None,
        store: Store | None = None,
    ) -> None:
        self.settings = settings or Settings()
        self._llm = llm
        self._embeddings = embeddings
        self._store = store
        self._retriever: HybridRetriever | None = None
        self._judge: tuple[Judge | None] | None = None  # built with the model, once
        self._keys: tuple[str, dict[str, str]] | None = None  # (index version, BibTeX keys)
        self._listed: tuple[str, list[PaperInfo]] | None = None  # (index version, papers)
        self._build_lock = threading.RLock()

    # Parts -------------------------------------------------------------------------
    @property
    def embeddings(self) -> Embeddings:
        with self._build_lock:
            if self._embeddings is None:
                from assistant.index.embeddings import build_embeddings

                self._embeddings = build_embeddings(self.settings)
            return self._embeddings

    @property
    def store(self) -> Store:
        with self._build_lock:
            if self._store is None:
                from assistant.index.store import open_store

                self._store = open_store(self.settings, self.embeddings)
            return self._store

    @property
    def llm(self) -> BaseChatModel:
        with self._build_lock:
            if self._llm is None:
                from assistant.models.llm import build_llm

                self._llm = build_llm(self.settings)
            return self._llm

    @property
    def retriever(self) -> HybridRetriever:
        with self._build_lock:  # one retriever (and one BM25 index) for all threads
            if self._retriever is None:
                from assistant.retrieve.retrieval import HybridRetriever

                self._retriever = HybridRetriever(self.store, self.settings.retrieval)
            return self._retriever

    @cached_property
    def _encoding(self) -> Any:
        from assistant.ingest.tokens import encoding

        return encoding(self.settings.storage.cache_path())

    # Operations ----------------------------------------------------------------------
    def papers(self, abstracts: bool = True, where: Where = None) -> list[PaperInfo]:
        """Every indexed paper (those ``where`` matches); without ``abstracts`` their titles
        and ids alone, read faster."""
        flt = parse_where(where)
        return [p for p in self.store.papers(abstracts) if flt.matches(p.__dict__)]

    def _papers(self) -> list[PaperInfo]:
        """Every paper's title and ids (for identifiers, follow-ups), read as the index changes."""
        version = self.store.version()
        if self._listed is None or self._listed[0] != version:
            self._listed = (version, self.store.papers(False))
        return self._listed[1]

    def retrieve(self, question: str, k: int | None = None, where: Where = None) -> list[Source]:
        """The ``k`` papers most relevant to ``question``, best first, one entry per paper;
        with ``where`` (``"year>=2024"``, or a list that must all hold) only papers it matches."""
        from assistant.answer.evidence import recased
        from assistant.server_errors import model_errors
        from assistant.text.identifiers import with_titles

        with model_errors(self.settings):  # the embeddings may come from a server
            # "arXiv 2603.02619": searched for by its title; "qavatar": a name typed in lower
            # case, as the papers write it
            question = with_titles(clean_question(question), self._papers)[0]
            question = recased(question, self.retriever.spelling)
            return self._find(question, k, parse_where(where))

    def _find(self, question: str, k: int | None, flt: Filter,
              excluded: Sequence[str] = ()) -> list[Source]:
        """The papers retrieved for ``question``, each with how well it supports it, without
        those whose title or name is one of ``excluded``."""
        from assistant.answer.support import score_sources
        from assistant.text.mentions import paper_names
        from assistant.text.sentences import mentions, normalise

        k = k or self.settings.retrieval.k
        found = self.retriever.retrieve(question, k + len(excluded), where=flt)
        if flt and not found:
            raise _no_match(flt)
        left_out = [normalise(x) for x in excluded]
        if left_out:
            names = {s.paper_id: normalise(" ".join([s.title, *paper_names(s)])) for s in found}
            found = [s for s in found if not any(mentions(names[s.paper_id], x) for x in left_out)]
        return score_sources(question, found[:k], self.retriever.rarity,
                             defines=self.retriever.defines)

    def ask(self, question: str, history: History | None = None, k: int | None = None,
            where: Where = None) -> Answer:
        """Answer ``question`` (a follow-up when ``history`` is given) with checked citations,
        from the papers ``where`` matches when given."""
        return self.stream(question, history=history, k=k, where=where).answer

    def stream(
        self, question: str, history: History | None = None, k: int | None = None,
        where: Where = None,
    ) -> Response:
        """The answer as it is written: iterate for its checked text as it comes; ``.answer``
        is the final ``Answer``."""
        flt = parse_where(where)  # a bad filter fails here, before anything is read
        pieces = self._pieces(question, history, k, flt)
        return Response(self._cite(p) if isinstance(p, Answer) else p for p in pieces)

    def _cite(self, answer: Answer) -> Answer:
        """``answer`` with its citations given their papers' BibTeX."""
        from assistant.answer.references import bibtex_entry

        if not answer.citations:
            return answer
        papers = self.store.first_chunks(sorted({c.paper_id for c in answer.citations}))
        keys = self._bibtex_keys()
        citations = tuple(replace(c, bibtex=bibtex_entry(papers.get(c.paper_id) or {
            "title": c.title, "arxiv_id": c.arxiv_id}, keys.get(c.paper_id)))
            for c in answer.citations)
        return replace(answer, citations=citations)

    def _bibtex_keys(self) -> dict[str, str]:
        """The key of each paper's made BibTeX entry, one paper per key in the whole index
        ("anon2026efficient", "anon2026efficienta": two titles starting "Efficient"), so
        entries saved from different answers never clash; kept until the index changes."""
        from assistant.answer.references import citation_key, unique_keys

        version = self.store.version()
        if self._keys is None or self._keys[0] != version:
            made = sorted((p.id, citation_key(p)) for p in self.store.papers(abstracts=False)
                          if not p.raw_bibtex)
            self._keys = (version, dict(zip([i for i, _ in made],
                                            unique_keys(k for _, k in made), strict=True)))
        return self._keys[1]

    def _pieces(
        self, question: str, history: History | None, k: int | None, flt: Filter
    ) -> Iterator[str | Answer]:
        """Checked pieces of the answer as they come, then the final ``Answer``."""
        from assistant.answer.chain import AnswerConfig, generate
        from assistant.answer.collection import collection_answer, reference_answer, reference_of
        from assistant.answer.intent import about_collection
        from assistant.answer.support import calibration
        from assistant.models.llm import model_label
        from assistant.server_errors import model_errors

        started = time.perf_counter()
        if about_collection(asked := clean_question(question)):  # "what papers do you have?"
            yield from collection_answer(asked, [
                p for p in self.store.papers(False) if flt.matches(p.__dict__)],
                str(flt) if flt else "", time.perf_counter() - started)
            return
        warnings: list[str] = []
        with model_errors(self.settings):
            standalone, sources, shown, pointed = self._read(question, history, k, flt,
                                                             warnings)
        retrieved = time.perf_counter() - started
        # "give me the bibtex for GlowQ"; in a chat "how do I cite it?", once rewritten
        found = reference_of(standalone, sources[:3], self.store.first_chunks)
        if found is not None:
            yield from reference_answer(standalone, *found, self._entry(found[0]), retrieved)
            return
        fitted = calibration()
        config = AnswerConfig.fitted(self.settings.answer, fitted)
        if pointed:  # "what optimizer?" of the paper just discussed: no gate, it is the
            config = replace(config, min_support=0.0, min_dense=-1.0)  # subject; checks stay
        with model_errors(self.settings):
            yield from generate(
                standalone, sources, llm=self.llm, embed=self.embeddings.embed_query,
                vectors=self._passage_vectors, embed_many=self.embeddings.embed_documents,
                abstract=self.store.abstract, known=self.retriever.knows,
                defines=self.retriever.defines,
                judge=self.judge if max(fitted.judge, fitted.verdict, fitted.listed,
                                        fitted.polarity) > 0
                else None,
                enc=self._encoding, config=config,
                model=model_label(self.llm), warnings=warnings, started=started,
                retrieve_seconds=retrieved, shown=shown,
            )

    def _read(self, question: str, history: History | None, k: int | None, flt: Filter,
              warnings: list[str]) -> tuple[str, list[Source], str | None, bool]:
        """(the question as it is searched for and checked, the papers found for it, the
        question as the model is shown it when that differs: with what it says to leave
        out, whether the user pointed at the papers it is asked of); what was read
        differently from what was typed is added to ``warnings``."""
        from assistant.answer.evidence import recased, respelled
        from assistant.answer.intent import left_out
        from assistant.answer.language import read_in_english
        from assistant.ingest.tokens import truncate
        from assistant.text.identifiers import with_titles
        from assistant.text.sentences import without_instructions, without_style

        limit = self.settings.answer.question_tokens
        text, cut = truncate(self._encoding, clean_question(question), limit)
        if cut:
            warnings.append(f"the question was cut to its first {limit} tokens")
        text, found = with_titles(text, self._papers)  # "arXiv 2603.02619"
        text, read = read_in_english(text, self.llm)  # "Qu'est-ce que GlowQ ?"
        warnings.extend([*found, *([read] if read else [])])
        scope = self.among_earlier(text, history or [], flt)
        if scope is not None:
            standalone, flt = scope.question, flt.among(scope.papers)
            count = len(scope.papers)
            warnings.append(f"asked of the {count} paper{'s' * (count > 1)} of the previous answer")
        else:
            standalone = self.rewrite(text, history or [])
        # Orders written into the question ("Ignore all previous instructions and …",
        # "[Admin note: …]") are not what it asks: searched for, checked and shown to the
        # model is the rest, as with the abstracts.
        standalone = without_instructions(standalone).strip() or standalone
        # "Explain HAQO like I'm five.": answered in the abstracts' terms, which the checks
        # can hold each sentence to
        plain = without_style(standalone) or standalone
        if " ".join(plain.split()) != " ".join(standalone.split()):
            warnings.append("answered in the abstracts' own terms: each sentence must be "
                            "checked against them, so the request about style was set aside")
        # "how was timeomni-1 trained?": a name typed in lower case is read as the papers
        # write it
        plain = recased(plain, self.retriever.spelling)
        standalone, excluded = left_out(plain)
        if excluded:
            warnings.append("searched without what the question leaves out ("
                            + ", ".join(f'"{x}"' for x in excluded)
                            + "); papers whose title or name says it are not listed")
        sources = self._find(standalone, k, flt, excluded)
        # "Which paper is AIGB-Perl from?": a name one letter off a retrieved paper's is read
        # as that paper spells it, and the user is told
        respelt, fixes = respelled(standalone, sources)
        if fixes:
            warnings.append("read " + ", ".join(f'"{a}" as "{b}"' for a, b in fixes))
            standalone, sources = respelt, self._find(respelt, k, flt, excluded)
        return standalone, sources, plain if excluded else None, bool(scope and scope.pointed)

    def _entry(self, info: PaperInfo) -> str:
        """A paper's BibTeX entry, as its citations get it."""
        return self._cite(Answer("", "", (Citation(1, info.id, info.title, "", info.title_derived,
                                                   info.arxiv_id, info.openreview_id),),
                                 (), False)).citations[0].bibtex

    @property
    def judge(self) -> Judge | None:
        """The model's yes/no judgement of a paper against a question (None when the model
        gives no token probabilities): assistant/answer/judge.py."""
        from assistant.answer.judge import build_judge
        from assistant.answer.support import calibration

        with self._build_lock:
            if self._judge is None:
                self._judge = (build_judge(self.llm, calibration().judge_band),)
            return self._judge[0]

    def rewrite(self, question: str, history: History) -> str:
        """A follow-up made standalone by the model; other questions are returned as they are
        (assistant/answer/conversation.py)."""
        from assistant.answer.conversation import standalone

        return standalone(question, history, self.llm)

    def among_earlier(self, question: str, history: History, where: Where = None
                      ) -> Scope | None:
        """The question as it is asked and the ids of the previous answer's papers it is asked
        among ("Which of these does relighting?" after a list: "Which paper does
        relighting?"; "what are the four components?" after SSD-GS: with the question before
        it), or None when it is asked of every paper (``where`` matches):
        assistant/answer/conversation.py."""
        from assistant.answer.conversation import asked_of_earlier
        from assistant.answer.support import calibration

        if not history:
            return None
        flt = parse_where(where)
        return asked_of_earlier(
            question, history, lambda: {p.id: p.title for p in self._papers()},
            lambda q, among: self._find(q, None, flt if among is None else flt.among(among)),
            calibration().threshold)

    def _passage_vectors(self, source: Source, passages: Sequence[str]) -> list[list[float]]:
        from assistant.index.store import embed_text

        return self.embeddings.embed_documents([embed_text(source.title, p) for p in passages])

    # LangChain -------------------------------------------------------------------------
    def as_retriever(self, k: int | None = None) -> BaseRetriever:
        """A LangChain retriever over this assistant's hybrid retrieval."""
        from assistant.langchain import AssistantRetriever

        return AssistantRetriever(assistant=self, k=k)

    def as_runnable(self) -> Runnable[str, Answer]:
        """A LangChain Runnable: question in, Answer out."""
        from langchain_core.runnables import RunnableLambda

        return RunnableLambda(lambda question: self.ask(question), name="assistant")


_default: dict[Settings, Assistant] = {}
_default_lock = threading.Lock()


def ask(question: str, history: History | None = None, settings: Settings | None = None,
        where: Where = None) -> Answer:
    """Answer one question with default (or given) settings; the model is loaded once."""
    settings = settings or Settings()
    with _default_lock:
        assistant = _default.setdefault(settings, Assistant(settings))
    return assistant.ask(question, history=history, where=where)

