"""How the embedded model is loaded on this CPU (assistant/models/llama_cpu.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import ROOT, _user_cache

from assistant.models.llama_cpu import amx_build, model_params, use_extra_buffers

AVX2_LINE = "CPU : SSE3 = 1 | AVX2 = 1 | FMA = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | "
AMX_LINE = "CPU : AVX2 = 1 | AVX512 = 1 | AVX512_VNNI = 1 | AMX_INT8 = 1 | REPACK = 1 | "


def test_only_a_build_with_amx_kernels_loses_the_extra_buffers() -> None:
    assert amx_build(AMX_LINE)
    assert not amx_build(AVX2_LINE)

    class Build:
        def __init__(self, line: str) -> None:
            self.line = line

        def llama_print_system_info(self) -> bytes:
            return self.line.encode()

    assert use_extra_buffers(Build(AVX2_LINE)) is True
    assert use_extra_buffers(Build(AMX_LINE)) is False


def test_model_params_apply_inside_the_block_only() -> None:
    import llama_cpp.llama_cpp as low

    original = low.llama_model_default_params
    assert original().use_extra_bufts is True
    with model_params(extra_buffers=False):
        assert low.llama_model_default_params().use_extra_bufts is False
    assert low.llama_model_default_params is original
    with model_params(extra_buffers=True):  # llama.cpp's default: nothing to change
        assert low.llama_model_default_params is original
    with pytest.raises(RuntimeError), model_params(extra_buffers=False):
        raise RuntimeError("a load that fails")
    assert low.llama_model_default_params is original


@pytest.mark.llm
def test_embedded_model_reads_a_long_prompt_on_this_cpu() -> None:
    # A prompt of many tokens is evaluated in batches, where llama.cpp's AMX kernels crashed
    # the process (SIGILL) on CPUs with AMX; run it in a child so a crash is a failure here.
    # No saved prompt states, and a prompt never seen before: every token is read afresh.
    script = (
        "import uuid\n"
        "from assistant.models.llm import EmbeddedChatModel\n"
        "from assistant.models.model_file import ensure_model\n"
        "from langchain_core.messages import HumanMessage\n"
        "from pathlib import Path\n"
        f"model = ensure_model(Path({str(_user_cache())!r}))\n"
        "llm = EmbeddedChatModel(model_path=str(model), prompt_cache_bytes=0)\n"
        "text = f'{uuid.uuid4()} ' + 'DrPose maximizes PoseScore, a differentiable reward. ' * 30\n"
        "out = llm.invoke([HumanMessage(text + 'What does DrPose maximize?')], max_tokens=8)\n"
        "print(out.usage_metadata['input_tokens'])\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=600, cwd=ROOT)
    assert result.returncode == 0, (result.returncode, result.stderr[-2000:])
    assert int(result.stdout.split()[-1]) > 300
