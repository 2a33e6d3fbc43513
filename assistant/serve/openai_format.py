"""OpenAI's chat completions format for `assistant serve`: the requests as pydantic models, the
conversation they hold, and answers as completions, stream chunks and error objects."""

from __future__ import annotations

import json
import re
import time
import uuid
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

from assistant.config import K_MAX, K_MIN
from assistant.errors import InputError

if TYPE_CHECKING:
    from assistant.api import History
    from assistant.types import Answer, Citation

MODEL = "assistant"


# Requests ------------------------------------------------------------------------------------
class TextPart(BaseModel):
    type: StrictStr
    text: StrictStr | None = None


class Message(BaseModel):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: StrictStr | list[TextPart] | None = None

    def text(self) -> str:
        if self.content is None or isinstance(self.content, str):
            return self.content or ""
        if any(p.type != "text" or p.text is None for p in self.content):
            raise InputError("only text content is supported (parts of type `text`)")
        return "\n".join(p.text or "" for p in self.content)


class ChatRequest(BaseModel):
    """OpenAI's chat request; other OpenAI parameters (temperature, ...) are accepted and
    ignored: the assistant's answers are checked, not sampled."""

    model_config = ConfigDict(extra="allow")

    model: StrictStr = MODEL
    messages: list[Message] = Field(min_length=1)
    stream: StrictBool | None = False  # null, as some clients send it, is false
    k: StrictInt | None = Field(None, ge=K_MIN, le=K_MAX, description="papers to retrieve")


class AskRequest(BaseModel):
    question: StrictStr
    k: StrictInt | None = Field(None, ge=K_MIN, le=K_MAX, description="papers to retrieve")


def conversation(messages: list[Message]) -> tuple[str, History]:
    """The question (the last user message) and the earlier (question, answer) turns."""
    last = max((n for n, m in enumerate(messages) if m.role == "user"), default=None)
    if last is None:
        raise InputError("no user message: the last user message is the question")
    history: list[tuple[str, str]] = []
    asked: str | None = None
    for message in messages[:last]:
        if message.role == "user":
            asked = message.text()
        elif message.role == "assistant" and asked is not None:
            history.append((asked, _without_references(message.text())))
            asked = None
    return messages[last].text(), history


def _without_references(content: str) -> str:
    """An earlier answer as the assistant wrote it, without the reference list under it."""
    return re.split(r"\n\n\[1\] ", content, maxsplit=1)[0]


# Results -------------------------------------------------------------------------------------
def citation(c: Citation) -> dict[str, Any]:
    """A citation as `assistant mcp` gives it: [number] cites this paper, for this passage."""
    return {"number": c.number, "title": c.title, "paper_id": c.paper_id,
            "arxiv_id": c.arxiv_id, "openreview_id": c.openreview_id, "passage": c.text}


def references(answer: Answer) -> str:
    return f"\n\n{answer.references}" if answer.citations else ""


def usage(answer: Answer) -> dict[str, int]:
    used = answer.usage
    return {"prompt_tokens": used.prompt_tokens, "completion_tokens": used.completion_tokens,
            "total_tokens": used.prompt_tokens + used.completion_tokens}


def completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex[:24]}"


def completion(answer: Answer) -> dict[str, Any]:
    """The answer as an OpenAI chat completion, with its citations beside the choices."""
    return {
        "id": completion_id(), "object": "chat.completion",
        "created": int(time.time()), "model": MODEL,
        "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None, "message": {
            "role": "assistant", "content": answer.text + references(answer)}}],
        "usage": usage(answer),
        "citations": [citation(c) for c in answer.citations], "abstained": answer.abstained,
    }


def error_body(message: str, kind: str = "invalid_request_error", code: str | None = None
               ) -> dict[str, Any]:
    """OpenAI's error object."""
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def chunk(chunk_id: str, created: int, delta: dict[str, Any], finish: str | None = None,
          **extra: Any) -> str:
    """One server-sent event of a streamed chat completion."""
    data = {"id": chunk_id, "object": "chat.completion.chunk", "created": created,
            "model": MODEL, "choices": [{"index": 0, "delta": delta, "finish_reason": finish,
                                         "logprobs": None}], **extra}
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"


def problems(errors: Any) -> str:
    """FastAPI's validation errors as one line that names each field ("`messages.0.content`:
    Input should be a valid string or a valid list")."""
    found: dict[str, list[str]] = {}
    for error in errors:
        # pydantic names each branch of a union it tried ("str", "list[TextPart]"): not fields
        where = ".".join(str(part) for part in error["loc"][1:]
                         if not re.fullmatch(r"str|int|bool|float|none|\w+\[.*\]", str(part)))
        if error["type"] == "json_invalid":
            found.setdefault("the body is not valid JSON", [])
        elif not where:
            found.setdefault("the body must be a JSON object", [])
        else:
            found.setdefault(f"`{where}`", []).append(error["msg"])
    said = []
    for where, messages in found.items():
        # "Input should be a valid string or a valid list"
        tried = [m.removeprefix("Input should be ") if n else m for n, m in enumerate(messages)]
        said.append(f"{where}: {' or '.join(dict.fromkeys(tried))}" if tried else where)
    return "bad request: " + "; ".join(said)
