"""The studies' Celery task: the sweep, run by beat (``spadesite/celery.py``)."""

from __future__ import annotations

from celery import shared_task

from studies import sweep

SWEEP_TASK = "studies.sweep"


@shared_task(name=SWEEP_TASK, ignore_result=True)
def sweep_studies() -> int:
    """Move on the participants whose page went quiet; how many moved."""
    return sweep.sweep().moved
