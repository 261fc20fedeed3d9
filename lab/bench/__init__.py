"""Benchmarks: the engine's rounds per second against OpenSpiel (``engine_bench``,
``openspiel_peer``), the double-dummy solver against DDS (``solver_bench``,
``dds_peer``), and the server's websocket load benchmark: its tables, clients
and figures (``bench_tables``, ``loadtest``, ``bench_figures``), the bare
Channels baseline (``bench_echo``), the services' cost per move (``wire``) and
the disk's commit times (``commit_probe``).
"""
