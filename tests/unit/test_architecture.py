"""The house's rules hold, and breaking them fails the build.

The import contracts of pyproject.toml (``[tool.importlinter]``, checked by ``make lint``): a copy of the two
packages is given one forbidden import at a time — the storage importing the web app, a circle of imports inside a
package, the product importing the fake engines — and ``lint-imports``, run with the project's configuration on the
copy, must fail naming the contract and the import; the unmodified copy must pass.

And two rules no linter checks: no two modules of ``topicstreams`` and ``fake_engines`` share a name (but for the
command modules, named after their command, and the engines' modules, named after their engine), and no module is
longer than :data:`MAX_LINES` lines."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

from topicstreams import ENGINES

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("topicstreams", "fake_engines")
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"

MAX_LINES = 500


def contract(kind: str) -> str:
    """The name of the project's import contract of type ``kind`` (there is one of each)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (name,) = [each["name"] for each in config["tool"]["importlinter"]["contracts"] if each["type"] == kind]
    return name


def copy_tree(into: Path) -> Path:
    """The two packages and pyproject.toml copied into ``into``."""
    for package in PACKAGES:
        shutil.copytree(ROOT / package, into / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", into / "pyproject.toml")
    return into


def lint_imports(tree: Path) -> tuple[int, str]:
    """``lint-imports`` run on the packages of ``tree`` with its pyproject.toml: its exit code and its output, the
    whitespace collapsed (the report wraps long contract names)."""
    env = {**os.environ, "PYTHONPATH": str(tree), "COLUMNS": "1000", "NO_COLOR": "1"}
    done = subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo", str(tree / "pyproject.toml")],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode, " ".join((done.stdout + done.stderr).split())


def add_module(tree: Path, dotted: str, source: str) -> None:
    (tree / (dotted.replace(".", "/") + ".py")).write_text(source)


def test_the_unmodified_tree_keeps_every_contract(tmp_path):
    code, output = lint_imports(copy_tree(tmp_path))
    assert code == 0, output
    assert "BROKEN" not in output


def test_the_storage_importing_the_web_app_breaks_the_layers(tmp_path):
    tree = copy_tree(tmp_path)
    add_module(tree, "topicstreams.storage.probe", "import topicstreams.web\n")
    code, output = lint_imports(tree)
    assert code != 0
    assert f"{contract('layers')} BROKEN" in output
    assert "topicstreams.storage is not allowed to import topicstreams.web" in output
    assert "topicstreams.storage.probe -> topicstreams.web" in output


def test_a_circle_of_imports_inside_a_package_breaks_the_acyclic_contract(tmp_path):
    tree = copy_tree(tmp_path)
    add_module(tree, "topicstreams.health.probe_one", "from topicstreams.health import probe_two\n")
    add_module(tree, "topicstreams.health.probe_two", "from topicstreams.health import probe_one\n")
    code, output = lint_imports(tree)
    assert code != 0
    assert f"{contract('acyclic_siblings')} BROKEN" in output
    assert "No cycles are allowed in topicstreams.health." in output


def test_the_product_importing_the_fake_engines_breaks_the_forbidden_contract(tmp_path):
    tree = copy_tree(tmp_path)
    add_module(tree, "topicstreams.web.probe", "import fake_engines.world\n")
    code, output = lint_imports(tree)
    assert code != 0
    assert f"{contract('forbidden')} BROKEN" in output
    assert "topicstreams is not allowed to import fake_engines" in output
    assert "topicstreams.web.probe -> fake_engines.world" in output


def module_files() -> list[Path]:
    """Every module file of the two packages, relative to the repository."""
    return [
        path.relative_to(ROOT)
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if "__pycache__" not in path.parts
    ]


def may_share_its_name(module: Path) -> bool:
    """A command module (named after its command) or an engine's module in the engines' models, spiders or fakes."""
    place = module.parent.as_posix()
    if place == "topicstreams/commands":
        return True
    return module.stem in ENGINES and place in ("topicstreams/engines", "topicstreams/spiders", "fake_engines")


def name_clashes(files: list[Path]) -> dict[str, list[str]]:
    """The names held by more than one of the modules of ``files`` (a package by its folder's name), but for the
    exceptions (:func:`may_share_its_name`): an engine's name is its modules' alone; any other name may have one
    holder besides the command modules."""
    holders = defaultdict(list)
    for path in files:
        if path.stem != "__main__":
            holders[path.parent if path.stem == "__init__" else path].append(path)
    by_name = defaultdict(list)
    for module in holders:
        by_name[module.stem].append(module)
    clashes = {}
    for name, modules in by_name.items():
        others = [module for module in modules if not may_share_its_name(module)]
        if len(others) > (0 if name in ENGINES else 1):
            clashes[name] = sorted(module.as_posix() for module in modules)
    return clashes


def test_no_two_modules_share_a_name():
    assert name_clashes(module_files()) == {}


def test_a_shared_name_is_found_but_for_the_exceptions():
    files = [Path(each) for each in ("topicstreams/storage/db.py", "topicstreams/commands/db.py")]
    files += [Path(f"{place}/bing.py") for place in ("topicstreams/engines", "topicstreams/spiders", "fake_engines")]
    files += [Path("topicstreams/health/__init__.py"), Path("topicstreams/commands/health.py")]
    assert name_clashes(files) == {}
    assert name_clashes([*files, Path("topicstreams/web/db.py")]) == {
        "db": ["topicstreams/commands/db.py", "topicstreams/storage/db.py", "topicstreams/web/db.py"]
    }
    assert name_clashes([*files, Path("topicstreams/web/bing.py")])["bing"][-1] == "topicstreams/web/bing.py"
    assert name_clashes([*files, Path("topicstreams/alerts/health.py")])["health"] == [
        "topicstreams/alerts/health.py",
        "topicstreams/commands/health.py",
        "topicstreams/health",
    ]


def test_no_module_is_longer_than_the_limit():
    lengths = {path.as_posix(): len((ROOT / path).read_text().splitlines()) for path in module_files()}
    too_long = {path: lines for path, lines in lengths.items() if lines > MAX_LINES}
    assert not too_long, f"modules over {MAX_LINES} lines: split them"
