"""Project package: settings, ASGI routing and the Celery app."""

# Load the Celery app whenever Django starts, so that @shared_task binds to it.
from .celery import app as celery_app

__all__ = ["celery_app"]
