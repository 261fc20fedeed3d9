"""Replays of finished rounds and their double-dummy analysis (issue 44).

``analysis.py`` (pure, no Django) solves every position of a stored round
with the exact solver (all four hands known): the points and tricks each card
gives away against best play, the value of its legal alternatives, and the
round's value card by card; ``bids.py`` says what BIS would have bid in each
seat. ``models`` and ``tasks`` store the result off the move path, and the
replay page (``views.py``) shows it to who may see the round.
"""
