"""Corpus readers, titles from the sidecar, derived titles, content ids, bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import BUNDLED

from assistant.errors import InputFileError
from assistant.ingest.corpus import load_papers, normalize, paper_id
from assistant.ingest.titles import derive_title

ABSTRACT_A = (
    "We introduce FooNet, a method for sparse attention. FooNet reduces memory by 40% on "
    "ImageNet while keeping accuracy."
)
ABSTRACT_B = "We study graph coloring with quantum annealers. Results on 12 benchmarks are reported."


def test_bundled_corpus_has_38_papers_37_titled() -> None:
    papers = load_papers([BUNDLED])
    assert len(papers) == 38
    derived = [p for p in papers if p.title_derived]
    assert len(derived) == 1
    assert derived[0].openreview_id == "kIIG4Km1lu"  # the row with no title still gives its id
    assert "coalition" in derived[0].title.lower()
    titles = {p.title for p in papers}
    assert "GlowQ: Group-Shared LOw-Rank Approximation for Quantized LLMs" in titles
    assert all(p.title.strip() and p.title.lower() != "untitled" for p in papers)


def test_titles_follow_the_abstract_not_the_position(tmp_path: Path) -> None:
    """Renamed files and re-ordered abstracts keep their real titles and their ids."""
    original = {p.id: p for p in load_papers([BUNDLED])}
    shutil.copy(BUNDLED / "titles.tsv", tmp_path / "titles.tsv")
    text = (BUNDLED / "000_71c6f758ade6ab60.txt").read_text().strip().split("\n\n")
    header, abstracts = text[0], text[1:]
    (tmp_path / "renamed.txt").write_text("\n\n".join([header, *reversed(abstracts)]) + "\n")
    shutil.copy(BUNDLED / "002_30d66f6136e5d147.txt", tmp_path / "002_30d66f6136e5d147.txt")
    moved = {p.id: p for p in load_papers([tmp_path])}
    assert moved.keys() == original.keys()
    titled = [pid for pid, p in original.items() if not p.title_derived]
    assert all(moved[pid].title == original[pid].title for pid in titled)


def test_sidecar_title_that_contradicts_its_row_is_not_forced_on(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(f"Set\n\n{ABSTRACT_A}\n\n{ABSTRACT_B}\n")
    (tmp_path / "titles.tsv").write_text(
        "file\tordinal\ttitle\tarxiv_id\topenreview_id\n"
        "a.txt\t1\tGraph coloring with quantum annealers\t\t\n"
        "a.txt\t2\tFooNet: sparse attention that reduces memory\t2601.00001\t\n"
    )
    papers = {p.abstract[:10]: p for p in load_papers([tmp_path])}
    assert papers[ABSTRACT_A[:10]].title.startswith("FooNet")
    assert papers[ABSTRACT_A[:10]].arxiv_id == "2601.00001"
    assert papers[ABSTRACT_B[:10]].title.startswith("Graph coloring")


def test_derived_title_names_the_method() -> None:
    title = derive_title(ABSTRACT_A)
    assert title.startswith("FooNet")
    assert len(title) < 120


def test_ids_come_from_content_and_duplicates_collapse(tmp_path: Path) -> None:
    (tmp_path / "one.txt").write_text(f"Set\n\n{ABSTRACT_A}\n\n{ABSTRACT_B}\n")
    (tmp_path / "two.jsonl").write_text(
        json.dumps({"abstract": "  " + ABSTRACT_A.replace(" ", "\n", 1), "title": "FooNet"}) + "\n"
    )
    papers = load_papers([tmp_path])
    assert len(papers) == 2
    assert {p.id for p in papers} == {paper_id(ABSTRACT_A), paper_id(ABSTRACT_B)}
    foo = next(p for p in papers if p.id == paper_id(ABSTRACT_A))
    assert foo.title == "FooNet" and not foo.title_derived  # the titled copy wins
    assert paper_id(ABSTRACT_A) == paper_id(normalize("\n" + ABSTRACT_A + "  "))


def test_jsonl_and_csv_fields(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text(json.dumps({
        "abstract": ABSTRACT_A, "title": "FooNet", "arxiv_id": "2601.1", "authors": ["A. B", "C. D"],
        "keywords": "attention; memory", "url": "https://example.org/foo",
    }) + "\n\n")
    (tmp_path / "b.csv").write_text(
        'Title,Abstract,OpenReview_ID,authors\n"Coloring","' + ABSTRACT_B + '",abc123,"E. F, G. H"\n'
    )
    papers = {p.title: p for p in load_papers([tmp_path / "a.jsonl", tmp_path / "b.csv"])}
    assert papers["FooNet"].authors == ("A. B", "C. D")
    assert papers["FooNet"].keywords == ("attention", "memory")
    assert papers["FooNet"].url == "https://example.org/foo"
    assert papers["Coloring"].openreview_id == "abc123"
    assert papers["Coloring"].authors == ("E. F", "G. H")


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.txt", b"", "empty.txt: the file is empty"),
        ("blank.txt", b"  \n\n \n", "blank.txt: the file is empty"),
        ("header.txt", b"ICLR 2026 Papers\n\n", "only a header"),
        ("latin.txt", "Set\n\nCaf\u00e9 abstract.\n".encode("latin-1"), "latin.txt:3: not valid UTF-8"),
        ("binary.txt", b"\x00\x01\x02binary", "binary file"),
        ("bad.jsonl", b'{"abstract": "ok one"}\n{"abstract": \n', "bad.jsonl:2: not valid JSON"),
        ("noabs.jsonl", b'{"title": "x"}\n', "noabs.jsonl:1: the 'abstract' field is missing"),
        ("list.jsonl", b"[1, 2]\n", "list.jsonl:1: expected a JSON object"),
        ("nocol.csv", b"title,summary\nA,B\n", "nocol.csv:1: no 'abstract' column"),
        ("rows.csv", b"abstract,title\n", "a header but no rows"),
        ("empty-abstract.csv", b"abstract,title\n,T\n", "empty-abstract.csv:2:"),
        ("notes.pdf", b"%PDF", "unknown file type '.pdf'"),
    ],
)
def test_bad_input_names_the_file_and_line(tmp_path: Path, name: str, content: bytes, message: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InputFileError) as caught:
        load_papers([path])
    assert message in str(caught.value)
    assert str(path) in str(caught.value) or name in str(caught.value)


def test_missing_path_and_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="no such file or folder"):
        load_papers([tmp_path / "nope"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputFileError, match="no corpus files"):
        load_papers([tmp_path / "empty"])
