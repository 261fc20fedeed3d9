"""A study's export, analysed: win rates by round type and think times, per condition.

    python docs/examples/analyse_study.py EXPORT_DIR [--include-pilot]
        [--include-stand-in] [--json OUT.json]

EXPORT_DIR is what ``manage.py export_study <slug> --out EXPORT_DIR`` writes (or
the monitor's zip, unpacked); its ``codebook.md`` describes every column. This
script needs pandas only (``pip install pandas``, or the project's ``dev``
extra); it never imports the site, so it runs on a researcher's own machine.

It joins the files: ``rounds.csv`` with ``participants.csv`` on each seat's
pseudonym (``player_n`` ... ``player_w``), and ``actions.csv`` with both, on
the player and on the round (``table``, ``round``). It prints, for every
condition of ``conditions.csv``:

1. **Win rate by round type** (the layout of the BIS paper's Table 3: over,
   fourteen, under, strong over, own nil, partner's nil, opponent's nil, nil
   against nil; then the export's two other types, strong under and double
   nil). The unit is one round of one partnership with a participant in it
   (two participants who are partners make one partnership-round, not two).
   The round's type is the one seen from the partnership's participant seat
   (``round_type_s`` of rounds.csv): *own nil* is the participant's nil,
   *partner's nil* their partner's. Where both partners are participants,
   each one's view counts, once each type (a nil round is then both own nil
   and partner's nil), as the site's dashboard counts its partnerships. The
   partnership *won* the round when it scored more points in it than its
   opponents (``points_ns`` against ``points_ew``; a tie is not a win). With
   n, the wins, the rate and its 95% Wilson score interval.
2. **Think times by decision**: each participant decision's ``think_ms``
   (the page's measure; actions.csv), bids and card plays apart, with n, the
   median and the quartiles (pandas' linear interpolation), in seconds.

**What is left out, and how to keep it** (each count is printed):

- *Pilot data*: a partnership-round or a decision is left out when a pilot
  participant (``participants.csv`` ``pilot = true``) made it, or sat in that
  partnership. ``export_study`` already leaves pilots out unless it was run
  with ``--include-pilot``; then ``--include-pilot`` here keeps them too (a
  pilot study's participants are all pilots).
- *Stand-in data*: rounds with ``stand_in_round = true`` (a stand-in bot made a
  move that counts for a participant's seat) and every round of a table the
  waiting room's stand-in filled (``stand_in_fill = true``: a partner or an
  opponent was a program in a seat meant for a participant), and the
  decisions made in them. ``--include-stand-in`` keeps them. Moves the
  stand-in made (``by_stand_in``) have no think time and never count.
- *Withdrawn participants*: the export holds none of their data (no row in
  participants.csv; their seat is named ``withdrawn``), and only seats whose
  pseudonym is in participants.csv count here. There is no flag to keep
  them: their consent promises that their data is not used.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

import pandas as pd

SEATS = ("n", "e", "s", "w")
SIDES = {"ns": ("n", "s"), "ew": ("e", "w")}
OPPONENTS = {"ns": "ew", "ew": "ns"}
# The BIS paper's Table 3, in its order: (row as printed, rounds.csv round type).
TABLE_3 = (
    ("over", "over"),
    ("fourteen", "fourteen"),
    ("under", "under"),
    ("strong over", "strong over"),
    ("own nil", "we nil"),
    ("partner's nil", "partner nil"),
    ("opponent's nil", "opponents nil"),
    ("nil against nil", "nil vs nil"),
)
OTHER_TYPES = (("strong under", "strong under"), ("double nil", "double nil"))
DECISIONS = {"bid": "bid", "play": "card"}  # actions.csv action type -> decision
Z_95 = 1.959963984540054


def wilson(wins: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of wins/n (95%); (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    low = 0.0 if wins == 0 else max(0.0, centre - half)
    high = 1.0 if wins == n else min(1.0, centre + half)
    return low, high


def read(folder: Path, name: str) -> pd.DataFrame:
    # Every cell as text, empty cells as "": the export's booleans are
    # true/false and its missing values empty (codebook.md).
    return pd.read_csv(folder / name, dtype=str, keep_default_na=False)


def flag(column: pd.Series) -> pd.Series:
    return column == "true"


def partnership_rounds(
    rounds: pd.DataFrame, people: pd.DataFrame, include_pilot: bool, include_stand_in: bool
) -> tuple[pd.DataFrame, dict[str, int]]:
    """One row per (round, partnership with a participant, round type seen from a
    participant seat of it): condition, type, won; and how many partnership-rounds
    each rule left out."""
    exported = set(people["pseudonym"])
    pilots = set(people.loc[flag(people["pilot"]), "pseudonym"])
    rows: list[dict[str, Any]] = []
    left_out = {"pilot": 0, "stand_in": 0}
    stand_in = flag(rounds["stand_in_round"]) | flag(rounds["stand_in_fill"])
    for side, seats in SIDES.items():
        # The partnership's seats held by an exported (so not withdrawn) participant.
        theirs = {
            s: (rounds[f"player_kind_{s}"] == "participant") & rounds[f"player_{s}"].isin(exported)
            for s in seats
        }
        has_one = theirs[seats[0]] | theirs[seats[1]]
        is_pilot = rounds[f"player_{seats[0]}"].isin(pilots) | rounds[f"player_{seats[1]}"].isin(
            pilots
        )
        dropped_pilot = has_one & is_pilot & (not include_pilot)
        dropped_stand_in = has_one & ~dropped_pilot & stand_in & (not include_stand_in)
        left_out["pilot"] += int(dropped_pilot.sum())
        left_out["stand_in"] += int(dropped_stand_in.sum())
        kept = rounds[has_one & ~dropped_pilot & ~dropped_stand_in]
        won = kept[f"points_{side}"].astype(int) > kept[f"points_{OPPONENTS[side]}"].astype(int)
        for index, row in kept.iterrows():
            types = {row[f"round_type_{s}"] for s in seats if theirs[s][index]}
            for kind in sorted(types - {""}):
                rows.append(
                    {
                        "condition": row["condition"],
                        "table": row["table"],
                        "round": row["round"],
                        "side": side,
                        "round_type": kind,
                        "won": bool(won[index]),
                    }
                )
    columns = ["condition", "table", "round", "side", "round_type", "won"]
    return pd.DataFrame(rows, columns=columns), left_out


def win_rates(units: pd.DataFrame, conditions: list[str]) -> list[dict[str, Any]]:
    out = []
    for condition in conditions:
        mine = units[units["condition"] == condition]
        for shown, kind in (*TABLE_3, *OTHER_TYPES):
            cell = mine[mine["round_type"] == kind]
            n, wins = len(cell), int(cell["won"].sum())
            low, high = wilson(wins, n)
            out.append(
                {
                    "condition": condition,
                    "round_type": shown,
                    "n": n,
                    "wins": wins,
                    "rate": wins / n if n else None,
                    "ci_low": low if n else None,
                    "ci_high": high if n else None,
                }
            )
    return out


def decisions(
    actions: pd.DataFrame,
    rounds: pd.DataFrame,
    people: pd.DataFrame,
    include_pilot: bool,
    include_stand_in: bool,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """The participants' timed decisions (bid or card): condition, decision, seconds."""
    mine = actions[
        (actions["player_kind"] == "participant")
        & ~flag(actions["by_stand_in"])
        & (actions["think_ms"] != "")
    ]
    mine = mine.merge(
        people[["pseudonym", "condition", "pilot"]], left_on="player", right_on="pseudonym"
    )
    mine = mine.assign(decision=mine["action"].map(lambda a: DECISIONS.get(json.loads(a)["type"])))
    mine = mine[mine["decision"].notna()]
    # The round's stand-in flag; a round not finished yet has no row in rounds.csv,
    # and its table's stand_in_fill (actions.csv) still holds.
    flags = rounds[["table", "round", "stand_in_round"]]
    mine = mine.merge(flags, on=["table", "round"], how="left")
    stand_in = flag(mine["stand_in_round"].fillna("false")) | flag(mine["stand_in_fill"])
    dropped_pilot = flag(mine["pilot"]) & (not include_pilot)
    dropped_stand_in = ~dropped_pilot & stand_in & (not include_stand_in)
    left_out = {"pilot": int(dropped_pilot.sum()), "stand_in": int(dropped_stand_in.sum())}
    mine = mine[~dropped_pilot & ~dropped_stand_in]
    seconds = mine["think_ms"].astype(int) / 1000
    return mine.assign(seconds=seconds)[["condition", "decision", "seconds"]], left_out


def think_times(timed: pd.DataFrame, conditions: list[str]) -> list[dict[str, Any]]:
    out = []
    for condition in conditions:
        for decision in DECISIONS.values():
            s = timed[(timed["condition"] == condition) & (timed["decision"] == decision)]
            seconds = s["seconds"]
            out.append(
                {
                    "condition": condition,
                    "decision": decision,
                    "n": len(seconds),
                    "median_s": float(seconds.median()) if len(seconds) else None,
                    "q1_s": float(seconds.quantile(0.25)) if len(seconds) else None,
                    "q3_s": float(seconds.quantile(0.75)) if len(seconds) else None,
                }
            )
    return out


def analyse(folder: Path, include_pilot: bool = False, include_stand_in: bool = False) -> dict:
    people = read(folder, "participants.csv")
    rounds = read(folder, "rounds.csv")
    actions = read(folder, "actions.csv")
    conditions = list(read(folder, "conditions.csv")["name"])
    units, rounds_left_out = partnership_rounds(rounds, people, include_pilot, include_stand_in)
    timed, decisions_left_out = decisions(actions, rounds, people, include_pilot, include_stand_in)
    counted = units.drop_duplicates(["table", "round", "side"])
    return {
        "export": str(folder),
        "included": {"pilot": include_pilot, "stand_in": include_stand_in},
        "partnership_rounds": {c: int((counted["condition"] == c).sum()) for c in conditions},
        "left_out": {"partnership_rounds": rounds_left_out, "decisions": decisions_left_out},
        "win_rates": win_rates(units, conditions),
        "think_times": think_times(timed, conditions),
    }


def _number(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def report(result: dict) -> str:
    kept = result["included"]
    left = result["left_out"]
    lines = [
        f"Export: {result['export']}",
        "Left out: "
        + ("nothing pilot (--include-pilot)" if kept["pilot"] else
           f"pilot data ({left['partnership_rounds']['pilot']} partnership-rounds, "
           f"{left['decisions']['pilot']} decisions)")
        + "; "
        + ("nothing stand-in (--include-stand-in)" if kept["stand_in"] else
           f"stand-in rounds and stand-in-filled tables "
           f"({left['partnership_rounds']['stand_in']} partnership-rounds, "
           f"{left['decisions']['stand_in']} decisions)")
        + "; withdrawn participants (never in the export).",
    ]  # fmt: skip
    for condition, n in result["partnership_rounds"].items():
        lines += ["", f"== {condition} ({n} partnership-rounds) =="]
        lines += [
            "Win rate of the participants' partnership by round type (95% Wilson interval)",
            f"{'round type':<18}{'n':>5}{'won':>6}{'rate':>7}  95% CI",
        ]
        for i, r in enumerate(w for w in result["win_rates"] if w["condition"] == condition):
            if i == len(TABLE_3):
                lines.append("(not in Table 3)")
            interval = "-" if not r["n"] else f"[{r['ci_low']:.2f}, {r['ci_high']:.2f}]"
            lines.append(
                f"{r['round_type']:<18}{r['n']:>5}{r['wins']:>6}{_number(r['rate']):>7}  {interval}"
            )
        lines += ["Think times by decision (seconds)",
                  f"{'decision':<10}{'n':>6}{'median':>9}{'Q1':>8}{'Q3':>8}"]  # fmt: skip
        for t in result["think_times"]:
            if t["condition"] == condition:
                lines.append(
                    f"{t['decision']:<10}{t['n']:>6}{_number(t['median_s']):>9}"
                    f"{_number(t['q1_s']):>8}{_number(t['q3_s']):>8}"
                )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("export", type=Path, help="the folder export_study wrote")
    parser.add_argument("--include-pilot", action="store_true", help="keep pilot data")
    parser.add_argument(
        "--include-stand-in", action="store_true", help="keep stand-in rounds and filled tables"
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    result = analyse(args.export, args.include_pilot, args.include_stand_in)
    print(report(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
