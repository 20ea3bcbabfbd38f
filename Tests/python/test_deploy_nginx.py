"""The nginx site operators install (Deploy/nginx/retrorapid.conf), run by Debian's nginx on
loopback with a self-signed certificate in front of a real server: a whole game over wss://,
the API over HTTPS and HTTP/2, the client's own address seen by the server, a forged
X-Forwarded-For ignored, compression and caching of the static client. The client connects
from 127.0.0.2 and nginx from 127.0.0.1, so the two addresses can be told apart."""

import dataclasses
import gzip
import os
import re
import shutil
import socket
import subprocess

import pytest

from conftest import REPO, free_port
from nginx_proxy import start_nginx
from ws_client import create_player, play_to_score

CLIENT = "127.0.0.2"


@pytest.fixture
def proxied(server_factory, tmp_path):
    server = server_factory("--trusted-proxies", "127.0.0.1")
    proxy = start_nginx(tmp_path / "nginx", server.port, source_address=CLIENT)
    yield server, proxy
    proxy.stop()


def logged_client_addresses(server, path):
    """The client.address of every request the server logged for `path`."""
    return re.findall(rf"request client\.address=(\S+) .*http\.path={re.escape(path)}\b", server.log())


def test_a_whole_game_over_wss_through_nginx_is_saved_and_ranked(proxied):
    server, proxy = proxied
    token = create_player(proxy, "Proxied")
    over = play_to_score(proxy, token, "cruise", 5)
    assert over["score"] >= 5 and over["rank"] is not None
    board = proxy.request("GET", "/api/v1/leaderboards/cruise/today").json()
    assert [entry["score"] for entry in board["entries"]] == [over["score"]], board
    # The game connection counted as the client, not as nginx.
    assert re.search(rf"client\.address={re.escape(CLIENT)}\b.*net\.peer\.address=127\.0\.0\.1", server.log()) or \
        re.search(rf"net\.peer\.address=127\.0\.0\.1.*client\.address={re.escape(CLIENT)}\b", server.log())


def test_the_server_sees_the_clients_address_and_ignores_a_forged_one(proxied):
    server, proxy = proxied
    assert proxy.request("GET", "/api/v1/leaderboards/cruise/today").status == 200
    assert logged_client_addresses(server, "/api/v1/leaderboards/cruise/today") == [CLIENT]
    # Written by the client, the header stays left of what nginx appends: the server takes
    # the rightmost address that is not a trusted proxy, the one nginx saw.
    forged = proxy.request("GET", "/api/v1/price", headers={"X-Forwarded-For": "203.0.113.9"})
    assert forged.status == 401
    assert logged_client_addresses(server, "/api/v1/price") == [CLIENT]
    # Straight to the server from an address that is not a trusted proxy: the header is ignored.
    direct = proxy.request("GET", "/healthz", headers={"X-Forwarded-For": "203.0.113.9"}, port=server.port, tls=False)
    assert direct.status == 200
    assert logged_client_addresses(server, "/healthz")[-1] == CLIENT


def test_pages_and_the_api_speak_http2_and_plain_http_is_sent_to_https(proxied):
    server, proxy = proxied
    curl = shutil.which("curl")
    assert curl, "curl is not installed: `make test` installs it (scripts/install-deps.sh)"
    for path in ("/", "/api/v1/leaderboards/cruise/today"):
        version = subprocess.run([curl, "-s", "-o", "/dev/null", "-w", "%{http_version} %{http_code}", "--http2",
                                  "--cacert", str(proxy.folder / "cert.pem"), proxy.base_url + path],
                                 capture_output=True, text=True, timeout=10).stdout
        assert version == "2 200", (path, version)
    plain = proxy.request("GET", "/leaderboards.html?level=fast", tls=False)
    assert plain.status == 301
    assert plain.headers["Location"] == f"https://127.0.0.1/leaderboards.html?level=fast"


def test_static_files_are_compressed_revalidated_and_carry_the_servers_security_headers(proxied):
    server, proxy = proxied
    first = proxy.request("GET", "/js/app/page.js", headers={"Accept-Encoding": "gzip"})
    assert first.status == 200 and first.headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(first.body) == server.request("GET", "/js/app/page.js").body
    assert first.headers["Cache-Control"] == "no-cache"
    # The files nginx serves itself carry the very headers the node puts on its answers.
    node = server.request("GET", "/js/app/page.js").headers
    for name in ("Content-Security-Policy", "X-Content-Type-Options", "Referrer-Policy", "X-Frame-Options",
                 "Cross-Origin-Opener-Policy"):
        assert first.headers[name] == node[name], name
    assert first.headers["Strict-Transport-Security"] == "max-age=15552000"
    # A browser that has the file revalidates and gets no body back.
    etag, modified = first.headers["ETag"], first.headers["Last-Modified"]
    assert etag and modified
    assert proxy.request("GET", "/js/app/page.js", headers={"If-None-Match": etag, "Accept-Encoding": "gzip"}).status == 304
    again = proxy.request("GET", "/js/app/page.js", headers={"If-Modified-Since": modified})
    assert again.status == 304 and again.body == b""
    index = proxy.request("GET", "/")
    assert index.status == 200 and b"<html" in index.body and index.headers["X-Frame-Options"] == "DENY"
    # What is not a file goes to a node, which answers as it always does.
    missing = proxy.request("GET", "/no-such-page.html")
    assert (missing.status, missing.body) == (404, server.request("GET", "/no-such-page.html").body)
    assert proxy.request("GET", "/api/v1/openapi.json").status == server.request("GET", "/api/v1/openapi.json").status
    # The API is not compressed (its answers carry tokens) and keeps the node's no-store.
    api = proxy.request("GET", "/api/v1/leaderboards/cruise/today", headers={"Accept-Encoding": "gzip"})
    assert api.status == 200 and "Content-Encoding" not in api.headers
    assert api.headers["Cache-Control"] == "no-store"
    assert api.headers["Strict-Transport-Security"] == "max-age=15552000"
    # Metrics stay with the operator's Prometheus, which scrapes each node itself.
    assert proxy.request("GET", "/metrics").status == 404
    assert server.request("GET", "/metrics").status == 200
    font = proxy.request("GET", "/fonts/DSEG7Classic-Regular.ttf")
    assert font.status == 200, "the fonts: scripts/install-fonts.sh data/fonts (make test runs it)"
    assert font.headers["Cache-Control"] == "public, max-age=604800"
    assert proxy.request("GET", "/fonts/none.ttf").body == server.request("GET", "/fonts/none.ttf").body


# Every way to spell /metrics that someone might slip past a proxy's `location`: nginx
# matches its locations against the path decoded and normalised ($uri) but, with no URI part
# in proxy_pass, forwards the request line as the client wrote it, and the node decodes and
# normalises that itself (libwebsockets: %XX, dot segments, repeated slashes, `;` as a
# separator), in its own way.
METRICS_SPELLINGS = [
    "/metrics", "/metrics/", "/metrics/.", "/metrics/x/..", "/metrics/x/../", "/./metrics", "/x/../metrics",
    "/api/../metrics", "/api/v1/../../metrics", "/fonts/../metrics", "/healthz/../metrics", "//metrics",
    "///metrics", "/metrics//", "/%6detrics", "/%6D%65%74%72%69%63%73", "/metrics%2F", "/metrics%2f.",
    "/%2Fmetrics", "/%2e/metrics", "/%2E%2E/metrics", "/x/%2e%2e/metrics", "/x/..%2Fmetrics", "/x%2F..%2Fmetrics",
    "/.%2Fmetrics", "/METRICS", "/Metrics", "/metrics?x", "/metrics?", "/metrics;x", "/metrics;", "/metrics&x",
    "/metrics.", "/metrics..", "/metrics%20", "/metrics%3Fx", "/metrics%23x", "/metrics/%2e", "/metrics/%2e%2e/metrics",
    "/metrics/x/..?y", "/metrics/x/%2e%2e", "/metrics/x/y/../..", "/x/../metrics/y/..", "//metrics/x/..", "/metrics/x/..;y",
]


def raw_https_get(proxy, target: str) -> tuple[int, bytes]:
    """`GET target` sent byte for byte over TLS through nginx (HTTP/1.1); (status, whole reply)."""
    with socket.create_connection(("127.0.0.1", proxy.https_port), timeout=10, source_address=(CLIENT, 0)) as raw:
        with proxy.tls.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            tls.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{proxy.https_port}\r\nConnection: close\r\n\r\n".encode())
            reply = b""
            while chunk := tls.recv(65536):
                reply += chunk
    return int(reply.split(b" ", 2)[1]), reply


def test_metrics_are_refused_through_nginx_however_the_path_is_spelled(proxied):
    server, proxy = proxied
    curl = shutil.which("curl")
    assert curl, "curl is not installed: `make test` installs it (scripts/install-deps.sh)"
    assert b"retrorapid_" in server.request("GET", "/metrics").body  # the node itself serves them
    for target in METRICS_SPELLINGS:
        status, reply = raw_https_get(proxy, target)
        assert b"retrorapid_" not in reply and status != 200, (target, status, reply[:300])
        # HTTP/2 as well, the path as written (curl would otherwise normalise it itself).
        http2 = subprocess.run([curl, "-s", "--path-as-is", "--http2", "--cacert", str(proxy.folder / "cert.pem"),
                                "-w", "\n%{http_code}", proxy.base_url + target], capture_output=True, timeout=10)
        body, _, code = http2.stdout.rpartition(b"\n")
        assert b"retrorapid_" not in body and code != b"200", (target, code, body[:300])
    # Pages and the API still work, through the same raw requests.
    assert raw_https_get(proxy, "/")[0] == 200
    assert raw_https_get(proxy, "/api/v1/leaderboards/cruise/today")[0] == 200
    assert raw_https_get(proxy, "/healthz")[0] == 200


def test_the_node_never_serves_metrics_to_a_request_a_proxy_passed_on(proxied):
    server, proxy = proxied
    # Prometheus scrapes the node directly and says nothing of a proxy; a request with
    # X-Forwarded-For came through one, whatever its path looked like on the way.
    assert b"retrorapid_" in server.request("GET", "/metrics").body
    forwarded = server.request("GET", "/metrics", headers={"X-Forwarded-For": "203.0.113.9"})
    assert forwarded.status == 404 and b"retrorapid_" not in forwarded.body


def test_the_console_behind_nginx_reaches_only_the_allow_list_and_its_cookie_is_secure(server_factory, tmp_path):
    """Deploy/nginx/retrorapid-console.conf as shipped: the allowed address signs in over TLS
    (the session cookie Secure, the sign-in counted against the operator's address, not
    nginx's); any other address gets 403 from nginx before the console sees it."""
    console_port = free_port()
    server = server_factory("--trusted-proxies", "127.0.0.1", "--console-port", str(console_port),
                            "--console-root", str(REPO / "Console"))
    added = subprocess.run([os.environ.get("RETRORAPID_BINARY", str(REPO / ".build/debug/retrorapid")), "operators", "add",
                            "ada", *server.database_args], capture_output=True, text=True, timeout=60)
    assert added.returncode == 0, added.stderr
    password = added.stdout.strip().splitlines()[-1].strip()
    proxy = start_nginx(tmp_path / "console-nginx", console_port, source_address=CLIENT,
                        site=REPO / "Deploy/nginx/retrorapid-console.conf")
    try:
        assert proxy.request("GET", "/sign-in.html").status == 200
        reply = proxy.request("POST", "/api/session", {"name": "ada", "password": password})
        assert reply.status == 200, reply.body
        assert re.fullmatch(r"rr_console=[A-Za-z0-9_-]{43}; Path=/; HttpOnly; SameSite=Strict; Secure",
                            reply.headers["Set-Cookie"]), reply.headers["Set-Cookie"]
        assert re.search(rf"operator signed in .*client\.address={re.escape(CLIENT)}\b", server.log()), server.log()[-2000:]
        # Another address: refused by nginx, whatever it asks for.
        outsider = dataclasses.replace(proxy, source_address="127.0.0.3")
        for path in ("/sign-in.html", "/api/session", "/healthz"):
            assert outsider.request("GET", path).status == 403, path
        # The players' address has no console behind it.
        assert server.request("GET", "/api/session").status == 404
    finally:
        proxy.stop()

