"""The reverse proxy in front of several Daphne processes: nginx, configured here.

``make stack`` and the multi-process tests run N Daphne processes on ports of
their own and one nginx on the public port. nginx balances HTTP and
websockets over them (least connections; no sticky sessions: any seat of any
table may be on any process, since every move reaches every process through
the Redis channel layer), forwards the websocket upgrade, tells Daphne the
client's address (``X-Forwarded-For``, read by ``daphne --proxy-headers``),
serves ``/static/`` from ``STATIC_ROOT`` (``collectstatic``), and sends a
request whose process is down to another one. nginx comes from Debian's
package (``make proxy`` installs it). The upstream and the locations are the
deployment's too (``lab/stack/deploy.py``, ``manage.py render_deploy``):
what ``make stack`` runs is what a server runs.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

NGINX = "/usr/sbin/nginx"

MIME_TYPES = {
    "text/css": "css",
    "application/javascript": "js",
    "application/json": "json",
    "image/svg+xml": "svg",
    "image/png": "png",
    "image/x-icon": "ico",
    "audio/wav": "wav",
    "text/plain": "txt",
    "font/woff2": "woff2",
}


def nginx_binary() -> str | None:
    found = shutil.which("nginx") or (NGINX if Path(NGINX).exists() else None)
    return found


def upstream(daphne_ports: list[int], name: str = "daphne") -> str:
    """The Daphne processes as one nginx upstream (least connections, no
    stickiness), and the map that forwards a websocket upgrade (its variable
    named after the upstream: a server's other sites may map their own)."""
    servers = "\n".join(
        f"  server 127.0.0.1:{port} max_fails=1 fail_timeout=5s;" for port in daphne_ports
    )
    return f"""upstream {name} {{
  least_conn;
{servers}
}}
map $http_upgrade ${name}_upgrade {{ default upgrade; '' close; }}
"""


def app_locations(static_root: Path, name: str = "daphne") -> str:
    """The locations of the site's server block, shared by ``make stack`` and the
    deployment's site (``lab/stack/deploy.py``): static files from
    ``STATIC_ROOT``, everything else (websockets too) to Daphne with the
    headers ``daphne --proxy-headers`` and Django trust. The client's address
    replaces any X-Forwarded-For it sent (never appended: a client could name
    any address), which the rate limits and /metrics read. /metrics is
    scraped on each Daphne port, never through here: each process has its own."""
    return f"""location /static/ {{ alias {static_root}/; }}
location = /metrics {{ return 404; }}
location / {{
  proxy_pass http://{name};
  proxy_http_version 1.1;
  proxy_set_header Upgrade $http_upgrade;
  proxy_set_header Connection ${name}_upgrade;
  proxy_set_header Host $http_host;
  proxy_set_header X-Forwarded-For $remote_addr;
  proxy_set_header X-Forwarded-Proto $scheme;
  proxy_read_timeout 1h;
  proxy_send_timeout 1h;
  proxy_next_upstream error timeout;
}}
"""


def indent(text: str, spaces: int) -> str:
    pad = " " * spaces
    return "".join(pad + line if line.strip() else line for line in text.splitlines(True))


def nginx_config(
    listen_port: int, daphne_ports: list[int], static_root: Path, workdir: Path
) -> Path:
    """Write an nginx.conf for ``daphne_ports`` behind ``listen_port``; its path."""
    workdir.mkdir(parents=True, exist_ok=True)
    temp = {name: workdir / name for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi")}
    for path in temp.values():
        path.mkdir(exist_ok=True)
    types = "\n".join(f"    {mime} {ext};" for mime, ext in MIME_TYPES.items())
    # As root, nginx's workers would run as nobody, who may not read the project.
    user = "user root;\n" if os.geteuid() == 0 else ""
    text = f"""{user}worker_processes 1;
daemon off;
pid {workdir}/nginx.pid;
error_log {workdir}/error.log warn;
events {{ worker_connections 8192; }}
http {{
  access_log off;
  client_body_temp_path {temp["body"]};
  proxy_temp_path {temp["proxy"]};
  fastcgi_temp_path {temp["fastcgi"]};
  uwsgi_temp_path {temp["uwsgi"]};
  scgi_temp_path {temp["scgi"]};
  types {{
{types}
  }}
  default_type application/octet-stream;
{indent(upstream(daphne_ports), 2)}  server {{
    listen 127.0.0.1:{listen_port};
{indent(app_locations(static_root), 4)}  }}
}}
"""
    path = workdir / "nginx.conf"
    path.write_text(text)
    return path


def nginx_command(config: Path) -> list[str]:
    binary = nginx_binary()
    if binary is None:
        raise FileNotFoundError("nginx is not installed: `make proxy` installs Debian's package")
    return [
        binary,
        "-c",
        str(config),
        "-p",
        str(config.parent),
        "-e",
        str(config.parent / "error.log"),
    ]
