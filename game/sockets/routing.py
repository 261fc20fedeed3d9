"""Websocket URL routes, mounted by spadesite/asgi.py."""

from django.urls import URLPattern, path

from game.sockets.consumers import TableConsumer

websocket_urlpatterns: list[URLPattern] = [
    path("ws/table/<str:table_id>/", TableConsumer.as_asgi()),
]
