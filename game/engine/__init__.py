"""The rules of Spades in pure Python: no Django here (layer 0 of docs/architecture.md)."""

from .actions import (
    Action,
    ActionError,
    Bid,
    PassCards,
    Play,
    SeeCards,
    action_from_dict,
    action_to_dict,
    format_action,
    parse_action,
)
from .cards import (
    CardError,
    format_card,
    format_hand,
    parse_card,
    parse_hand,
)
from .deal import deal_hands, new_match_seed
from .match import Match, match_winner
from .record import RecordError, from_json, from_text, record_of, replay, to_json, to_text
from .round_types import NilPosition, RoundType, nil_position, round_type
from .rules import DEFAULT_RULES, PAPER_RULES, Rules, RulesError
from .scoring import PartnershipScore, score_round
from .state import IllegalAction, Phase, RoundState
from .tricks import Trick, trick_winner
from .view import SeatView, private_part, view_for

__all__ = [
    "DEFAULT_RULES", "PAPER_RULES", "Action", "ActionError", "Bid", "CardError",
    "IllegalAction", "Match", "NilPosition", "PartnershipScore", "PassCards", "Phase",
    "Play", "RecordError", "RoundState", "RoundType", "Rules", "RulesError", "SeatView",
    "SeeCards", "Trick", "action_from_dict", "action_to_dict", "deal_hands", "format_action",
    "format_card", "format_hand", "from_json", "from_text", "match_winner", "new_match_seed",
    "nil_position", "parse_action", "parse_card", "parse_hand", "private_part", "record_of",
    "replay",
    "round_type", "score_round", "to_json", "to_text", "trick_winner", "view_for",
]  # fmt: skip
