"""Django settings for the Spades site.

Everything that differs between the embedded default (`make run`: SQLite,
in-memory channel layer, bots in-process) and the production stack
(PostgreSQL, Redis, Celery workers) comes from environment variables; see
README.md, "Production settings".
"""

from __future__ import annotations

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from spadesite.config import (
    PoolSize,
    celery_urls,
    channel_layers,
    database,
    default_database_url,
    env_bool,
    env_list,
)

BASE_DIR = Path(__file__).resolve().parent.parent

# --- Secrets and hosts -------------------------------------------------------

# Fine for a local game on your own machine; never for a public server, so
# the site refuses to start with this key once DEBUG is off.
DEV_SECRET_KEY = "django-insecure-spades-local-development-key-do-not-deploy"
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY") or DEV_SECRET_KEY
DEBUG = env_bool("DJANGO_DEBUG", os.environ.get("DJANGO_DEBUG"), default=True)
if not DEBUG and SECRET_KEY == DEV_SECRET_KEY:
    raise ImproperlyConfigured("DJANGO_DEBUG is off: set DJANGO_SECRET_KEY to a secret value.")
# Keys rotated out, still accepted (sessions, and a study's participants found
# and seated by keyed hashes: docs/studies.md, "Rotating the secret key").
SECRET_KEY_FALLBACKS = env_list(os.environ.get("DJANGO_SECRET_KEY_FALLBACKS"), default=[])

ALLOWED_HOSTS = env_list(
    os.environ.get("DJANGO_ALLOWED_HOSTS"),
    default=["localhost", "127.0.0.1", "[::1]", "testserver"],
)

# --- Transport security ------------------------------------------------------
# Behind TLS (DJANGO_TLS on, with DEBUG off: the production settings), HTTPS
# is required: HTTP redirects to it, browsers are told to keep to it (HSTS,
# a year, subdomains included, preload), and cookies travel only over it.
# A reverse proxy that ends TLS must set X-Forwarded-Proto. The session and
# CSRF cookies are never readable by scripts (the pages carry the CSRF
# token themselves). `manage.py check --deploy` is clean with these.
TLS = env_bool("DJANGO_TLS", os.environ.get("DJANGO_TLS"), default=False)
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = True
if TLS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = True
    SECURE_HSTS_SECONDS = int(os.environ.get("DJANGO_HSTS_SECONDS", str(365 * 24 * 3600)))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    # A load balancer and Prometheus call each Daphne port directly, in plain HTTP.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^metrics$"]

# --- Applications ------------------------------------------------------------

INSTALLED_APPS = [
    "daphne",  # first: its runserver replaces Django's with an ASGI one
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "lobby",
    "studies",  # human-subject studies: consent, participants, assignment
    "botapi",  # bring your own bot: bot accounts, tokens, the bot protocol
    "game",
    "game.replays",  # replays of finished rounds and their double-dummy analysis
    "bots",
    "lab",  # the lab: tournaments, training, benchmarks (their management commands)
]

MIDDLEWARE = [
    # First, so that it sees the error pages the others make (/metrics counts them).
    "spadesite.metrics.ErrorCounter",
    "django.middleware.security.SecurityMiddleware",
    "spadesite.security.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, so that its process_exception is asked first: a database error a view
    # raises is a 503 with a retry (the pool exhausted, a restart), never a 500.
    "spadesite.busy.BusyMiddleware",
]

ROOT_URLCONF = "spadesite.urls"
WSGI_APPLICATION = "spadesite.wsgi.application"
ASGI_APPLICATION = "spadesite.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Storage -----------------------------------------------------------------

DATABASES = {
    "default": database(os.environ.get("DATABASE_URL") or default_database_url(BASE_DIR)),
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Channels and Celery: the embedded default / production switch -----------

REDIS_URL: str | None = os.environ.get("REDIS_URL") or None
CHANNEL_LAYERS = channel_layers(REDIS_URL)

# Without Redis there is no Celery worker: bots act in-process (game/driver/runner.py),
# behind the same task interface.
SPADES_BOTS_IN_PROCESS = REDIS_URL is None

# Where the websockets' database calls run (game/moves/db.py): 0 = on the event loop
# (SQLite: one writer at a time, and a move is less work than a thread hop);
# PostgreSQL: a pool of threads, so moves of different tables overlap their
# round trips to the server.
SPADES_DB_THREADS = int(
    os.environ.get("SPADES_DB_THREADS")
    or (0 if DATABASES["default"]["ENGINE"].endswith("sqlite3") else 8)
)
# PostgreSQL's connections of this process come from one pool (psycopg's, through
# Django: spadesite/config.py PoolSize), at most SPADES_DB_POOL_SIZE of them: the
# websockets' database threads keep one each, requests and workers borrow one
# while they run. A request that waits SPADES_DB_POOL_TIMEOUT seconds for one gets
# the 503 page (spadesite/busy.py). SPADES_DB_POOL=off: a connection per thread.
SPADES_DB_POOL = env_bool("SPADES_DB_POOL", os.environ.get("SPADES_DB_POOL"), default=True)
SPADES_DB_POOL_SIZE = int(os.environ.get("SPADES_DB_POOL_SIZE") or SPADES_DB_THREADS + 12)
SPADES_DB_POOL_TIMEOUT = float(os.environ.get("SPADES_DB_POOL_TIMEOUT") or 5)
if DATABASES["default"]["ENGINE"].endswith("postgresql") and SPADES_DB_POOL:
    if SPADES_DB_POOL_SIZE <= SPADES_DB_THREADS:
        raise ImproperlyConfigured(
            "SPADES_DB_POOL_SIZE must be larger than SPADES_DB_THREADS (the websockets' "
            "database threads keep one connection each)"
        )
    DATABASES["default"] = database(
        os.environ.get("DATABASE_URL") or default_database_url(BASE_DIR),
        PoolSize(max_size=SPADES_DB_POOL_SIZE, timeout=SPADES_DB_POOL_TIMEOUT),
    )
if SPADES_DB_THREADS == 0:
    # The ORM is then called on the event loop on purpose, so Django's guard
    # against doing that by mistake must stand aside (in this process only).
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

# With PostgreSQL the consumers' moves run on the event loop over psycopg's
# asyncio connections (game/moves/db.py, game/moves/move.py), this many per server process.
SPADES_ASYNC_MOVES = os.environ.get("SPADES_ASYNC_MOVES", "1") != "0"
SPADES_ASYNC_DB_CONNECTIONS = int(os.environ.get("SPADES_ASYNC_DB_CONNECTIONS", "4"))

SPADES_BOT_WORKERS = int(os.environ.get("SPADES_BOT_WORKERS", "4"))
# Each finished round analysed double-dummy after it is stored (game/replays/):
# a Celery task on the "replays" queue, or a child process of the embedded server.
SPADES_REPLAY_ANALYSIS = env_bool(
    "SPADES_REPLAY_ANALYSIS", os.environ.get("SPADES_REPLAY_ANALYSIS"), default=True
)
# The exact solver's table in a process that analyses rounds: 2**bits entries,
# about 64 MB a million (22: 268 MB; 23: 537 MB, faster on the longest nil
# rounds; docs/replays.md). The bots keep 2**20.
SPADES_ANALYSIS_TABLE_BITS = int(os.environ.get("SPADES_ANALYSIS_TABLE_BITS", "22"))
if not 16 <= SPADES_ANALYSIS_TABLE_BITS <= 24:
    raise ImproperlyConfigured("SPADES_ANALYSIS_TABLE_BITS must be from 16 to 24")
# Pause before a bot acts, so that play at the table feels human (seconds).
SPADES_BOT_DELAY = float(os.environ.get("SPADES_BOT_DELAY", "0.6"))
# Rate limits per player and per address (game/sockets/limits.py, where the defaults
# are listed): SPADES_LIMITS and SPADES_MAX_SOCKETS override them; off only
# for a load test whose clients all come from one address.
SPADES_RATE_LIMITS = env_bool(
    "SPADES_RATE_LIMITS", os.environ.get("SPADES_RATE_LIMITS"), default=True
)
if os.environ.get("SPADES_LIMITS"):
    from game.sockets.limits import parse_limits

    SPADES_LIMITS = parse_limits(os.environ["SPADES_LIMITS"])
if os.environ.get("SPADES_MAX_SOCKETS"):
    from game.sockets.limits import parse_max_sockets

    SPADES_MAX_SOCKETS = parse_max_sockets(os.environ["SPADES_MAX_SOCKETS"])
# The bot that moves for a human whose turn timer ran out.
# An open or playing table that no player has visited for this long (no seat
# change, no socket) is closed and leaves the lobby (game.abandoned).
SPADES_ABANDON_MINUTES = float(os.environ.get("SPADES_ABANDON_MINUTES", "60"))
SPADES_STAND_IN_BOT = os.environ.get("SPADES_STAND_IN_BOT", "BIS+SRP")
# The bot levels "Play now" and the new-table form offer (docs/ratings.md): a name
# and the bot kind that plays it, weakest first; each shown with its rating. The
# strongest is the combination that beat the league's best, SIM75+SRP, by most
# over 10,000 duplicate games and the runner-up head to head: the SIM bidder with
# QP's card play (docs/bots.md, issue 62).
SPADES_BOT_LEVELS = [
    ("Beginner", "RB+WRP"),
    ("Casual", "RB+SRP"),
    ("Club", "BIS+SRP"),
    ("Expert", "NNB+SRP"),
    ("Strongest", "SIM75+QP"),
]
# The rating bands of the dashboard's filter (docs/ratings.md, "Rating bands"):
# a name and the lowest conservative rating (mu - 3 sigma, the leaderboard's)
# of each, lowest first; band 1 is the first, and so on; band 0 is a partnership
# with no rated human. A partnership's band is its rated human seats' (their
# mean, for two) as the match started, stored on its table, round rows and
# result: new edges apply to matches started afterwards (the migration's
# backfill and bench_dashboard read them too).
SPADES_RATING_BANDS = [
    ("Newcomer", float("-inf")),
    ("Improving", 5.0),
    ("Established", 12.0),
    ("Strong", 20.0),
]
# Rated matches an account needs before the leaderboard lists it.
SPADES_LEADERBOARD_MIN_MATCHES = int(os.environ.get("SPADES_LEADERBOARD_MIN_MATCHES", "5"))

CELERY_BROKER_URL, CELERY_RESULT_BACKEND = celery_urls(REDIS_URL)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# A worker killed while it holds a bot move (kill -9, the OOM killer, a lost
# machine) must not lose the move (docs/architecture.md, "Faults"):
# - the move tasks are acknowledged after the move (acks_late, game/driver/tasks.py),
#   so a message a dead worker held stays in Redis's set of unacked messages;
# - every worker, each half second, renews the lease of the messages it holds
#   (spadesite/celery.py) and gives a message whose lease is older than the
#   visibility timeout to the queue again (kombu's Redis transport; its
#   default, an hour from delivery, would leave the table to the sweeper).
#   A live worker renews its own however long it holds them (a bot's pause, a
#   turn timer), so only a dead or stalled worker's moves go back: the move
#   of a killed worker is on its way again within 2 s;
# - a pool child killed in the middle of a move sends it back at once;
# - the lock of that look is kept 5 s, not kombu's 300, should a worker die
#   holding it;
# - each worker child reserves one move at a time, so that a busy worker's
#   backlog waits in Redis for whichever worker is free first.
# A move given to two workers is made once: the later one is refused as stale.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": 1.5,
    "unacked_restore_interval": 0.5,
    "unacked_restore_throttle": 1,
    "unacked_mutex_expire": 5,
}
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1

# --- Health and metrics (docs/deploy.md, "Health and metrics") -----------------
# /metrics answers these addresses or networks, or a request with
# "Authorization: Bearer <SPADES_METRICS_TOKEN>"; anyone else gets 404.
SPADES_METRICS_ALLOW = env_list(
    os.environ.get("SPADES_METRICS_ALLOW"), default=["127.0.0.1", "::1"]
)
SPADES_METRICS_TOKEN = os.environ.get("SPADES_METRICS_TOKEN", "")
# The Celery queues /healthz expects a live worker for (with REDIS_URL), and
# beat's own heartbeat (spadesite/heartbeat.py).
SPADES_HEALTH_QUEUES = env_list(
    os.environ.get("SPADES_HEALTH_QUEUES"), default=["bots", "search", "replays", "beat"]
)

# --- Passwords, language, static files ---------------------------------------

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"  # target of collectstatic in production
