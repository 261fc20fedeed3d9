"""Lobby models (players, tables, invitations) arrive with the lobby work."""
