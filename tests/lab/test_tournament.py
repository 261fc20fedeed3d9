"""Tournaments: reproducible from the seed, duplicate seating, Wilson CIs, stop and resume."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from lab.tournaments.tournament import (
    TournamentConfig,
    TournamentError,
    duplicate_summary,
    format_summary,
    log_path_for,
    main,
    report_log,
    run_tournament,
    summarize,
    wilson_interval,
)


def without_run(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in summary.items() if k != "run"}


def config(**kw: Any) -> TournamentConfig:
    base: dict[str, Any] = {"ns": "RB+WRP", "ew": "MS+WRP", "games": 6, "seed": 11}
    base.update(kw)
    return TournamentConfig(**base)


# ----- the confidence interval ----------------------------------------------------------


def test_wilson_interval_known_values() -> None:
    lo, hi = wilson_interval(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-4) and hi == pytest.approx(0.5962, abs=1e-4)
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = wilson_interval(10, 10)
    assert lo == pytest.approx(0.7225, abs=1e-4) and hi == 1.0
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_wilson_interval_shrinks_like_one_over_root_n() -> None:
    lo1, hi1 = wilson_interval(520, 1000)
    lo2, hi2 = wilson_interval(5200, 10000)
    assert lo1 < 0.52 < hi1 and lo2 < 0.52 < hi2
    assert (hi1 - lo1) / (hi2 - lo2) == pytest.approx(math.sqrt(10), rel=0.01)


# ----- reproducible -----------------------------------------------------------------------


def test_same_seed_same_results() -> None:
    a = run_tournament(config())
    b = run_tournament(config())
    assert without_run(a) == without_run(b)
    assert a["games"] == 6 and a["rounds"] > 0
    assert a["sides"][0]["wins"] + a["sides"][1]["wins"] + a["draws"] == 6


def test_worker_processes_do_not_change_the_results() -> None:
    assert without_run(run_tournament(config(), workers=2)) == without_run(
        run_tournament(config(), workers=1)
    )


def test_another_seed_other_games() -> None:
    seeds: list[str] = []
    run_tournament(config(games=2, seed=12), on_game=lambda r: seeds.append(r["seed"]))
    assert sorted(seeds) == ["12/game/0", "12/game/1"]


def test_summary_fields() -> None:
    s = run_tournament(config())
    side = s["sides"][0]
    assert side["bot"] == "RB+WRP" and s["sides"][1]["bot"] == "MS+WRP"
    lo, hi = side["win_rate_ci95"]
    assert lo <= side["win_rate"] <= hi
    assert set(side["round_types"]) >= {"under", "over", "we nil", "double nil"}
    seat_rounds = sum(v["seat_rounds"] for v in side["round_types"].values())
    assert seat_rounds == 2 * s["rounds"]
    assert 0 <= side["nil"]["made"] <= side["nil"]["bids"]
    assert s["rules"]["winning_goal"] == 200 and s["rules"]["losing_goal"] == -100
    text = format_summary(s)
    assert "RB+WRP" in text and "95% CI" in text and "seed 11" in text


# ----- duplicate --------------------------------------------------------------------------


def test_duplicate_pairs_share_the_deals_and_swap_the_seats() -> None:
    records: list[dict[str, Any]] = []
    run_tournament(config(games=4, duplicate=True), on_game=records.append)
    by_game = {r["game"]: r for r in records}
    for d in range(2):
        first, second = by_game[2 * d], by_game[2 * d + 1]
        assert first["seed"] == second["seed"]
        assert (first["swapped"], second["swapped"]) == (False, True)
        # In the swapped game bot A holds the East/West seats.
        ew_points = sum(rd["points"][1] for rd in second["rounds"])
        assert second["scores"][0] == ew_points


def test_duplicate_with_the_same_bot_splits_every_deal_sequence() -> None:
    # Identical deterministic bots play the same game twice with the names
    # swapped, so each deal sequence is won once by each side.
    s = run_tournament(config(ns="RB+WRP", ew="RB+WRP", games=6, duplicate=True))
    d = s["duplicate"]
    assert d["deal_sequences"] == 3 and d["split"] == 3
    assert s["sides"][0]["wins"] == s["sides"][1]["wins"] == 3
    assert s["sides"][0]["points"] == s["sides"][1]["points"]


def test_the_same_bot_differs_by_nothing_in_the_paired_figures() -> None:
    d = run_tournament(config(ns="RB+WRP", ew="RB+WRP", games=6, duplicate=True))["duplicate"]
    assert d["sign_test_p"] is None  # no deal sequence won twice by either side
    assert d["points_difference"]["per_round"] == 0.0
    assert d["points_difference"]["ci95"] == [0.0, 0.0]


def _game(index: int, winner: int, a_points: list[int], b_points: list[int]) -> dict[str, Any]:
    swapped = index & 1
    rounds = []
    for a, b in zip(a_points, b_points, strict=True):
        points = [b, a] if swapped else [a, b]
        rounds.append({"points": points})
    return {"game": index, "winner": winner, "swapped": swapped, "rounds": rounds}


def test_paired_figures_of_known_deal_sequences() -> None:
    recs = [
        _game(0, 0, [100, 50], [40, 10]), _game(1, 0, [60], [0]),  # A won both: +160/3 a round
        _game(2, 1, [0], [80]), _game(3, 0, [90], [10]),  # split: 0 a round
        _game(4, 0, [30], [20]), _game(5, 0, [30], [20]),  # A won both: +10
        _game(6, 0, [10], [0]),  # its pair is missing: left out
    ]  # fmt: skip
    d = duplicate_summary(recs)
    assert (d["deal_sequences"], d["a_won_both"], d["b_won_both"], d["split"]) == (3, 2, 0, 1)
    assert d["sign_test_p"] == pytest.approx(0.5)  # two of two, two-sided
    diffs = [160 / 3, 0.0, 10.0]
    mean = sum(diffs) / 3
    assert d["points_difference"]["per_round"] == pytest.approx(mean)
    sd = math.sqrt(sum((x - mean) ** 2 for x in diffs) / 2)
    lo, hi = d["points_difference"]["ci95"]
    assert hi - mean == pytest.approx(1.959963984540054 * sd / math.sqrt(3))
    assert mean - lo == pytest.approx(hi - mean)


def test_duplicate_needs_an_even_number_of_games() -> None:
    with pytest.raises(TournamentError, match="even"):
        run_tournament(config(games=5, duplicate=True))


# ----- validation ---------------------------------------------------------------------------


def test_unknown_bot_lists_the_available_ones() -> None:
    with pytest.raises(TournamentError, match="bidders are .*RB.*MS.*IO"):
        run_tournament(config(ew="XX+WRP"))


@pytest.mark.parametrize(
    ("kw", "message"),
    [({"games": 0}, "at least 1"), ({"goal": 100, "lose": 100}, "losing goal")],
)
def test_bad_settings(kw: dict[str, Any], message: str) -> None:
    with pytest.raises(TournamentError, match=message):
        run_tournament(config(**kw))


def test_bad_workers() -> None:
    with pytest.raises(TournamentError, match="workers"):
        run_tournament(config(), workers=0)


# ----- stop and resume ------------------------------------------------------------------------


def test_resume_skips_finished_games(tmp_path: Path) -> None:
    log = log_path_for(tmp_path / "results.json")
    assert log.name == "results.games.jsonl"
    run_tournament(config(games=4), log=log)
    assert len(log.read_text().splitlines()) == 1 + 4  # header + games
    played: list[int] = []
    resumed = run_tournament(config(games=6), log=log, on_game=lambda r: played.append(r["game"]))
    assert sorted(played) == [4, 5]
    assert resumed["run"]["games_resumed"] == 4
    assert without_run(resumed) == without_run(run_tournament(config(games=6)))
    # Nothing left to play.
    played.clear()
    run_tournament(config(games=6), log=log, on_game=lambda r: played.append(r["game"]))
    assert played == []


def test_resume_after_a_torn_line(tmp_path: Path) -> None:
    log = tmp_path / "r.games.jsonl"
    run_tournament(config(games=3), log=log)
    text = log.read_text()
    log.write_text(text + text.splitlines()[-1][:20])  # stopped while writing game 3
    played: list[int] = []
    s = run_tournament(config(games=4), log=log, on_game=lambda r: played.append(r["game"]))
    assert played == [3]
    assert s["games"] == 4
    assert all(json.loads(line) for line in log.read_text().splitlines())


def test_a_log_replaced_or_removed_under_a_running_tournament_keeps_every_later_game(
    tmp_path: Path,
) -> None:
    log = tmp_path / "r.games.jsonl"
    backup = tmp_path / "backup"

    def meddle(rec: dict[str, Any]) -> None:
        if rec["game"] == 1:  # put back a copy, as a git checkout does
            backup.write_text(log.read_text())
            backup.replace(log)
        elif rec["game"] == 3:  # games 2 and 3 went to the copy put back
            games = [json.loads(line)["game"] for line in log.read_text().splitlines()[1:]]
            assert games == [0, 1, 2, 3]
            log.unlink()

    run_tournament(config(games=6), log=log, on_game=meddle)
    # Games 0-3 went with the removed file; 4 and 5 started a new log, header first.
    played: list[int] = []
    run_tournament(config(games=6), log=log, on_game=lambda r: played.append(r["game"]))
    assert played == [0, 1, 2, 3]
    lines = log.read_text().splitlines()
    assert json.loads(lines[0])["type"] == "header"
    assert sorted(json.loads(line)["game"] for line in lines[1:]) == list(range(6))


def test_resume_refuses_another_tournaments_log(tmp_path: Path) -> None:
    log = tmp_path / "r.games.jsonl"
    run_tournament(config(games=2), log=log)
    with pytest.raises(TournamentError, match="different tournament"):
        run_tournament(config(games=2, seed=99), log=log)


def test_report_summarizes_the_whole_pairs_finished_so_far(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "res.json"
    log = log_path_for(out)
    run_tournament(config(games=6, duplicate=True), log=log)
    lines = log.read_text().splitlines()
    log.write_text("\n".join(lines[:-1]) + "\n")  # game 5 not finished: pair 2 is half played
    argv = ["--ns", "RB+WRP", "--ew", "MS+WRP", "--games", "10", "--seed", "11", "--duplicate"]
    assert main([*argv, "--output", str(out), "--report"]) == 0
    printed = capsys.readouterr().out
    assert "so far: 4 of the 10 games planned (5 finished, whole duplicate pairs only)" in printed
    assert not out.exists()  # a report writes no summary file
    assert log.read_text().splitlines() == lines[:-1]  # and plays nothing
    cfg = config(games=10, duplicate=True)
    records = [json.loads(line) for line in lines[1:5]]
    expected = summarize(cfg, records)
    got = report_log(cfg, log)
    assert {k: v for k, v in got.items() if k != "partial"} == expected
    with pytest.raises(SystemExit):
        main([*argv, "--report"])  # nothing to read without --output


def test_summarize_is_order_free() -> None:
    records: list[dict[str, Any]] = []
    cfg = config(games=4)
    run_tournament(cfg, on_game=records.append)
    assert summarize(cfg, records) == summarize(cfg, list(reversed(records)))


# ----- the command line -----------------------------------------------------------------------


def test_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "res.json"
    argv = ["--ns", "RB+WRP", "--ew", "IO+WRP", "--games", "2", "--seed", "5", "--output", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr()
    assert "RB+WRP" in printed.out and "win rate" in printed.out
    assert "2/2 games" in printed.err  # the progress bar
    data = json.loads(out.read_text())
    assert data["games"] == 2 and data["config"]["seed"] == 5
    assert (tmp_path / "res.games.jsonl").exists()
    with pytest.raises(SystemExit):
        main(["--ns", "RB+WRP", "--ew", "Nope+WRP", "--games", "2"])
    assert "bidders are" in capsys.readouterr().err
