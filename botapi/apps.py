from django.apps import AppConfig


class BotApiConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "botapi"
    verbose_name = "Bot accounts"

    def ready(self) -> None:
        # The game seats external bots by name through this hook; it never imports us.
        from botapi import accounts, notify, offers
        from game import external_bots

        external_bots.register(accounts.may_play, accounts.playing_names, offers.room, offers.offer,
                               offers.offered)  # fmt: skip
        notify.connect()
