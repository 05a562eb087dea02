"""The house's rules hold, and breaking them fails the build.

The import contracts of pyproject.toml (``[tool.importlinter]``, checked by ``make lint``): a copy of the two
packages is given one forbidden import at a time — the storage importing the web app, a circle of imports inside a
package, the product importing the fake engines — and ``lint-imports``, run with the project's configuration on the
copy, must fail naming the contract and the import; the unmodified copy must pass.

And three rules no linter checks: no two modules of ``topicstreams`` and ``fake_engines`` share a name (but for the
command modules, named after their command, and the engines' modules, named after their engine), no module is
longer than :data:`MAX_LINES` lines, and no module keeps mutable state of its own (:func:`module_state`): what a
process holds lives in objects its owner (the crawl's runtime, a command, the web app) makes, so that a test builds a
fresh one."""

from __future__ import annotations

import ast
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


# ---- no mutable state at module level ----------------------------------------------------------------------------
SYNC_MAKERS = frozenset({"Lock", "RLock", "Condition", "Semaphore", "BoundedSemaphore", "Event", "local"})
"""``threading``'s makers of shared state: made outside a function, one is the whole process's."""

CONTAINER_MAKERS = frozenset(
    {
        "dict",
        "list",
        "set",
        "defaultdict",
        "OrderedDict",
        "deque",
        "Counter",
        "WeakKeyDictionary",
        "WeakValueDictionary",
        "WeakSet",
    }
)
"""Calls that make a mutable container (as the literals and comprehensions do)."""

MUTATORS = frozenset(
    {"append", "add", "update", "setdefault", "pop", "popitem", "clear", "extend", "remove", "discard", "insert"}
)
"""The methods that change a dict, list or set in place."""


INSTALLERS = frozenset({"addFilter", "addHandler", "removeFilter", "removeHandler"})
"""Calls that change the process's logging: at import, one module's import changes every logger user's."""


def called_name(call: ast.Call) -> str:
    """``Lock`` for ``threading.Lock()`` and ``Lock()`` alike."""
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def outside_functions(tree: ast.AST):
    """Every node of ``tree`` that runs when the module is imported (at its top level or in a class body), not in a
    function's body."""
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            yield from child.decorator_list if not isinstance(child, ast.Lambda) else ()
            continue
        yield child
        yield from outside_functions(child)


def is_container(value: ast.expr) -> bool:
    if isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)):
        return True
    return isinstance(value, ast.Call) and called_name(value) in CONTAINER_MAKERS


def container_of(target: ast.expr) -> str:
    """The name under ``target``'s items: ``cache`` for ``cache``, ``cache[key]`` and ``cache[key][0]``."""
    while isinstance(target, ast.Subscript):
        target = target.value
    return target.id if isinstance(target, ast.Name) else ""


def module_state(source: str) -> list[str]:
    """The mutable state a module's ``source`` keeps at module level, a line each (``LINE: what``): a ``global``
    statement, a lock (or other ``threading`` state) made at import, a filter or handler put on a logger at import, a
    dict, list or set bound to a module-level name
    that the module changes (an item assigned or deleted, a mutating method called). Constant tables, never changed,
    are fine."""
    tree = ast.parse(source)
    found = []
    containers = set()
    for node in outside_functions(tree):
        if isinstance(node, ast.Call) and called_name(node) in SYNC_MAKERS:
            found.append(f"{node.lineno}: {called_name(node)}() made at import")
        if isinstance(node, ast.Call) and called_name(node) in INSTALLERS:
            found.append(f"{node.lineno}: {called_name(node)}() at import")
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        value = getattr(node, "value", None)
        if value is not None and is_container(value):
            containers.update(target.id for target in targets if isinstance(target, ast.Name))
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            found.append(f"{node.lineno}: global {', '.join(node.names)}")
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
            targets = node.target if isinstance(node, ast.AugAssign) else node.targets
            for target in targets if isinstance(targets, list) else [targets]:
                name = container_of(target)
                if isinstance(target, ast.Subscript) and name in containers:
                    found.append(f"{node.lineno}: {name}[...] changed")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
            name = container_of(node.func.value)
            if name in containers:
                found.append(f"{node.lineno}: {name}.{node.func.attr}() changes it")
    return sorted(found, key=lambda line: int(line.split(":")[0]))


def test_no_module_keeps_mutable_state_at_module_level():
    kept = {path.as_posix(): module_state((ROOT / path).read_text()) for path in module_files()}
    assert {path: lines for path, lines in kept.items() if lines} == {}


PLANTED = """
import logging
import threading
from collections import defaultdict

_engines = {}
_engines_lock = threading.Lock()
_seen: set[str] = set()
_by_node = defaultdict(list)
_count = 0
ENGINES = ("google", "bing")
TABLE = {"a": 1}
ORDER = [name for name in ENGINES]


class Registry:
    _lock = threading.RLock()

    def __init__(self):
        self._made = {}
        self._own = threading.Lock()

    def put(self, key, value):
        self._made[key] = value


def remember(url, engine):
    global _count
    _count += 1
    _engines[url] = engine
    _seen.add(url)
    del _engines[url]
    _by_node["n1"].append(url)
    local = {}
    local[url] = engine
    return TABLE.get(url), ORDER[0]


for _name in ("apprise", "urllib3"):
    logging.getLogger(_name).addFilter(logging.Filter())
"""


def test_mutable_state_at_module_level_is_found_and_constant_tables_are_not():
    assert module_state(PLANTED) == [
        "7: Lock() made at import",
        "17: RLock() made at import",
        "28: global _count",
        "30: _engines[...] changed",
        "31: _seen.add() changes it",
        "32: _engines[...] changed",
        "33: _by_node.append() changes it",
        "40: addFilter() at import",
    ]
