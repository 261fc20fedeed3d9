"""The bots' websocket route, mounted by spadesite/asgi.py apart from the browsers'."""

from botapi.consumer import BotConsumer

BOT_PATH = "/ws/bot/"
bot_socket = BotConsumer.as_asgi()
