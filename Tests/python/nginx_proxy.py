"""Debian's nginx on loopback in front of a real server, running the site file operators
install (Deploy/nginx/retrorapid.conf) with a throwaway self-signed certificate. Only the
lines the file marks `# site:` are changed: the addresses and ports, the certificate, where
the Web client, the fonts and the headers snippet are; everything else runs as shipped."""

import http.client
import json
import os
import re
import shutil
import ssl
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from conftest import REPO, Response, free_port

SITE = REPO / "Deploy/nginx/retrorapid.conf"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def self_signed_certificate(folder: Path):
    """A certificate for 127.0.0.1 and localhost, valid for a day; returns (cert, key)."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    return cert, key


def site_for_test(upstream_port, http_port: int, https_port: int, cert: Path, key: Path, site: Path = SITE,
                  headers: Path | None = None) -> str:
    """A site file (Deploy/nginx/retrorapid.conf unless `site` names another) with its
    `# site:` lines set for loopback. `upstream_port` is a port, or for a site whose upstreams
    name several nodes (Deploy/nginx/retrorapid-cluster.conf) a list of them or a dict by the
    node the file names (`# site: node a`): a list is taken in the order the file first names
    its nodes. Each `server` line keeps what follows the address (max_fails…, backup). The
    headers snippet is Deploy/nginx/retrorapid-headers.conf unless `headers` names another; a
    site that checks its nodes' certificate (retrorapid-cluster-direct.conf) trusts `cert`,
    which covers `localhost`."""
    if isinstance(upstream_port, dict):
        by_node = dict(upstream_port)
    elif isinstance(upstream_port, (list, tuple)):
        named = list(dict.fromkeys(re.findall(r"# site: node (\S+)", site.read_text())))
        by_node = dict(zip(named, upstream_port))
    else:
        by_node = {}
    single = iter([] if by_node else [upstream_port])

    def server_port(line):
        node = re.search(r"# site: node (\S+)", line)
        if node is None:
            return next(single)
        assert node[1] in by_node, f"no port for node {node[1]!r} of the site (given {sorted(by_node)})"
        return by_node[node[1]]

    replacements = [
        (r"^(\s*)server \S+?(( [^;]*)?);(.*)$",
         lambda match: f"{match[1]}server 127.0.0.1:{server_port(match[0])}{match[2]};{match[4]}"),
        (r"^(\s*)listen \[::\]:.*", r"\1# (no IPv6 in the test)"),
        (r"^(\s*)listen 80;", rf"\1listen 127.0.0.1:{http_port};"),
        (r"^(\s*)listen 443 (.*);", rf"\1listen 127.0.0.1:{https_port} \2;"),
        (r"^(\s*)ssl_certificate\s+\S+;", rf"\1ssl_certificate {cert};"),
        (r"^(\s*)ssl_certificate_key\s+\S+;", rf"\1ssl_certificate_key {key};"),
        (r"^(\s*)root \S+;", rf"\1root {REPO / 'Web'};"),
        (r"^(\s*)alias \S+;", rf"\1alias {REPO / 'data/fonts'}/;"),
        (r"^(\s*)include \S+;", rf"\1include {headers or REPO / 'Deploy/nginx/retrorapid-headers.conf'};"),
        (r"^(\s*)proxy_ssl_trusted_certificate \S+;", rf"\1proxy_ssl_trusted_certificate {cert};"),
        (r"^(\s*)proxy_ssl_name \S+;", r"\1proxy_ssl_name localhost;"),
        (r"^(\s*)allow \S+;", r"\1allow 127.0.0.2;"),  # the test's client address
    ]
    lines = []
    for line in site.read_text().splitlines():
        if "# site:" in line and "server_name" not in line:
            changed = line
            for pattern, replacement in replacements:
                changed = re.sub(pattern, replacement, changed)
            assert changed != line, f"a `# site:` line the test does not know how to set: {line!r}"
            line = changed
        lines.append(line)
    return "\n".join(lines) + "\n"


@dataclass
class NginxProxy:
    """nginx running; `request` and `connect_options` reach the server through it over TLS."""

    process: subprocess.Popen
    folder: Path
    http_port: int
    https_port: int
    tls: ssl.SSLContext
    source_address: str
    connect_options: dict = field(default_factory=dict)

    @property
    def base_url(self):
        return f"https://127.0.0.1:{self.https_port}"

    @property
    def ws_url(self):
        return f"wss://127.0.0.1:{self.https_port}/ws"

    def request(self, method, path, body=None, token=None, headers=None, port=None, tls=True) -> Response:
        """One HTTP/1.1 request through nginx, from `source_address`."""
        port = port or (self.https_port if tls else self.http_port)
        if tls:
            connection = http.client.HTTPSConnection("127.0.0.1", port, context=self.tls, timeout=10,
                                                     source_address=(self.source_address, 0))
        else:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(self.source_address, 0))
        data = json.dumps(body).encode() if body is not None else None
        all_headers = {"Content-Type": "application/json"} if data is not None else {}
        if token:
            all_headers["Authorization"] = f"Bearer {token}"
        all_headers.update(headers or {})
        try:
            connection.request(method, path, body=data, headers=all_headers)
            reply = connection.getresponse()
            return Response(reply.status, reply.headers, reply.read())
        finally:
            connection.close()

    def error_log(self):
        return (self.folder / "error.log").read_text(errors="replace")

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_nginx(folder: Path, upstream_port, source_address="127.0.0.2", site: Path = SITE, ports=None,
                headers: Path | None = None, certificate=None) -> NginxProxy:
    """nginx running `site` in front of `upstream_port` (site_for_test), listening on `ports`
    (plain HTTP, HTTPS; free ones when not given) with `certificate` (a (cert, key) pair; a
    new self-signed one when not given)."""
    folder.mkdir(parents=True, exist_ok=True)
    if not Path(NGINX).exists():
        raise AssertionError("nginx is not installed: `make test` installs Debian's nginx (scripts/install-deps.sh)")
    cert, key = certificate or self_signed_certificate(folder)
    http_port, https_port = ports or (free_port(), free_port())
    (folder / "site.conf").write_text(site_for_test(upstream_port, http_port, https_port, cert, key, site, headers))
    temp = {name: folder / name for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi")}
    for path in temp.values():
        path.mkdir(exist_ok=True)
    # As root nginx's workers would run as nobody, who cannot read the test's private folder.
    user = "user root;\n" if os.geteuid() == 0 else ""
    (folder / "nginx.conf").write_text(f"""{user}daemon off;
worker_processes 1;
pid {folder}/nginx.pid;
error_log {folder}/error.log info;
events {{ worker_connections 512; }}
http {{
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log {folder}/access.log;
    client_body_temp_path {temp['body']};
    proxy_temp_path {temp['proxy']};
    fastcgi_temp_path {temp['fastcgi']};
    uwsgi_temp_path {temp['uwsgi']};
    scgi_temp_path {temp['scgi']};
    include {folder}/site.conf;
}}
""")
    check = subprocess.run([NGINX, "-t", "-e", str(folder / "error.log"), "-c", str(folder / "nginx.conf")],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    process = subprocess.Popen([NGINX, "-e", str(folder / "error.log"), "-c", str(folder / "nginx.conf")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    tls = ssl.create_default_context(cafile=str(cert))
    proxy = NginxProxy(process, folder, http_port, https_port, tls, source_address,
                       connect_options={"ssl": tls, "local_addr": (source_address, 0)})
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"nginx exited with {process.returncode}: {proxy.error_log()}")
        try:
            if proxy.request("GET", "/healthz").status == 200:
                return proxy
        except OSError:
            time.sleep(0.05)
    proxy.stop()
    raise AssertionError(f"nginx did not answer within 10 s: {proxy.error_log()}")
