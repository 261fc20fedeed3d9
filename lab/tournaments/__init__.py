"""Bots against bots, many games at once: seeded, resumable tournaments between two
bots (``tournament``), the round robin of every bidder (``league``), the
self-play that feeds the success curves (``selfplay``), the worker pool and
run logs they share (``pool``, ``runlog``), and storing a tournament's games
as ordinary matches for the dashboard (``storage``, ``manage.py tournament --store``).
"""
