"""What reading an arXiv metadata snapshot costs with a limit: seconds (wall and CPU: the CPU
time says more when other work shares the cores) and peak memory.

Writes an arXiv-style JSON Lines file (records shaped like the snapshot's, abstracts from
tests/data/formats/arxiv_slice.jsonl), then, each in a fresh child process so that peak RSS
belongs to that reading alone, times:

Every record names authors of its own, so caching decoded names does not flatter the figures.

- ``imports``: the reader imported, nothing read (the floor of peak RSS);
- ``limit``: ``iter_references(path, limit=N)`` (with ``--where`` expressions as a filter);
- ``all``: every record streamed and dropped (memory stays flat however large the file);
- ``index`` (with ``--index``): ``assistant index FILE --limit N`` into a fresh temporary
  ``ASSISTANT_HOME``, run in-process in the child: reading, the embedder and Chroma together.

Each record's abstract ends with its number, so that every record is a paper of its own (paper
ids come from the abstract text).

    python benchmarks/arxiv_stream.py [--records 100000] [--limit 2000] [--where year>=2025]
                                      [--file /tmp/arxiv_stream.jsonl] [--index] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SLICE = ROOT / "tests" / "data" / "formats" / "arxiv_slice.jsonl"

_CHILD = """
import json, resource, sys, time
from pathlib import Path
from assistant.ingest.formats import iter_references
from assistant.ingest.where import parse
mode, path, limit, where = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
flt = parse(where)
keep = (lambda r: flt.matches(r.metadata())) if flt else None
start = time.perf_counter()
count = 0
if mode != "imports":
    for _ in iter_references(path, limit=limit if mode == "limit" else None, keep=keep):
        count += 1
seconds = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_SELF)  # ru_maxrss in KiB on Linux
print(json.dumps({"read": count, "seconds": round(seconds, 3),
                  "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 3),
                  "peak_rss_mb": round(usage.ru_maxrss / 1024, 1)}))
"""

_INDEX_CHILD = """
import json, os, resource, sys, tempfile, time
os.environ["ASSISTANT_HOME"] = tempfile.mkdtemp(prefix="arxiv-stream-")
from assistant.cli import main
path, limit, where = sys.argv[2], sys.argv[3], sys.argv[4:]
start = time.perf_counter()
code = main(["index", path, "--limit", limit, "--json", *[a for w in where for a in ("--where", w)]])
seconds = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"exit": code, "seconds": round(seconds, 3),
                  "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 3),
                  "peak_rss_mb": round(usage.ru_maxrss / 1024, 1)}))
"""


def write_snapshot(path: Path, records: int) -> int:
    """An arXiv-style snapshot of ``records`` lines, written a line at a time; its size."""
    templates = [json.loads(line) for line in SLICE.read_text().splitlines() if line.strip()]
    with path.open("w", encoding="utf-8") as out:
        for n in range(records):
            record = dict(templates[n % len(templates)])
            yymm = f"{(n // 40000) % 10 + 16:02d}{n % 12 + 1:02d}"
            record["id"] = f"{yymm}.{n % 100000:05d}"
            record["versions"] = [{"version": "v1", "created":
                                   f"Mon, 1 Jan 20{yymm[:2]} 00:00:00 GMT"}]
            record["update_date"] = f"20{yymm[:2]}-{yymm[2:]}-01"
            record["abstract"] = f"{record['abstract']} (Record {n}.)"
            # a name of its own in each record, so the reader's cache of decoded names
            # never helps: the worst case (3 of the 5 templates have LaTeX accents)
            record["authors"] = f"{record['authors']} and Author N{n}"
            if "authors_parsed" in record:
                record["authors_parsed"] = [[f"{last}{n}", *rest]
                                            for last, *rest in record["authors_parsed"]]
            out.write(json.dumps(record) + "\n")
    return path.stat().st_size


def measure(mode: str, path: Path, limit: int, where: list[str]) -> dict[str, Any]:
    """One reading in a child process: records read, seconds, peak RSS."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    child = _INDEX_CHILD if mode == "index" else _CHILD
    run = subprocess.run([sys.executable, "-c", child, mode, str(path), str(limit), *where],
                         check=False, capture_output=True, text=True, env=env,
                         timeout=1800)
    if run.returncode != 0:
        raise SystemExit(f"the {mode} reading failed:\n{run.stderr[-2000:]}")
    figures = json.loads(run.stdout.strip().splitlines()[-1])
    if mode == "index":  # the command's own report comes first: the papers it indexed
        report = json.loads(run.stdout[: run.stdout.rstrip().rfind("\n")])
        figures.update(read=report["papers"], files=report["files"])
    return figures


def main(argv: list[str] | None = None) -> None:
    """Write the file, time the three readings, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--limit", type=int, default=2000)
    parser.add_argument("--where", action="append", default=[], help="e.g. year>=2025")
    parser.add_argument("--file", type=Path, default=Path("/tmp/arxiv_stream.jsonl"))
    parser.add_argument("--index", action="store_true",
                        help="also time `assistant index FILE --limit N` (embeds N papers)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)

    size = write_snapshot(args.file, args.records)
    figures: dict[str, Any] = {"records": args.records, "file_mb": round(size / 2**20, 1),
                               "limit": args.limit, "where": args.where}
    modes = ("imports", "limit", "all") + (("index",) if args.index else ())
    for mode in modes:
        figures[mode] = measure(mode, args.file, args.limit, args.where)
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"{args.records} records, {figures['file_mb']} MB at {args.file}")
    for mode in modes:
        f = figures[mode]
        print(f"{mode:>8}: {f['read']:>7} read in {f['seconds']:.3f} s, "
              f"peak RSS {f['peak_rss_mb']} MB")


if __name__ == "__main__":
    main()
