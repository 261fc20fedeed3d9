"""URL routes for HTTP; websocket routes live in game/routing.py."""

from django.contrib import admin
from django.urls import include, path

admin.site.site_header = "Spades administration"
admin.site.site_title = "Spades admin"

urlpatterns = [
    path("", include("lobby.urls")),
    path("admin/", admin.site.urls),
    path("dashboard/", include("game.urls_dashboard")),
]
