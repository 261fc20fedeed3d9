"""A study's export, analysed: win rates by round type and think times, per condition.

    python docs/examples/analyse_study.py EXPORT_DIR [--include-pilot]
        [--include-excluded] [--include-stand-in] [--json OUT.json]

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
   and partner's nil). The site's dashboard takes both seats' views of every
   partnership, so its human+bot rows also count a bot partner's nil as the
   partnership's own: its figures differ there, by design. The
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
- *Excluded participants* (``participants.csv`` ``excluded = true``: the
  researcher left them out from the monitor; the reason is in audit.csv): as
  for pilots, their decisions, and every round of their partnership, since
  their play is their partner's result too. ``--include-excluded`` keeps them.
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
# What is left out unless asked, in this order (a datum counts under the first).
RULES = {
    "pilot": "pilot data",
    "excluded": "excluded participants' data",
    "stand_in": "stand-in rounds and stand-in-filled tables",
}
PEOPLE_RULES = ("pilot", "excluded")  # participants.csv's flags
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
    rounds: pd.DataFrame, people: pd.DataFrame, include: dict[str, bool]
) -> tuple[pd.DataFrame, dict[str, int]]:
    """One row per (round, partnership with a participant, round type seen from a
    participant seat of it): condition, type, won; and how many partnership-rounds
    each rule left out (each counted under the first rule that left it out)."""
    exported = set(people["pseudonym"])
    marked = {rule: set(people.loc[flag(people[rule]), "pseudonym"]) for rule in PEOPLE_RULES}
    stand_in = flag(rounds["stand_in_round"]) | flag(rounds["stand_in_fill"])
    rows: list[dict[str, Any]] = []
    left_out = dict.fromkeys(RULES, 0)
    for side, seats in SIDES.items():
        # The partnership's seats held by an exported (so not withdrawn) participant.
        theirs = {
            s: (rounds[f"player_kind_{s}"] == "participant") & rounds[f"player_{s}"].isin(exported)
            for s in seats
        }
        remaining = theirs[seats[0]] | theirs[seats[1]]
        for rule in RULES:
            if include[rule]:
                continue
            if rule == "stand_in":
                hit = stand_in
            else:  # a pilot's or an excluded participant's play is their partnership's
                hit = rounds[f"player_{seats[0]}"].isin(marked[rule])
                hit |= rounds[f"player_{seats[1]}"].isin(marked[rule])
            left_out[rule] += int((remaining & hit).sum())
            remaining &= ~hit
        kept = rounds[remaining]
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
    actions: pd.DataFrame, rounds: pd.DataFrame, people: pd.DataFrame, include: dict[str, bool]
) -> tuple[pd.DataFrame, dict[str, int]]:
    """The participants' timed decisions (bid or card): condition, decision, seconds;
    and how many each rule left out."""
    mine = actions[
        (actions["player_kind"] == "participant")
        & ~flag(actions["by_stand_in"])
        & (actions["think_ms"] != "")
    ]
    mine = mine.merge(
        people[["pseudonym", "condition", *PEOPLE_RULES]], left_on="player", right_on="pseudonym"
    )
    mine = mine.assign(decision=mine["action"].map(lambda a: DECISIONS.get(json.loads(a)["type"])))
    mine = mine[mine["decision"].notna()]
    # The round's stand-in flag; a round not finished yet has no row in rounds.csv,
    # and its table's stand_in_fill (actions.csv) still holds.
    flags = rounds[["table", "round", "stand_in_round"]]
    mine = mine.merge(flags, on=["table", "round"], how="left")
    hits = {rule: flag(mine[rule]) for rule in PEOPLE_RULES}
    hits["stand_in"] = flag(mine["stand_in_round"].fillna("false")) | flag(mine["stand_in_fill"])
    remaining = pd.Series(True, index=mine.index)
    left_out = dict.fromkeys(RULES, 0)
    for rule in RULES:
        if not include[rule]:
            left_out[rule] = int((remaining & hits[rule]).sum())
            remaining &= ~hits[rule]
    mine = mine[remaining]
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


def analyse(folder: Path, include: dict[str, bool] | None = None) -> dict:
    """The figures; ``include``: the rules (RULES) whose data to keep."""
    include = {rule: bool((include or {}).get(rule)) for rule in RULES}
    people = read(folder, "participants.csv")
    rounds = read(folder, "rounds.csv")
    actions = read(folder, "actions.csv")
    conditions = list(read(folder, "conditions.csv")["name"])
    units, rounds_left_out = partnership_rounds(rounds, people, include)
    timed, decisions_left_out = decisions(actions, rounds, people, include)
    counted = units.drop_duplicates(["table", "round", "side"])
    return {
        "export": str(folder),
        "included": include,
        "partnership_rounds": {c: int((counted["condition"] == c).sum()) for c in conditions},
        "left_out": {"partnership_rounds": rounds_left_out, "decisions": decisions_left_out},
        "win_rates": win_rates(units, conditions),
        "think_times": think_times(timed, conditions),
    }


def _number(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def report(result: dict) -> str:
    left = result["left_out"]
    told = []
    for rule, what in RULES.items():
        flag_name = "--include-" + rule.replace("_", "-")
        if result["included"][rule]:
            told.append(f"nothing of {what} ({flag_name})")
        else:
            told.append(
                f"{what} ({left['partnership_rounds'][rule]} partnership-rounds, "
                f"{left['decisions'][rule]} decisions)"
            )
    told.append("withdrawn participants (never in the export)")
    lines = [f"Export: {result['export']}", "Left out: " + "; ".join(told) + "."]
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
    for rule, what in RULES.items():
        parser.add_argument(
            "--include-" + rule.replace("_", "-"), action="store_true", help=f"keep {what}"
        )
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    result = analyse(args.export, {rule: getattr(args, f"include_{rule}") for rule in RULES})
    print(report(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
