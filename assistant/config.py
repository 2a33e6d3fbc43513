"""Settings: one object in described groups, read from ``ASSISTANT_*`` (and the usual ``OPENAI_*``)
variables.

Every field keeps the flat variable it has always had (``ASSISTANT_K``, ``ASSISTANT_CHUNK_TOKENS``,
``OPENAI_API_KEY``); the nested form ``ASSISTANT_RETRIEVAL__K`` is read too and wins when both are
set. In Python, ``Settings(retrieval={"k": 3})``, ``Settings(retrieval=RetrievalSettings(k=3))``
and the flat ``Settings(k=3)`` are the same. ``python -m assistant.config`` prints the README's
table.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from assistant import resources

PREFIX = "ASSISTANT_"
# The ecosystem's own names, honoured as they are (every other field is PREFIX + its name).
_WELL_KNOWN = {"openai_api_key": "OPENAI_API_KEY", "openai_base_url": "OPENAI_BASE_URL"}
K_MIN, K_MAX = 1, 50  # papers a question may retrieve: every front end checks this range


class _Group(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class StorageSettings(_Group):
    """Where the index and the caches live: one folder (`home`) relocates them all."""

    home: Path | None = Field(
        None,
        description="one folder for all on-disk state (index and caches). Unset: the "
        "checkout's vectorstore/ and the platform's user cache folder.",
    )
    vectorstore: Path | None = Field(
        None, description="folder of the persisted Chroma index. Unset: `vectorstore/` in a "
        "checkout, else the user data folder."
    )
    cache_dir: Path | None = Field(
        None,
        description="assembled model file, tiktoken encodings, the embedded "
        "model's saved system-prompt states (`prompt-states/`, at most 8 of about 13 MB). "
        "Unset: the user cache folder (`~/.cache/assistant`).",
    )
    chroma_url: str | None = Field(
        None, description="http://host:port of a Chroma server to use instead."
    )
    collection: str = Field("papers", description="Chroma collection name.")

    def vectorstore_path(self) -> Path:
        """Folder of the embedded Chroma index."""
        if self.vectorstore is not None:
            return self.vectorstore.expanduser()
        if self.home is not None:
            return self.home.expanduser() / "vectorstore"
        return resources.default_vectorstore()

    def cache_path(self) -> Path:
        """Folder for caches (model file, tiktoken encodings, saved prompt states)."""
        if self.cache_dir is not None:
            return self.cache_dir.expanduser()
        if self.home is not None:
            return self.home.expanduser() / "cache"
        return resources.default_cache_dir()


class ModelSettings(_Group):
    """The embedding and chat models: embedded by default, or an OpenAI-compatible server."""

    embeddings: str = Field(
        "minilm",
        description="'minilm' (bundled all-MiniLM-L6-v2) or 'openai:<model>' such as "
        "openai:text-embedding-3-small.",
    )
    model: str = Field(
        "gpt-4o-mini",
        description="chat model name on an OpenAI-compatible server (ignored by the embedded "
        "model).",
    )
    openai_api_key: SecretStr | None = Field(
        None, description="key for OpenAI or a compatible server; when it or OPENAI_BASE_URL "
        "is set, answers come from that server."
    )
    openai_base_url: str | None = Field(
        None, description="an OpenAI-compatible server (vLLM, Ollama, llama.cpp)."
    )
    threads: int | None = Field(
        None, description="CPU threads for the embedded models (default: all)."
    )
    timeout: float = Field(60.0, gt=0, description="seconds to wait for a model server.")
    max_retries: int = Field(
        2, ge=0, le=10, description="retries on 429/5xx and timeouts."
    )
    llm_context_window: int = Field(4096, ge=512, description="embedded model's window.")

    def uses_openai(self) -> bool:
        """True when an OpenAI-compatible server is configured instead of the embedded model."""
        return bool(self.openai_api_key or self.openai_base_url)


class IndexSettings(_Group):
    """How abstracts are cut into chunks when indexed."""

    chunk_tokens: int = Field(
        160, ge=32, le=400, description="chunk size in tiktoken tokens (a paper's last chunk "
        "may hold an eighth more); after a change, the next `assistant index` re-chunks and "
        "re-embeds every paper."
    )
    chunk_overlap: int = Field(16, ge=0, le=200, description="overlap between chunks, tokens.")


class RetrievalSettings(_Group):
    """How many papers a question retrieves, and how the dense and BM25 rankings are fused."""

    k: int = Field(5, ge=K_MIN, le=K_MAX, description="papers retrieved per question.")
    candidates: int = Field(
        40, ge=5, le=1000, description="chunks each of the dense and the BM25 search puts "
        "forward before the two rankings are fused.",
    )
    fusion_k: int = Field(
        20, ge=1, le=1000, description="reciprocal-rank-fusion constant: a paper at rank r of a "
        "list scores 1/(fusion_k + r); smaller lets the top ranks count more.",
    )
    name_papers: int = Field(
        2, ge=0, le=1000, description="a name from the question (GlowQ, ETTh1) ranks the papers "
        "holding it as a third list only when at most this many candidate papers hold it "
        "(\"RL\" or \"LLM\" is a word in most corpora).",
    )


class AnswerSettings(_Group):
    """Token budgets of the question, the excerpts shown to the model and its answer."""

    context_tokens: int = Field(
        360, ge=100, description="budget for the excerpts sent to the model (each paper's "
        "sentences closest to the question).",
    )
    focus_tokens: int = Field(
        300, ge=0, description="budget when the question names one paper, which alone is then "
        "shown to the model (a shorter prompt, a sooner first word); 0 turns this off.",
    )
    question_tokens: int = Field(200, ge=16, description="longer questions are cut.")
    answer_tokens: int = Field(320, ge=16, description="most tokens the model may generate.")
    quote_sentences: int = Field(
        2, ge=0, le=5, description="sentences of the cited paper's abstract, those closest to the "
        "question, quoted and cited under an answer as its evidence (under a list of papers, each "
        "paper's sentence on what it proposes); 0 turns this off.",
    )


class ServeSettings(_Group):
    """`assistant serve`, the OpenAI-compatible HTTP API."""

    api_key: SecretStr | None = Field(
        None, description="the bearer key `assistant serve` asks of clients on its /v1 routes; "
        "required to serve on a host other than loopback.",
    )
    serve_queue: int = Field(
        8, ge=0, le=1000,
        description="questions that may wait while `assistant serve` answers another (the "
        "model answers one at a time); more are refused with 503.",
    )


class _FlatEnv(PydanticBaseSettingsSource):
    """The variables users have always set, one per field whatever its group: ``ASSISTANT_K``
    for ``retrieval.k``, ``OPENAI_API_KEY`` for ``models.openai_api_key``."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ reads every group at once

    def __call__(self) -> dict[str, Any]:
        environ = {name.upper(): value for name, value in os.environ.items()}
        found: dict[str, dict[str, str]] = {}
        for group, name in _group_fields():
            value = environ.get(variable(name))
            if value is not None:
                found.setdefault(group, {})[name] = value
        return found


class Settings(BaseSettings):
    """Everything configurable, in groups; each field described, with its variable derived
    from its name (``variable``)."""

    model_config = SettingsConfigDict(
        env_prefix=PREFIX, env_nested_delimiter="__", extra="forbid", frozen=True
    )

    storage: StorageSettings = Field(
        default_factory=StorageSettings, description=StorageSettings.__doc__)
    models: ModelSettings = Field(default_factory=ModelSettings, description=ModelSettings.__doc__)
    index: IndexSettings = Field(default_factory=IndexSettings, description=IndexSettings.__doc__)
    retrieval: RetrievalSettings = Field(
        default_factory=RetrievalSettings, description=RetrievalSettings.__doc__)
    answer: AnswerSettings = Field(
        default_factory=AnswerSettings, description=AnswerSettings.__doc__)
    serve: ServeSettings = Field(default_factory=ServeSettings, description=ServeSettings.__doc__)
    debug: bool = Field(False, description="show tracebacks on errors.")

    def __init__(self, **values: Any) -> None:
        """Groups as models or dicts; a group's field may also be given flat (``k=3``)."""
        super().__init__(**_nest(values))

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # arguments first, then ASSISTANT_RETRIEVAL__K, then the flat ASSISTANT_K
        return init_settings, env_settings, _FlatEnv(settings_cls), dotenv_settings, \
            file_secret_settings

    def replace(self, **changes: Any) -> Settings:
        """A validated copy with ``changes``, flat (``k=3``) or by group."""
        data = self.model_dump()
        for name, value in _nest(changes).items():
            if isinstance(value, dict) and name in _GROUPS:
                data[name] = {**data[name], **value}
            else:
                data[name] = value
        return type(self).model_validate(data)

    @classmethod
    def table(cls) -> str:
        """The settings as Markdown, a table per group (variable, default, meaning), from the
        fields' descriptions: the README's table is this, checked by tests/test_packaging.py."""
        lines: list[str] = []
        for group, model in [*_GROUPS.items(), (None, cls)]:
            fields = {n: f for n, f in model.model_fields.items() if n not in _GROUPS}
            heading = f"`{group}`: {model.__doc__}" if group else "Outside the groups:"
            lines += [heading, "", "| variable | default | meaning |", "|---|---|---|"]
            for name, field in fields.items():
                default = field.default
                shown = "unset" if default is None else str(default).lower() if isinstance(
                    default, bool) else str(default)
                lines.append(f"| `{variable(name)}` | {shown} | {field.description} |")
            lines.append("")
        return "\n".join(lines)


_GROUPS: dict[str, type[_Group]] = {
    name: field.annotation for name, field in Settings.model_fields.items()
    if isinstance(field.annotation, type) and issubclass(field.annotation, _Group)
}


def _group_fields() -> Iterator[tuple[str, str]]:
    """(group, field) for every field of every group."""
    for group, model in _GROUPS.items():
        for name in model.model_fields:
            yield group, name


_GROUP_OF = {name: group for group, name in _group_fields()}


def variable(name: str) -> str:
    """The environment variable of a setting, by its field name: ``k`` -> ``ASSISTANT_K``."""
    return _WELL_KNOWN.get(name, PREFIX + name.upper())


def _nest(values: dict[str, Any]) -> dict[str, Any]:
    """``values`` with flat group fields (``k=3``) moved into their group (``retrieval``);
    beside a group given whole, the flat field wins."""
    nested = {name: value for name, value in values.items() if name not in _GROUP_OF}
    for name, value in values.items():
        group = _GROUP_OF.get(name)
        if group is not None:
            into = nested.get(group, {})
            nested[group] = {**(into.model_dump() if isinstance(into, BaseModel) else into),
                             name: value}
    return nested


def explain(exc: ValidationError) -> str:
    """The problems of a ValidationError from Settings, each named by the variable to fix:
    ``ASSISTANT_K: Input should be a valid integer, ...`` (``ASSISTANT_RETRIEVAL__K`` when
    that is the one set)."""
    environ = {name.upper() for name in os.environ}
    problems = []
    for error in exc.errors():
        loc = [str(part) for part in error["loc"]]
        nested = PREFIX + "__".join(loc[:2]).upper()
        if len(loc) == 1:
            shown = variable(loc[0])
        elif loc[0] in _GROUPS and loc[1] in _GROUP_OF and nested not in environ:
            shown = variable(loc[1])
        else:
            shown = nested
        problems.append(f"{shown}: {error['msg']}")
    return "; ".join(problems)


if __name__ == "__main__":
    print(Settings.table(), end="")
