"""The studies app: human-subject studies beside the lobby (studies/__init__.py)."""

from django.apps import AppConfig


class StudiesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "studies"
    verbose_name = "Studies"

    def ready(self) -> None:
        # The dashboard's study and condition filters name the studies through
        # this hook: the game layer does not import studies.
        from game.driver import sweeper
        from game.research import study_keys
        from studies import dashboard_keys, sweep

        study_keys.register(dashboard_keys.choices)
        # The embedded server's loop sweeps for quiet participants too (beat
        # runs studies.sweep on the production stack).
        sweeper.also_sweep(sweep.sweep)
