"""Every bot by name: ``make_bot("BIS+SRP")``. A new bidder or player is one line here."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from .base import Bidder, Bot, Player, RandomBidder, RandomPlayer
from .baselines import IOBidder, MSBidder, RBBidder
from .bis import BIS
from .learned.bidders import (
    NNB,
    NNB_SYM_WEIGHTS,
    SPB,
    SPB_MATCH_WEIGHTS,
    SPB_POOL2_WEIGHTS,
    SPB_POOL_WEIGHTS,
    SPB_SCORE_WEIGHTS,
)
from .learned.qp import (
    QP,
    QP2_WEIGHTS,
    QP_BRANCH_WEIGHTS,
    QP_CONT_WEIGHTS,
    QP_LEAGUE_WEIGHTS,
    QP_SELF_WEIGHTS,
    QP_SRP_WEIGHTS,
    QP_TRICK292_WEIGHTS,
    QP_TRICK_WEIGHTS,
    QPPlain,
    QPThird,
)
from .pimc import PIMC
from .sim import SIM
from .srp import SRP
from .success_curves import make_bis
from .uct import UCT
from .wrp import WRP

# The last X tricks a UCT player searches (the paper tried 3 and 5).
SEARCH_WINDOWS = (3, 5, 7, 9, 11, 13)

BIDDERS: dict[str, Callable[[], Bidder]] = {
    "Random": RandomBidder,
    # With the shipped success curves (bots/data/sc.npz) and, as the paper runs it,
    # the Big 5 / Big 6 conventions (G.2) and the blind nil they call for (G.3).
    "BIS": lambda: make_bis("BIS", conventions=True),
    "BIS-noBig": lambda: make_bis("BIS-noBig"),  # BIS without Big 5 / Big 6
    "BIS0": BIS,  # no success curves (nilProb = nilValue): the paper's bootstrap bidder
    "BIS*": lambda: make_bis("BIS*", conventions=True, bid_sensitive_threshold=True),  # 5.3.3
    "BIS-SC1": lambda: make_bis("BIS-SC1", conventions=True, single=True),  # Table 4
    "BIS-noEG": lambda: make_bis("BIS-noEG", conventions=True, end_game=False),  # Table 4
    "RB": RBBidder,
    "MS": MSBidder,
    "IO": IOBidder,
    # BIS's candidates checked by simulated rounds (bots.sim), blended with BIS's
    # estimate by weight k_s (SIM50: k_s = 0.5; SIM0 is BIS itself, the control);
    # -Q25: by the simulated values' lower quartile instead of their mean.
    **{f"SIM{k}": partial(SIM, k / 100) for k in (0, 25, 50, 75, 100)},
    "SIM50-Q25": partial(SIM, 0.5, q=0.25),
    # Learned from play (issue 22, bots/learned/): the registry's BIS with a network's
    # regular estimate (the Four Hundred asymmetric loss; NNB-sym: squared loss).
    # Weights in bots/data/*.npz.
    "NNB": lambda: NNB.like(BIDDERS["BIS"]()),
    "NNB-sym": lambda: NNB.like(BIDDERS["BIS"](), NNB_SYM_WEIGHTS, "NNB-sym"),
    # {nil, 1..13} rated by a network learned by self-play alone, no bidding rules.
    "SPB": SPB,
    # The same network valuing each round by the chance of winning the match it
    # leaves, the score an input, trained against BIS in 90% of the deals (issue 62).
    "SPB-match": lambda: SPB(SPB_MATCH_WEIGHTS),
}
# Ablations of BIS's choices beyond the paper's text (docs/bots.md): for
# tournaments only, never offered in menus.
ABLATION_BIDDERS: dict[str, Callable[[], Bidder]] = {
    # G.1's half trick instead of appendix E's trick after an opponent's nil
    "BIS-EGhalf": lambda: make_bis("BIS-EGhalf", conventions=True, opponent_nil_cut=0.5),
    # no "risky but do-able" nil when the opponents win by 20 points or more
    "BIS-EGnoRisky": lambda: make_bis("BIS-EGnoRisky", conventions=True, risky_nil=None),
    # that nil's cut-off a tenth higher or lower: nilProb >= 0.5 (as likely made as
    # set) or >= 0.3, instead of 0.4
    "BIS-EGrisky50": lambda: make_bis("BIS-EGrisky50", conventions=True, risky_nil=0.5),
    "BIS-EGrisky30": lambda: make_bis("BIS-EGrisky30", conventions=True, risky_nil=0.3),
    # a bid not made yet projected as 0 tricks instead of 3
    "BIS-EGunk0": lambda: make_bis("BIS-EGunk0", conventions=True, unknown_bid=0),
    # the losing goal heeded: no nil and a trick less when a set would reach it
    "BIS-EGlose": lambda: make_bis("BIS-EGlose", conventions=True, losing_goal=True),
    # SPB whose input has the match's score and bags too (docs/bots.md, issue 46)
    "SPB-score": lambda: SPB(SPB_SCORE_WEIGHTS),
    # SPB's training continued with BIS and SIM75 bidding for the opponents in a
    # share of the deals (issue 62, item 2; docs/bots.md)
    "SPB-pool": lambda: SPB(SPB_POOL_WEIGHTS),
    # SPB-pool trained 20 iterations more with BIS for the opponents in 90% of the deals
    "SPB-pool2": lambda: SPB(SPB_POOL2_WEIGHTS),
}


PLAYERS: dict[str, Callable[[], Player]] = {
    "Random": RandomPlayer,
    "WRP": WRP,
    "SRP": SRP,
    # SRP until the last X tricks, then UCT (bots.uct.DEFAULT_BUDGET seconds a move);
    # UCT13 searches every trick of the round.
    **{f"UCT{x}": partial(UCT, x) for x in SEARCH_WINDOWS},
    # The same, dealing the unseen cards by the bid-informed table (bots.bidinfo).
    **{f"UCT{x}b": partial(UCT, x, sampling="bids") for x in SEARCH_WINDOWS},
    # The same, every root card played on each sampled deal (bots.uct.ROOTS).
    **{f"UCT{x}p": partial(UCT, x, root="paired") for x in SEARCH_WINDOWS},
    # Perfect-information Monte Carlo from the first trick (bots.pimc): sampled
    # deals (bid-informed), each solved exactly for the points gap.
    "PIMC": PIMC,
    # The Four Hundred card-play value network, learned by self-play and against
    # SRP (bots.learned.qp; issues 46, 62), each card valued over the six
    # relabellings of the plain suits.
    "QP": partial(QP, symmetric=True),
}
# Players for tournaments only, not in menus (as ABLATION_BIDDERS): SRP whose
# lead covering partner's nil is the rule's alone, unchecked on sampled deals
# (bots.nil_cover).
ABLATION_PLAYERS: dict[str, Callable[[], Player]] = {
    "SRP-rule": partial(SRP, cover_deals=0),
    # QP's network fitted to every legal card's outcome under SRP's roll-outs
    # (the shipped QP until the self-play one beat it, issue 46).
    "QP-srp": partial(QP, QP_SRP_WEIGHTS),
    # QP-srp's training on the Four Hundred paper's state alone (the ablation).
    "QP-plain": QPPlain,
    # QP-srp refitted on rounds that it played out itself (one step of policy
    # iteration, issue 46): the candidate measured against it in docs/bots.md.
    "QP2": partial(QP, QP2_WEIGHTS),
    # QP's self-play continued with SRP and earlier networks as opponents, on
    # deals from match situations (lab.training.qp_league; issue 62's candidate).
    "QP-league": partial(QP, QP_LEAGUE_WEIGHTS),
    # QP's weights with inputs for the contract and the trick in play added,
    # trained on against SRP and itself (issue 62's second candidate; the shipped
    # QP until QP-branch).
    "QP-trick": partial(QP, QP_TRICK_WEIGHTS),
    # The issue-46 self-play network (292 inputs), the shipped QP until QP-trick.
    "QP-self": partial(QP, QP_SELF_WEIGHTS),
    # QP-trick's training on the 292 inputs alone (the ablation of its inputs).
    "QP-trick292": partial(QP, QP_TRICK292_WEIGHTS),
    # QP-trick's training continued against a league at a lower rate (issue 62's third candidate).
    "QP-cont": partial(QP, QP_CONT_WEIGHTS),
    # QP-trick trained on with every card of half its decisions played out against
    # SRP (lab.training.qp_league's branched labels): the shipped QP's weights,
    # each card valued once (the shipped QP until the suits' relabellings, issue 62).
    "QP-branch": partial(QP, QP_BRANCH_WEIGHTS),
    # QP-trick with SRP's card at third seat where SRP's takes the lead in the
    # trick for the side and QP's does not (qp_diagnose's costliest decisions).
    "QP-third": QPThird,
}
# The bot offered first in menus and used for "Play now" and stand-ins.
DEFAULT_BOT = "BIS+SRP"


class UnknownBot(ValueError):
    """A bot name that is not in the registry."""


def bot_names() -> list[str]:
    """Every bidder+player combination, sorted."""
    return sorted(f"{b}+{p}" for b in BIDDERS for p in PLAYERS)


def player_title(player: str) -> str:
    """How a menu names a playing module: what it does, then its registry name."""
    titles = {
        "SRP": "Strong rule-based play",
        "WRP": "Weak rule-based play",
        "PIMC": "Sampled deals solved exactly, every trick",
        "QP": "Learned card values",
    }
    if player in titles:
        return f"{titles[player]} ({player})"
    if player.startswith("UCT"):
        x = int(player[3:].rstrip("bp"))
        window = "every trick" if x == 13 else f"the last {x} tricks"
        how = ", bid-informed deals" if player.endswith("b") else ""
        how += ", every card on each deal" if "p" in player else ""
        return f"SRP, then search {window}{how} ({player})"
    return f"{player} play"


def bot_groups() -> list[tuple[str, list[str]]]:
    """Every bot, grouped by playing module for menus: the default bot's group
    first and the default bot first in it, then the registry's order."""
    default_player = DEFAULT_BOT.partition("+")[2]
    players = sorted(PLAYERS, key=lambda p: p != default_player)
    return [
        (
            player_title(p),
            sorted((f"{b}+{p}" for b in BIDDERS), key=lambda name: name != DEFAULT_BOT),
        )
        for p in players
    ]


def make_bot(name: str) -> Bot:
    """Build the bot called ``name`` ('BIDDER+PLAYER')."""
    bidder, sep, player = name.partition("+")
    bidders, players = BIDDERS | ABLATION_BIDDERS, PLAYERS | ABLATION_PLAYERS
    if not sep or bidder not in bidders or player not in players:
        raise UnknownBot(
            f"unknown bot {name!r}: bidders are {', '.join(BIDDERS)}; "
            f"players are {', '.join(PLAYERS)}"
        )
    made_bidder, made_player = bidders[bidder](), players[player]()
    # The registry name is the bot's name (BIS0 is the BIS class without curves).
    made_bidder.name, made_player.name = bidder, player
    return Bot(made_bidder, made_player)
