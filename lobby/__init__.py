"""Lobby: players (accounts and guests), open tables, invitations, seating."""
