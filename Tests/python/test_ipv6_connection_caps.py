"""The per-address caps on game and HTTP connections against a client that holds a whole IPv6
/64, on loopback without a proxy: connections come from many addresses of one /64 (a local
route for the prefix on `lo`, and IP_FREEBIND to bind to its addresses), and the server
counts them as one client (docs/OPERATIONS.md, "Limits"). Needs root (CAP_NET_ADMIN) to add
the route; skipped, with the reason, where it cannot."""

import secrets
import socket
import subprocess
import time

import pytest
from websockets.exceptions import InvalidStatus

from ws_client import GameClient, run

IP_FREEBIND = getattr(socket, "IP_FREEBIND", 15)


@pytest.fixture
def prefix():
    """A /64 of unique local addresses routed to this machine for the test, then removed."""
    # Spelled as the server writes addresses (RFC 5952: no leading zeros, no zero group to
    # shorten), so the log can be searched for an address made from it.
    groups = [f"{secrets.randbelow(0xffff) + 1:x}" for _ in range(3)]
    network = f"fd{secrets.token_hex(1)}:" + ":".join(groups)
    route = ["ip", "-6", "route", "add", "local", f"{network}::/64", "dev", "lo"]
    try:
        added = subprocess.run(route, capture_output=True, text=True, timeout=10)
    except FileNotFoundError:
        pytest.skip("no `ip` command to route a test /64 to loopback")
    if added.returncode != 0:
        pytest.skip(f"cannot route a test /64 to loopback (needs CAP_NET_ADMIN): {added.stderr.strip()}")
    try:
        yield network
    finally:
        subprocess.run(["ip", "-6", "route", "del", "local", f"{network}::/64", "dev", "lo"], capture_output=True, timeout=10)


def bound_socket(address: str) -> socket.socket:
    sock = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_IP, IP_FREEBIND, 1)
    sock.bind((address, 0))
    return sock


@pytest.fixture
def ipv6_server(server_factory, tmp_path):
    (tmp_path / "server0").mkdir()
    server = server_factory("--max-connections-per-ip", "2", "--max-http-connections-per-ip", "2", host="::")
    return server


def test_game_connections_from_one_64_count_as_one_client(prefix, ipv6_server):
    server = ipv6_server

    async def open_from(address):
        sock = bound_socket(address)
        sock.connect(("::1", server.port))
        sock.setblocking(False)
        return await GameClient.open(server, sock=sock)

    async def scenario():
        held = [await open_from(f"{prefix}::1"), await open_from(f"{prefix}:ffff:ffff:ffff:fffe")]
        for address in (f"{prefix}::2", f"{prefix}:1234:5678:9abc:def0"):
            try:
                extra = await open_from(address)
            except InvalidStatus as refusal:
                assert refusal.response.status_code == 429
                assert b"too_many_connections" in refusal.response.body
            else:
                await extra.close()
                raise AssertionError(f"a third game connection from the /64 was accepted ({address})")
        # The server saw each address as it is (no proxy): the /64 is what it counted.
        assert f"game connection opened client.address={prefix}::1 " in server.log()
        for client in held:
            await client.close()

    run(scenario())


def test_http_connections_from_one_64_count_as_one_client(prefix, ipv6_server):
    server = ipv6_server
    held = []
    try:
        for address in (f"{prefix}::1", f"{prefix}::2"):
            sock = bound_socket(address)
            sock.settimeout(10)
            sock.connect(("::1", server.port))
            # A POST head whose body never comes: the connection stays open, counted.
            sock.sendall(b"POST /api/v1/players HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 10\r\n\r\n")
            held.append(sock)
        deadline = time.monotonic() + 5
        while True:
            with bound_socket(f"{prefix}:abcd::3") as sock:
                sock.settimeout(10)
                sock.connect(("::1", server.port))
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                reply = b""
                while chunk := sock.recv(65536):
                    reply += chunk
            status = int(reply.split(b" ", 2)[1])
            if status == 429 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert status == 429 and b"too_many_connections" in reply, reply[:300]
        # Another address (::1, another /64) is another client.
        with socket.create_connection(("::1", server.port), timeout=10) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert sock.recv(65536).startswith(b"HTTP/1.1 200")
    finally:
        for sock in held:
            sock.close()
