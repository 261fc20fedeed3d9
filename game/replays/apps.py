from django.apps import AppConfig


class ReplaysConfig(AppConfig):
    """The replays and their stored analyses: an app of its own beside ``game``
    (its models, migrations and commands), importing ``game`` and ``bots``."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "game.replays"
    label = "replays"
    verbose_name = "Replays"
