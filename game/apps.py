from django.apps import AppConfig


class GameConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "game"
    verbose_name = "Game"

    def ready(self) -> None:
        # The table master, built from the settings (game/builder.py); importing
        # the builder registers the bot driver's Celery tasks too.
        from game import builder

        builder.install()
