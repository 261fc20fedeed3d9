from django.apps import AppConfig


class GameConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "game"
    verbose_name = "Game"

    def ready(self) -> None:
        # The bot driver registers its Celery tasks and subscribes to
        # game.turns, which schedules bot moves without importing it.
        from game import bot_turns  # noqa: F401
