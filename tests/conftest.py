"""Shared fixtures: every test gets its own on-disk state and no API key."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "data" / "iclr2026"

_CPU_AFTER = """
import resource as _resource, time as _time
_usage = _resource.getrusage(_resource.RUSAGE_SELF)  # every thread of this process
_start = _usage.ru_utime + _usage.ru_stime
_time.sleep(0.5)
_usage = _resource.getrusage(_resource.RUSAGE_SELF)
print(round((_usage.ru_utime + _usage.ru_stime - _start) * 1000, 1))
"""


def cpu_after_ms(code: str, env: dict[str, str] | None = None) -> float:
    """Run ``code`` in a child process; the CPU milliseconds all its threads use in the half
    second after ``code`` ends (idle workers that spin show here)."""
    run = subprocess.run([sys.executable, "-c", code + _CPU_AFTER], capture_output=True,
                         text=True, timeout=120, env=env if env is not None else {**os.environ})
    assert run.returncode == 0, run.stderr[-2000:]
    return float(run.stdout.split()[-1])


def _user_cache() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("assistant"))


def share_model(home: Path) -> Path:
    """Link ``home``'s model file (and its checked stamp) to the user cache's, when that holds
    one, so a test's own home does not assemble its own 1.1 GB copy (six such copies per run,
    kept by pytest for three runs, filled the CI disk). Only the files are linked: a test that
    replaced or removed its model file would replace or remove the link, not the user's file.
    Everything else in ``home`` stays its own."""
    from assistant.models.model_file import FILE_NAME

    shared = _user_cache() / "models" / FILE_NAME
    models = home / "cache" / "models"
    try:
        if shared.is_file() and not (models / FILE_NAME).exists():
            models.mkdir(parents=True, exist_ok=True)
            for source in (shared, shared.with_suffix(".verified")):
                if source.is_file():
                    (models / source.name).symlink_to(source)
    except OSError:  # a read-only cache or home: the test assembles its own copy
        pass
    return home


def copy_home(source: Path, target: Path) -> None:
    """A copy of a home folder without its top-level cache (the model file is linked there)."""
    shutil.copytree(source, target, dirs_exist_ok=True,
                    ignore=lambda folder, names: ["cache"] if Path(folder) == source else [])


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in list(os.environ):
        if name.startswith(("ASSISTANT_", "OPENAI_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("ASSISTANT_HOME", str(share_model(tmp_path / "home")))
    # tiktoken's cache is shared and read-only after seeding; keep it per test too
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken"))
    yield
    from chromadb.api.client import SharedSystemClient

    SharedSystemClient.clear_system_cache()


@pytest.fixture
def settings(tmp_path: Path):
    from assistant.config import Settings

    return Settings(home=tmp_path / "home")


@pytest.fixture(scope="session")
def minilm():
    from assistant.index.embeddings import MiniLMEmbeddings

    return MiniLMEmbeddings()


@pytest.fixture
def fake_embeddings():
    from langchain_core.embeddings import DeterministicFakeEmbedding

    return DeterministicFakeEmbedding(size=384)


@pytest.fixture(scope="session")
def bundled_home(tmp_path_factory: pytest.TempPathFactory, minilm) -> Path:
    """A home folder with the bundled corpus indexed by the real embedding model."""
    from assistant.config import Settings
    from assistant.index.indexing import build_index

    home = share_model(tmp_path_factory.mktemp("bundled"))
    os.environ["TIKTOKEN_CACHE_DIR"] = str(home / "tiktoken")
    build_index(Settings(home=home), embeddings=minilm)
    return home


@pytest.fixture(scope="session")
def embedded_llm():
    """The real embedded model, loaded once for the session (cached model file reused)."""
    from assistant.config import Settings
    from assistant.models.llm import build_llm

    llm = build_llm(Settings(cache_dir=_user_cache()))
    llm.load()
    return llm


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited early with code {process.returncode}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise RuntimeError(f"server on port {port} did not start in {timeout} s")


@contextlib.contextmanager
def serving(command: list[str], port: int, timeout: float = 120) -> Iterator[None]:
    """Run a server process for the block: wait for its port, then stop it."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, process, timeout=timeout)
        yield
    finally:
        process.terminate()
        process.wait(timeout=60)


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 600,
            input: str | None = None) -> subprocess.CompletedProcess[str]:
    """The real command line in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "assistant", *args], capture_output=True, text=True,
        env={**os.environ, **(env or {})}, timeout=timeout, input=input, cwd=ROOT,
    )
