"""Bots: bidders and players that see only what their seat sees (view_for)."""
