"""Websocket URL routes, mounted by spadesite/asgi.py (the table consumer comes later)."""

from django.urls import URLPattern

websocket_urlpatterns: list[URLPattern] = []
