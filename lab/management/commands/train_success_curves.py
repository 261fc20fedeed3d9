"""``manage.py train_success_curves``: learn the BIS success curves (paper section 4.3).

    python manage.py train_success_curves --selfplay --rounds 100000 --seed 1 \\
        --workers 2 [--eps 0.15 --floor 0.02] [--output bots/data/sc.npz]
    python manage.py train_success_curves --from-records rounds.jsonl [--bots-only]
    python manage.py train_success_curves --from-db [--seats bis|humans|all] [--min-samples N]
    python manage.py train_success_curves --report [--output bots/data/sc.npz]
    python manage.py train_success_curves --calibrate --games 6000 --seed 2 \\
        --workers 2 [--against RB+SRP]

``--selfplay`` plays BIS(no curves)+SRP at all four seats with nil
exploration (:mod:`lab.tournaments.selfplay`); finished chunks go to
``<output>.samples.jsonl`` (beside the output) and a stopped run resumes when
started again with the same options. ``--from-records`` reads round records
(``game.engine.record_of`` JSON, one per line) and recomputes each nil
bidder's nil value from the dealt hand. ``--from-db`` reads the round
records stored by the live server: the nils of the seats whose bidder is BIS
(``--seats bis``), of humans (``humans``: a seat a human held whose bid was
not the stand-in's) or of all; with fewer than ``--min-samples`` nil samples
(default 1,000) it fits nothing.
Every mode then prints the nil-sample report (samples in all and by bidding
position, how many previous-bid sequences hold at least 100 / 500 / 1,000 /
2,000 / 5,000 samples, the most common sequences), fits the logistic
regression, checks the curves are monotone and writes the table
(:mod:`bots.success_curves`). ``--report`` prints the report stored in an
existing curve file (its source, seed, rounds and sample counts) and trains
nothing. ``--calibrate`` plays a duplicate tournament of BIS+SRP (with the
shipped curves) against ``--against`` and calibrates the shipped table on the
nils BIS bid there (:mod:`lab.training.sc_calibration`), writing ``--output``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from bots import success_curves as sc
from lab.tournaments.selfplay import SelfPlayConfig, SelfPlayError, run_selfplay, samples_of_chunks


def _seed_value(text: str) -> int | str:
    return int(text) if text.lstrip("-").isdigit() else text


def samples_log_for(output: str | Path) -> Path:
    p = Path(output)
    return p.with_name(p.name.split(".")[0] + ".samples.jsonl")


def read_records(path: str | Path) -> Iterator[dict[str, Any]]:
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                raise CommandError(f"{path}: line {n} is not JSON") from None


def db_records() -> Iterator[dict[str, Any]]:
    """Round records of the live server, with ``bot_names`` per seat (None for a human)
    and ``human_seats`` (a human sat there and bid: not a stand-in's bid)."""
    try:
        from game.models import RoundRecordRow  # type: ignore[attr-defined]
    except ImportError:
        raise CommandError(
            "--from-db needs the game app's RoundRecordRow model, which does not exist yet; "
            "export the records to JSONL and use --from-records"
        ) from None
    try:
        rows = RoundRecordRow.objects.order_by("pk").values_list(
            "record", "seat_kinds", "bot_names", "stand_in_bids"
        )
        for record, kinds, names, stand_in_bids in rows.iterator():
            rec = dict(record)
            rec["bot_names"] = [
                (names[s] if names else None) if kinds[s].upper() == "B" else None for s in range(4)
            ]
            rec["human_seats"] = [kinds[s].upper() == "H" and stand_in_bids[s] != "1"
                                  for s in range(4)]  # fmt: skip
            yield rec
    except Exception as e:  # noqa: BLE001 - e.g. the table is not migrated yet
        if isinstance(e, CommandError):
            raise
        raise CommandError(f"cannot read the round records from the database: {e}") from None


def _human_seat(rec: dict[str, Any], seat: int) -> bool:
    return bool(rec.get("human_seats", [False] * 4)[seat])


class Command(BaseCommand):
    help = "Learn the BIS nil success curves (logistic regression) and write the table."

    def add_arguments(self, parser: Any) -> None:
        mode = parser.add_mutually_exclusive_group(required=True)
        mode.add_argument(
            "--selfplay",
            action="store_true",
            help="self-play BIS(no curves)+SRP with nil exploration",
        )
        mode.add_argument(
            "--from-records",
            metavar="FILE.jsonl",
            help="round records (record_of JSON), one per line",
        )
        mode.add_argument(
            "--from-db", action="store_true", help="the round records stored by the live server"
        )
        mode.add_argument(
            "--calibrate",
            action="store_true",
            help="calibrate the shipped curves on the nils BIS+SRP bids in a tournament",
        )
        mode.add_argument(
            "--report",
            action="store_true",
            help="print the source and nil-sample report of --output; train nothing",
        )
        parser.add_argument(
            "--rounds", type=int, default=100_000, help="self-play rounds (default 100000)"
        )
        parser.add_argument("--seed", default="1", help="self-play seed (default 1)")
        parser.add_argument("--workers", type=int, default=1, help="worker processes")
        parser.add_argument(
            "--games", type=int, default=6000, help="--calibrate: tournament games (default 6000)"
        )
        parser.add_argument(
            "--against", default="RB+SRP", help="--calibrate: BIS+SRP's opponents (default RB+SRP)"
        )
        parser.add_argument(
            "--eps",
            type=float,
            default=0.15,
            help="exploration: chance of a nil bid BIS would not make",
        )
        parser.add_argument(
            "--floor",
            type=float,
            default=0.02,
            help="exploration only with a nil value at least this",
        )
        parser.add_argument("--goal", type=int, default=200, help="winning goal (default 200)")
        parser.add_argument("--lose", type=int, default=-100, help="losing goal (default -100)")
        parser.add_argument(
            "--chunk-rounds", type=int, default=100, help="rounds per resumable chunk (default 100)"
        )
        parser.add_argument(
            "--bots-only",
            action="store_true",
            help="--from-records: only seats whose bot_names entry is a BIS bot",
        )
        parser.add_argument(
            "--seats",
            choices=("bis", "humans", "all"),
            default="bis",
            help="--from-db: the nils of BIS bots (default), of humans (not a stand-in's), or all",
        )
        parser.add_argument(
            "--min-samples",
            type=int,
            default=1000,
            help="--from-db / --from-records: fit only with at least this many nil samples",
        )
        parser.add_argument(
            "--C",
            type=float,
            default=sc.DEFAULT_C,
            help="inverse regularization of the logistic regression",
        )
        parser.add_argument(
            "--interactions",
            action="store_true",
            help="logit(nil value) x position and partner's bid: curve shapes differ by sequence",
        )
        parser.add_argument(
            "--output",
            default=str(sc.DATA_FILE),
            help="the curve file (.npz, default bots/data/sc.npz)",
        )
        parser.add_argument("--samples-log", help="self-play log (default <output>.samples.jsonl)")
        parser.add_argument("--no-train", action="store_true", help="collect data only")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")
        parser.add_argument("--top", type=int, default=15, help="sequences to report")

    def handle(self, *args: Any, **o: Any) -> None:
        output = Path(o["output"])
        if output.suffix != ".npz":
            raise CommandError("--output must be a .npz file")
        if o["report"]:
            self._report_file(output)
            return
        if o["calibrate"]:
            self._calibrate(output, o)
            return
        source: dict[str, Any]
        if o["selfplay"]:
            config = SelfPlayConfig(seed=_seed_value(str(o["seed"])), eps=o["eps"],
                                    floor=o["floor"], goal=o["goal"], lose=o["lose"],
                                    chunk_rounds=o["chunk_rounds"])  # fmt: skip
            log = Path(o["samples_log"]) if o["samples_log"] else samples_log_for(output)
            stream = None if o["no_progress"] else getattr(self.stderr, "_out", self.stderr)
            try:
                chunks = run_selfplay(config, o["rounds"], log, o["workers"], stream)
            except (SelfPlayError, ValueError) as e:
                raise CommandError(str(e)) from None
            samples = samples_of_chunks(chunks)
            rounds = sum(c["rounds"] for c in chunks)
            explored = sum(c["explored"] for c in chunks)
            source = {"kind": "selfplay", "config": config.to_dict(), "rounds": rounds,
                      "chunks": len(chunks), "explored_nils": explored,
                      "natural_nils": len(samples) - explored, "log": str(log)}  # fmt: skip
            self.stdout.write(
                f"self-play: {rounds} rounds in {len(chunks)} chunks, seed {config.seed}; "
                f"nil samples {len(samples)} ({len(samples) - explored} BIS, "
                f"{explored} explored); log {log}"
            )
        else:
            if o["from_db"]:
                records: Any = db_records()
                seat_filter = {"bis": sc.bot_seat_filter(), "all": None,
                               "humans": _human_seat}[o["seats"]]  # fmt: skip
                source = {"kind": "db", "seats": o["seats"]}
            else:
                path = o["from_records"]
                if not Path(path).exists():
                    raise CommandError(f"{path} does not exist")
                records = read_records(path)
                seat_filter = sc.bot_seat_filter() if o["bots_only"] else None
                source = {"kind": "records", "file": str(path)}
            counted = _Counting(records)
            try:
                samples = list(sc.nil_samples_from_records(counted, seat_filter))
            except (KeyError, TypeError, ValueError) as e:
                raise CommandError(f"a round record cannot be read: {e!r}") from None
            source["rounds"] = counted.n
            self.stdout.write(f"{counted.n} rounds, {len(samples)} nil samples")
            if len(samples) < o["min_samples"]:
                self._report(samples, o["top"])
                raise CommandError(
                    f"{len(samples)} nil samples, fewer than --min-samples {o['min_samples']}: "
                    "not enough to fit the curves; nothing written"
                )
        self._report(samples, o["top"])
        if o["no_train"]:
            return
        try:
            content = sc.train(samples, source, C=o["C"], interactions=o["interactions"])
        except sc.SuccessCurvesError as e:
            raise CommandError(str(e)) from None
        sc.save(content, output)
        meta = content["meta"]
        self.stdout.write("model (logit of P(nil made)):")
        self.stdout.write(f"  intercept {meta['model']['intercept']:+.4f}")
        for name, coef in meta["model"]["coefficients"].items():
            self.stdout.write(f"  {name:<16} {coef:+.4f}")
        single = meta["single_model"]
        self.stdout.write(
            "single curve: intercept {:+.4f}, ".format(single["intercept"])
            + ", ".join(f"{k} {v:+.4f}" for k, v in single["coefficients"].items())
        )
        curves = sc.read(output)
        for prev in [(), (3,), (1, 3), (3, 3), (8, 3), (3, 3, 3)]:
            self.stdout.write(
                f"  SC({prev}, 0.8) = {curves.probability(prev, 0.8):.3f}   "
                f"SC({prev}, 0.5) = {curves.probability(prev, 0.5):.3f}"
            )
        self.stdout.write(f"curves written to {output} (monotone in the nil value: yes)")

    def _calibrate(self, output: Path, o: dict[str, Any]) -> None:
        from lab.tournaments.tournament import TournamentConfig, TournamentError
        from lab.training.sc_calibration import bis_predictions, calibrate_file

        config = TournamentConfig("BIS+SRP", o["against"], o["games"], o["goal"], o["lose"],
                                  _seed_value(str(o["seed"])), True)  # fmt: skip
        try:
            curves = sc.read(sc.DATA_FILE)  # the curves BIS plays with
            predictions = bis_predictions(config, max(1, o["workers"]))
            step = calibrate_file(curves, predictions, config.to_dict(), output)
        except (sc.SuccessCurvesError, TournamentError) as e:
            raise CommandError(str(e)) from None
        made = step["made"] / step["nils"]
        self.stdout.write(
            f"{step['nils']} BIS nils in {config.games} games against {config.ew} (seed "
            f"{config.seed}): predicted {step['mean_probability']:.1%}, made {made:.1%}"
        )
        self.stdout.write("calibration sigmoid(a + b logit p), by bids before the nil:")
        for k, cell in step["by_position"].items():
            i = int(k)
            pred = cell["mean_probability"]
            self.stdout.write(
                f"  {k}: a {step['a'][i]:+.4f}, b {step['b'][i]:.4f}; {cell['nils']} nils, "
                f"made {cell['made']}" + (f", predicted {pred:.1%}" if pred is not None else "")
            )
        self.stdout.write(f"calibrated curves written to {output}")

    def _report_file(self, path: Path) -> None:
        try:
            curves = sc.read(path)
        except sc.SuccessCurvesError as e:
            raise CommandError(str(e)) from None
        meta = curves.meta
        source = meta.get("source", {})
        self.stdout.write(f"{path}: generated {meta.get('generated')}, source {source.get('kind')}")
        if source.get("kind") == "selfplay":
            config = source.get("config", {})
            self.stdout.write(
                f"self-play: seed {config.get('seed')}, {source.get('rounds')} rounds "
                f"({source.get('chunks')} chunks of {config.get('chunk_rounds')}), "
                f"eps {config.get('eps')}, floor {config.get('floor')}, "
                f"goal {config.get('goal')} / {config.get('lose')}; nil samples: "
                f"{source.get('natural_nils')} BIS, {source.get('explored_nils')} explored"
            )
        elif "rounds" in source:
            self.stdout.write(f"{source['rounds']} rounds")
        stats = dict(meta.get("stats", {}))
        if "sequences_with_at_least" not in stats:
            self.stdout.write("(this file was written before the per-sequence counts were kept)")
        self._print_stats(stats)
        self.stdout.write(f"monotone in the nil value: {'yes' if meta.get('monotone') else 'no'}")
        for i, step in enumerate(meta.get("calibration", []), 1):
            src = step.get("source", {})
            ab = ", ".join(f"{a:+.3f} {b:+.3f}" for a, b in zip(step["a"], step["b"], strict=True))
            self.stdout.write(
                f"calibration {i}: sigmoid(a + b logit p), a b by position {ab}; on "
                f"{step['nils']} BIS nils (made {step['made']}, predicted "
                f"{step['mean_probability']:.1%}) in {src.get('games')} games "
                f"{src.get('ns')} vs {src.get('ew')}, seed {src.get('seed')}"
            )

    def _report(self, samples: list[sc.NilSample], top: int) -> None:
        self._print_stats(sc.sample_stats(samples, top))

    def _print_stats(self, stats: dict[str, Any]) -> None:
        self.stdout.write(
            f"nil samples {stats['samples']}, made {stats['made']}, "
            f"{stats['sequences_seen']} of {sc.N_SEQUENCES} sequences seen; by position "
            + ", ".join(f"{k} earlier bids: {n}" for k, n in stats["by_position"].items())
        )
        at_least = stats.get("sequences_with_at_least")
        if at_least:
            by_pos = stats.get("sequences_with_at_least_by_position", {})
            for t, n in at_least.items():
                per = ", ".join(f"{k} earlier bids: {c[t]}" for k, c in by_pos.items())
                self.stdout.write(f"sequences with >= {int(t):,} samples: {n}" +
                                  (f" ({per})" if per else ""))  # fmt: skip
        self.stdout.write("most common previous-bid sequences:")
        for t in stats["top_sequences"]:
            rate = t["made"] / t["samples"] if t["samples"] else 0.0
            self.stdout.write(f"  {str(tuple(t['prev'])):<14} {t['samples']:>7} samples, "
                              f"made {100 * rate:.1f}%")  # fmt: skip


class _Counting:
    """Iterate records, counting them."""

    def __init__(self, records: Any) -> None:
        self.records = records
        self.n = 0

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for r in self.records:
            self.n += 1
            yield r
