"""Prompt files, loaded by name, with their variables checked on load."""

from __future__ import annotations

import string
from dataclasses import dataclass
from functools import lru_cache

from assistant import resources
from assistant.errors import ConfigurationError

# The variables each prompt must use, no more and no fewer.
VARIABLES: dict[str, frozenset[str]] = {
    "system": frozenset(),
    "answer": frozenset({"sources", "question"}),
    # a comparison answered one paper at a time, when the whole answer was dropped
    "answer_each": frozenset({"sources", "question", "paper", "number"}),
    "rewrite": frozenset({"history", "question"}),
    "translate": frozenset({"question"}),  # a question in another language, into English
    "baseline": frozenset({"context", "question"}),  # the evaluation's tutorial pipeline
    "judge": frozenset({"title", "abstract", "question"}),  # does this paper answer it?
    "judge_second": frozenset({"title", "abstract", "question"}),  # asked another way
    "judge_second_system": frozenset(),  # the second asking's system turn
    # does the abstract say yes or no to a yes/no question? (its sentences stand for the answer)
    "judge_verdict": frozenset({"title", "abstract", "question"}),
    # is the abstract's answer to a yes/no question yes? (to check the answer's own yes or no)
    "judge_polarity": frozenset({"title", "abstract", "question"}),
    # does this paper belong in the answer to a "which papers …?" question?
    "judge_list": frozenset({"title", "abstract", "question"}),
}


@dataclass(frozen=True)
class Prompt:
    """A prompt template with ``{variable}`` fields."""

    name: str
    template: str
    variables: frozenset[str]

    def format(self, **values: str) -> str:
        missing = self.variables - values.keys()
        if missing:
            raise ConfigurationError(f"prompt '{self.name}' needs {', '.join(sorted(missing))}")
        return self.template.format(**{k: values[k] for k in self.variables})


def _fields(template: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}


@lru_cache(maxsize=None)
def load_prompt(name: str) -> Prompt:
    """The prompt ``prompts/<name>.md``; its variables must be exactly the expected ones."""
    if name not in VARIABLES:
        raise ConfigurationError(f"unknown prompt '{name}'; known: {', '.join(VARIABLES)}")
    path = resources.prompts_dir() / f"{name}.md"
    try:
        template = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ConfigurationError(f"{path}: cannot read the prompt file ({exc.strerror})") from exc
    try:
        found = _fields(template)
    except ValueError as exc:
        raise ConfigurationError(f"{path}: malformed template ({exc}); double literal braces") from exc
    expected = VARIABLES[name]
    if found != expected:
        problems = []
        if expected - found:
            problems.append(f"missing {{{'}, {'.join(sorted(expected - found))}}}")
        if found - expected:
            problems.append(f"unknown {{{'}, {'.join(sorted(found - expected))}}}")
        raise ConfigurationError(f"{path}: {' and '.join(problems)}")
    return Prompt(name, template, expected)
