"""The research data: every round stored, and what the dashboard and exports read.

``round_columns`` (pure) and ``round_rows`` store a finished round's record
and query columns; ``tally_keys``, ``tallies`` and ``tally_flush`` keep the
dashboard's rollups (``RoundTally``, in ``tally_model``), added after each
round's move; ``study_keys`` names the studies their keys hold; the
``analytics_*`` modules and ``analytics`` compute the dashboard's figures
from them, served by ``views_dashboard`` (``urls_dashboard``);
``league_table`` reads the bidding league's results (``league.json``, beside it); ``exports``,
``imports`` and ``storage`` move rounds and whole matches in and out;
``intervals`` holds the confidence intervals every figure uses.
"""
