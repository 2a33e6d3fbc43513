"""The int8 scan on a CPU without VNNI, run here under QEMU's emulation of one.

    python benchmarks/without_vnni.py [--cpu EPYC-Rome] [--json]

Without VNNI, onnxruntime's u8×s8 product on x86 adds pairs of products in 16 bits with
saturation, so the int8 scan must narrow its codes to ±63 (``int8_scan.exact_levels``). The
test suite checks that path on a model of that kernel (``_SixteenBitKernel`` in
tests/test_vector_table.py), since the machines it runs on may have VNNI. This script runs
onnxruntime's own kernel instead: it starts itself again under ``qemu-x86_64 -cpu EPYC-Rome``
(Zen 2: AVX2, no VNNI, no AVX-512; from the ``qemu-user`` package) and prints

- ``levels``: the codes' width the probe picks on the emulated CPU (63 expected);
- ``model_matches_kernel``: random tables on which the test suite's model gives onnxruntime's
  products exactly, and ``kernel_not_exact`` those on which ±127 codes overflow the kernel;
- ``scan_equals_float``: queries on crowded rows for which ``VectorTable.nearest`` with the
  int8 first pass gives the float search's rows in the same order.

Only correctness: emulated timings say nothing about a real CPU. For the whole file of
tests under emulation: ``qemu-x86_64 -cpu EPYC-Rome .venv/bin/python -m pytest
tests/test_vector_table.py -p no:cacheprovider`` (about 14 minutes on two cores).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_UNDER_QEMU = "ASSISTANT_UNDER_QEMU"


def _relaunch(cpu: str, argv: list[str]) -> int:
    qemu = shutil.which("qemu-x86_64")
    if qemu is None:
        print("error: qemu-x86_64 was not found; install it (Debian/Ubuntu: "
              "`apt install qemu-user`) and run this again", file=sys.stderr)
        return 2
    env = dict(os.environ, **{_UNDER_QEMU: cpu})
    proc = subprocess.run([qemu, "-cpu", cpu, sys.executable, __file__, *argv], env=env,
                          stderr=subprocess.PIPE, text=True)
    # QEMU names each feature of the real CPU model its emulator lacks; none of them matter here
    for line in proc.stderr.splitlines():
        if "TCG doesn't support requested feature" not in line:
            print(line, file=sys.stderr)
    return proc.returncode


def _checks(tables: int, queries: int) -> dict[str, object]:
    import numpy as np
    import onnxruntime

    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
    # the model of the 16-bit kernel the test suite trusts, and its two ways to search
    from test_vector_table import _float_only, _scanned, _SixteenBitKernel

    from assistant.index import int8_scan
    from assistant.index.vector_table import VectorTable

    rng = np.random.default_rng(3)
    agree = overflowed = 0
    for _ in range(tables):
        dimension = int(rng.integers(1, 400))
        codes = rng.integers(-127, 128, size=(dimension, 9), dtype=np.int8)
        q = rng.integers(0, 256, size=(1, dimension), dtype=np.uint8)
        kernel = int8_scan._session(codes, None).run(None, {"q": q})[0]  # as the scan runs it
        agree += np.array_equal(kernel, _SixteenBitKernel(codes).run(None, {"q": q})[0])
        exact = (q.astype(np.int64) - int8_scan._ZERO) @ codes.astype(np.int64)
        overflowed += not np.array_equal(kernel, exact)

    centres = rng.standard_normal((12, 384))
    raw = centres[rng.integers(0, 12, 5000)] + 0.15 * rng.standard_normal((5000, 384))
    vectors = VectorTable.build(raw).vectors
    full, scanned = _float_only(vectors), _scanned(vectors)
    same = 0
    for _ in range(queries):
        query = raw[rng.integers(len(raw))] + 0.5 * rng.standard_normal(384)
        same += all([r for r, _ in scanned.nearest(query, n)]
                    == [r for r, _ in full.nearest(query, n)] for n in (1, 10, 40))
    return {
        "cpu": os.environ.get(_UNDER_QEMU, "native"),
        "onnxruntime": onnxruntime.__version__,
        "levels": int8_scan.exact_levels(),
        "scan_levels": None if scanned._int8 is None else scanned._int8.levels,
        "model_matches_kernel": f"{agree}/{tables}",
        "kernel_not_exact": f"{overflowed}/{tables}",
        "scan_equals_float": f"{same}/{queries}",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cpu", default="EPYC-Rome", help="QEMU's CPU model (no VNNI)")
    parser.add_argument("--native", action="store_true", help="run on this CPU, not emulated")
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not args.native and _UNDER_QEMU not in os.environ:
        return _relaunch(args.cpu, sys.argv[1:] if argv is None else argv)
    result = _checks(args.tables, args.queries)
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:22} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
