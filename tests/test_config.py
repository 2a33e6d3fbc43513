"""Settings: nested groups, the variables users have always set, and errors that name them."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli
from pydantic import ValidationError

from assistant.config import (
    RetrievalSettings,
    Settings,
    StorageSettings,
    _group_fields,
    explain,
    variable,
)

# Every variable a user could set before the settings were grouped, with a value to set.
FLAT = {
    "ASSISTANT_HOME": "/tmp/h", "ASSISTANT_VECTORSTORE": "/tmp/v", "ASSISTANT_CACHE_DIR": "/tmp/c",
    "ASSISTANT_CHROMA_URL": "http://127.0.0.1:9", "ASSISTANT_COLLECTION": "mine",
    "ASSISTANT_EMBEDDINGS": "openai:text-embedding-3-small", "ASSISTANT_MODEL": "qwen",
    "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": "http://127.0.0.1:8/v1",
    "ASSISTANT_K": "7", "ASSISTANT_CHUNK_TOKENS": "120", "ASSISTANT_CHUNK_OVERLAP": "8",
    "ASSISTANT_CONTEXT_TOKENS": "400", "ASSISTANT_FOCUS_TOKENS": "0",
    "ASSISTANT_QUESTION_TOKENS": "100", "ASSISTANT_ANSWER_TOKENS": "200",
    "ASSISTANT_QUOTE_SENTENCES": "1",
    "ASSISTANT_LLM_CONTEXT_WINDOW": "2048", "ASSISTANT_THREADS": "1", "ASSISTANT_TIMEOUT": "5",
    "ASSISTANT_MAX_RETRIES": "0", "ASSISTANT_API_KEY": "secret", "ASSISTANT_SERVE_QUEUE": "2",
    "ASSISTANT_CANDIDATES": "30", "ASSISTANT_FUSION_K": "60", "ASSISTANT_NAME_PAPERS": "2",
    "ASSISTANT_DEBUG": "1",
}


def test_every_old_variable_still_sets_its_field(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASSISTANT_HOME")
    for name, value in FLAT.items():
        monkeypatch.setenv(name, value)
    settings = Settings()
    read = {variable(name): getattr(getattr(settings, group), name)
            for group, name in _group_fields()}
    read["ASSISTANT_DEBUG"] = settings.debug
    assert read.keys() == FLAT.keys()  # no variable lost or added
    for name, value in FLAT.items():
        got = read[name]
        got = got.get_secret_value() if hasattr(got, "get_secret_value") else got
        assert got == (True if name == "ASSISTANT_DEBUG" else type(got)(value)), name
    assert settings.models.uses_openai()


def test_field_names_are_unique_across_groups() -> None:
    """A flat variable or keyword must name one field."""
    names = [name for _, name in _group_fields()]
    assert len(names) == len(set(names))
    assert not set(names) & set(Settings.model_fields)


def test_the_nested_variable_works_and_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSISTANT_RETRIEVAL__K", "9")
    monkeypatch.setenv("ASSISTANT_INDEX__CHUNK_TOKENS", "100")
    assert Settings().retrieval.k == 9
    monkeypatch.setenv("ASSISTANT_K", "3")
    assert Settings().retrieval.k == 9
    assert Settings().index.chunk_tokens == 100


def test_arguments_win_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSISTANT_K", "3")
    monkeypatch.setenv("ASSISTANT_CHUNK_TOKENS", "100")
    settings = Settings(retrieval={"k": 4})
    assert settings.retrieval.k == 4
    assert settings.index.chunk_tokens == 100  # the other groups still read the environment


def test_nested_and_flat_construction_agree(tmp_path: Path) -> None:
    by_dict = Settings(retrieval={"k": 3}, storage={"home": tmp_path})
    by_model = Settings(retrieval=RetrievalSettings(k=3), storage=StorageSettings(home=tmp_path))
    flat = Settings(k=3, home=tmp_path)
    assert by_dict == by_model == flat
    assert flat.storage.vectorstore_path() == tmp_path / "vectorstore"
    assert Settings(retrieval=RetrievalSettings(k=3), k=4).retrieval.k == 4  # the flat one wins
    assert hash(flat) == hash(by_dict)  # ask() keeps one Assistant per Settings


def test_replace_validates_and_keeps_the_rest(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, k=3)
    changed = settings.replace(chunk_tokens=100, model="qwen")
    assert (changed.index.chunk_tokens, changed.models.model) == (100, "qwen")
    assert (changed.retrieval.k, changed.storage.home) == (3, tmp_path)
    assert settings.index.chunk_tokens == 160  # frozen: a copy
    with pytest.raises(ValidationError):
        settings.replace(k=0)


def test_unknown_names_are_refused() -> None:
    with pytest.raises(ValidationError, match="kk"):
        Settings(kk=3)
    with pytest.raises(ValidationError, match="kk"):
        Settings(retrieval={"kk": 3})


def test_errors_name_the_variable_to_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSISTANT_K", "abc")
    monkeypatch.setenv("OPENAI_API_KEY", "")
    monkeypatch.setenv("ASSISTANT_TIMEOUT", "-1")
    with pytest.raises(ValidationError) as caught:
        Settings()
    message = explain(caught.value)
    assert "ASSISTANT_K: Input should be a valid integer" in message
    assert "ASSISTANT_TIMEOUT: Input should be greater than 0" in message
    monkeypatch.delenv("ASSISTANT_K")
    monkeypatch.setenv("ASSISTANT_RETRIEVAL__K", "0")  # the nested form is named when it is set
    with pytest.raises(ValidationError) as caught:
        Settings()
    assert "ASSISTANT_RETRIEVAL__K: Input should be greater than or equal to 1" in explain(
        caught.value)


def test_the_cli_names_a_bad_variable() -> None:
    result = run_cli("papers", env={"ASSISTANT_K": "abc"})
    assert result.returncode == 1
    assert result.stderr.startswith("error: bad setting: ASSISTANT_K: Input should be a valid "
                                     "integer"), result.stderr
    assert "Traceback" not in result.stderr


def test_the_table_has_every_variable_by_group() -> None:
    table = Settings.table()
    for group in ("storage", "models", "index", "retrieval", "answer", "serve"):
        assert f"`{group}`: " in table
    for name in FLAT:
        assert f"| `{name}` |" in table
    assert "| `ASSISTANT_K` | 5 | papers retrieved per question. |" in table
    assert "| `ASSISTANT_DEBUG` | false |" in table
    assert all(field.description for model in (Settings, RetrievalSettings)
               for field in model.model_fields.values())


def test_every_field_and_group_is_described() -> None:
    for name, field in Settings.model_fields.items():
        assert field.description, name
    for group, name in _group_fields():
        assert getattr(Settings.model_fields[group].annotation, "model_fields")[name].description


def test_importing_the_package_changes_no_environment() -> None:
    import subprocess
    import sys

    code = ("import os; before = dict(os.environ); import assistant, assistant.config, "
            "assistant.api, assistant.cli; from assistant.config import Settings; Settings(); "
            "print(sorted(set(os.environ.items()) ^ set(before.items())))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_the_version_is_written_once() -> None:
    import tomllib

    from conftest import ROOT

    import assistant

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "assistant.__version__"}
    assert run_cli("--version").stdout.strip() == f"assistant {assistant.__version__}"
