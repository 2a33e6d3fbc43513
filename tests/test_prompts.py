"""Prompt files load by name and their variables are checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.answer import prompts
from assistant.errors import ConfigurationError


@pytest.mark.parametrize("name", sorted(prompts.VARIABLES))
def test_every_prompt_file_loads(name: str) -> None:
    prompt = prompts.load_prompt(name)
    values = {v: f"<{v}>" for v in prompt.variables}
    text = prompt.format(**values)
    assert all(f"<{v}>" in text for v in prompt.variables)


def test_wrong_variables_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "answer.md").write_text("Sources: {sources}\nQ: {questoin}\n")
    monkeypatch.setattr(prompts.resources, "prompts_dir", lambda: tmp_path)
    prompts.load_prompt.cache_clear()
    try:
        with pytest.raises(ConfigurationError, match=r"missing \{question\}.*unknown \{questoin\}"):
            prompts.load_prompt("answer")
    finally:
        prompts.load_prompt.cache_clear()
