"""Game: persistence of matches and rounds, the single write path, websockets.

The rules themselves live in the pure-Python subpackage game.engine, which
imports nothing from Django.
"""
