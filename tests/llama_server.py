"""llama-cpp-python's OpenAI-compatible server, with the model loaded as the assistant loads
it: on a llama.cpp build with AMX kernels (which crash at their first tile instruction, see
``assistant/models/llama_cpu.py``) without the extra weight buffers.

    python tests/llama_server.py --model FILE --port N ...   (the arguments of llama_cpp.server)
"""

from __future__ import annotations

import runpy

import llama_cpp

from assistant.models.llama_cpu import model_params, use_extra_buffers

if __name__ == "__main__":
    with model_params(extra_buffers=use_extra_buffers(llama_cpp)):
        runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
