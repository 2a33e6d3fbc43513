"""The embedded model's prompt and generation speed under llama.cpp's weight placements, in turns.

llama.cpp may move weights into "extra" CPU buffers with kernels of their own (AMX tiles where
it was built for them, AVX2 repacking otherwise). The assistant turns them off on builds with
AMX kernels, which crash (assistant/models/llama_cpu.py). This measures what each placement gives on
this machine, each in a child process (a crash is reported, not fatal), in turns (ABCCBA...):

    python benchmarks/llama_kernels.py [--rounds 3] [--json]

    assistant  as the assistant loads the model
    extra      llama.cpp's default: every extra buffer it has (AMX first, then repacking)
    plain      no extra buffers
    repack     no extra buffers, but the Q4_K matrices of each layer repacked for AVX2
               (the Q6_K ones, which the repacking does not take, stay plain)
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

CONFIGS = ("assistant", "extra", "plain", "repack")
_REPACKED = rb"blk\.[0-9]+\.(ffn_up|ffn_gate|attn_q|attn_k|attn_output)\.weight"


def _prompt() -> str:
    from assistant.ingest.corpus import load_papers
    from assistant.resources import bundled_corpus_dir

    papers = load_papers([bundled_corpus_dir()])
    return "\n\n".join(p.abstract for p in papers[:2])[:1900]  # about 350 tokens


def _repack_buffer(lib: Path) -> int:
    """llama.cpp's CPU_REPACK buffer type, from the CPU backend's list of extra buffers."""
    ggml, base = ctypes.CDLL(str(lib / "libggml.so")), ctypes.CDLL(str(lib / "libggml-base.so"))
    ggml.ggml_backend_reg_by_name.restype = ctypes.c_void_p
    ggml.ggml_backend_reg_by_name.argtypes = [ctypes.c_char_p]
    ggml.ggml_backend_dev_by_type.restype = ctypes.c_void_p
    ggml.ggml_backend_dev_by_type.argtypes = [ctypes.c_int]
    base.ggml_backend_reg_get_proc_address.restype = ctypes.c_void_p
    base.ggml_backend_reg_get_proc_address.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    base.ggml_backend_buft_name.restype = ctypes.c_char_p
    base.ggml_backend_buft_name.argtypes = [ctypes.c_void_p]
    reg = ggml.ggml_backend_reg_by_name(b"CPU")
    address = base.ggml_backend_reg_get_proc_address(reg, b"ggml_backend_dev_get_extra_bufts")
    extra = ctypes.CFUNCTYPE(ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p)(address)
    bufts = extra(ggml.ggml_backend_dev_by_type(0))  # 0: the CPU device
    i = 0
    while bufts[i]:
        if base.ggml_backend_buft_name(bufts[i]) == b"CPU_REPACK":
            return int(bufts[i])
        i += 1
    raise SystemExit("this llama.cpp build has no CPU_REPACK buffer")


class _Override(ctypes.Structure):
    _fields_ = [("pattern", ctypes.c_char_p), ("buft", ctypes.c_void_p)]


def child(config: str, tokens: int) -> dict[str, Any]:
    """Load the model as ``config`` says, read the prompt, write ``tokens`` tokens."""
    import llama_cpp
    import llama_cpp.llama_cpp as low

    from assistant.config import Settings
    from assistant.models.llama_cpu import use_extra_buffers
    from assistant.models.model_file import ensure_model

    low.llama_backend_init()
    defaults = low.llama_model_default_params
    keep = []

    def params() -> Any:
        p = defaults()
        if config == "assistant":
            p.use_extra_bufts = use_extra_buffers(llama_cpp)
        elif config in ("plain", "repack"):
            p.use_extra_bufts = False
        if config == "repack":
            lib = Path(llama_cpp.__file__).parent / "lib"
            overrides = (_Override * 2)(_Override(_REPACKED, _repack_buffer(lib)),
                                        _Override(None, None))
            keep.append(overrides)
            p.tensor_buft_overrides = ctypes.cast(overrides, ctypes.c_void_p)
        return p

    low.llama_model_default_params = params
    model = ensure_model(Settings().storage.cache_path())
    llama = llama_cpp.Llama(model_path=str(model), n_ctx=2048, n_threads=os.cpu_count(),
                            n_threads_batch=os.cpu_count(), n_batch=512, n_ubatch=128,
                            flash_attn=True, verbose=False)
    prompt = llama.tokenize(_prompt().encode())
    start = time.perf_counter()
    llama.eval(prompt)
    read = time.perf_counter() - start
    start, written = time.perf_counter(), 0
    for _ in llama.generate([], temp=0.0, reset=False):
        written += 1
        if written == tokens:
            break
    wrote = time.perf_counter() - start
    return {"prompt_tokens": len(prompt), "prompt_tokens_per_s": round(len(prompt) / read, 1),
            "generated_tokens_per_s": round(written / wrote, 1)}


def in_turns(rounds: int, tokens: int, configs: tuple[str, ...]) -> dict[str, Any]:
    runs: dict[str, list[dict[str, Any]]] = {c: [] for c in configs}
    for round_ in range(rounds):
        for config in configs if round_ % 2 == 0 else configs[::-1]:
            done = subprocess.run(
                [sys.executable, __file__, "--child", config, "--tokens", str(tokens)],
                capture_output=True, text=True, timeout=600,
            )
            if done.returncode != 0:
                why = (f"signal {-done.returncode}" if done.returncode < 0
                       else f"exit {done.returncode}: {done.stderr.strip().splitlines()[-1:]}")
                runs[config].append({"crashed": why})
            else:
                runs[config].append(json.loads(done.stdout.strip().splitlines()[-1]))
    result: dict[str, Any] = {"machine": f"{platform.machine()}, {os.cpu_count()} cores",
                              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                              "runs": runs}
    for config, items in runs.items():
        fine = [r for r in items if "crashed" not in r]
        result[config] = {
            "prompt_tokens_per_s_p50": statistics.median(r["prompt_tokens_per_s"] for r in fine)
            if fine else None,
            "generated_tokens_per_s_p50": statistics.median(
                r["generated_tokens_per_s"] for r in fine) if fine else None,
            "crashed": [r["crashed"] for r in items if "crashed" in r],
        }
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=32, help="tokens generated per run")
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", choices=CONFIGS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.tokens)))
        return 0
    configs = tuple(c.strip() for c in args.configs.split(",") if c.strip())
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown or not configs:
        parser.error(f"--configs takes a comma-separated list of {', '.join(CONFIGS)}")
    result = in_turns(args.rounds, args.tokens, configs)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{'placement':10} {'prompt tok/s':>13} {'generated tok/s':>16}  crashed")
    for config in configs:
        row = result[config]
        pp, tg = row["prompt_tokens_per_s_p50"], row["generated_tokens_per_s_p50"]
        print(f"{config:10} {pp if pp is not None else '-':>13} {tg if tg is not None else '-':>16}"
              f"  {', '.join(row['crashed']) or '-'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
