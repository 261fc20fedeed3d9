"""The production stack on one machine, for ``make stack``, the benchmarks and the
multi-process tests: starting and stopping Daphne, Celery, Redis and
PostgreSQL processes (``stackprocs``) and nginx in front of the Daphnes
(``proxy``), and ``run.py``, the script ``make stack`` runs. Operations
tooling: the deployed site does not import it.
"""
