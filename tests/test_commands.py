"""Every management command of the project runs in CI once, at a tiny size.

:data:`SMOKE_RUNS` names, for each command, the test that runs it; a command
with a PostgreSQL path (a branch on the database vendor, a COPY, a stack of
its own) is also run on PostgreSQL, by the test :data:`POSTGRES_RUNS` names.
A test is named by its function's name (``Class::test`` for a method), which
exactly one test file under ``tests/`` must define, and that file must name
the command: a test moved to another file or folder keeps its entry. The
project's commands are read from Django (``get_commands()``), those of every
app whose code sits in this repository: a new command, or a new app's, fails
here until a test runs it.
"""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Iterable
from functools import cache
from importlib import import_module
from pathlib import Path

from django.apps import apps
from django.core.management import get_commands

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"

SMOKE_RUNS = {
    # the server's commands
    "analyse_rounds": "test_analyse_rounds_resumes_after_ctrl_c_and_never_analyses_a_round_twice",
    "close_abandoned_tables": "test_the_command_closes_them",
    "export_rounds": "test_export_and_import_commands",
    "import_rounds": "test_export_and_import_commands",
    "rebuild_ratings": "test_rebuild_equals_the_live_ratings_on_a_random_history",
    "rebuild_tallies": "test_tallies_give_the_scans_figures_on_random_data",
    "render_deploy": "test_render_deploy_writes_every_file_and_deploy_holds_them",
    "sweep_overdue_turns": "test_the_command_and_celery_beat_sweep",
    "train_success_curves": "test_the_curves_are_fitted_on_the_humans_or_the_bis_seats",
    # human-subject studies
    "load_study": "test_load_study_prints_the_slug_and_updates_while_nobody_took_part",
    "export_study": "test_the_export_study_command_writes_the_files",
    "withdraw_participant":
        "test_withdrawal_removes_what_consent_promises_and_the_export_leaves_them_out",
    "reset_study": "test_reset_study_clears_a_pilot_run_and_keeps_the_file",
    "sweep_studies": "test_the_command_and_beat_sweep_the_studies",
    # the benchmarks
    "bench_analysis": "test_bench_analysis_times_a_round",
    "bench_bots": "test_prints_every_figure_and_writes_json",
    "bench_dashboard": "test_bench_dashboard_fills_times_and_removes_its_rows_on_sqlite",
    "bench_engine": "test_bench_engine_times_a_few_rounds",
    "bench_ratings": "test_bench_ratings_fills_times_both_pages_and_removes_its_rows",
    "bench_server": "test_bench_server_runs_both_stacks_for_a_moment",
    "bench_solver": "test_prints_each_k_and_writes_json",
    "bench_study": "test_bench_study_takes_a_few_participants_through_the_embedded_stack",
    "bench_workers": "test_bench_workers_counts_a_workers_moves_for_a_second",
    # the studies: tournaments, the league, tables and calibrations
    "bid_stats":
        "test_the_shipped_learned_bots_play_a_duplicate_pair_and_bid_stats_reads_its_log",
    "bidinfo_error": "test_commands_learn_a_table_and_report_its_error",
    "build_tables": "test_build_tables_command_writes_records_and_checks",
    "calibrate_uct": "test_prints_and_writes_the_figures",
    "league": "test_the_command_writes_the_page_and_the_table",
    "nil_sets": "test_nil_sets_counts_the_nils_of_two_short_games",
    "qp_diagnose": "test_the_command_writes_the_summary",
    "qp_gauge": "test_the_gauge_command_compares_networks_deal_by_deal",
    "search_regret": "test_search_regret_prints_and_writes_the_figures",
    "sim_cost":
        "test_the_cost_command_reports_each_deal_count_and_k_s_zero_never_changes_a_bid",
    "tournament": "test_prints_a_summary_and_writes_json",
    "research_status": "test_a_stopped_run_started_again_continues_where_it_was",
    # training
    "nnb_curve": "test_nnb_curve_two_tiny_points",
    "train_bidinfo": "test_commands_learn_a_table_and_report_its_error",
    "train_nnb": "test_train_nnb_lowers_the_loss_resumes_and_reloads_with_identical_bids",
    "train_qp":
        "test_train_qp_is_reproducible_resumes_from_its_data_and_reloads_with_identical_plays",
    "train_qp_self": "test_the_command_trains_saves_plots_and_refuses_bad_settings",
    "train_spb": "test_train_spb_both_methods_write_weights_curves_and_report",
}  # fmt: skip

POSTGRES_RUNS = {
    # its COPY filler; the tallies rebuilt with COPY (game.tallies.rebuild)
    "bench_dashboard": "test_bench_dashboard_and_rebuild_tallies_on_postgres",
    "rebuild_tallies": "test_bench_dashboard_and_rebuild_tallies_on_postgres",
    # their stacks: a scratch PostgreSQL database each
    "bench_server": "test_bench_server_runs_both_stacks_for_a_moment",
    "bench_workers": "test_bench_workers_counts_a_workers_moves_for_a_second",
    "bench_study": "test_bench_study_takes_a_few_participants_through_the_redis_stack",
}

# What in a command's own source shows a PostgreSQL path.
POSTGRES_SIGNS = re.compile(r"postgres|\.vendor\b|\bCOPY\b", re.I)


def in_repository(path: str | Path) -> bool:
    """Code of this repository (an installed package inside it, as CI's .venv, is not)."""
    try:
        parts = Path(path).resolve().relative_to(ROOT).parts
    except ValueError:
        return False
    return not {"site-packages", "dist-packages"} & set(parts)


def project_commands() -> dict[str, str]:
    """The project's commands: name -> app (apps whose code is in this repository)."""
    ours = {c.name for c in apps.get_app_configs() if in_repository(c.path)}
    return {name: app for name, app in get_commands().items() if app in ours}


def defined_tests(paths: Iterable[Path]) -> dict[str, list[Path]]:
    """Test name (``test_x``, ``Class::test_x``) -> the files that define it."""
    found: dict[str, list[Path]] = {}
    for path in paths:
        tree = ast.parse(path.read_text(), str(path))
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                names = [f"{node.name}::{n.name}" for n in node.body
                         if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]  # fmt: skip
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                names = [node.name]
            else:
                continue
            for name in names:
                found.setdefault(name, []).append(path)
    return found


@cache
def project_tests() -> dict[str, list[Path]]:
    return defined_tests(sorted(TESTS.rglob("test_*.py")))


def names_command(path: Path, command: str) -> bool:
    """Whether a string in the file names the command (``"league"``, ``"manage.py league"``)."""
    tree = ast.parse(path.read_text(), str(path))
    return any(isinstance(n, ast.Constant) and isinstance(n.value, str)
               and command in n.value.split() for n in ast.walk(tree))  # fmt: skip


def problem_of(test: str, command: str, tests: dict[str, list[Path]]) -> str | None:
    """What is wrong with an entry (None: one file defines the test, and names the command)."""
    files = tests.get(test, [])
    if len(files) != 1:
        where = [f.relative_to(ROOT).as_posix() if in_repository(f) else str(f) for f in files]
        return f"{command}: {len(files)} test files define {test} {where}"
    if not names_command(files[0], command):
        return f"{command}: {files[0].name}, which defines {test}, never names the command"
    return None


def node_ids() -> dict[str, str]:
    """Command -> the pytest node ids of its runs (the table of issue 42)."""
    out = {}
    for command in sorted(SMOKE_RUNS):
        runs = [SMOKE_RUNS[command], *([POSTGRES_RUNS[command]] if command in POSTGRES_RUNS
                                       and POSTGRES_RUNS[command] != SMOKE_RUNS[command]
                                       else [])]  # fmt: skip
        out[command] = ", ".join(
            f"{project_tests()[t][0].relative_to(ROOT).as_posix()}::{t}" for t in runs
        )
    return out


def test_the_project_commands_are_found() -> None:
    commands = project_commands()
    assert {"tournament", "export_rounds", "bench_dashboard"} <= commands.keys()
    assert "migrate" not in commands and "runserver" not in commands  # Django's, daphne's


def test_every_project_command_has_a_smoke_run() -> None:
    missing = sorted(set(project_commands()) - SMOKE_RUNS.keys())
    assert missing == [], f"commands no test runs (add a smoke run to SMOKE_RUNS): {missing}"


def test_every_command_with_a_postgres_path_runs_on_postgres() -> None:
    signs = []
    for name, app in project_commands().items():
        source = inspect.getsource(import_module(f"{app}.management.commands.{name}"))
        if POSTGRES_SIGNS.search(source):
            signs.append(name)
    missing = sorted(set(signs) - POSTGRES_RUNS.keys())
    assert missing == [], f"commands with a PostgreSQL path not run on PostgreSQL: {missing}"


def test_every_entry_names_a_command_and_a_test_that_runs_it() -> None:
    commands = project_commands()
    stale = sorted((SMOKE_RUNS.keys() | POSTGRES_RUNS.keys()) - commands.keys())
    assert stale == [], f"entries for commands the project no longer has: {stale}"
    wrong = [problem for registry in (SMOKE_RUNS, POSTGRES_RUNS)
             for command, test in sorted(registry.items())
             if (problem := problem_of(test, command, project_tests()))]  # fmt: skip
    assert wrong == []


def test_the_checks_find_a_missing_test_a_twice_defined_one_and_an_unnamed_command(
    tmp_path: Path,
) -> None:
    a, b = tmp_path / "test_a.py", tmp_path / "test_b.py"
    a.write_text('def test_x():\n    run("manage.py league")\n\n\nclass TestC:\n'
                 '    def test_y(self):\n        call_command("tournament")\n')  # fmt: skip
    b.write_text("def test_x():\n    pass\n\n\ndef test_z():\n    pass\n")
    tests = defined_tests([a, b])
    assert problem_of("TestC::test_y", "tournament", tests) is None
    assert "0 test files define test_w" in (problem_of("test_w", "league", tests) or "")
    assert "2 test files define test_x" in (problem_of("test_x", "league", tests) or "")
    assert "never names" in (problem_of("test_z", "league", tests) or "")
    assert not in_repository(ROOT / ".venv/lib/python3.11/site-packages/daphne")
    assert in_repository(ROOT / "game")
