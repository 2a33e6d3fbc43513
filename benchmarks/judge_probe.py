"""Probe: does the embedded model's own yes/no judgement separate answerable questions from
unanswerable ones? (issue 35, "where it pays its way")

    python benchmarks/judge_probe.py --out judge.jsonl [--limit N] [--one-passage]

For each dev question (the unanswerable ones first), the best-supported retrieved papers'
passages and the question are put to the model with "Do the sources above state the answer to
this question? Reply with one word: yes or no.", and P(yes) is read from the logits of its first
token (yes/Yes against no/No). One JSON line per question: p_yes, the best support, seconds.
Results of 2026-12-04: benchmarks/results/judge-probe-2026-12-04.jsonl and docs/quality.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant import resources  # noqa: E402
from assistant.api import Assistant  # noqa: E402
from assistant.prompts import load_prompt  # noqa: E402
from assistant.questions import load_questions  # noqa: E402


def p_yes(llama, prompt: str, yes: list[int], no: list[int]) -> float:
    tokens = llama.tokenize(prompt.encode(), add_bos=False, special=True)
    seen: list[np.ndarray] = []

    def grab(_ids, scores):  # the logits of the first generated position
        seen.append(np.array(scores))
        return scores

    for _ in llama.generate(tokens, temp=0.0, logits_processor=[grab]):
        break
    logits = seen[0] - seen[0].max()
    probs = np.exp(logits) / np.exp(logits).sum()
    y, n = float(probs[yes].sum()), float(probs[no].sum())
    return y / (y + n) if y + n else 0.5


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--one-passage", action="store_true",
                        help="the best paper's first passage alone, without the system prompt")
    args = parser.parse_args()
    assistant = Assistant()
    llama = assistant.llm.load()
    first = [llama.tokenize(w.encode(), add_bos=False)[0] for w in ("yes", "Yes", " yes", " Yes")]
    second = [llama.tokenize(w.encode(), add_bos=False)[0] for w in ("no", "No", " no", " No")]
    questions = load_questions(resources.eval_questions(), "dev")
    questions = sorted(questions, key=lambda q: not q.expect_abstain)[: args.limit]
    system = load_prompt("system").format()
    with args.out.open("w") as out:
        for q in questions:
            text = q.joined()
            best = sorted(assistant.retrieve(text, 5), key=lambda s: -s.support)
            if args.one_passage:
                user = (f"Paper: {best[0].title}\nPassage: {best[0].passages[0][:800]}\n\n"
                        f"Question: {text}\n\nDoes the passage answer the question? Answer yes "
                        "or no.")
                prompt = f"<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"
            else:
                sources = "\n\n".join(f"[{i}] {s.title}\n{s.passages[0][:700]}"
                                      for i, s in enumerate(best[:3], 1))
                user = (f"Sources:\n{sources}\n\nQuestion: {text}\n\nDo the sources above state "
                        "the answer to this question? Reply with one word: yes or no.")
                prompt = (f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user}"
                          "<|im_end|>\n<|im_start|>assistant\n")
            started = time.perf_counter()
            value = p_yes(llama, prompt, first, second)
            out.write(json.dumps({"id": q.id, "answerable": not q.expect_abstain,
                                  "p_yes": round(value, 4), "support": best[0].support,
                                  "seconds": round(time.perf_counter() - started, 2)}) + "\n")
            out.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
