"""Settings: one object, read from ``ASSISTANT_*`` (and the usual ``OPENAI_*``) variables.

``python -m assistant.config`` prints them as the README's table."""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from assistant import resources


class Settings(BaseSettings):
    """Everything configurable, with its environment variable in the description."""

    model_config = SettingsConfigDict(env_prefix="ASSISTANT_", extra="ignore", frozen=True)

    home: Path | None = Field(
        None,
        description="ASSISTANT_HOME: one folder for all on-disk state (index and caches). "
        "Unset: the checkout's vectorstore/ and the platform's user cache folder.",
    )
    vectorstore: Path | None = Field(
        None, description="ASSISTANT_VECTORSTORE: folder of the persisted Chroma index. Unset: "
        "`vectorstore/` in a checkout, else the user data folder."
    )
    cache_dir: Path | None = Field(
        None,
        description="ASSISTANT_CACHE_DIR: assembled model file, tiktoken encodings, chat "
        "history, the embedded model's saved system-prompt states (`prompt-states/`, at most 8 "
        "of about 13 MB). Unset: the user cache folder (`~/.cache/assistant`).",
    )
    chroma_url: str | None = Field(
        None, description="ASSISTANT_CHROMA_URL: http://host:port of a Chroma server to use instead."
    )
    collection: str = Field("papers", description="ASSISTANT_COLLECTION: Chroma collection name.")
    embeddings: str = Field(
        "minilm",
        description="ASSISTANT_EMBEDDINGS: 'minilm' (bundled all-MiniLM-L6-v2) or "
        "'openai:<model>' such as openai:text-embedding-3-small.",
    )
    model: str | None = Field(
        None,
        description="ASSISTANT_MODEL: chat model name for an OpenAI-compatible server "
        "(default gpt-4o-mini; ignored by the embedded model).",
    )
    openai_api_key: SecretStr | None = Field(
        None, validation_alias=AliasChoices("OPENAI_API_KEY"),
        description="OPENAI_API_KEY: key for OpenAI or a compatible server; when it or "
        "OPENAI_BASE_URL is set, answers come from that server."
    )
    openai_base_url: str | None = Field(
        None, validation_alias=AliasChoices("OPENAI_BASE_URL"),
        description="OPENAI_BASE_URL: an OpenAI-compatible server (vLLM, Ollama, llama.cpp)."
    )
    k: int = Field(5, ge=1, le=50, description="ASSISTANT_K: papers retrieved per question.")
    chunk_tokens: int = Field(
        160, ge=32, le=400, description="ASSISTANT_CHUNK_TOKENS: chunk size in tiktoken "
        "tokens (a paper's last chunk may hold an eighth more); after a change, the next "
        "`assistant index` re-chunks and re-embeds every paper."
    )
    chunk_overlap: int = Field(
        16, ge=0, le=200, description="ASSISTANT_CHUNK_OVERLAP: overlap between chunks, tokens."
    )
    context_tokens: int = Field(
        360,
        ge=100,
        description="ASSISTANT_CONTEXT_TOKENS: budget for the excerpts sent to the model (each "
        "paper's sentences closest to the question).",
    )
    focus_tokens: int = Field(
        300,
        ge=0,
        description="ASSISTANT_FOCUS_TOKENS: budget when the question names one paper, which "
        "alone is then shown to the model (a shorter prompt, a sooner first word); 0 turns "
        "this off.",
    )
    question_tokens: int = Field(
        200, ge=16, description="ASSISTANT_QUESTION_TOKENS: longer questions are cut."
    )
    answer_tokens: int = Field(
        320, ge=16, description="ASSISTANT_ANSWER_TOKENS: most tokens the model may generate."
    )
    llm_context_window: int = Field(
        4096, ge=512, description="ASSISTANT_LLM_CONTEXT_WINDOW: embedded model's window."
    )
    threads: int | None = Field(
        None, description="ASSISTANT_THREADS: CPU threads for the embedded models (default: all)."
    )
    timeout: float = Field(
        60.0, gt=0, description="ASSISTANT_TIMEOUT: seconds to wait for a model server."
    )
    max_retries: int = Field(
        2, ge=0, le=10, description="ASSISTANT_MAX_RETRIES: retries on 429/5xx and timeouts."
    )
    api_key: SecretStr | None = Field(
        None,
        description="ASSISTANT_API_KEY: the bearer key `assistant serve` asks of clients on its "
        "/v1 routes; required to serve on a host other than loopback.",
    )
    serve_queue: int = Field(
        8, ge=0, le=1000,
        description="ASSISTANT_SERVE_QUEUE: questions that may wait while `assistant serve` "
        "answers another (the model answers one at a time); more are refused with 503.",
    )
    debug: bool = Field(False, description="ASSISTANT_DEBUG: show tracebacks on errors.")

    @classmethod
    def table(cls) -> str:
        """The settings as a Markdown table (variable, default, meaning), from the fields'
        descriptions: the README's table is this, checked by tests/test_packaging.py."""
        rows = ["| variable | default | meaning |", "|---|---|---|"]
        for field in cls.model_fields.values():
            variable, meaning = (field.description or "").split(": ", 1)
            default = field.default
            shown = "unset" if default is None else str(default).lower() if isinstance(
                default, bool) else str(default)
            rows.append(f"| `{variable}` | {shown} | {meaning} |")
        return "\n".join(rows) + "\n"

    # Resolved locations -------------------------------------------------------------
    def vectorstore_path(self) -> Path:
        """Folder of the embedded Chroma index."""
        if self.vectorstore is not None:
            return self.vectorstore.expanduser()
        if self.home is not None:
            return self.home.expanduser() / "vectorstore"
        return resources.default_vectorstore()

    def cache_path(self) -> Path:
        """Folder for caches (model file, tiktoken encodings, chat history)."""
        if self.cache_dir is not None:
            return self.cache_dir.expanduser()
        if self.home is not None:
            return self.home.expanduser() / "cache"
        return resources.default_cache_dir()

    def uses_openai(self) -> bool:
        """True when an OpenAI-compatible server is configured instead of the embedded model."""
        return bool(self.openai_api_key or self.openai_base_url)


if __name__ == "__main__":
    print(Settings.table(), end="")
