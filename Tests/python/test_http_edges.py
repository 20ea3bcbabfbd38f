"""Requests at the HTTP edges, sent byte by byte over raw sockets to the real binary: each is
answered with the API's JSON error (or, where libwebsockets itself drops it, as
docs/API.md says), changes nothing, and leaves a structured line in the server's log."""

import json
import socket
import sqlite3
import time

import pytest


def exchange(server, data: bytes, timeout: float = 10.0) -> bytes:
    """Sends `data` on a new connection and reads until the server closes it."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=timeout) as sock:
        sock.sendall(data)
        return read_all(sock)


def read_all(sock) -> bytes:
    chunks = []
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def parse(reply: bytes):
    """(status, lower-cased headers, body) of one HTTP/1.x response."""
    assert reply, "the server closed the connection without an answer"
    head, _, body = reply.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, body


def error_code(reply: bytes, status: int) -> str:
    got, headers, body = parse(reply)
    assert got == status, reply[:400]
    assert headers["content-type"] == "application/json"
    return json.loads(body)["error"]["code"]


def player_count(server) -> int:
    with sqlite3.connect(server.database) as db:
        return db.execute("SELECT COUNT(*) FROM players").fetchone()[0]


def refused_lines(server, code: str):
    lines = [line for line in server.log().splitlines() if "request refused" in line and code in line]
    return lines


PLAYER = b'{"displayName":"Edge","deviceLabel":"raw"}'


def post_players(headers: str, body: bytes = PLAYER) -> bytes:
    return (f"POST /api/v1/players HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            f"{headers}\r\n").encode() + body


# --- 5. Framing ---------------------------------------------------------------------------

@pytest.mark.parametrize("headers", [
    f"Content-Length: {len(PLAYER)}\r\nTransfer-Encoding: chunked\r\n",
    f"Content-Length: {len(PLAYER)}\r\nTransfer-Encoding: xchunked\r\n",
    f"Content-Length: {len(PLAYER)}\r\nContent-Length: {len(PLAYER) + 1}\r\n",
    f"Content-Length: +{len(PLAYER)}\r\n",
    f"Content-Length: {len(PLAYER)} \r\nContent-Length: {len(PLAYER)}\r\n",
    "Transfer-Encoding: gzip\r\n",
    # Present but empty: libwebsockets gives them length 0, as if absent.
    "Content-Length:\r\n",
    f"Transfer-Encoding:\r\nContent-Length: {len(PLAYER)}\r\n",
], ids=["te-and-cl", "xchunked-and-cl", "two-lengths", "plus-sign", "two-equal-lengths", "te-gzip",
        "empty-length", "empty-te-and-cl"])
def test_ambiguous_framing_is_refused_and_creates_nothing(server, headers):
    before = player_count(server)
    reply = exchange(server, post_players(headers))
    assert error_code(reply, 400) == "bad_request"
    assert player_count(server) == before
    assert refused_lines(server, "bad_request")


def test_http11_without_host_is_refused_for_routes_and_files(server):
    for target in ("/healthz", "/index.html"):
        reply = exchange(server, f"GET {target} HTTP/1.1\r\n\r\n".encode())
        assert error_code(reply, 400) == "bad_request"
        assert json.loads(parse(reply)[2])["error"]["field"] == "host"
    # HTTP/1.0 has no Host requirement.
    status, _, _ = parse(exchange(server, b"GET /healthz HTTP/1.0\r\n\r\n"))
    assert status == 200


@pytest.mark.parametrize("host", [b"a \xcc\x81b", b"a,\xcc\x81b"], ids=["space", "comma"])
def test_a_host_with_a_separator_before_a_combining_mark_is_refused(server, host):
    # A combining mark joins the separator into one Character (found by fuzz-http-query).
    reply = exchange(server, b"GET /healthz HTTP/1.1\r\nHost: " + host + b"\r\n\r\n")
    assert error_code(reply, 400) == "bad_request"
    assert json.loads(parse(reply)[2])["error"]["field"] == "host"


def test_framing_holds_for_static_files_too(server):
    reply = exchange(server, b"GET /index.html HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n")
    assert error_code(reply, 400) == "bad_request"


# --- 4. Chunked bodies --------------------------------------------------------------------

def test_a_chunked_body_is_answered_411_and_creates_nothing(server):
    before = player_count(server)
    chunked = f"{len(PLAYER):x}\r\n".encode() + PLAYER + b"\r\n0\r\n\r\n"
    reply = exchange(server, post_players("Transfer-Encoding: chunked\r\n", chunked))
    assert error_code(reply, 411) == "length_required"
    assert player_count(server) == before
    assert refused_lines(server, "length_required")


# --- 6. Methods ---------------------------------------------------------------------------

@pytest.mark.parametrize("line", [b"TRACE / HTTP/1.1", b"TRACE /api/v1/players HTTP/1.1",
                                  b"CONNECT example.com:443 HTTP/1.1", b"FROB /healthz HTTP/1.1"])
def test_unknown_methods_get_the_json_405(server, line):
    reply = exchange(server, line + b"\r\nHost: localhost\r\n\r\n")
    assert error_code(reply, 405) == "method_not_allowed"
    _, headers, _ = parse(reply)
    assert "GET" in headers["allow"]
    assert headers["x-content-type-options"] == "nosniff"
    assert refused_lines(server, "method_not_allowed")


# --- 3. Query parameters ------------------------------------------------------------------

def test_a_long_query_value_no_longer_hides_the_parameters_after_it(server):
    reply = exchange(server, b"GET /api/v1/leaderboards/rapid/today?pad=" + b"x" * 1100
                     + b"&limit=abc HTTP/1.1\r\nHost: localhost\r\n\r\n")
    status, _, body = parse(reply)
    assert status == 400, reply[:400]
    assert json.loads(body)["error"]["field"] == "limit"


def test_an_overlong_cursor_is_refused_not_restarted(server):
    reply = exchange(server, b"GET /api/v1/leaderboards/rapid/today?cursor=" + b"A" * 1500
                     + b" HTTP/1.1\r\nHost: localhost\r\n\r\n")
    status, _, body = parse(reply)
    assert status == 400, reply[:400]
    assert json.loads(body)["error"]["field"] == "cursor"


def test_too_many_query_parameters_are_refused(server):
    query = "&".join(f"p{i}=1" for i in range(33))
    reply = exchange(server, f"GET /api/v1/leaderboards/rapid/today?{query} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
    assert error_code(reply, 400) == "bad_request"
    assert json.loads(parse(reply)[2])["error"]["field"] == "query"
    # 32 are fine.
    query = "&".join(f"p{i}=1" for i in range(32))
    status, _, _ = parse(exchange(server, f"GET /api/v1/leaderboards/rapid/today?{query} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode()))
    assert status == 200


# --- 2. Sizes -----------------------------------------------------------------------------

def test_a_long_query_is_answered_414(server):
    for target in (b"/api/v1/leaderboards/rapid/today", b"/index.html"):
        reply = exchange(server, b"GET " + target + b"?q=" + b"x" * 5000 + b" HTTP/1.1\r\nHost: localhost\r\n\r\n")
        assert error_code(reply, 414) == "uri_too_long"
    assert refused_lines(server, "uri_too_long")


def test_a_large_header_block_is_answered_431(server):
    for target in (b"/healthz", b"/index.html"):
        reply = exchange(server, b"GET " + target + b" HTTP/1.1\r\nHost: localhost\r\nCookie: " + b"c" * 9000
                         + b"\r\n\r\n")
        assert error_code(reply, 431) == "headers_too_large"
    assert refused_lines(server, "headers_too_large")


def test_a_nul_in_the_path_is_answered_400(server):
    reply = exchange(server, b"GET /api/%00x HTTP/1.1\r\nHost: localhost\r\n\r\n")
    assert error_code(reply, 400) == "bad_request"


@pytest.mark.parametrize("target", [b"/api/v1/rooms/A%0DB", b"/api/v1/rooms/A%0AB", b"/api/v1/rooms/A%0d%0aB",
                                    b"/healthz?x=%0D", b"/no-such-page%0D"])
def test_an_encoded_cr_or_lf_in_the_target_is_a_json_400_not_505(server, target):
    """A valid request line (RFC 9112 §3.2: %0D is three ordinary characters). libwebsockets
    decodes it and ends the request line there, so the server never learns the rest of the
    target nor the version: it cannot answer for the path, and refuses it."""
    reply = exchange(server, b"GET " + target + b" HTTP/1.1\r\nHost: localhost\r\n\r\n")
    assert error_code(reply, 400) == "bad_request", reply[:400]
    assert "CR or LF" in json.loads(parse(reply)[2])["error"]["message"]


@pytest.mark.parametrize("line", [b"GET /api/v1/rooms/A\rB HTTP/1.1", b"GET /healthz\rx HTTP/1.1",
                                  b"GET /api/v1/rooms/A\nB HTTP/1.1"])
def test_a_raw_cr_or_lf_in_the_target_is_answered_400(server, line):
    """An invalid request line (RFC 9112 §3: a recipient should answer 400)."""
    reply = exchange(server, line + b"\r\nHost: localhost\r\n\r\n")
    assert parse(reply)[0] == 400, reply[:400]


def test_a_request_line_without_a_version_is_400_and_an_unknown_version_505(server):
    assert parse(exchange(server, b"GET /healthz\r\nHost: localhost\r\n\r\n"))[0] == 400
    assert error_code(exchange(server, b"GET /healthz HTTP/1.2\r\nHost: localhost\r\n\r\n"), 505) == "http_version_not_supported"


def dropped_lines(server, code: str):
    return [line for line in server.log().splitlines() if "request dropped without an answer" in line and code in line]


@pytest.mark.parametrize("request_bytes, code", [
    (b"GET /healthz?a=%00 HTTP/1.1\r\nHost: localhost\r\n\r\n", "bad_request"),
    (b"GET /index.html%00 HTTP/1.1\r\nHost: localhost\r\n\r\n", "bad_request"),
    (b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nCookie: " + b"c" * 20000 + b"\r\n\r\n", "headers_too_large"),
    (b"GET /healthz?" + b"&".join(b"p%d" % i for i in range(120)) + b" HTTP/1.1\r\nHost: localhost\r\n\r\n",
     "bad_request"),
], ids=["nul-in-query", "nul-in-path", "head-over-16k", "over-95-pieces"])
def test_heads_libwebsockets_drops_are_logged(server, request_bytes, code):
    """libwebsockets 4.1.6 closes these itself, mid-parse, before any callback: no answer can
    be given (docs/API.md), but the log says what happened."""
    assert exchange(server, request_bytes) == b""
    deadline = time.monotonic() + 5
    while not dropped_lines(server, code) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert dropped_lines(server, code)


def test_a_normal_close_is_not_logged_as_a_drop(server):
    exchange(server, b"GET /style.css HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    socket.create_connection(("127.0.0.1", server.port)).close()
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(b"GET /style.css HTTP/1.1\r\nHost: localhost\r\n\r\n")
        time.sleep(0.3)
    time.sleep(0.3)
    assert "request dropped" not in server.log()


# --- 1. Slow requests and connections per address -----------------------------------------

def test_a_trickled_head_is_answered_408(server_factory):
    server = server_factory("--http-request-timeout-seconds", "2")
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", server.port), timeout=15) as sock:
        for byte in b"GET /healthz HTTP/1.1\r\nHost: loc":
            try:
                sock.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                break
            time.sleep(0.2)
            sock.setblocking(False)
            try:
                if sock.recv(1, socket.MSG_PEEK):
                    break
            except BlockingIOError:
                pass
            finally:
                sock.setblocking(True)
        reply = read_all(sock)
    assert error_code(reply, 408) == "request_timeout"
    assert time.monotonic() - started < 8
    assert refused_lines(server, "request_timeout")


def test_a_trickled_body_is_cut_with_408(server_factory):
    server = server_factory("--http-request-timeout-seconds", "2")
    before = player_count(server)
    with socket.create_connection(("127.0.0.1", server.port), timeout=15) as sock:
        sock.sendall(post_players(f"Content-Length: {len(PLAYER)}\r\n", b""))
        started = time.monotonic()
        reply = b""
        for byte in PLAYER[:-1]:
            try:
                sock.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                break
            sock.settimeout(1.0)
            try:
                chunk = sock.recv(65536)
            except socket.timeout:
                continue
            reply += chunk
            break
        sock.settimeout(10)
        reply += read_all(sock)
        elapsed = time.monotonic() - started
    assert error_code(reply, 408) == "request_timeout"
    assert 1.5 <= elapsed < 8, elapsed
    assert player_count(server) == before
    assert refused_lines(server, "request_timeout")


def test_a_body_that_stops_is_answered_408(server):
    """libwebsockets cuts a body after 5 s without a byte (its own timeout); the client is told."""
    before = player_count(server)
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", server.port), timeout=15) as sock:
        sock.sendall(post_players(f"Content-Length: {len(PLAYER)}\r\n", PLAYER[:10]))
        reply = read_all(sock)
    assert error_code(reply, 408) == "request_timeout"
    assert 4 <= time.monotonic() - started < 12
    assert player_count(server) == before
    assert refused_lines(server, "request_timeout")


def hold_posts(server, forwarded_for):
    """Connections whose POST head is in and whose body never comes: each stays open."""
    held = []
    for client in forwarded_for:
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        header = f"X-Forwarded-For: {client}\r\n" if client else ""
        sock.sendall(post_players(f"{header}Content-Length: {len(PLAYER)}\r\n", b""))
        held.append(sock)
    return held


def probe_until_refused(server, extra_header=""):
    """GET /healthz until the server answers 429 (the held heads are read by then), or 5 s."""
    deadline = time.monotonic() + 5
    while True:
        reply = exchange(server, f"GET /healthz HTTP/1.1\r\nHost: x\r\n{extra_header}\r\n".encode())
        if parse(reply)[0] == 429 or time.monotonic() > deadline:
            return reply
        time.sleep(0.05)


def test_http_connections_per_address_are_capped(server_factory):
    server = server_factory("--max-http-connections-per-ip", "3")
    held = hold_posts(server, [None] * 3)
    try:
        reply = probe_until_refused(server)
        assert error_code(reply, 429) == "too_many_connections"
        assert refused_lines(server, "too_many_connections")
    finally:
        for sock in held:
            sock.close()
    # Closed connections count no more.
    deadline = time.monotonic() + 5
    while parse(exchange(server, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"))[0] != 200:
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_a_trusted_proxy_is_not_capped_as_one_client(server_factory):
    server = server_factory("--max-http-connections-per-ip", "2", "--trusted-proxies", "127.0.0.1")
    # Four connections from the proxy: two for one client, one each for two others.
    held = hold_posts(server, ["192.0.2.1", "192.0.2.1", "192.0.2.2", "192.0.2.3"])
    try:
        reply = probe_until_refused(server, "X-Forwarded-For: 192.0.2.1\r\n")
        assert error_code(reply, 429) == "too_many_connections"
        # The proxy has five connections open now; another client through it is still served.
        reply = exchange(server, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 192.0.2.4\r\n\r\n")
        assert parse(reply)[0] == 200
        assert any("client.address=192.0.2.1" in line and "net.peer.address=127.0.0.1" in line
                   for line in refused_lines(server, "too_many_connections"))
    finally:
        for sock in held:
            sock.close()


def test_http_connections_from_one_ipv6_64_count_together_behind_a_proxy(server_factory):
    """An IPv6 client holds a whole /64: each of its addresses is not a new client."""
    server = server_factory("--max-http-connections-per-ip", "2", "--trusted-proxies", "127.0.0.1")
    held = hold_posts(server, ["2001:db8:1:2::1", "2001:db8:1:2:ffff::2"])
    try:
        reply = probe_until_refused(server, "X-Forwarded-For: 2001:db8:1:2:abcd::3\r\n")
        assert error_code(reply, 429) == "too_many_connections"
        # Another /64, and an IPv4 client, are other clients.
        for other in ("2001:db8:1:3::1", "192.0.2.1"):
            reply = exchange(server, f"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: {other}\r\n\r\n".encode())
            assert parse(reply)[0] == 200, other
    finally:
        for sock in held:
            sock.close()


def test_an_ipv4_mapped_address_counts_as_its_ipv4_address_behind_a_proxy(server_factory):
    server = server_factory("--max-http-connections-per-ip", "2", "--trusted-proxies", "127.0.0.1")
    held = hold_posts(server, ["192.0.2.7", "::ffff:192.0.2.7"])
    try:
        reply = probe_until_refused(server, "X-Forwarded-For: ::ffff:c000:207\r\n")
        assert error_code(reply, 429) == "too_many_connections"
    finally:
        for sock in held:
            sock.close()


# --- What still works ---------------------------------------------------------------------

def test_static_files_keep_alive(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        for _ in range(3):
            sock.sendall(b"GET /style.css HTTP/1.1\r\nHost: localhost\r\n\r\n")
            head = b""
            while b"\r\n\r\n" not in head:
                head += sock.recv(1)
            status, headers, _ = parse(head)
            assert status == 200
            remaining = int(headers["content-length"])
            while remaining:
                remaining -= len(sock.recv(remaining))


def test_a_well_formed_post_still_creates_a_player(server):
    before = player_count(server)
    reply = exchange(server, post_players(f"Content-Length: {len(PLAYER)}\r\n"))
    assert parse(reply)[0] == 201
    assert player_count(server) == before + 1
