"""The studies app: human-subject studies beside the lobby (studies/__init__.py)."""

from django.apps import AppConfig


class StudiesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "studies"
    verbose_name = "Studies"
