"""Chat models: the embedded llama.cpp model by default, any OpenAI-compatible server when set."""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import PrivateAttr

from assistant.errors import ModelError
from assistant.server_errors import redact_url

if TYPE_CHECKING:
    from assistant.config import Settings

_ROLES = {"system": "system", "human": "user", "ai": "assistant"}


class EmbeddedChatModel(BaseChatModel):
    """A GGUF model run in this process by llama-cpp-python, loaded once on first use.

    A prompt that shares its beginning with the previous one reuses llama.cpp's KV cache. A
    RAM cache of earlier states (``prompt_cache_bytes``, 0 turns it off) goes further: in a
    chat, the follow-up's rewrite and its answer each resume from the last prompt of their
    kind (the same system prompt, often the same sources), not from nothing.
    """

    model_path: str
    model_name: str = "embedded"
    n_ctx: int = 4096
    n_threads: int | None = None
    max_tokens: int = 320
    prompt_cache_bytes: int = 256 * 2**20  # about 13 MB per saved prompt of 460 tokens
    state_dir: str | None = None  # where prompt states outlive the process (None: RAM only)
    temperature: float = 0.0
    _llama: Any = PrivateAttr(default=None)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)
    _recent: Any = PrivateAttr(default_factory=threading.local)  # each thread's last usage

    @property
    def _llm_type(self) -> str:
        return "llama-cpp-embedded"

    def load(self) -> Any:
        """Load the model now (it loads itself on first use otherwise)."""
        if self._llama is None:
            try:
                import llama_cpp
                from llama_cpp import Llama

                from assistant.models.llama_cpu import model_params, use_extra_buffers

                threads = self.n_threads or os.cpu_count() or 1
                params = {"n_ctx": self.n_ctx, "n_batch": 512, "n_ubatch": 128, "flash_attn": True}
                extra = use_extra_buffers(llama_cpp)  # not on AMX builds: their kernels crash
                with model_params(extra_buffers=extra):
                    llama = Llama(model_path=self.model_path, n_threads=threads,
                                  n_threads_batch=threads, verbose=False, **params)
                if self.prompt_cache_bytes > 0:
                    from assistant.models.prompt_cache import PromptCache, state_folder

                    folder = None
                    if self.state_dir:
                        context = (f"llama-cpp-python {llama_cpp.__version__} "
                                   f"{sorted({**params, 'extra_buffers': extra}.items())}")
                        folder = state_folder(Path(self.state_dir), self.model_path, context)
                    llama.set_cache(PromptCache(capacity_bytes=self.prompt_cache_bytes,
                                                folder=folder))
                self._llama = llama
            except Exception as exc:
                raise ModelError(
                    f"cannot load the embedded model {self.model_path} ({exc}); delete the file "
                    "to have it assembled again"
                ) from exc
        return self._llama

    def _messages(self, messages: list[BaseMessage]) -> list[dict[str, str]]:
        return [{"role": _ROLES.get(m.type, "user"), "content": str(m.content)} for m in messages]

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        with self._lock:  # one llama.cpp context: one generation at a time
            llama = self.load()
            self._recent.usage = None
            pieces = 0
            stream = self._parts(llama, messages, stop, kwargs.get("max_tokens", self.max_tokens))
            try:
                for part in stream:
                    text = part["choices"][0]["delta"].get("content")
                    if not text:
                        continue
                    pieces += 1
                    chunk = ChatGenerationChunk(message=AIMessageChunk(content=text))
                    if run_manager:
                        run_manager.on_llm_new_token(text, chunk=chunk)
                    yield chunk
            finally:
                stream.close()
                total = int(llama.n_tokens)
                usage = {"input_tokens": max(total - pieces, 0), "output_tokens": pieces,
                         "total_tokens": total}
                self._recent.usage = usage
            yield ChatGenerationChunk(message=AIMessageChunk(content="", usage_metadata=usage))

    def yes_probability(self, messages: list[BaseMessage]) -> float:
        """P(yes) / (P(yes) + P(no)) for the first token of the reply to ``messages``, read
        from the model's logits (assistant/answer/judge.py). The prompt is laid out as the model's
        chat template (ChatML) lays it out, without a system turn."""
        import numpy as np

        from assistant.models.yes_no import NO, YES

        prompt = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n"
                         for m in self._messages(messages)) + "<|im_start|>assistant\n"
        with self._lock:
            llama = self.load()
            tokens = llama.tokenize(prompt.encode(), add_bos=False, special=True)
            yes = sorted({llama.tokenize(w.encode(), add_bos=False)[0] for w in YES})
            no = sorted({llama.tokenize(w.encode(), add_bos=False)[0] for w in NO})
            seen: list[Any] = []

            def grab(_ids: Any, scores: Any) -> Any:  # the logits of the first position
                if not seen:
                    seen.append(np.array(scores, dtype=np.float64))
                return scores

            steps = llama.generate(tokens, temp=0.0, logits_processor=[grab])
            try:
                next(steps, None)
            finally:
                steps.close()
        logits = seen[0] - seen[0].max()
        probs = np.exp(logits)
        y, n = float(probs[yes].sum()), float(probs[no].sum())
        return y / (y + n) if y + n else 0.5

    def stopped_usage(self) -> dict[str, int] | None:
        """The token counts of this thread's last stream, also when its reader closed it
        before the end (the usage chunk comes last, so a stopped stream never yields it)."""
        return getattr(self._recent, "usage", None)

    def _parts(self, llama: Any, messages: list[BaseMessage], stop: list[str] | None,
               max_tokens: int) -> Iterator[dict[str, Any]]:
        """llama.cpp's stream of completion parts. A saved prompt state that llama.cpp cannot
        load (made by another build, say) is dropped, with every other saved state, and the
        prompt is read from the start."""
        for attempt in (1, 2):
            stream = llama.create_chat_completion(
                messages=self._messages(messages), stream=True, stop=stop,
                temperature=self.temperature, max_tokens=max_tokens,
            )
            try:
                first = next(stream, None)
            except RuntimeError as exc:
                forget = getattr(llama.cache, "forget", None)
                if attempt == 2 or "state" not in str(exc) or forget is None:
                    raise
                forget()
                llama.reset()
                continue
            try:
                if first is not None:
                    yield first
                yield from stream
            finally:
                stream.close()
            return

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        text, usage = "", None
        for chunk in self._stream(messages, stop, run_manager, **kwargs):
            text += str(chunk.message.content)
            usage = getattr(chunk.message, "usage_metadata", None) or usage
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text, usage_metadata=usage))])


def build_llm(settings: Settings) -> BaseChatModel:
    """The chat model the settings call for."""
    if settings.models.uses_openai():
        from pydantic import SecretStr

        from assistant.ingest.tokens import seed_tiktoken_cache

        seed_tiktoken_cache(settings.storage.cache_path())
        return server_chat_model()(
            model=settings.models.model,
            api_key=settings.models.openai_api_key or SecretStr("not-needed"),
            base_url=settings.models.openai_base_url,
            timeout=settings.models.timeout,
            max_retries=settings.models.max_retries,
            temperature=0,
            max_completion_tokens=settings.answer.answer_tokens,
            stream_usage=True,
        )
    from assistant.models.model_file import MODEL_NAME, ensure_model

    return EmbeddedChatModel(
        model_path=str(ensure_model(settings.storage.cache_path())),
        model_name=MODEL_NAME,
        n_ctx=settings.models.llm_context_window,
        n_threads=settings.models.threads,
        max_tokens=settings.answer.answer_tokens,
        state_dir=str(settings.storage.cache_path()),
    )


@functools.cache
def server_chat_model() -> type[BaseChatModel]:
    """ChatOpenAI that never passes off a cut stream as a whole answer (built on first use,
    so that the embedded path does not import langchain-openai)."""
    import openai
    from langchain_openai import ChatOpenAI

    class ServerChatModel(ChatOpenAI):
        """ChatOpenAI whose stream must end with the server's finish_reason."""

        def _stream(self, *args: Any, **kwargs: Any) -> Iterator[ChatGenerationChunk]:
            where = redact_url(self.openai_api_base or "the OpenAI API")
            received = finished = False
            try:
                for chunk in super()._stream(*args, **kwargs):
                    received = received or bool(chunk.text)
                    finished = finished or bool((chunk.generation_info or {}).get("finish_reason"))
                    yield chunk
            except openai.APIConnectionError as exc:  # timeouts included
                if not received:
                    raise  # nothing shown yet: model_failure() words it
                raise ModelError(
                    f"the connection to {where} broke off mid-answer; the answer is incomplete, "
                    "ask again"
                ) from exc
            if not finished:  # the body ended without a finish_reason
                raise ModelError(
                    f"{where} ended the stream before the model finished; the answer is "
                    "incomplete, ask again"
                )

    return ServerChatModel


def model_label(llm: BaseChatModel) -> str:
    """A short name of the model for output and reports."""
    for attribute in ("model_name", "model"):
        value = getattr(llm, attribute, None)
        if isinstance(value, str) and value:
            return value
    return type(llm).__name__
