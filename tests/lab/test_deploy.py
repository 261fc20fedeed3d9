"""The deployment's files (``manage.py render_deploy``, ``lab/stack/deploy.py``):
nginx accepts the rendered site with a certificate, systemd accepts the units,
``deploy/`` is what the command renders, and ``make stack`` runs the same locations."""

from __future__ import annotations

import getpass
import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from lab.stack import deploy, proxy
from tests import services

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
