"""How llama.cpp is loaded on this CPU: which weight buffers it may use.

llama.cpp can move a model's weights into "extra" CPU buffers with kernels of their own; on
a build with AMX kernels those crash at the first prompt (SIGILL at ``tilezero``, llama.cpp
PR 26954; docs/reliability.md tells the story), so there the extra buffers are turned off.

llama-cpp-python's ``Llama`` takes no option for this; the model parameters it starts from
(``llama_model_default_params``) are adjusted while a model loads.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

_LOADING = threading.Lock()


def amx_build(system_info: str) -> bool:
    """Whether llama.cpp's system line (``llama_print_system_info``) says it has AMX kernels."""
    return "AMX_INT8 = 1" in system_info


def use_extra_buffers(llama_cpp_module: Any) -> bool:
    """Whether this llama.cpp build may put weights in its extra CPU buffers."""
    info = llama_cpp_module.llama_print_system_info()
    return not amx_build(info.decode("utf-8", "replace") if isinstance(info, bytes) else str(info))


@contextlib.contextmanager
def model_params(extra_buffers: bool) -> Iterator[None]:
    """While the block runs, llama.cpp models load with ``use_extra_bufts=extra_buffers``.

    One model loads at a time (the change is to a module attribute of llama-cpp-python);
    with ``extra_buffers`` (llama.cpp's default) nothing is changed.
    """
    import llama_cpp.llama_cpp as low

    if extra_buffers:
        yield
        return
    with _LOADING:
        defaults = low.llama_model_default_params

        def adjusted() -> Any:
            params = defaults()
            params.use_extra_bufts = extra_buffers
            return params

        low.llama_model_default_params = adjusted
        try:
            yield
        finally:
            low.llama_model_default_params = defaults
