"""URL routes for HTTP; websocket routes live in game/sockets/routing.py."""

from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from spadesite import health, metrics

admin.site.site_header = "Spades administration"
admin.site.site_title = "Spades admin"
# A database out of reach for now (a crowd, a restart) is a 503 with a retry.
handler500 = "spadesite.busy.server_error"

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("metrics", metrics.metrics, name="metrics"),
    path("", include("lobby.urls")),
    path("", include("game.replays.urls")),
    path("admin/", admin.site.urls),
    path("study/", include("studies.urls")),
    path("bots/", include("botapi.urls")),
    path("dashboard/studies/", include("studies.urls_monitor")),
    path("dashboard/", include("game.research.urls_dashboard")),
    # Browsers ask for /favicon.ico on pages without an icon link (the admin's).
    path("favicon.ico", RedirectView.as_view(url=static("favicon.svg"), permanent=True)),
]
