"""Bad input: odd questions, odd corpus files, a huge abstract, (near-)duplicates; and
property-based tests (a bounded fuzz run) of the corpus readers and the citation checker."""

from __future__ import annotations

import csv
import io
import json
import time
import unicodedata
from pathlib import Path

import pytest
from conftest import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.embeddings import DeterministicFakeEmbedding
from scripted_model import DRPOSE, KNOWN, ScriptedChatModel

from assistant.api import Assistant
from assistant.config import Settings
from assistant.errors import InputFileError
from assistant.index.indexing import build_index
from assistant.ingest.corpus import load_papers, normalize

QUESTION = "What reward does DrPose maximize?"
# A bounded fuzz run: enough examples to shake out crashes, few enough for every CI run.
FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def scripted(home: Path, minilm, **extra: tuple[str, str]) -> Assistant:
    return Assistant(Settings(home=home), llm=ScriptedChatModel(extra=extra), embeddings=minilm)


# Questions ----------------------------------------------------------------------------------
def test_control_characters_are_cleaned_out(bundled_home, minilm) -> None:
    question = "What reward\x00does\tDrPose\x07maximize?\u200b\x1b"
    answer = scripted(bundled_home, minilm).ask(question)
    assert answer.question == QUESTION
    assert answer.citations[0].title == DRPOSE


def test_a_one_megabyte_question_is_cut_not_choked_on(bundled_home, minilm) -> None:
    started = time.monotonic()
    answer = scripted(bundled_home, minilm).ask(QUESTION + " Please explain in detail." * 40_000)
    assert len(QUESTION + " Please explain in detail." * 40_000) > 1_000_000
    assert any("cut to its first 200 tokens" in w for w in answer.warnings)
    assert len(answer.question) < 2_000
    assert time.monotonic() - started < 60


def test_a_question_in_another_language(bundled_home, minilm) -> None:
    german = "Welche Belohnung maximiert DrPose?"
    assistant = scripted(bundled_home, minilm, **{german: KNOWN[QUESTION]})
    answer = assistant.ask(german)  # the name carries it: the embedder reads English
    assert answer.citations[0].title == DRPOSE
    chinese = assistant.ask("扩散模型如何生成三维人体姿态？")
    titles = {p.title for p in assistant.papers()}
    assert chinese.abstained or all(c.title in titles for c in chinese.citations)


def test_cli_refuses_blank_and_control_only_questions(bundled_home) -> None:
    for question in ("", " \t ", "\x07\x1b\x7f"):
        result = run_cli("ask", question, "--json", env={"ASSISTANT_HOME": str(bundled_home)})
        assert result.returncode == 1 and result.stdout == ""
        assert result.stderr.strip() == (
            "error: the question is empty; ask something about the indexed papers"
        )


def test_cli_names_a_binary_corpus_file(tmp_path: Path) -> None:
    binary = tmp_path / "weights.jsonl"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00" + bytes(range(256)))
    result = run_cli("index", str(binary))
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"error: {binary}: looks like a binary file, expected UTF-8 text"
    )


# Corpus -------------------------------------------------------------------------------------
def long_abstract(tokens: int) -> str:
    sentence = ("We evaluate HugeNet on benchmark {i} and observe a gain of {i} points in "
                "accuracy over the strongest baseline. ")
    parts, i = [], 0
    while len(parts) * 22 < tokens:  # about 22 tokens a sentence
        parts.append(sentence.format(i=i))
        i += 1
    return "".join(parts).strip()


@pytest.mark.parametrize("punctuated", [True, False])
def test_a_100000_token_abstract_is_chunked_within_the_embedder(tmp_path: Path, minilm,
                                                                punctuated: bool) -> None:
    from assistant.index.embeddings import MINILM_MAX_PIECES
    from assistant.index.store import embed_text, open_store
    from assistant.ingest.chunking import ending_tokens
    from assistant.ingest.tokens import count_tokens, encoding

    text = long_abstract(100_000)
    if not punctuated:  # one endless sentence: cut between words
        text = text.replace(". ", " and ")
    enc = encoding(tmp_path / "cache")
    assert count_tokens(enc, text) >= 100_000
    corpus = tmp_path / "huge.jsonl"
    corpus.write_text(json.dumps({"title": "HugeNet", "abstract": text}) + "\n")
    settings_ = Settings(home=tmp_path / "home")
    fake = DeterministicFakeEmbedding(size=384)
    started = time.monotonic()
    report = build_index(settings_, [corpus], embeddings=fake)
    assert time.monotonic() - started < 120
    assert report.papers == 1 and report.chunks > 600
    store = open_store(settings_, fake)
    _, texts, metas = store.all_chunks()
    last = settings_.index.chunk_tokens + ending_tokens(settings_.index.chunk_tokens)
    assert all(m["tokens"] <= (last if m["chunk"] == report.chunks - 1 else settings_.index.chunk_tokens)
               for m in metas)
    assert max(minilm.count_pieces(embed_text("HugeNet", t)) for t in texts) <= MINILM_MAX_PIECES
    assert normalize(store.papers()[0].abstract) == normalize(text)  # kept whole
    question = "Which gain does HugeNet show on benchmark 4321?"
    sources = Assistant(settings_, embeddings=fake).retrieve(question)
    assert sources[0].title == "HugeNet"


def test_duplicates_collapse_and_near_duplicates_are_both_kept(tmp_path: Path) -> None:
    abstract = ("We propose FooNet, a sparse attention method. "
                "FooNet cuts memory by 40% on ImageNet.")
    variants = {
        "exact copy": abstract,
        "other whitespace": abstract.replace(" ", "  \n ", 3),
        "decomposed accents": abstract.replace("We", "We\u0301").replace("e\u0301", "\u00e9"),
        "one word changed": abstract.replace("40%", "41%"),
        "other case": abstract.lower(),
    }
    (tmp_path / "a.txt").write_text(f"Set\n\n{abstract}\n")
    (tmp_path / "b.jsonl").write_text(
        "".join(json.dumps({"abstract": v}) + "\n" for v in variants.values())
    )
    papers = load_papers([tmp_path])
    texts = {p.abstract for p in papers}
    # Same text up to whitespace: one paper. Any other difference: its own paper.
    assert len(papers) == 4
    assert normalize(abstract) in texts and normalize(variants["one word changed"]) in texts
    report = build_index(Settings(home=tmp_path / "home"), [tmp_path],
                         embeddings=DeterministicFakeEmbedding(size=384))
    assert report.papers == report.added == 4


def test_jsonl_with_unescaped_line_separators_and_terminal_escapes(tmp_path: Path) -> None:
    path = tmp_path / "odd.jsonl"
    path.write_text(json.dumps({"abstract": "One\u2028two\x85three \x1b[31mred\x1b[0m.",
                                "title": "T\u2029x\x07"}, ensure_ascii=False) + "\n")
    (paper,) = load_papers([path])
    assert paper.abstract == "One two three [31mred [0m." and paper.title == "T x"


# Property-based: corpus readers ---------------------------------------------------------------
@FUZZ
@given(content=st.binary(max_size=2048), suffix=st.sampled_from([".txt", ".jsonl", ".csv"]))
def test_any_bytes_give_papers_or_an_error_naming_the_file(tmp_path_factory, content: bytes,
                                                           suffix: str) -> None:
    path = tmp_path_factory.mktemp("fuzz") / f"input{suffix}"
    path.write_bytes(content)
    try:
        papers = load_papers([path])
    except InputFileError as exc:
        assert str(path) in str(exc)
        return
    assert papers and all(p.abstract and p.title and len(p.id) == 16 for p in papers)
    assert len({p.id for p in papers}) == len(papers)


text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=200)
abstracts = st.lists(text.filter(lambda t: normalize(t) != ""), min_size=1, max_size=8)


@FUZZ
@given(items=abstracts, ascii_only=st.booleans())
def test_jsonl_and_csv_keep_every_abstract(tmp_path_factory, items: list[str],
                                           ascii_only: bool) -> None:
    folder = tmp_path_factory.mktemp("roundtrip")
    (folder / "a.jsonl").write_text(  # unescaped U+2028 and the like are valid JSON
        "".join(json.dumps({"abstract": t}, ensure_ascii=ascii_only) + "\n" for t in items)
    )
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["abstract"])
    writer.writerows([t.replace("\x00", " ")] for t in items)  # a NUL byte makes it binary
    (folder / "b.csv").write_text(buffer.getvalue(), newline="")
    for path in (folder / "a.jsonl", folder / "b.csv"):
        papers = load_papers([path])
        assert {p.abstract for p in papers} == {normalize(t.replace("\x00", " ")) for t in items}
        for paper in papers:  # no control character (a terminal escape) survives
            assert not any(unicodedata.category(c) == "Cc" for c in paper.abstract + paper.title)


@FUZZ
@given(items=st.lists(st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")),
                              min_size=1, max_size=120), min_size=1, max_size=6))
def test_txt_keeps_every_paragraph(tmp_path_factory, items: list[str]) -> None:
    items = [t for t in (" ".join(i.split()) for i in items) if t]
    if not items:
        return
    path = tmp_path_factory.mktemp("txt") / "papers.txt"
    path.write_text("A Collection\n\n" + "\n\n".join(items) + "\n")
    papers = load_papers([path])
    assert {p.abstract for p in papers} == {normalize(t) for t in items}
    assert all(p.collection == "A Collection" for p in papers)


# Property-based: the citation checker ---------------------------------------------------------
SOURCE_TEXTS = [
    "DrPose maximizes PoseScore, a differentiable reward, on the DrPose15K dataset of 15000 poses.",
    "GlowQ shares one low-rank approximation per input group and cuts memory by 37%.",
]
WORDS = ["DrPose", "PoseScore", "GlowQ", "reward", "memory", "37%", "15000", "Mars", "1850",
         "NeuroFlux", "the", "uses", "and", "[1]", "[2]", "[3]", "[12]", "[1-2]", ".", "\n", "- "]


@FUZZ
@given(reply=st.lists(st.sampled_from(WORDS) | st.text(max_size=12), max_size=40).map(" ".join))
def test_whatever_the_model_writes_every_citation_is_checked(reply: str, tmp_path_factory) -> None:
    from assistant.answer.chain import AnswerConfig, generate
    from assistant.answer.citations import key_terms, normalise
    from assistant.answer.markers import cited_numbers, split_units, strip_markers
    from assistant.ingest.tokens import encoding
    from assistant.types import Answer, Source

    fake = DeterministicFakeEmbedding(size=64)
    sources = [
        Source(paper_id=f"p{n}", title=f"Paper {n}", text=t, score=1.0, passages=(t,), dense=0.9)
        for n, t in enumerate(SOURCE_TEXTS)
    ]
    by_id = {s.paper_id: s for s in sources}
    enc = encoding(tmp_path_factory.getbasetemp() / "cache")
    pieces = list(generate(
        "What do DrPose and GlowQ do?", sources, llm=ScriptedChatModel(reply=lambda _: reply),
        embed=fake.embed_query, vectors=lambda s, ps: fake.embed_documents(list(ps)),
        embed_many=fake.embed_documents, abstract=lambda paper_id: by_id[paper_id].text,
        enc=enc, config=AnswerConfig(),
    ))
    answer = pieces[-1]
    assert isinstance(answer, Answer)
    assert all(c.paper_id in by_id for c in answer.citations)
    if answer.abstained:
        assert not answer.citations
        return
    shown = {c.number: by_id[c.paper_id] for c in answer.citations}
    for _, sentence, _ in split_units(answer.text):
        numbers = cited_numbers(sentence)
        assert numbers and set(numbers) <= set(shown), sentence  # cites, and only given papers
        # every name and number in it is in the papers it cites (a list of titles, each
        # with its own paper, is why it is the union)
        haystack = normalise(" ".join(f"{shown[n].title} {shown[n].text}" for n in numbers))
        missing = [t for t in key_terms(strip_markers(sentence)) if normalise(t) not in haystack]
        assert not missing, (sentence, missing)
    for citation in answer.citations:  # the supporting passage is the source's own text
        assert citation.text in by_id[citation.paper_id].text


@pytest.mark.parametrize(("pasted", "asked"), [
    ("**Which** paper proposes *Qflex*?", "Which paper proposes Qflex?"),
    ("What does ***GlowQ*** cache?", "What does GlowQ cache?"),
    ("What is `pass@k` in __RS-GRPO__?", "What is pass@k in RS-GRPO?"),
    # not emphasis: kept as written
    ("Does a*b hold for snake_case_names?", "Does a*b hold for snake_case_names?"),
    ("Is x * y = 3?", "Is x * y = 3?"),
    ("Which paper uses A* search?", "Which paper uses A* search?"),
])
def test_markdown_emphasis_pasted_into_a_question_is_left_out(pasted: str, asked: str) -> None:
    from assistant.api import clean_question

    assert clean_question(pasted) == asked


@pytest.mark.parametrize(("asked", "kept"), [
    ("Explain HAQO like I'm five.", "Explain HAQO."),
    ("ELI5: what is GlowQ?", "what is GlowQ?"),
    ("what is GlowQ, eli5?", "what is GlowQ?"),
    ("In simple terms, what does Value Matching do?", "what does Value Matching do?"),
    ("What does GlowQ do, in plain English?", "What does GlowQ do?"),
    ("explain it like I'm five: which paper abstains?", "which paper abstains?"),
    # the words as a topic, not a request about style: kept
    ("point me to a paper that plans in plain English", "point me to a paper that plans in plain "
     "English"),
    ("What is ELI5?", "What is ELI5?"),
])
def test_a_request_about_style_is_set_aside(asked: str, kept: str) -> None:
    from assistant.text.sentences import without_style

    assert without_style(asked) == kept
