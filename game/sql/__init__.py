"""The SQL toolkit below the move path, the ratings and the research code.

``statements``: a statement as a value (``Query``), generators of them and
their runner on Django's connection, any model instance's INSERT;
``instances``: model instances from those statements' rows, and the one
never-connected backend that speaks the database's dialect;
``connections``: the database's features (decided by ``game.builder``) and
broken connections dropped. It knows no move, no table and no tally: the
layers above it do (docs/architecture.md, "The layers").
"""
