"""The round record: one JSON document per finished round, and a one-line text form.

The record holds what was dealt and done (rules, dealer, scores and bags
before, the four hands, bids, passes, plays) and what follows from it (trick
winners, tricks per seat, the score breakdown, scores and bags after, both
round types). Parsing replays the actions through the engine and rejects a
record whose derived fields do not match. The format is documented in
``docs/round-record.md``.
"""

from __future__ import annotations

import json
from dataclasses import fields
from typing import Any

from .actions import Bid, PassCards, Play, SeeCards
from .cards import (
    RANK_LETTERS,
    SEAT_LETTERS,
    CardError,
    cards_of,
    format_card,
    format_hand,
    holding,
    parse_card,
    parse_hand,
    parse_seat,
)
from .round_types import nil_position, round_type
from .rules import Rules, RulesError
from .state import IllegalAction, Phase, RoundState

FORMAT = "spades-round/1"
TEXT_TAG = "spades/1"


class RecordError(ValueError):
    """A round record that cannot be read or does not add up."""


# ----- JSON ----------------------------------------------------------------------


def record_of(r: RoundState) -> dict[str, Any]:
    """The JSON-ready record of a finished round."""
    if r.phase is not Phase.DONE or r.result is None:
        raise RecordError("only a finished round has a record")
    bids = [b for b in r.bids if b is not None]
    letter = SEAT_LETTERS.__getitem__
    return {
        "format": FORMAT,
        "rules": r.rules.to_dict(),
        "round_number": r.round_number,
        "dealer": letter(r.dealer),
        "scores_before": list(r.scores_before),
        "bags_before": list(r.bags_before),
        "hands": {letter(s): format_hand(h) for s, h in enumerate(r.hands_dealt)},
        "bids": [{"seat": letter(s), "bid": r.bids[s], "blind": r.blind[s]} for s in r.bid_order],
        "passes": [{"seat": letter(p.seat), "cards": format_hand(p.cards)} for p in r.passes],
        "tricks": [
            {
                "leader": letter(t.leader),
                "cards": [format_card(c) for c in t.cards],
                "winner": letter(t.winner),
            }
            for t in r.tricks
        ],
        "tricks_won": list(r.tricks_won),
        "result": [p.to_dict() for p in r.result],
        "scores_after": [p.score_after for p in r.result],
        "bags_after": [p.bags_after for p in r.result],
        "round_types": [round_type(bids, s, r.rules.nil).label for s in range(4)],
        "nil_positions": [nil_position(bids, p, r.rules.nil).value for p in range(2)],
    }


def to_json(r: RoundState, indent: int | None = None) -> str:
    return json.dumps(record_of(r), indent=indent)


def _need(d: dict[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    if key not in d:
        raise RecordError(f"the record has no '{key}'")
    value = d[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise RecordError(f"'{key}' has the wrong type")
    return value


def _pair(d: dict[str, Any], key: str) -> tuple[int, int]:
    value = _need(d, key, list)
    if len(value) != 2 or any(isinstance(v, bool) or not isinstance(v, int) for v in value):
        raise RecordError(f"'{key}' must be two whole numbers")
    return value[0], value[1]


def replay(doc: dict[str, Any]) -> RoundState:
    """Rebuild the round from hands and actions; reject a record that does not add up."""
    if not isinstance(doc, dict):
        raise RecordError("a round record is a JSON object")
    if doc.get("format") != FORMAT:
        raise RecordError(f"unknown record format {doc.get('format')!r} (expected {FORMAT})")
    try:
        rules = Rules.from_dict(_need(doc, "rules", dict))
        hands_doc = _need(doc, "hands", dict)
        hands = [parse_hand(_need(hands_doc, s, str)) for s in SEAT_LETTERS]
        r = RoundState(
            rules,
            dealer=parse_seat(_need(doc, "dealer", str)),
            hands=hands,
            scores_before=_pair(doc, "scores_before"),
            bags_before=_pair(doc, "bags_before"),
            round_number=_need(doc, "round_number", int),
        )
        for i, b in enumerate(_need(doc, "bids", list)):
            if not isinstance(b, dict):
                raise RecordError(f"bid {i + 1} is not an object")
            seat = parse_seat(_need(b, "seat", str))
            r.apply(Bid(seat, _need(b, "bid", int), _need(b, "blind", bool)))
        for p in _need(doc, "passes", list):
            if not isinstance(p, dict):
                raise RecordError("a pass is not an object")
            seat = parse_seat(_need(p, "seat", str))
            r.apply(PassCards(seat, parse_hand(_need(p, "cards", str))))
        for i, t in enumerate(_need(doc, "tricks", list)):
            if not isinstance(t, dict):
                raise RecordError(f"trick {i + 1} is not an object")
            leader = parse_seat(_need(t, "leader", str))
            if r.phase is not Phase.PLAYING or leader != r.to_act:
                raise RecordError(f"trick {i + 1}: the leader should be {SEAT_LETTERS[r.to_act]}")
            cards = _need(t, "cards", list)
            if len(cards) != 4:
                raise RecordError(f"trick {i + 1} must have four cards")
            for k, c in enumerate(cards):
                if not isinstance(c, str):
                    raise RecordError(f"trick {i + 1}: a card must be text like 'AS'")
                r.apply(Play((leader + k) & 3, parse_card(c)))
            winner = parse_seat(_need(t, "winner", str))
            if r.tricks[-1].winner != winner:
                raise RecordError(
                    f"trick {i + 1} was won by {SEAT_LETTERS[r.tricks[-1].winner]}, "
                    f"not {SEAT_LETTERS[winner]}"
                )
    except IllegalAction as e:
        raise RecordError(f"illegal action in the record: {e}") from None
    except (RulesError, CardError, ValueError) as e:
        if isinstance(e, RecordError):
            raise
        raise RecordError(str(e)) from None
    if r.phase is not Phase.DONE:
        raise RecordError("the record stops before the round is over")
    expected = record_of(r)
    for key in ("tricks_won", "result", "scores_after", "bags_after", "round_types",
                "nil_positions"):  # fmt: skip
        if key not in doc:
            raise RecordError(f"the record has no '{key}'")
        if doc[key] != expected[key]:
            raise RecordError(f"'{key}' does not match the replay: expected {expected[key]}")
    return r


def from_json(text: str | bytes) -> RoundState:
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise RecordError(f"not JSON: {e}") from None
    return replay(doc)


# ----- one-line text ---------------------------------------------------------------


def _hand_text(mask: int) -> str:
    """Bridge-style suits, spades first: 'AKJ62.Q9.A.K9543' ('-' for a void)."""
    groups = []
    for suit in (3, 2, 1, 0):
        h = holding(mask, suit)
        ranks = "".join(RANK_LETTERS[r] for r in range(12, -1, -1) if h >> r & 1)
        groups.append(ranks or "-")
    return ".".join(groups)


def _parse_hand_text(text: str) -> int:
    groups = text.split(".")
    if len(groups) != 4:
        raise RecordError(f"{text!r} is not a hand (four suits separated by dots)")
    cards = []
    for suit_letter, group in zip("SHDC", groups, strict=True):
        if group != "-":
            cards += [rank + suit_letter for rank in group]
    return parse_hand(" ".join(cards))


def _rules_text(rules: Rules) -> str:
    default = Rules()
    changed = [
        f"{f.name}={getattr(rules, f.name)}"
        for f in fields(Rules)
        if getattr(rules, f.name) != getattr(default, f.name)
    ]
    return ",".join(changed) or "default"


def _parse_rules_text(text: str) -> Rules:
    if text == "default":
        return Rules()
    types = {f.name: f.type for f in fields(Rules)}
    values: dict[str, Any] = {}
    for item in text.split(","):
        name, _, raw = item.partition("=")
        if name not in types:
            raise RecordError(f"unknown rule option {name!r}")
        kind = types[name]
        if kind == "bool":
            if raw not in ("True", "False"):
                raise RecordError(f"{name} must be True or False")
            values[name] = raw == "True"
        elif kind == "int":
            try:
                values[name] = int(raw)
            except ValueError:
                raise RecordError(f"{name} must be a whole number") from None
        else:
            values[name] = raw
    return Rules(**values)


def to_text(r: RoundState) -> str:
    """One line: everything needed to replay the round, for logs and bug reports.

    ``spades/1 r3 d:N s:120,-40 b:3,5 rules:default h:<N>/<E>/<S>/<W>
    bids:E3,Sn,Wb,N2 pass:- play:2C9CKCAC...`` where ``n`` is nil, ``b``
    blind nil and ``s`` a seat looking at its cards while it could still have
    bid blind nil; plays follow in order, four per trick.
    """
    bids = []
    for a in r.actions:
        if isinstance(a, SeeCards):
            bids.append(SEAT_LETTERS[a.seat] + "s")
        elif isinstance(a, Bid):
            mark = "b" if a.blind else "n" if a.tricks == 0 else str(a.tricks)
            bids.append(SEAT_LETTERS[a.seat] + mark)
    passes = ",".join(
        SEAT_LETTERS[p.seat] + ">" + "".join(format_card(c) for c in cards_of(p.cards))
        for p in r.passes
    )
    plays = "".join(format_card(c) for t in r.tricks for c in t.cards) + "".join(
        format_card(c) for c in r.trick
    )
    return " ".join(
        [
            TEXT_TAG,
            f"r{r.round_number}",
            f"d:{SEAT_LETTERS[r.dealer]}",
            f"s:{r.scores_before[0]},{r.scores_before[1]}",
            f"b:{r.bags_before[0]},{r.bags_before[1]}",
            f"rules:{_rules_text(r.rules)}",
            "h:" + "/".join(_hand_text(h) for h in r.hands_dealt),
            "bids:" + (",".join(bids) or "-"),
            "pass:" + (passes or "-"),
            "play:" + (plays or "-"),
        ]
    )


def from_text(line: str) -> RoundState:
    """Replay a round (finished or not) from its one-line text form."""
    parts = line.split()
    if len(parts) != 10 or parts[0] != TEXT_TAG:
        raise RecordError(f"not a {TEXT_TAG} line (expected 10 fields)")
    try:
        fields_ = dict(p.split(":", 1) for p in parts[2:])
        if not parts[1].startswith("r"):
            raise RecordError("the second field is the round number, like r3")
        scores = [int(x) for x in fields_["s"].split(",")]
        bags = [int(x) for x in fields_["b"].split(",")]
        hands = [_parse_hand_text(h) for h in fields_["h"].split("/")]
        r = RoundState(
            _parse_rules_text(fields_["rules"]),
            dealer=parse_seat(fields_["d"]),
            hands=hands,
            scores_before=(scores[0], scores[1]),
            bags_before=(bags[0], bags[1]),
            round_number=int(parts[1][1:]),
        )
        if fields_["bids"] != "-":
            for item in fields_["bids"].split(","):
                seat, mark = parse_seat(item[0]), item[1:]
                if mark == "s":
                    r.apply(SeeCards(seat))
                elif mark in ("n", "b"):
                    r.apply(Bid(seat, 0, blind=mark == "b"))
                else:
                    r.apply(Bid(seat, int(mark)))
        if fields_["pass"] != "-":
            for item in fields_["pass"].split(","):
                seat_text, cards = item.split(">", 1)
                r.apply(
                    PassCards(
                        parse_seat(seat_text),
                        parse_hand(" ".join(cards[i : i + 2] for i in range(0, len(cards), 2))),
                    )
                )
        if fields_["play"] != "-":
            plays = fields_["play"]
            for i in range(0, len(plays), 2):
                r.apply(Play(r.to_act, parse_card(plays[i : i + 2])))
    except IllegalAction as e:
        raise RecordError(f"illegal action in the line: {e}") from None
    except RecordError:
        raise
    except (KeyError, IndexError, ValueError) as e:
        raise RecordError(f"cannot read the line: {e}") from None
    return r
