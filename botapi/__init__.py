"""Bring your own bot: bot accounts, their tokens and the bot protocol (``spades-bot/1``).

A person registers a bot under their account (``models.BotAccount``) and gets
a token once (``tokens``); the bot's program connects to ``ws/bot/`` with it
(``consumer``, docs/bot-protocol.md) and plays the seats a host gave
``ext:<name>`` (``game.external_bots``). The owner's pages: ``views``.
"""
