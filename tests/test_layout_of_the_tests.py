"""The tests mirror the packages (docs/architecture.md, "The tests"): a folder
of ``tests/`` names a package of the code (``tests/game/sockets/`` is
``game/sockets/``), or is one of the layers that drive the whole site, or the
shared support; and each test file refers to the package its folder names, so
that one dropped in the wrong folder fails here. What tests share is in
``tests/support/`` or a folder's ``conftest.py``: no module of the tests imports
a test module (its helpers would be hidden among tests, and a test imported by
name runs twice), and the support defines no test."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
# Where modules of the tests sit: the server's tests and the bot client's.
TEST_TREES = (TESTS, ROOT / "clients" / "python" / "tests")

# The folders of tests/ that test a package, by the package they test.
PACKAGES = {
    "engine": "game.engine",  # the rules' layer, below the server (README "Layout")
    "bots": "bots",
    "game": "game",
    "lobby": "lobby",
    "studies": "studies",
    "botapi": "botapi",
    "spadesite": "spadesite",
    "lab": "lab",
}
# The folders that are not a package's: two layers that drive the whole site,
# and what the server's tests share (no tests in it).
LAYERS = {"browser", "stack"}
SUPPORT = "support"
# The tests of the code as a whole, at the top of tests/.
AT_THE_TOP = {"test_commands.py", "test_layers_of_the_code.py", "test_layout_of_the_tests.py"}

# A module named in the code or its text: dotted (game.sockets.limits) or as a
# path (game/sockets/limits.py), not a test module's (tests.game..., tests/game/...).
DOTTED = re.compile(r"(?<![\w./])([a-z_]+(?:\.[a-z_]+)+)")
SLASHED = re.compile(r"(?<![\w./])([a-z_]+(?:/[a-z_]+)+)(?:\.py|/)")


def folders() -> list[Path]:
    """The folders of tests/ that hold Python files."""
    return sorted({p.parent for p in TESTS.rglob("*.py")} - {TESTS})


def package_of(folder: Path) -> str | None:
    """The dotted package that ``folder`` (under tests/) mirrors; None for a
    layer or the support."""
    top, *rest = folder.relative_to(TESTS).parts
    if top in LAYERS or top == SUPPORT:
        return None
    return ".".join([PACKAGES[top], *rest])


def misplaced_folder(folder: Path) -> str | None:
    """Why ``folder`` (under tests/) is misplaced: it names no package of the
    code, nor a layer; None if it is not."""
    name = folder.relative_to(ROOT).as_posix()
    top = folder.relative_to(TESTS).parts[0]
    if top not in PACKAGES and top not in LAYERS and top != SUPPORT:
        return f"{name}: names no package nor layer"
    package = package_of(folder)
    if package is not None and not (ROOT / package.replace(".", "/") / "__init__.py").exists():
        return f"{name}: {package} is not a package"
    return None


@cache
def commands() -> dict[str, str]:
    """Every management command's name, by the module that defines it (the
    code's folders only: a glob from the root would walk .venv, a minute)."""
    code = [d for d in ROOT.iterdir() if (d / "__init__.py").exists()]
    return {
        path.stem: ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for folder in code
        for path in folder.glob("**/management/commands/*.py")
        if path.stem != "__init__"
    }


def referred(source: str) -> set[str]:
    """The modules of the code ``source`` imports or names, a management
    command it runs by its name counting as its module."""
    names = set(DOTTED.findall(source))
    names |= {m.replace("/", ".") for m in SLASHED.findall(source)}
    by_name = commands()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.Constant) and node.value in by_name:
            names.add(by_name[node.value])
    return names


def top_level_modules(package: str) -> set[str]:
    """The modules that sit in ``package`` itself, not in a subpackage."""
    where = ROOT / package.replace(".", "/")
    return {f"{package}.{p.stem}" for p in where.glob("*.py") if p.stem != "__init__"}


def refers_to(names: set[str], package: str, at_its_top: bool) -> bool:
    """Whether ``names`` name ``package`` (a module of its own top, for the
    files at the top of a folder whose subpackages have folders of their own)."""
    if at_its_top:
        return bool(names & top_level_modules(package))
    return any(n == package or n.startswith(package + ".") for n in names)


def misplaced_file(path: Path, source: str) -> str | None:
    """Why the test file at ``path`` (its text ``source``) is in the wrong
    folder; None if it is where it belongs."""
    name = path.relative_to(ROOT).as_posix()
    if path.parent == TESTS:
        if path.name in AT_THE_TOP:
            return None
        return f"{name}: a test of the code as a whole? else in its package's folder"
    if path.parent.relative_to(TESTS).parts[0] == SUPPORT:
        return f"{name}: tests/support/ holds no tests"
    package = package_of(path.parent)
    if package is None:
        return None  # a layer's
    # A folder with folders of its own (tests/game/) holds at its top the
    # tests of the modules at the package's top (game/master.py, ...).
    at_its_top = any((ROOT / package.replace(".", "/") / p.name / "__init__.py").exists()
                     and p.is_dir() for p in path.parent.iterdir())  # fmt: skip
    if refers_to(referred(source), package, at_its_top):
        return None
    return f"{name}: names no module of {package}" + (" at its top" if at_its_top else "")


def is_test_module(dotted: str) -> bool:
    """Whether ``dotted`` (``tests.studies.test_tables``, ``.test_round``) names
    a test module, or something in one."""
    return any(part.startswith("test_") for part in dotted.split("."))


def imported_tests(source: str) -> list[str]:
    """The test modules (and what of them) that ``source`` imports, anywhere in it."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if is_test_module(alias.name)]
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            names = [f"{base}.{alias.name}".replace("..", ".") for alias in node.names]
            found += [base] if is_test_module(base) else [n for n in names if is_test_module(n)]
    return found


def defined_tests(source: str) -> list[str]:
    """The tests (pytest's ``test*`` functions, ``Test*`` classes) that
    ``source`` defines at its top: a test module importing them runs them."""
    tree = ast.parse(source).body
    functions = [n.name for n in tree if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    classes = [n.name for n in tree if isinstance(n, ast.ClassDef)]
    return [f for f in functions if f.startswith("test")] + [
        c for c in classes if c.startswith("Test")
    ]


def stray_helper(path: Path) -> str | None:
    """Why the module at ``path`` is not where the tests keep helpers: outside
    tests/support/, a folder holds test modules, its conftest and __init__ only."""
    if path.parent == TESTS or path.parent.relative_to(TESTS).parts[0] == SUPPORT:
        return None  # the top's own checks hold what sits there
    if path.name.startswith("test_") or path.name in {"conftest.py", "__init__.py"}:
        return None
    return f"{path.relative_to(ROOT).as_posix()}: a helper? in tests/support/"


def test_every_folder_of_the_tests_names_a_package_or_a_layer() -> None:
    assert [why for f in folders() if (why := misplaced_folder(f))] == []


def test_every_test_file_sits_in_the_folder_of_the_package_it_tests() -> None:
    paths = sorted(TESTS.rglob("test_*.py"))
    assert [why for p in paths if (why := misplaced_file(p, p.read_text()))] == []


def test_the_check_finds_a_test_in_the_wrong_folder() -> None:
    """Planted cases: the table sounds' test among the SQL toolkit's, a socket
    test at the top of tests/game/, a test at the top of tests/ and in the
    support, and a folder that names no package."""
    sounds = (TESTS / "lobby" / "test_sounds.py").read_text()
    socket = (TESTS / "game" / "sockets" / "test_socket_order.py").read_text()
    assert misplaced_file(TESTS / "lobby" / "test_sounds.py", sounds) is None
    assert misplaced_file(TESTS / "game" / "sql" / "test_sounds.py", sounds) == (
        "tests/game/sql/test_sounds.py: names no module of game.sql"
    )
    assert misplaced_file(TESTS / "game" / "test_socket_order.py", socket) == (
        "tests/game/test_socket_order.py: names no module of game at its top"
    )
    assert misplaced_file(TESTS / "test_socket_order.py", socket) is not None
    assert misplaced_file(TESTS / "support" / "test_socket_order.py", socket) is not None
    assert misplaced_folder(TESTS / "game" / "socket") == (
        "tests/game/socket: game.socket is not a package"
    )
    assert misplaced_folder(TESTS / "server") == "tests/server: names no package nor layer"


def test_the_helpers_are_in_the_support() -> None:
    assert [why for p in sorted(TESTS.rglob("*.py")) if (why := stray_helper(p))] == []
    # A planted case: the deals the bots' tests share, back in their folder.
    assert stray_helper(TESTS / "bots" / "deals.py") == (
        "tests/bots/deals.py: a helper? in tests/support/"
    )
    assert stray_helper(TESTS / SUPPORT / "deals.py") is None
    assert stray_helper(TESTS / "bots" / "conftest.py") is None


def test_no_module_of_the_tests_imports_a_test_module() -> None:
    paths = sorted(p for tree in TEST_TREES for p in tree.rglob("*.py"))
    assert [(p.relative_to(ROOT).as_posix(), names) for p in paths
            if (names := imported_tests(p.read_text()))] == []  # fmt: skip


def test_the_support_defines_no_test() -> None:
    paths = sorted((TESTS / SUPPORT).rglob("*.py"))
    assert [(p.name, names) for p in paths if (names := defined_tests(p.read_text()))] == []


def test_the_checks_find_a_test_module_imported_and_a_test_in_the_support() -> None:
    """Planted cases: a helper, a fixture and a module taken from test modules,
    from the top and from the folder, inside a function too; the support's
    and a conftest's helpers pass."""
    planted = """
from tests.studies.test_tables import ONE, arrive
from tests.studies.test_tables import cheap_study as cheap_study  # the fixture
from tests.botapi import test_protocol as proto
import tests.bots.test_knowledge
from .test_round import deal
from tests.support.study_tables import TWO, poll
from tests.studies.conftest import example_text


def helper():
    from tests.browser.test_table_play import become_guest
"""
    assert imported_tests(planted) == [
        "tests.studies.test_tables",
        "tests.studies.test_tables",
        "tests.botapi.test_protocol",
        "tests.bots.test_knowledge",
        ".test_round",
        "tests.browser.test_table_play",
    ]
    clean = (TESTS / "studies" / "test_tables.py").read_text()
    assert imported_tests(clean) == [] and imported_tests(planted.split("\n", 7)[-1]) == [
        "tests.browser.test_table_play"
    ]
    support = (TESTS / SUPPORT / "study_tables.py").read_text()
    assert defined_tests(support) == []
    assert defined_tests(support + "\n\ndef test_arrive() -> None:\n    pass\n") == ["test_arrive"]
