"""Which pages may open a game connection (docs/PROTOCOL.md, "Connecting"): the upgrade's
Origin must be this site's own (its Host) or one of --allowed-origins; without an Origin (not
a browser) it is let in. And the CSP lets the site's pages open sockets to no other host."""

import json
import socket

from ws_client import GameClient, RawGameSocket, create_player, metric, run


def upgrade(server, headers):
    """A raw upgrade with `headers` (Host included); returns (status, head, JSON body or None)."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    try:
        lines = ["GET /ws HTTP/1.1", "Upgrade: websocket", "Connection: Upgrade",
                 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13",
                 "Sec-WebSocket-Protocol: retrorapid.v1"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        status = int(head.split(b" ")[1])
        if status == 101:
            return status, head, None
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
        while len(body) < length:
            chunk = sock.recv(4096)
            if not chunk:
                break
            body += chunk
        return status, head, json.loads(body)
    finally:
        sock.close()


def test_a_page_of_another_site_is_refused_with_403_counted_and_logged(server):
    host = f"127.0.0.1:{server.port}"
    for origin in ("https://evil.example", f"http://127.0.0.1:{server.port + 1}", "null",
                   f"http://127.0.0.1:{server.port}.evil.example"):
        status, head, body = upgrade(server, {"Host": host, "Origin": origin})
        assert status == 403, (origin, head)
        assert b"application/json" in head.lower()
        assert body["error"]["code"] == "origin_not_allowed"
        assert "--allowed-origins" in body["error"]["message"]
    assert metric(server, "retrorapid_websocket_errors_total", code="origin_not_allowed") == 4
    assert metric(server, "retrorapid_websocket_connections") == 0
    assert "origin not allowed" in server.log() and "https://evil.example" in server.log()


def test_the_sites_own_pages_and_clients_without_an_origin_connect(server):
    host = f"127.0.0.1:{server.port}"
    for origin in (f"http://{host}", f"https://{host}", f"HTTP://{host.upper()}"):
        assert upgrade(server, {"Host": host, "Origin": origin})[0] == 101, origin
    assert upgrade(server, {"Host": host})[0] == 101
    # The game itself, from a client that sends no Origin (as the load generator and tools).
    token = create_player(server)

    async def scenario():
        client = await GameClient.signed_in(server, token)
        await client.send(type="ping")
        await client.expect("pong")
        await client.close()

    run(scenario())


def test_allowed_origins_let_another_name_of_the_site_in(server_factory):
    server = server_factory("--allowed-origins", "https://game.example.com,http://localhost:9999")
    backend = f"127.0.0.1:{server.port}"  # what a reverse proxy might send as Host
    for origin in ("https://game.example.com", "http://localhost:9999"):
        assert upgrade(server, {"Host": backend, "Origin": origin})[0] == 101, origin
    assert upgrade(server, {"Host": backend, "Origin": "http://game.example.com"})[0] == 403
    assert upgrade(server, {"Host": backend, "Origin": "https://other.example.com"})[0] == 403
    policy = server.request("GET", "/").headers["content-security-policy"]
    assert "connect-src 'self' wss://game.example.com ws://localhost:9999;" in policy


def test_the_csp_lets_pages_open_sockets_to_their_own_site_only(server):
    policy = server.request("GET", "/").headers["content-security-policy"]
    directives = {part.split()[0]: part.split()[1:] for part in policy.split("; ")}
    assert directives["connect-src"] == ["'self'"]


def test_a_bad_allowed_origin_stops_the_server_with_a_clear_message(tmp_path):
    import subprocess
    from conftest import REPO
    import os
    binary = os.environ.get("RETRORAPID_BINARY", str(REPO / ".build/debug/retrorapid"))
    result = subprocess.run([binary, "serve", "--allowed-origins", "game.example.com"],
                            capture_output=True, text=True, timeout=20, cwd=tmp_path)
    assert result.returncode != 0
    assert "--allowed-origins" in result.stderr + result.stdout
