"""Ratings of people and bot kinds from finished matches (docs/ratings.md).

``models.py`` holds a rating per account, guest and bot kind (``Rating``) and
one row per rated entrant per match (``RatingChange``, the history);
``compute.py`` (pure) says who a match rates and computes the update with
openskill's Plackett-Luce model; ``match_end.py`` has the statements the
move that ends a match runs in its own transaction (``game.moves.move``);
``rebuild.py`` replays every stored match (``manage.py rebuild_ratings``)
and moves a guest's rating to the account they sign up for; ``boards.py``
reads the leaderboard and a player's history for the pages.
"""
