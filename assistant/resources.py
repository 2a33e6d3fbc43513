"""Where bundled files (prompts, corpus, tokenizer) and default folders live.

In a checkout they are the top-level folders; a wheel carries them inside the package
(``assistant/_prompts``, ``assistant/_corpus``, ``assistant/_eval``).
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
_CHECKOUT = _PACKAGE.parent


def _in_checkout() -> bool:
    return (_CHECKOUT / "pyproject.toml").is_file() and (_CHECKOUT / "prompts").is_dir()


def _bundled(in_checkout: str, in_wheel: str) -> Path:
    return _CHECKOUT / in_checkout if _in_checkout() else _PACKAGE / in_wheel


def prompts_dir() -> Path:
    """The prompt files: ``prompts/`` in a checkout, package data in a wheel."""
    return _bundled("prompts", "_prompts")


def bundled_corpus_dir() -> Path:
    """The bundled ICLR 2026 abstracts with their ``titles.tsv``."""
    return _bundled("data/iclr2026", "_corpus")


def eval_questions() -> Path:
    """The team's evaluation question set."""
    return _bundled("data/eval/questions.jsonl", "_eval/questions.jsonl")


def package_data(name: str) -> Path:
    """A file shipped inside the package (``assistant/data/``)."""
    return _PACKAGE / "data" / name


def default_vectorstore() -> Path:
    """``vectorstore/`` in a checkout, else the platform's user data folder."""
    if _in_checkout():
        return _CHECKOUT / "vectorstore"
    import platformdirs

    return Path(platformdirs.user_data_dir("assistant")) / "vectorstore"


def default_cache_dir() -> Path:
    """The platform's user cache folder for the assistant."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("assistant"))
