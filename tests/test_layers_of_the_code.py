"""The code's layers hold: imports only point down, and nothing imports itself round.

The layers (docs/architecture.md), lowest first:

0. ``game.engine`` — the rules, pure Python: no Django, no bots, no server.
1. ``bots`` — bidders and players on a seat's view: only ``game.engine`` below
   them, and no Django (their app config aside).
2. the server, ``game`` outside the engine — models, the move path, sockets,
   the bot driver, analyses and the commands that store into the database.
3. ``lobby`` — pages, players, seats; ``studies`` beside it — human-subject
   studies (consent, participants, assignment); ``botapi`` beside them —
   external bots' accounts and protocol. None of the three imports another.
4. ``spadesite`` — settings, routing, the Celery app.
5. ``lab`` — tournaments, training, benchmarks and the local stack's tooling,
   with their management commands: it may import everything, and nothing of
   the site (layers 0-4) imports it.

Inside the server (``game``) the layers are finer: :data:`GAME_LAYERS`, the
one place they are defined (docs/architecture.md cites it).

Every import counts, those inside functions too: a lazy import still ties
two modules together, and is how loops hide.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path

from tests.support.code_graph import PACKAGES, SITE, modules

ROOT = Path(__file__).resolve().parent.parent
DJANGO_WORLD = ("django", "channels", "daphne", "celery", "asgiref", "psycopg", "redis")


def imports_of(name: str, path: Path, known: Mapping[str, Path]) -> set[str]:
    """The modules ``name`` imports anywhere in its file: project modules by
    name, others by their top-level package."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # ``from game import moves`` imports the module game.moves;
            # ``from game.engine import Rules`` the package game.engine.
            names = (f"{base}.{alias.name}" for alias in node.names)
            targets = [t if t in known else base for t in names]
        else:
            continue
        for target in targets:
            if target.split(".")[0] not in PACKAGES:
                out.add(target.split(".")[0])
                continue
            while target not in known and "." in target:
                target = target.rpartition(".")[0]
            if target in known and target != name:
                out.add(target)
    return out


@cache
def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports_of(name, path, known) for name, path in known.items()}


def layer(name: str) -> int:
    if name == "game.engine" or name.startswith("game.engine."):
        return 0
    layers = {"bots": 1, "game": 2, "lobby": 3, "studies": 3, "botapi": 3, "spadesite": 4,
              "lab": 5}  # fmt: skip
    return layers[name.split(".")[0]]


def upward_imports(edges: Mapping[str, Iterable[str]]) -> list[str]:
    """Every import of a project module from a higher layer."""
    return sorted(
        f"{a} -> {b}"
        for a, targets in edges.items()
        for b in targets
        if b.split(".")[0] in PACKAGES and layer(b) > layer(a)
    )


def site_imports_of_the_lab(edges: Mapping[str, Iterable[str]]) -> list[str]:
    """Every import of a lab module by a module of the site."""
    return sorted(
        f"{a} -> {b}"
        for a, targets in edges.items()
        if a.split(".")[0] in SITE
        for b in targets
        if b.split(".")[0] == "lab"
    )


def import_loops(edges: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    loops: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in edges:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                loops.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(loops)


def test_imports_only_point_down() -> None:
    assert upward_imports(graph()) == []


def test_there_is_no_import_loop() -> None:
    assert import_loops(graph()) == []


def test_the_engine_and_the_bots_know_nothing_of_django_or_the_server() -> None:
    edges = graph()
    offending = []
    for name, targets in edges.items():
        if layer(name) > 1 or name == "bots.apps":
            continue
        for target in targets:
            package = target.split(".")[0]
            server = package in PACKAGES and layer(target) not in (0, layer(name))
            if package in DJANGO_WORLD or server:
                offending.append(f"{name} -> {target}")
    assert offending == []


def imports_across(edges: Mapping[str, Iterable[str]], a: str, b: str) -> list[str]:
    """Every import between packages ``a`` and ``b`` of one layer, either way."""
    return sorted(
        f"{x} -> {y}"
        for x, targets in edges.items()
        for y in targets
        if {x.split(".")[0], y.split(".")[0]} == {a, b}
    )


def test_the_lobby_and_the_studies_never_import_each_other() -> None:
    """Two apps of layer 3: the studies' pages have consent and privacy rules of
    their own, and the lobby knows nothing of studies."""
    assert imports_across(graph(), "lobby", "studies") == []
    planted = {"studies.pages": {"lobby.forms"}, "lobby.forms": {"game.seating"}}
    assert imports_across(planted, "lobby", "studies") == ["studies.pages -> lobby.forms"]


def test_the_bot_accounts_and_the_other_apps_never_import_each_other() -> None:
    """``botapi`` reaches the game only through ``game.external_bots`` and the
    master; the lobby offers its bots through the same hook."""
    for other in ("lobby", "studies"):
        assert imports_across(graph(), "botapi", other) == []


def test_nothing_of_the_site_imports_the_lab() -> None:
    """game, bots, lobby and spadesite run without the lab: not one import of it,
    those inside functions included."""
    assert site_imports_of_the_lab(graph()) == []


def test_the_lab_check_finds_a_lazy_import_of_the_lab(tmp_path: Path) -> None:
    source = tmp_path / "analytics.py"
    source.write_text("def rate():\n    from lab.tournaments import tournament\n    return 1\n")
    known = {
        "game.research.analytics": source,
        "lab.tournaments": source,
        "lab.tournaments.tournament": source,
        "bots.srp": source,
    }
    edges = {
        "game.research.analytics": imports_of("game.research.analytics", source, known),
        "lab.tournaments.tournament": {"game.research.analytics", "bots.srp"},  # the lab may
    }
    assert site_imports_of_the_lab(edges) == [
        "game.research.analytics -> lab.tournaments.tournament"
    ]
    assert upward_imports(edges) == ["game.research.analytics -> lab.tournaments.tournament"]


def test_the_checks_find_what_they_look_for() -> None:
    planted = {
        "game.engine.cards": {"game.engine.rules"},
        "game.engine.rules": {"game.engine.cards"},  # a loop
        "bots.srp": {"game.engine.cards", "game.moves"},  # up a layer
        "game.moves": {"bots.registry"},
        "bots.registry": {"bots.srp"},
    }
    assert upward_imports(planted) == ["bots.srp -> game.moves"]
    assert import_loops(planted) == [
        ["bots.registry", "bots.srp", "game.moves"],
        ["game.engine.cards", "game.engine.rules"],
    ]


def test_a_lazy_import_inside_a_function_counts(tmp_path: Path) -> None:
    source = tmp_path / "srp.py"
    source.write_text("def play():\n    from game import moves\n    return moves\n")
    known = {"bots.srp": source, "game.moves": source, "game": source}
    assert imports_of("bots.srp", source, known) == {"game.moves"}


# ----- one job per module ------------------------------------------------------------

MAX_LINES = 400


def test_no_server_module_outgrows_one_sitting() -> None:
    """No module of the server (``game/``, the engine included, ``lobby/`` and
    ``studies/``, ``botapi/``; migrations and management commands aside) over
    ``MAX_LINES`` lines."""
    long = {}
    for package in ("game", "lobby", "studies", "botapi"):
        for path in (ROOT / package).rglob("*.py"):
            if {"migrations", "management"} & set(path.parts):
                continue
            lines = len(path.read_text().splitlines())
            if lines > MAX_LINES:
                long[str(path.relative_to(ROOT))] = lines
    assert long == {}


# ----- the layers inside the server (game/) -----------------------------------------

# The server's layers, lowest first: a module is in the layer of the longest
# prefix that names it, and imports only from its own layer and those below.
# docs/architecture.md ("The server, by layer") cites this table.
GAME_LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("the rules", ("game.engine",)),
    ("plain services: errors, switches, counters, guests, Redis clients, the SQL toolkit, "
     "the external bots' hook",
     ("game.errors", "game.switches", "game.observe", "game.identity", "game.redis_clients",
      "game.sql", "game.external_bots")),
    ("the models", ("game.models", "game.ratings.models", "game.research.tally_model",
                    "game.replays.models")),
    ("what a finished round or match stores: its columns, tallies and ratings",
     ("game.ratings", "game.research.round_columns", "game.research.tally_keys",
      "game.research.tallies", "game.research.study_keys", "game.research.league_table",
      "game.research.intervals")),
    ("the move path and its storage", ("game.moves",)),
    ("the table master", ("game.master",)),
    ("a table's other changes", ("game.abandoned", "game.seating")),
    ("the research data read and written off the move path", ("game.research",)),
    ("the replays and their analysis", ("game.replays",)),
    ("the bot driver and the schedulers", ("game.driver",)),
    ("the websockets", ("game.sockets",)),
    ("start-up, the builder, the admin, the commands",
     ("game", "game.builder", "game.apps", "game.admin", "game.management",
      "game.templatetags")),
)  # fmt: skip
# The framework's model discovery (Django finds every model through the app's
# models module, which imports the subpackages' models) needs no exception:
# the model modules are one layer.


def game_layer(name: str) -> int:
    """The layer of a module of ``game/`` (its index in :data:`GAME_LAYERS`)."""
    best, found = -1, -1
    for n, (_, prefixes) in enumerate(GAME_LAYERS):
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > best:
                best, found = len(prefix), n
    if found < 0:
        raise KeyError(f"{name} is in no layer of GAME_LAYERS")
    return found


def upward_imports_in_game(edges: Mapping[str, Iterable[str]]) -> list[str]:
    """Every import inside ``game/`` from a lower layer to a higher one."""
    return sorted(
        f"{a} -> {b}"
        for a, targets in edges.items()
        if a.split(".")[0] == "game"
        for b in targets
        if b.split(".")[0] == "game" and game_layer(b) > game_layer(a)
    )


def test_every_module_of_the_server_has_a_layer() -> None:
    for name in graph():
        if name.split(".")[0] == "game":
            game_layer(name)


def test_inside_the_server_imports_only_point_down() -> None:
    """The table master above its stores and their port, the SQL toolkit below the
    move path and the research code, the replays above the research data: no
    module imports one of a higher layer (those inside functions included)."""
    assert upward_imports_in_game(graph()) == []


def test_the_server_layer_check_finds_an_upward_import() -> None:
    planted = {
        "game.moves.stores.sqlite": {"game.master", "game.moves.port"},
        "game.research.tallies": {"game.sql.statements", "game.moves.rows"},
        "game.research.exports": {"game.replays.analysis"},
    }
    assert upward_imports_in_game(planted) == [
        "game.moves.stores.sqlite -> game.master",
        "game.research.exports -> game.replays.analysis",
        "game.research.tallies -> game.moves.rows",
    ]
