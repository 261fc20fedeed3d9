"""The deployment's files, rendered from one place: ``manage.py render_deploy``.

systemd units for N Daphne processes (a template unit, one instance a port),
the Celery workers (queues ``bots``, ``search``, ``replays`` at the lowest
priority) and beat, timers for the housekeeping commands and the backup, the
nginx site (TLS from the operator's ACME client, websockets, static files,
the proxy headers Daphne trusts, no query string in any log) and the
environment file's template. The nginx upstream and locations are
``lab/stack/proxy.py``'s, which ``make stack`` runs. docs/deploy.md installs
them; ``deploy/`` in the repository holds them rendered for ``example.org``
(a test keeps it equal to what this renders).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lab.stack import proxy


@dataclass(frozen=True)
class Deployment:
    domain: str
    daphnes: int = 2
    first_port: int = 8001
    project: Path = Path("/srv/spades/app")  # the checkout
    venv: Path = Path("/srv/spades/venv")
    user: str = "spades"
    env_file: Path = Path("/etc/spades/spades.env")
    static_root: Path = Path("/srv/spades/app/staticfiles")  # STATIC_ROOT: the checkout's
    acme_root: Path = Path("/var/www/acme")  # the ACME client's webroot (http-01)
    log_dir: Path = Path("/var/log/nginx")
    http_port: int = 80  # other ports: the tests, which run the site unprivileged
    https_port: int = 443
    certificate: Path | None = None  # default: certbot's live/<domain>/fullchain.pem
    certificate_key: Path | None = None
    bot_workers: int = 2  # -c of each worker (pool children)
    search_workers: int = 1
    replay_workers: int = 1

    @property
    def ports(self) -> list[int]:
        return [self.first_port + n for n in range(self.daphnes)]

    @property
    def cert(self) -> Path:
        return self.certificate or Path(f"/etc/letsencrypt/live/{self.domain}/fullchain.pem")

    @property
    def key(self) -> Path:
        return self.certificate_key or Path(f"/etc/letsencrypt/live/{self.domain}/privkey.pem")


# ----- nginx -----------------------------------------------------------------------

# What nginx's access log may hold: the path ($uri), never the query string
# (study links carry recruitment IDs there: spadesite/access_log.py).
LOG_FORMAT = (
    "log_format spades_noquery '$remote_addr [$time_local] "
    '"$request_method $uri $server_protocol" $status $body_bytes_sent $request_time\';'
)


def nginx_acme_site(d: Deployment) -> str:
    """Port 80: the ACME client's challenges, and a redirect to HTTPS. Needs no
    certificate, so it is enabled first and the first certificate obtained through it."""
    port = "" if d.https_port == 443 else f":{d.https_port}"
    return f"""# Spades on {d.domain}, port 80 (rendered by manage.py render_deploy).
{LOG_FORMAT}

server {{
  listen {d.http_port};
  listen [::]:{d.http_port};
  server_name {d.domain};
  access_log {d.log_dir}/spades-access.log spades_noquery;
  error_log {d.log_dir}/spades-error.log crit;  # as on 443: error lines quote the query
  location /.well-known/acme-challenge/ {{ root {d.acme_root}; }}
  location / {{ return 301 https://$host{port}$request_uri; }}
}}
"""


def nginx_site(d: Deployment) -> str:
    """Port 443: the site. A TLS handshake for another name is refused, so no
    request reaches Daphne with a Host it does not serve."""
    return f"""# Spades on {d.domain}, HTTPS (rendered by manage.py render_deploy).
# Needs spades-acme.conf (its log format) and the certificate of {d.domain}.
{proxy.upstream(d.ports, "spades_daphne")}
server {{
  listen {d.https_port} ssl default_server;
  listen [::]:{d.https_port} ssl default_server;
  ssl_reject_handshake on;
}}

server {{
  listen {d.https_port} ssl;
  listen [::]:{d.https_port} ssl;
  server_name {d.domain};
  ssl_certificate {d.cert};
  ssl_certificate_key {d.key};
  ssl_protocols TLSv1.2 TLSv1.3;
  ssl_session_cache shared:spades_tls:10m;
  ssl_session_timeout 1d;
  client_max_body_size 2m;
  access_log {d.log_dir}/spades-access.log spades_noquery;
  # nginx's error lines quote the request with its query (a recruitment ID):
  # only crit and worse here; /healthz and /metrics tell what the rest would.
  error_log {d.log_dir}/spades-error.log crit;
{proxy.indent(proxy.app_locations(d.static_root, "spades_daphne"), 2)}}}
"""


# ----- systemd ---------------------------------------------------------------------


def _service(d: Deployment, description: str, exec_start: str, extra: str = "") -> str:
    return f"""[Unit]
Description={description}
After=network-online.target postgresql.service redis-server.service
Wants=network-online.target
PartOf=spades.target

[Service]
Type=simple
User={d.user}
Group={d.user}
WorkingDirectory={d.project}
EnvironmentFile={d.env_file}
Environment=PYTHONUNBUFFERED=1
ExecStart={exec_start}
Restart=always
RestartSec=1
NoNewPrivileges=yes
PrivateTmp=yes
ProtectSystem=full
{extra}
[Install]
WantedBy=spades.target
"""


def _worker(d: Deployment, queue: str, concurrency: int) -> str:
    # %%h: Celery's own host name placeholder (systemd would expand a lone %h).
    return (
        f"{d.venv}/bin/celery -A spadesite worker -Q {queue} --pool prefork "
        f"-c {concurrency} -l info --without-gossip --without-mingle --without-heartbeat "
        f"-n {queue}@%%h"
    )


def _oneshot(d: Deployment, description: str, exec_start: str, extra: str = "") -> str:
    return f"""[Unit]
Description={description}
After=network-online.target postgresql.service

[Service]
Type=oneshot
User={d.user}
Group={d.user}
WorkingDirectory={d.project}
EnvironmentFile={d.env_file}
ExecStart={exec_start}
Nice=10
{extra}"""


def _timer(description: str, calendar: str) -> str:
    return f"""[Unit]
Description={description}

[Timer]
OnCalendar={calendar}
RandomizedDelaySec=5min
Persistent=true

[Install]
WantedBy=timers.target
"""


# (unit stem, what, manage.py arguments or a command, when)
HOUSEKEEPING = [
    ("spades-analyse-rounds", "double-dummy analyses a worker missed",
     "analyse_rounds", "*-*-* 04:10"),
    ("spades-check-tallies", "the dashboard's tallies against the stored rounds",
     "rebuild_tallies --check", "Sun *-*-* 05:10"),
    ("spades-close-abandoned", "close the tables nobody visits",
     "close_abandoned_tables", "*:0/15"),
]  # fmt: skip


def units(d: Deployment) -> dict[str, str]:
    manage = f"{d.venv}/bin/python {d.project}/manage.py"
    out = {
        "spades-daphne@.service": _service(
            d,
            "Spades: Daphne on 127.0.0.1:%i",
            f"{d.venv}/bin/daphne -b 127.0.0.1 -p %i --proxy-headers spadesite.asgi:application",
            # Sockets are told to reconnect; they resync on another process.
            "KillSignal=SIGTERM\nTimeoutStopSec=15\nLimitNOFILE=65536\n",
        ),
        "spades-worker-bots.service": _service(
            d, "Spades: Celery worker, bot moves", _worker(d, "bots", d.bot_workers),
            # A move a stopped worker holds goes back to the queue (acks_late).
            "KillMode=mixed\nTimeoutStopSec=30\n",
        ),
        "spades-worker-search.service": _service(
            d, "Spades: Celery worker, bot searches", _worker(d, "search", d.search_workers),
            "KillMode=mixed\nTimeoutStopSec=30\n",
        ),
        "spades-worker-replays.service": _service(
            d, "Spades: Celery worker, rounds' analyses (lowest priority)",
            _worker(d, "replays", d.replay_workers),
            "KillMode=mixed\nTimeoutStopSec=30\nNice=19\nIOSchedulingClass=idle\n",
        ),
        "spades-beat.service": _service(
            d, "Spades: Celery beat (the sweep for lost moves)",
            f"{d.venv}/bin/celery -A spadesite beat -l info "
            f"--schedule /var/lib/spades/celerybeat-schedule",
            "StateDirectory=spades\n",
        ),
        "spades-backup.service": _oneshot(
            d, "Spades: back up the database (pg_dump -Fc)",
            f"/bin/sh {d.project}/deploy/spades-backup.sh",
        ),
        "spades-backup.timer": _timer("Spades: daily database backup", "*-*-* 03:30"),
    }  # fmt: skip
    for stem, what, command, calendar in HOUSEKEEPING:
        out[f"{stem}.service"] = _oneshot(d, f"Spades: {what}", f"{manage} {command}")
        out[f"{stem}.timer"] = _timer(f"Spades: {what}", calendar)
    wants = " ".join(
        [f"spades-daphne@{port}.service" for port in d.ports]
        + [f"spades-worker-{q}.service" for q in ("bots", "search", "replays")]
        + ["spades-beat.service"]
    )
    out["spades.target"] = f"""[Unit]
Description=Spades: {d.daphnes} Daphne processes, the Celery workers and beat
Wants={wants}

[Install]
WantedBy=multi-user.target
"""
    return out


def environment(d: Deployment) -> str:
    return f"""# {d.env_file}: the settings of every Spades unit (README, "Production
# settings"). Readable by root and {d.user} only: chmod 640, chown root:{d.user}.
# A secret: python3 -c 'import secrets; print(secrets.token_urlsafe(50))'
DJANGO_SECRET_KEY=change-me
DJANGO_DEBUG=0
DJANGO_TLS=1
# 127.0.0.1 and localhost: the health checks and Prometheus call each Daphne port.
DJANGO_ALLOWED_HOSTS={d.domain},127.0.0.1,localhost
DATABASE_URL=postgres://{d.user}:change-me@127.0.0.1:5432/spades
REDIS_URL=redis://127.0.0.1:6379/0
# /metrics: from these addresses or networks, or with "Authorization: Bearer <token>".
SPADES_METRICS_ALLOW=127.0.0.1,::1
SPADES_METRICS_TOKEN=
# The backup (deploy/spades-backup.sh): where the dumps go, how many days they stay.
BACKUP_DIR=/var/backups/spades
BACKUP_KEEP_DAYS=14
"""


def render(d: Deployment) -> dict[str, str]:
    """Relative path -> text of every file of the deployment."""
    files = {f"systemd/{name}": text for name, text in units(d).items()}
    files["nginx/spades-acme.conf"] = nginx_acme_site(d)
    files["nginx/spades.conf"] = nginx_site(d)
    files["spades.env.example"] = environment(d)
    return files


def write(d: Deployment, out: Path) -> list[Path]:
    written = []
    for relative, text in sorted(render(d).items()):
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(path)
    return written
