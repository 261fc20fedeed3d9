"""The deployment's files (``manage.py render_deploy``, ``lab/stack/deploy.py``):
nginx accepts the rendered site with a certificate, systemd accepts the units,
``deploy/`` is what the command renders, and ``make stack`` runs the same locations."""

from __future__ import annotations

import getpass
import io
import os
import shutil
import socket
import ssl
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from lab.stack import deploy, proxy, stackprocs
from tests.support import services

ROOT = Path(__file__).resolve().parents[2]


def rendered(tmp_path: Path, **overrides: object) -> Path:
    out = tmp_path / "out"
    args = ["render_deploy", "--domain", "spades.test", "--daphnes", "3", "--out", str(out)]
    for name, value in overrides.items():
        args += [f"--{name.replace('_', '-')}", str(value)]
    stdout = io.StringIO()
    call_command(*args, stdout=stdout)
    assert str(out / "nginx" / "spades.conf") in stdout.getvalue()
    return out


def test_render_deploy_writes_every_file_and_deploy_holds_them(tmp_path: Path) -> None:
    out = rendered(tmp_path)
    units = {p.name for p in (out / "systemd").iterdir()}
    assert {"spades-daphne@.service", "spades-worker-bots.service", "spades-worker-search.service",
            "spades-worker-replays.service", "spades-beat.service", "spades.target",
            "spades-backup.timer", "spades-analyse-rounds.timer"} <= units  # fmt: skip
    target = (out / "systemd" / "spades.target").read_text()
    assert all(f"spades-daphne@{port}.service" in target for port in (8001, 8002, 8003))
    assert "Nice=19" in (out / "systemd" / "spades-worker-replays.service").read_text()
    assert "--proxy-headers" in (out / "systemd" / "spades-daphne@.service").read_text()
    # deploy/ in the repository is the command's output for example.org
    committed = deploy.render(deploy.Deployment(domain="example.org"))
    for relative, text in committed.items():
        assert (ROOT / "deploy" / relative).read_text() == text, f"deploy/{relative} is stale"


def test_no_log_gets_a_query_string(tmp_path: Path) -> None:
    site = deploy.nginx_site(deploy.Deployment(domain="spades.test"))
    acme = deploy.nginx_acme_site(deploy.Deployment(domain="spades.test"))
    assert "$request " not in acme + site and "$args" not in acme + site
    assert "$request_uri" not in deploy.LOG_FORMAT and "$uri" in deploy.LOG_FORMAT
    assert site.count("access_log") == 1 and "spades_noquery" in site
    for text in (site, acme):
        assert "error_log" in text and text.split("error_log")[1].split(";")[0].endswith("crit")


def test_make_stack_and_the_deployment_share_the_locations(tmp_path: Path) -> None:
    static = tmp_path / "static"
    stack = proxy.nginx_config(8000, [8101, 8102], static, tmp_path / "nginx").read_text()
    assert proxy.indent(proxy.app_locations(static), 4) in stack
    d = deploy.Deployment(domain="spades.test", static_root=static)
    assert proxy.indent(proxy.app_locations(static, "spades_daphne"), 2) in deploy.nginx_site(d)


def self_signed(directory: Path, domain: str) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed: no certificate to test the TLS site with")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", f"/CN={domain}", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def test_nginx_accepts_the_rendered_sites(tmp_path: Path) -> None:
    nginx = services.nginx_binary()
    cert, key = self_signed(tmp_path, "spades.test")
    logs = tmp_path / "logs"
    logs.mkdir()
    out = rendered(tmp_path, cert=cert, key=key, log_dir=logs, static_root=tmp_path / "static")
    mime = Path("/etc/nginx/mime.types")
    config = tmp_path / "nginx.conf"
    # Debian's nginx.conf includes sites-enabled/* inside http: the same here.
    config.write_text(f"""pid {tmp_path}/nginx.pid;
error_log {logs}/error.log;
events {{ }}
http {{
  {f"include {mime};" if mime.exists() else ""}
  client_body_temp_path {tmp_path}/body;
  proxy_temp_path {tmp_path}/proxy;
  include {out}/nginx/spades-acme.conf;
  include {out}/nginx/spades.conf;
}}
""")
    done = subprocess.run(
        [nginx, "-t", "-c", str(config), "-p", str(tmp_path), "-e", str(logs / "error.log")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "test is successful" in done.stderr


def test_systemd_accepts_the_rendered_units(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed (Debian's systemd package has it)")
    env_file = tmp_path / "spades.env"
    env_file.write_text("DJANGO_DEBUG=1\n")
    # Paths that exist here: verify checks that every ExecStart is executable.
    out = rendered(tmp_path, project=ROOT, venv=Path(sys.prefix), user=getpass.getuser(),
                   env_file=env_file)  # fmt: skip
    units = out / "systemd"
    names = sorted(p.name for p in units.iterdir() if "@." not in p.name)
    # A template is verified through an instance, resolved from the same folder.
    paths = [str(units / n) for n in names] + [str(units / "spades-daphne@8001.service")]
    env = {"SYSTEMD_UNIT_PATH": f"{units}:", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [analyze, "verify", "--man=no", *paths], capture_output=True, text=True, env=env
    )
    if "Failed to initialize manager" in done.stderr or "Cannot determine" in done.stderr:
        pytest.skip(f"systemd-analyze verify cannot run here: {done.stderr.strip()[:200]}")
    assert done.returncode == 0, done.stderr
    assert "Unknown key" not in done.stderr and "not executable" not in done.stderr, done.stderr


def ask(port: int, request: str, tls: ssl.SSLContext | None = None) -> str:
    """One raw HTTP/1.1 exchange with 127.0.0.1:port (SNI spades.test over TLS);
    the answer's head and as much body as came."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        conn = tls.wrap_socket(raw, server_hostname="spades.test") if tls else raw
        conn.sendall(request.encode())
        answer = b""
        while b"\r\n\r\n" not in answer or len(answer) < 64:
            chunk = conn.recv(65536)
            if not chunk:
                break
            answer += chunk
        return answer.decode(errors="replace")


def get(path: str, **headers: str) -> str:
    lines = [f"GET {path} HTTP/1.1", "Host: spades.test", "Connection: close"]
    return "\r\n".join([*lines, *(f"{k}: {v}" for k, v in headers.items()), "", ""])


def test_the_rendered_site_serves_https_and_websockets_through_nginx(tmp_path: Path) -> None:
    """The site as rendered (on spare ports) in front of a Daphne run as its unit
    runs it: TLS, the redirect, static files, the proxy headers Django trusts
    (no redirect loop under DJANGO_TLS), a websocket, /metrics kept inside, and
    no recruitment ID in any log."""
    nginx = services.nginx_binary()
    cert, key = self_signed(tmp_path, "spades.test")
    static, logs = tmp_path / "static", tmp_path / "logs"
    static.mkdir()
    logs.mkdir()
    (static / "hello.txt").write_text("hello")
    d = deploy.Deployment(
        domain="spades.test", daphnes=1, first_port=stackprocs.free_port(),
        static_root=static, log_dir=logs, certificate=cert, certificate_key=key,
        http_port=stackprocs.free_port(), https_port=stackprocs.free_port(),
    )  # fmt: skip
    sites = tmp_path / "sites"
    sites.mkdir()
    (sites / "acme.conf").write_text(deploy.nginx_acme_site(d))
    (sites / "site.conf").write_text(deploy.nginx_site(d))
    config = tmp_path / "nginx.conf"
    user = "user root;" if os.geteuid() == 0 else ""  # nobody may not read tmp_path
    config.write_text(f"""{user}
daemon off;
pid {tmp_path}/nginx.pid;
events {{ }}
http {{
  client_body_temp_path {tmp_path}/body;
  proxy_temp_path {tmp_path}/proxy;
  include {sites}/acme.conf;
  include {sites}/site.conf;
}}
""")
    env = stackprocs.stack_env(
        f"sqlite:///{tmp_path}/db.sqlite3", None, DJANGO_DEBUG="0", DJANGO_TLS="1",
        DJANGO_SECRET_KEY="s" * 50, DJANGO_ALLOWED_HOSTS="spades.test,127.0.0.1,localhost",
    )  # fmt: skip
    stackprocs.manage(env, "migrate", "-v0")
    made = stackprocs.manage(env, "shell", "-c", MAKE_TABLE)
    table = made.strip().splitlines()[-1]
    out = (logs / "processes.log").open("w")
    daphne = stackprocs.start(stackprocs.daphne_command(d.ports[0], proxied=True), env, out)
    server = stackprocs.start([nginx, "-c", str(config), "-p", str(tmp_path), "-e",
                               str(logs / "error.log")], env, out)  # fmt: skip
    tls = ssl.create_default_context(cafile=str(cert))
    secret = "PROLIFIC_PID=RAWID5900000000000000000000"
    try:
        stackprocs.wait_for_port(d.ports[0], daphne, timeout=60)
        stackprocs.wait_for_port(d.https_port, server, timeout=10)
        health = ask(d.https_port, get("/healthz"), tls)
        assert health.startswith("HTTP/1.1 200") and '"status": "ok"' in health
        # X-Forwarded-Proto reached Django: the lobby, not a redirect to itself
        assert ask(d.https_port, get(f"/?{secret}"), tls).startswith("HTTP/1.1 200")
        moved = ask(d.http_port, get(f"/study/x/?{secret}"))
        assert moved.startswith("HTTP/1.1 301")
        assert f"Location: https://spades.test:{d.https_port}/study/x/?{secret}" in moved
        hello = ask(d.https_port, get("/static/hello.txt"), tls)
        assert hello.startswith("HTTP/1.1 200") and hello.endswith("hello")
        assert ask(d.https_port, get("/metrics"), tls).startswith("HTTP/1.1 404")
        assert ask(d.ports[0], get("/metrics")).startswith("HTTP/1.1 200")  # the port itself
        upgrade = get(
            f"/ws/table/{table}/?{secret}", Upgrade="websocket", Connection="Upgrade",
            Origin="https://spades.test", **{"Sec-WebSocket-Version": "13",
                                             "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="},
        )  # fmt: skip
        upgrade = upgrade.replace("Connection: close\r\n", "")
        socket_answer = ask(d.https_port, upgrade, tls)
        assert socket_answer.startswith("HTTP/1.1 101"), socket_answer
    finally:
        stackprocs.stop(server)
        stackprocs.stop(daphne)
        out.close()
    written = {p.name: p.read_text(errors="replace") for p in logs.iterdir()}
    assert "spades-access.log" in written and "/study/x/" in written["spades-access.log"]
    assert not [name for name, text in written.items() if "RAWID59" in text]


MAKE_TABLE = """
from game import seating
table = seating.create_table()
print(table.public_id)
"""
