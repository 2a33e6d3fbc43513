"""A fake chat model that answers known questions correctly, citing the number its paper
has in the prompt, so that many threads can share it and every answer can be checked."""

from __future__ import annotations

import re
import threading
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr

DRPOSE = "Direct Reward Fine-Tuning on Poses for Single Image to 3D Human in the Wild"
GLOWQ = "GlowQ: Group-Shared LOw-Rank Approximation for Quantized LLMs"
SAFER = "SAFER: Risk-Constrained Sample-then-Filter in Large Language Models"

# question -> (title of the paper that answers it, answer with {n} for its number)
KNOWN = {
    "What reward does DrPose maximize?": (
        DRPOSE, "DrPose maximizes PoseScore, a differentiable reward [{n}].",
    ),
    "What does GlowQ share across groups?": (
        GLOWQ, "GlowQ computes the high-precision projection once per input-sharing group [{n}].",
    ),
    "What exact method does SAFER use to calibrate its sampling budget?": (
        SAFER,
        "SAFER uses the Clopper–Pearson exact method to calibrate a sampling budget [{n}].",
    ),
}


class ScriptedChatModel(BaseChatModel):
    """Replies to the questions in KNOWN (and ``extra``); anything else gets 'I do not know.'.

    ``reply`` overrides all that: a function of the whole prompt, for a model that obeys
    whatever the prompt says.
    """

    extra: dict[str, tuple[str, str]] = {}
    reply: Any = None
    _calls: int = PrivateAttr(default=0)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def calls(self) -> int:
        return self._calls

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        with self._lock:
            self._calls += 1
        prompt = "\n".join(str(m.content) for m in messages)
        if self.reply is not None:
            message = AIMessage(content=self.reply(prompt))
            return ChatResult(generations=[ChatGeneration(message=message)])
        question = prompt.rsplit("Question:", 1)[-1].strip()
        reply = "I do not know."
        known = {**KNOWN, **self.extra}
        if question in known:
            title, template = known[question]
            found = re.search(rf"\[(\d+)\] {re.escape(title)}", prompt)
            reply = template.format(n=found.group(1) if found else 9)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=reply))])
