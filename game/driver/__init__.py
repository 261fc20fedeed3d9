"""The bot driver and the schedulers: who moves when no human is at the keyboard.

``bot_turns`` computes and submits every bot's and stand-in's move, searched
ones included (UCT's cards, SIM's bids), with one fallback rule and one
count of a move's starts; an external bot (``ext:<name>``) moves itself
through its socket, and ``external`` only schedules its stand-in for the end
of its time. ``tasks`` holds the driver's Celery tasks, named after their module
(and answering to their former names, ``game.bot_turns.*``). ``scheduling``
holds the master's two schedulers:
Celery tasks on the production stack, or ``runner``'s thread pool in the
embedded default. ``sweeper`` finds tables waiting on a lost move and has it
made again.
"""
