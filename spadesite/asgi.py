"""ASGI entry point (Daphne): HTTP goes to Django, websockets to Channels."""

import gc
import os
import sys
from typing import Any

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spadesite.settings")

# Set Django up before importing anything that may import models (consumers).
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402

from botapi.routing import BOT_PATH, bot_socket  # noqa: E402
from game.sockets.auth import auth_stack  # noqa: E402
from game.sockets.routing import websocket_urlpatterns  # noqa: E402
from game.sockets.socket_writes import install as write_frames_at_once  # noqa: E402
from lobby.access import TableAccess  # noqa: E402
from spadesite.access_log import install as log_requests_without_query  # noqa: E402

# Plain Daphne serves no static files; in DEBUG (the embedded default) let
# Django serve them, as runserver would. Production runs collectstatic and
# serves STATIC_ROOT from a web server in front.
http_app = ASGIStaticFilesHandler(django_asgi_app) if settings.DEBUG else django_asgi_app


def by_path(exact: dict[str, Any], rest: Any) -> Any:
    """The websocket app of a path: the bots' socket takes no cookie and no
    Origin (a program's token in its header), every other goes through the
    browsers' checks."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> Any:
        return await exact.get(scope["path"], rest)(scope, receive, send)

    return app


# Reject cross-site websocket handshakes (Origin not in ALLOWED_HOSTS), attach
# the session user, then refuse sockets on private tables this browser may
# not watch (the table page's rule); a bot's socket is apart (botapi).
application = ProtocolTypeRouter(
    {
        "http": http_app,
        "websocket": by_path(
            {BOT_PATH: bot_socket},
            AllowedHostsOriginValidator(auth_stack(TableAccess(URLRouter(websocket_urlpatterns)))),
        ),
    }
)

# Latency: the objects alive now (Django, the modules) never become garbage, so
# the collector stops walking them, and young objects are collected less often.
# A move makes a few thousand short-lived objects; with the defaults the full
# collections came every few seconds and paused the loop for ~100 ms
# (bench_server's p99).
gc.freeze()
gc.set_threshold(20_000, 20, 100)
# A thread of this process that runs Python (the tally flush, the database
# threads) keeps the GIL up to the switch interval each time the loop wants it
# back: 5 ms by default, paid by every callback the loop runs meanwhile
# (bench_server's round ends: 5 ms callbacks one after another while a flush
# ran). Half a millisecond bounds that wait; switching costs only while two
# threads want the GIL.
sys.setswitchinterval(0.0005)
# A websocket frame leaves at once instead of on the reactor's next pass
# (game/sockets/socket_writes.py).
write_frames_at_once()
# The access log names paths, never their query strings: a study's recruitment
# link carries the participant's ID there (spadesite/access_log.py).
log_requests_without_query()
