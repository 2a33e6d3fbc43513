"""The real command line, in subprocesses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import ROOT, run_cli


def test_help_does_not_import_heavy_modules() -> None:
    script = (
        "import sys, runpy; sys.argv = ['assistant', '--help']\n"
        "try:\n    runpy.run_module('assistant', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "heavy = [m for m in ('chromadb', 'langchain_core', 'onnxruntime', 'llama_cpp', 'pydantic')"
        " if m in sys.modules]\n"
        "print('HEAVY', heavy, file=sys.stderr)"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert "usage: assistant" in result.stdout
    assert "HEAVY []" in result.stderr


def test_index_then_papers_json(tmp_path: Path) -> None:
    indexed = run_cli("index", "--json")
    assert indexed.returncode == 0, indexed.stderr
    report = json.loads(indexed.stdout)
    assert report["papers"] == 38 and report["added"] == 38
    assert {"chunks", "updated", "removed", "unchanged", "seconds"} <= report.keys()

    again = json.loads(run_cli("index", "--json").stdout)
    assert (again["added"], again["updated"], again["unchanged"]) == (0, 0, 38)
    assert again["chunks"] == report["chunks"]

    listed = run_cli("papers", "--json")
    papers = json.loads(listed.stdout)
    assert len(papers) == 38
    assert sum(p["title_derived"] for p in papers) == 1
    assert {"id", "title", "title_derived", "arxiv_id", "openreview_id"} <= papers[0].keys()
    glowq = next(p for p in papers if p["title"].startswith("GlowQ"))
    assert glowq["arxiv_id"] == "2603.25385"

    text = run_cli("papers")
    assert "38 papers (1 with a derived title)" in text.stdout
    assert "(derived title)" in text.stdout


def test_a_question_about_the_collection_is_answered_from_the_index() -> None:
    """"what papers do you have?" was answered "The indexed papers do not cover this
    question.": the index answers it, every paper by its title, with nothing cited and no
    model asked; a filter that keeps no paper says so."""
    assert run_cli("index").returncode == 0
    titles = {p["title"] for p in json.loads(run_cli("papers", "--json").stdout)}
    result = run_cli("ask", "what papers do you have?", "--json")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["answer"].startswith("38 papers are indexed:\n1. ")
    assert all(title in answer["answer"] for title in titles)
    assert not answer["abstained"] and answer["citations"] == [] and answer["model"] == ""
    none = run_cli("ask", "how many papers are indexed?", "--where", "year>=2027")
    assert none.returncode == 0
    assert none.stdout.startswith("No indexed paper matches year>=2027;")


def test_a_papers_reference_is_the_index_s_not_the_model_s() -> None:
    """"give me the bibtex for GlowQ" got the model's made-up entry, one line of it kept
    ("title = {Group-Shared …}, [1]."); the index holds the paper's link and entry. A paper
    called by the name its abstract gives (DrPose) is found too."""
    assert run_cli("index").returncode == 0
    result = run_cli("ask", "give me the bibtex for GlowQ", "--json")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    [cited] = answer["citations"]
    assert cited["title"].startswith("GlowQ:") and answer["model"] == ""
    assert answer["answer"].startswith(f"{cited['title']} [1]: https://arxiv.org/abs/2603.25385.")
    assert cited["bibtex"].startswith("@") and cited["bibtex"].strip() in answer["answer"]
    drpose = run_cli("ask", "how do I cite DrPose?")
    assert drpose.stdout.startswith("Direct Reward Fine-Tuning on Poses for Single Image to 3D "
                                    "Human in the Wild [1]: https://arxiv.org/abs/2603.02619.")
    link = run_cli("ask", "arxiv link for TEDM")  # no arXiv id: its OpenReview forum
    assert "[1]: https://openreview.net/forum?id=" in link.stdout and "```" not in link.stdout


def test_output_cut_short_by_its_reader_is_no_error() -> None:
    """"assistant papers | head" printed "error: unexpected BrokenPipeError" and exited 1."""
    assert run_cli("index").returncode == 0
    proc = subprocess.Popen([sys.executable, "-m", "assistant", "papers"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    proc.stdout.close()  # before it writes a line: every write finds the pipe closed
    _, err = proc.communicate(timeout=300)
    assert (proc.returncode, err) == (0, "")


def test_bad_inputs_exit_nonzero_with_the_file_named(tmp_path: Path) -> None:
    latin = tmp_path / "latin.txt"
    latin.write_bytes("Set\n\nR\u00e9sum\u00e9 of a paper.\n".encode("latin-1"))
    cases = {
        str(latin): "latin.txt:3: not valid UTF-8",
        str(tmp_path / "missing.txt"): "missing.txt: no such file or folder",
    }
    for path, message in cases.items():
        result = run_cli("index", path)
        assert result.returncode == 1
        assert message in result.stderr
        assert "Traceback" not in result.stderr
    assert not (tmp_path / "home" / "vectorstore" / "chroma.sqlite3").exists()


def test_commands_before_indexing_say_to_index() -> None:
    result = run_cli("papers")
    assert result.returncode == 1
    assert "run `assistant index`" in result.stderr


def test_blank_question_is_refused() -> None:
    result = run_cli("ask", "   \t ")
    assert result.returncode == 1
    assert "the question is empty" in result.stderr


def test_bad_setting_is_named() -> None:
    result = run_cli("index", env={"ASSISTANT_K": "many"})
    assert result.returncode == 1
    assert "ASSISTANT_K" in result.stderr


def test_cli_py_runs_from_a_checkout() -> None:
    result = subprocess.run([sys.executable, "cli.py", "--help"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0
    assert "index" in result.stdout and "ask" in result.stdout


def test_a_paper_given_by_its_arxiv_link_is_answered_from_that_paper() -> None:
    """New users paste links: "https://arxiv.org/abs/2603.02619 - what does it propose?" was
    refused ("The indexed papers do not cover this question."); the link is read as the
    paper's title, and the user is told. An id the index does not have is said to be so."""
    assert run_cli("index").returncode == 0
    result = run_cli("ask", "https://arxiv.org/abs/2603.02619v1 - what does it propose?", "--json")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert [c["title"] for c in answer["citations"]] == [
        "Direct Reward Fine-Tuning on Poses for Single Image to 3D Human in the Wild"], answer
    assert any(w.startswith("read arXiv 2603.02619 as") for w in answer["warnings"])
    missing = run_cli("ask", "what is arXiv:2603.99999 about?")
    assert missing.returncode == 0
    assert "arXiv 2603.99999 is not in the index" in missing.stdout + missing.stderr
