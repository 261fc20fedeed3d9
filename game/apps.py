from django.apps import AppConfig


class GameConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "game"
    verbose_name = "Game"

    def ready(self) -> None:
        # The bot driver registers its Celery tasks and subscribes to
        # game.turns, which schedules bot moves without importing it.
        from django.db.backends.signals import connection_created

        from game import bot_turns  # noqa: F401
        from game.sqlite_wal import on_connection_created

        connection_created.connect(on_connection_created, dispatch_uid="spades-sqlite-wal")
