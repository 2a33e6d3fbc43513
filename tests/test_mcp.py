"""`assistant mcp`: the tools over an Assistant with a fake model, the server in process with
the SDK's client, and the real command over stdio with a real `ClientSession`."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, run_cli
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from assistant.api import Assistant
from assistant.config import Settings
from assistant.errors import InputError
from assistant.serve.mcp_server import PaperTools, build_server

DRPOSE = "Direct Reward Fine-Tuning on Poses for Single Image to 3D Human in the Wild"
TOOLS = {"ask", "search_papers", "get_paper", "list_papers"}


def make(home: Path, minilm, *replies: str) -> Assistant:
    llm = FakeListChatModel(responses=list(replies) or ["unused"])
    return Assistant(Settings(home=home), llm=llm, embeddings=minilm)


# The tools, called directly ----------------------------------------------------------------
def test_search_papers_gives_scores_and_passages(bundled_home, minilm) -> None:
    result = PaperTools(make(bundled_home, minilm)).search_papers("DrPose reward", k=3)
    assert len(result.papers) == 3
    best = result.papers[0]
    assert best.title == DRPOSE and best.arxiv_id == "2603.02619"
    assert best.score > 0 and 0 <= best.support <= 1
    assert any("PoseScore" in p for p in best.passages)


def test_get_paper_by_id_arxiv_id_or_title(bundled_home, minilm) -> None:
    tools = PaperTools(make(bundled_home, minilm))
    by_arxiv = tools.get_paper("2603.02619")
    assert by_arxiv.title == DRPOSE and "PoseScore" in by_arxiv.abstract
    assert tools.get_paper(by_arxiv.paper_id) == by_arxiv
    assert tools.get_paper("direct reward fine-tuning on poses") == by_arxiv
    assert tools.paper_text(by_arxiv.paper_id).startswith(f"# {DRPOSE}\n\narXiv 2603.02619")


def test_get_paper_says_what_to_do_when_nothing_or_several_match(bundled_home, minilm) -> None:
    tools = PaperTools(make(bundled_home, minilm))
    with pytest.raises(InputError, match="no indexed paper has .*list_papers lists them"):
        tools.get_paper("no such paper at all")
    with pytest.raises(InputError, match=r"papers match 'for'.*give a paper_id"):
        tools.get_paper("for")
    with pytest.raises(InputError, match="give a paper id or a title"):
        tools.get_paper("  ")


def test_list_papers_lists_the_bundled_corpus(bundled_home, minilm) -> None:
    listing = PaperTools(make(bundled_home, minilm)).list_papers()
    assert listing.count == len(listing.papers) == 38
    assert DRPOSE in {p.title for p in listing.papers}


def test_ask_gives_checked_text_and_structured_citations(bundled_home, minilm) -> None:
    question = "What reward does DrPose maximize?"
    assistant = make(bundled_home, minilm)
    n = [s.title for s in assistant.retrieve(question)].index(DRPOSE) + 1
    result = PaperTools(make(bundled_home, minilm, f"DrPose maximizes PoseScore [{n}].")).ask(
        question)
    assert result.answer.startswith("DrPose maximizes PoseScore [1].\nFrom the abstract: ")
    assert not result.abstained
    [citation] = result.citations
    assert (citation.number, citation.title, citation.arxiv_id) == (1, DRPOSE, "2603.02619")
    assert citation.paper_id and "PoseScore" in citation.passage
    assert result.references == f"[1] {DRPOSE} (arXiv 2603.02619)"


# The server in process, through the SDK's client --------------------------------------------
async def test_the_server_lists_described_tools_and_answers(bundled_home, minilm) -> None:
    from mcp import Client

    question = "What reward does DrPose maximize?"
    n = [s.title for s in make(bundled_home, minilm).retrieve(question)].index(DRPOSE) + 1
    server = build_server(make(bundled_home, minilm, f"DrPose maximizes PoseScore [{n}]."))
    async with Client(server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == TOOLS
        assert all(len(t.description or "") > 60 for t in tools.values())
        k = tools["ask"].input_schema["properties"]["k"]
        assert "1 to 50" in k["description"]
        assert tools["ask"].output_schema["properties"]["citations"]

        result = await client.call_tool("ask", {"question": question})
        assert not result.is_error
        text = result.content[0].text
        assert text.startswith("DrPose maximizes PoseScore [1].\nFrom the abstract: \"")
        assert text.endswith(f"\n\n[1] {DRPOSE} (arXiv 2603.02619)")
        assert result.structured_content["citations"][0]["title"] == DRPOSE
        assert result.structured_content["abstained"] is False

        paper_id = result.structured_content["citations"][0]["paper_id"]
        read = await client.read_resource(f"paper://{paper_id}")
        assert read.contents[0].text.startswith(f"# {DRPOSE}")
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["paper://{paper_id}"]


async def test_errors_come_back_as_tool_errors_with_the_cli_message(bundled_home, minilm) -> None:
    from mcp import Client

    async with Client(build_server(make(bundled_home, minilm))) as client:
        empty = await client.call_tool("ask", {"question": " \n "})
        assert empty.is_error
        assert empty.content[0].text == (
            "the question is empty; ask something about the indexed papers")
        missing = await client.call_tool("get_paper", {"id_or_title": "no such paper at all"})
        assert missing.is_error and "list_papers lists them" in missing.content[0].text
        too_many = await client.call_tool("search_papers", {"query": "x", "k": 500})
        assert too_many.is_error
        still = await client.call_tool("search_papers", {"query": "DrPose", "k": 1})
        assert not still.is_error  # the server keeps serving


async def test_no_index_gives_the_cli_message(tmp_path, minilm) -> None:
    from mcp import Client

    home = tmp_path / "empty"
    cli = run_cli("papers", env={"ASSISTANT_HOME": str(home)}, timeout=120)
    assert cli.returncode == 1
    async with Client(build_server(make(home, minilm))) as client:
        result = await client.call_tool("list_papers", {})
    assert result.is_error
    assert cli.stderr.strip() == f"error: {result.content[0].text}"


# The real command over stdio ------------------------------------------------------------------
@pytest.fixture
def server_log(tmp_path: Path):
    with (tmp_path / "server.log").open("w+") as log:
        yield log


async def test_assistant_mcp_over_stdio(bundled_home, server_log) -> None:
    """The real command, its model a scripted OpenAI-compatible server on loopback (the
    embedded model is not loaded here)."""
    from fake_openai import FakeOpenAI
    from mcp import ClientSession, StdioServerParameters, stdio_client

    with FakeOpenAI(["ok"]) as model:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "assistant", "mcp"], cwd=ROOT,
            env={**os.environ, "ASSISTANT_HOME": str(bundled_home), "ASSISTANT_MODEL": "fake",
                 "OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "sk-test-mcp"},
        )
        async with stdio_client(params, errlog=server_log) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            tools = {t.name for t in (await session.list_tools()).tools}
            assert tools == TOOLS

            found = await session.call_tool("search_papers", {"query": "DrPose reward", "k": 2})
            assert not found.is_error
            best = found.structured_content["papers"][0]
            assert best["title"] == DRPOSE

            paper = await session.call_tool("get_paper", {"id_or_title": best["paper_id"]})
            assert not paper.is_error
            assert "PoseScore" in paper.structured_content["abstract"]

            missing = await session.call_tool("get_paper", {"id_or_title": "no such paper"})
            assert missing.is_error and "list_papers lists them" in missing.content[0].text

            answer = await session.call_tool(
                "ask", {"question": "What reward does DrPose maximize?"})
            assert not answer.is_error
            assert answer.structured_content["abstained"] is False
            assert answer.structured_content["citations"][0]["title"] == DRPOSE
            assert "PoseScore" in answer.content[0].text and "[1]" in answer.content[0].text
    server_log.seek(0)
    assert "Traceback" not in server_log.read()


def test_ctrl_c_stops_the_server_while_the_client_is_silent(tmp_path) -> None:
    import signal
    import subprocess

    process = subprocess.Popen(
        [sys.executable, "-m", "assistant", "mcp"], cwd=ROOT, stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "ASSISTANT_HOME": str(tmp_path / "home")},
    )
    try:
        time.sleep(3)  # serving, waiting for the client's next line
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=10) == 130
        assert process.stdout.read() == b""  # nothing but the protocol on stdout
        assert b"interrupted" in process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdin.close()
        process.stdout.close()
        process.stderr.close()


def test_an_unexpected_failure_is_a_tool_error_too() -> None:
    from assistant.errors import ConfigurationError
    from assistant.serve.mcp_server import tool_result

    def broken():
        raise ZeroDivisionError("division by zero")

    def leaking():
        raise ConfigurationError("the key sk-secret was refused")

    crashed = tool_result(broken)
    assert crashed.is_error and crashed.content[0].text.startswith(
        "unexpected ZeroDivisionError: division by zero")
    masked = tool_result(leaking, mask=lambda text: text.replace("sk-secret", "***"))
    assert masked.is_error and masked.content[0].text == "the key *** was refused"
