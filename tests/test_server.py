"""The store on a real Chroma server that the test starts on loopback."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from conftest import free_port, run_cli, serving


@pytest.fixture
def chroma_server(tmp_path: Path):
    port = free_port()
    chroma = shutil.which("chroma") or str(Path(sys.executable).with_name("chroma"))
    with serving([chroma, "run", "--path", str(tmp_path / "server-data"), "--host", "127.0.0.1",
                  "--port", str(port)], port, timeout=60):
        yield f"http://127.0.0.1:{port}"


@pytest.mark.server
def test_index_papers_and_retrieve_through_a_chroma_server(chroma_server: str, tmp_path: Path) -> None:
    env = {"ASSISTANT_CHROMA_URL": chroma_server}
    first = run_cli("index", "--json", env=env)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["added"] == 38
    second = json.loads(run_cli("index", "--json", env=env).stdout)
    assert (second["added"], second["unchanged"]) == (0, 38)
    assert not (tmp_path / "home" / "vectorstore").exists()  # nothing went to the local folder
    papers = json.loads(run_cli("papers", "--json", env=env).stdout)
    assert len(papers) == 38

    from assistant.api import Assistant
    from assistant.config import Settings

    sources = Assistant(Settings(chroma_url=chroma_server)).retrieve("Which paper proposes GlowQ?")
    assert sources[0].title.startswith("GlowQ")


def test_unreachable_chroma_server_is_a_clear_error() -> None:
    result = run_cli("papers", env={"ASSISTANT_CHROMA_URL": f"http://127.0.0.1:{free_port()}"})
    assert result.returncode == 1
    assert "cannot reach the Chroma server" in result.stderr
