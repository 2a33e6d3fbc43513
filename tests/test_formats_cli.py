"""Reference libraries in and BibTeX out, through the real command line in subprocesses:
the team's export files indexed by the bundled embedder, ``--where`` on papers and ask, and
``ask --bibtex``, its model a scripted OpenAI-compatible server on loopback."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import bibtexparser
import pytest
from conftest import run_cli, share_model
from fake_openai import FakeOpenAI

DATA = Path(__file__).parent / "data" / "formats"
LIBRARY = [DATA / "zotero.bib", DATA / "library.ris", DATA / "zotero_csl.json"]


def first_source_sentence(prompt: str) -> str:
    """A checkable answer: the first sentence of source [1], cited."""
    body = prompt.split("Sources:", 1)[1].split("\n[1] ", 1)[1].split("\n", 2)[1]
    return re.split(r"(?<=\.)\s", body, maxsplit=1)[0].rstrip(".") + " [1]."


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = share_model(tmp_path_factory.mktemp("library"))
    indexed = run_cli("index", *map(str, LIBRARY), "--json", env={"ASSISTANT_HOME": str(home)})
    assert indexed.returncode == 0, indexed.stderr
    home.joinpath("index.json").write_text(indexed.stdout)
    return home


@pytest.fixture(scope="module")
def model() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(["ok"], reply=first_source_sentence) as fake:
        yield fake


def env(home: Path, model: FakeOpenAI | None = None) -> dict[str, str]:
    values = {"ASSISTANT_HOME": str(home)}
    if model is not None:
        values.update(OPENAI_BASE_URL=model.base_url, OPENAI_API_KEY="sk-test-formats",
                      ASSISTANT_MODEL="fake")
    return values


def test_index_reports_each_file_and_papers_lists_authors_and_year(home: Path) -> None:
    report = json.loads(home.joinpath("index.json").read_text())
    assert report["added"] == report["papers"] == 8
    files = {Path(f["file"]).name: f for f in report["files"]}
    assert [files[p.name]["format"] for p in LIBRARY] == ["bibtex", "ris", "csl-json"]
    assert all(f["skipped"] == {"no abstract": 1} for f in files.values())

    papers = json.loads(run_cli("papers", "--json", env=env(home)).stdout)
    assert len(papers) == 8
    assert {"authors", "year", "venue", "keywords", "doi", "url", "arxiv_id", "openreview_id",
            "citation_key"} <= papers[0].keys()
    drpose = next(p for p in papers if p["citation_key"] == "muller2026DirectRewardFinetuning")
    assert drpose["authors"][0] == "Jana Müller" and drpose["year"] == 2026

    recent = json.loads(run_cli("papers", "--json", "--where", "year>=2026",
                                env=env(home)).stdout)
    assert recent and all(p["year"] >= 2026 for p in recent) and len(recent) < len(papers)
    text = run_cli("index", *map(str, LIBRARY), env=env(home))  # unchanged: nothing embedded
    assert "zotero.bib (bibtex): 4 read, 1 skipped (1 no abstract)" in text.stdout


def test_ask_where_cites_only_matching_papers_and_bibtex_reads_back(
        home: Path, model: FakeOpenAI) -> None:
    papers = json.loads(run_cli("papers", "--json", env=env(home)).stdout)
    matching = {p["id"] for p in papers if p["year"] and p["year"] >= 2026}
    asked = run_cli("ask", "How are human poses reconstructed in the wild?", "--where",
                    "year>=2026", "--json", env=env(home, model))
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    assert answer["sources"] and {s["paper_id"] for s in answer["sources"]} <= matching
    assert answer["citations"] and {c["paper_id"] for c in answer["citations"]} <= matching
    assert all(c["bibtex"].startswith("@") for c in answer["citations"])

    printed = run_cli("ask", "What does DrPose maximize?", "--where", "author~müller",
                      "--bibtex", env=env(home, model))
    assert printed.returncode == 0, printed.stderr
    entries = bibtexparser.parse_string("@" + printed.stdout.split("\n@", 1)[1])
    assert [e.key for e in entries.entries] == ["muller2026DirectRewardFinetuning"]
    assert not entries.failed_blocks


def test_filters_that_match_nothing_or_cannot_be_read_are_errors(home: Path) -> None:
    for command in (["papers"], ["ask", "What is DrPose?"]):
        none = run_cli(*command, "--where", "year>=2100", env=env(home))
        assert none.returncode == 1
        assert "no indexed paper matches --where year>=2100" in none.stderr
        bad = run_cli(*command, "--where", "colour=blue", env=env(home))
        assert bad.returncode == 1 and "Traceback" not in bad.stderr
        assert "unknown field 'colour'" in bad.stderr


def test_index_limit_and_where_apply_while_reading(tmp_path: Path) -> None:
    files = [DATA / "openreview_v2.jsonl", DATA / "arxiv_slice.jsonl"]
    result = run_cli("index", *map(str, files), "--limit", "4", "--where", "year>=2025",
                     "--json", env={"ASSISTANT_HOME": str(tmp_path / "h")})
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    read = {Path(f["file"]).name: f for f in report["files"]}
    assert sum(f["read"] for f in read.values()) == 4
    assert read["arxiv_slice.jsonl"]["limited"]
    papers = json.loads(run_cli("papers", "--json",
                                env={"ASSISTANT_HOME": str(tmp_path / "h")}).stdout)
    assert papers and all(p["year"] >= 2025 for p in papers)
    bad = run_cli("index", str(files[0]), "--where", "year~20",
                  env={"ASSISTANT_HOME": str(tmp_path / "h2")})
    assert bad.returncode == 1 and "'~' in 'year~20'" in bad.stderr
    assert not (tmp_path / "h2" / "vectorstore" / "chroma.sqlite3").exists()


def test_both_halves_filter_and_k_papers_come_back_when_enough_match(home: Path, minilm) -> None:
    from assistant.api import Assistant
    from assistant.config import Settings
    from assistant.ingest.where import parse

    assistant = Assistant(Settings(home=home), embeddings=minilm)
    papers = {p.id: p.__dict__ for p in assistant.papers(abstracts=False)}
    question = "reinforcement learning with a reward"
    for where in ("year>=2025", "author~an", "title~in", ["venue!=arXiv", "year<=2026"]):
        flt = parse(where)
        matching = [pid for pid, meta in papers.items() if flt.matches(meta)]
        found = assistant.retrieve(question, k=3, where=where)
        assert len(found) == min(3, len(matching)), where
        assert all(flt.matches(papers[s.paper_id]) for s in found), where


def test_indexing_nothing_is_an_error_that_leaves_the_index(home: Path) -> None:
    before = run_cli("papers", "--json", env=env(home)).stdout
    result = run_cli("index", str(LIBRARY[0]), "--where", "year>=2100", env=env(home))
    assert result.returncode == 1
    assert "no papers to index: " in result.stderr and "loosen --where" in result.stderr
    assert "zotero.bib (bibtex): 0 read, 5 skipped" in result.stderr
    assert run_cli("papers", "--json", env=env(home)).stdout == before
