"""The studies app: human-subject studies beside the lobby (studies/__init__.py)."""

from django.apps import AppConfig


class StudiesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "studies"
    verbose_name = "Studies"

    def ready(self) -> None:
        # The dashboard's study and condition filters name the studies through
        # this hook: the game layer does not import studies.
        from game.research import study_keys
        from studies import dashboard_keys

        study_keys.register(dashboard_keys.choices)
