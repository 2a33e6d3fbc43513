"""A wheel built from the repository carries prompts, corpus and type marker, and runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from conftest import ROOT


def test_wheel_contents_and_run_from_outside_the_checkout(tmp_path: Path) -> None:
    source = tmp_path / "source"  # build from a copy: the checkout stays clean
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "vectorstore", "build", "*.egg-info", "__pycache__", ".pytest_cache"))
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
         str(tmp_path / "dist"), str(source)],
        capture_output=True, text=True, timeout=600,
    )
    assert built.returncode == 0, built.stderr
    wheel = next((tmp_path / "dist").glob("assistant-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for expected in (
        "assistant/py.typed", "assistant/_prompts/system.md", "assistant/_prompts/answer.md",
        "assistant/_prompts/rewrite.md", "assistant/_corpus/titles.tsv",
        "assistant/_corpus/000_71c6f758ade6ab60.txt", "assistant/_corpus/002_30d66f6136e5d147.txt",
        "assistant/_eval/questions.jsonl", "assistant/data/minilm-tokenizer.json", "assistant/cli.py",
        "assistant/__main__.py",
    ):
        assert expected in names, expected

    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site), "ASSISTANT_HOME": str(tmp_path / "home")}
    probe = subprocess.run(
        [sys.executable, "-c", "import assistant.resources as r; print(r.prompts_dir()); "
         "print(r.bundled_corpus_dir())"],
        capture_output=True, text=True, cwd=elsewhere, env=env, timeout=60,
    )
    assert probe.returncode == 0, probe.stderr
    assert all(str(site) in line for line in probe.stdout.split())  # not the checkout's files
    indexed = subprocess.run(
        [sys.executable, "-m", "assistant", "index", "--json"], capture_output=True, text=True,
        cwd=elsewhere, env=env, timeout=600,
    )
    assert indexed.returncode == 0, indexed.stderr
    assert '"papers": 38' in indexed.stdout
