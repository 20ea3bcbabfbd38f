"""A small game client for the end-to-end tests of /ws (docs/PROTOCOL.md): the real
`websockets` library against the real server, plus player creation over the HTTP API."""

import asyncio
import base64
import json
import os
import re
import socket
import struct
import time

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

import raw_frames

SUBPROTOCOL = raw_frames.SUBPROTOCOL


def create_player(server, name="Racer"):
    """A new player through POST /api/v1/players; returns its device token."""
    reply = server.request("POST", "/api/v1/players", {"displayName": name, "deviceLabel": "pytest"})
    assert reply.status == 201, reply.body
    return reply.json()["token"]


def link_second_device(server, token):
    """A second device of the same player (link code from the first); returns its token."""
    code = server.request("POST", "/api/v1/link-codes", token=token)
    assert code.status == 201, code.body
    claimed = server.request("POST", "/api/v1/link-codes/claim",
                             {"code": code.json()["code"], "deviceLabel": "second"})
    assert claimed.status == 201, claimed.body
    return claimed.json()["token"]


def run(coroutine):
    """Runs one test's client code (the tests need no pytest-asyncio)."""
    return asyncio.run(coroutine)


class GameClient:
    """One connection: send messages, wait for the ones a test is interested in."""

    def __init__(self, ws):
        self.ws = ws
        self.received = []

    @classmethod
    async def open(cls, server, subprotocols=(SUBPROTOCOL,), query="", **kwargs):
        # A server reached through a proxy says how to connect (TLS context, source address).
        # `query` follows /ws (`?node=b`: which node of a cluster nginx is to send it to).
        kwargs = {**getattr(server, "connect_options", {}), **kwargs}
        ws = await connect(server.ws_url + query, subprotocols=list(subprotocols) if subprotocols else None,
                           open_timeout=5, **kwargs)
        return cls(ws)

    @classmethod
    async def signed_in(cls, server, token, client="pytest", query=""):
        """Connected and past hello; `welcome` holds the welcome message."""
        self = await cls.open(server, query=query)
        await self.send(type="hello", token=token, client=client)
        self.welcome = await self.expect("welcome")
        return self

    async def send(self, **message):
        await self.ws.send(json.dumps(message))

    async def send_raw(self, text):
        await self.ws.send(text)

    async def recv(self, timeout=5.0):
        message = json.loads(await asyncio.wait_for(self.ws.recv(), timeout))
        self.received.append(message)
        return message

    async def until(self, predicate, timeout=10.0):
        """Reads until a message satisfies `predicate`; returns it and those read before it."""
        deadline = time.monotonic() + timeout
        skipped = []
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no matching message within {timeout} s; got {[m['type'] for m in skipped]}")
            message = await self.recv(timeout=left)
            if predicate(message):
                return message, skipped
            skipped.append(message)

    async def expect(self, type_, timeout=10.0):
        """The next message of `type_`; an `error` on the way fails the test unless expected."""
        def match(message):
            if message["type"] == "error" and type_ != "error":
                raise AssertionError(f"expected {type_}, got error {message}")
            return message["type"] == type_
        message, _ = await self.until(match, timeout)
        return message

    async def expect_error(self, code, timeout=10.0):
        message = await self.expect("error", timeout)
        assert message["code"] == code, message
        return message

    async def closed(self, timeout=10.0):
        """Waits for the server to close; returns the close frame it sent (code, reason)."""
        try:
            while True:
                await self.recv(timeout=timeout)
        except ConnectionClosed as closed:
            frame = closed.rcvd
            return (frame.code, frame.reason) if frame else (None, None)

    async def start(self, level="rapid", practice=False):
        await self.send(type="start", level=level, practice=practice)
        return await self.expect("started")

    async def close(self):
        await self.ws.close()

    async def drop(self):
        """Ends the TCP connection without a closing handshake, as a lost network would."""
        self.ws.transport.abort()
        await asyncio.sleep(0.05)


def nearest_safe_move(step):
    """The move that keeps a player alive by the cue: toward the nearest safe lane."""
    lane, safe = step["lane"], step["safeLanes"]
    if not safe or lane in safe:
        return None
    target = min(safe, key=lambda candidate: abs(candidate - lane))
    return "left" if target < lane else "right"


def play_to_score(server, token, level, target, attempts=3):
    """Plays one real game at `level`, following the safe-lane cue, and quits as soon as the
    score reaches `target`, so it is saved with that score. A crash on the way (rare: moves
    can arrive late) plays again, up to `attempts` games. Returns the final `gameOver`."""

    async def one_game(client):
        await client.start(level)
        while True:
            message = await client.recv(timeout=10)
            if message["type"] == "step":
                if message["score"] >= target:
                    await client.send(type="quit")
                    return await client.expect("gameOver")
                direction = nearest_safe_move(message)
                if direction:
                    goal = min(message["safeLanes"], key=lambda lane: abs(lane - message["lane"]))
                    for _ in range(abs(goal - message["lane"])):
                        await client.send(type="move", direction=direction, step=message["step"])
            elif message["type"] == "gameOver":
                return message
            elif message["type"] == "error":
                raise AssertionError(f"unexpected error {message}")

    async def scenario():
        client = await GameClient.signed_in(server, token)
        try:
            for _ in range(attempts):
                over = await one_game(client)
                if over["score"] >= target:
                    return over
            raise AssertionError(f"no game reached {target} points in {attempts} tries")
        finally:
            await client.close()

    return run(scenario())


def metric(server, name, **labels):
    """One sample of GET /metrics (0 when the series does not exist yet)."""
    reply = server.request("GET", "/metrics")
    assert reply.status == 200, reply.body
    wanted = ",".join(f'{key}="{value}"' for key, value in sorted(labels.items()))
    for line in reply.body.decode().splitlines():
        match = re.fullmatch(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)", line)
        if match and match[1] == name and ",".join(sorted((match[2] or "").split(","))) == wanted:
            return float(match[3])
    return 0.0


class RawGameSocket:
    """A game connection on a bare socket, with WebSocket framing written out here: a client
    whose reading the test controls (it may stop), and whose socket options it sets before
    connecting (a small receive buffer). Blocking; one message at a time."""

    def __init__(self, sock):
        self.sock = sock

    @classmethod
    def connect(cls, server, receive_buffer=None, headers=None, timeout=5.0):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if receive_buffer:
            # Before connect(), so the window the client advertises is small from the start.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        sock.settimeout(timeout)
        sock.connect(("127.0.0.1", server.port))
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [f"GET /ws HTTP/1.1", f"Host: 127.0.0.1:{server.port}", "Upgrade: websocket",
                 "Connection: Upgrade", f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13",
                 f"Sec-WebSocket-Protocol: {SUBPROTOCOL}"]
        lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:  # byte by byte: nothing after the head may be eaten
            byte = sock.recv(1)
            if not byte:
                raise ConnectionError(f"closed during the handshake: {head!r}")
            head += byte
        status = head.split(b"\r\n", 1)[0]
        assert b" 101 " in status, head
        return cls(sock)

    def send(self, **message):
        self.send_frame(0x1, json.dumps(message).encode())

    def send_frame(self, opcode, payload, masked=True, final=True):
        """One frame as written here: any opcode and payload, masked or not (clients must
        mask), with the 16-bit length form from 126 bytes on (even for a control frame)."""
        self.sock.sendall(raw_frames.frame(opcode, payload, final=final, masked=masked))

    def close_frame(self):
        """Reads until the server's close frame; returns (status or None, reason bytes)."""
        while True:
            opcode, payload = self.frame()
            if opcode == 0x8:
                code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
                return code, payload[2:]

    def _exactly(self, count):
        data = b""
        while len(data) < count:
            chunk = self.sock.recv(count - len(data))
            if not chunk:
                raise EOFError("the server closed the connection")
            data += chunk
        return data

    def frame(self):
        """The next frame: (opcode, payload). Server frames are never masked."""
        first, second = self._exactly(2)
        length = second & 0x7F
        if length == 126:
            length = struct.unpack("!H", self._exactly(2))[0]
        elif length == 127:
            length = struct.unpack("!Q", self._exactly(8))[0]
        return first & 0x0F, self._exactly(length)

    def receive(self, type_=None):
        """The next text message (or the next of `type_`), decoded; pings are skipped."""
        while True:
            opcode, payload = self.frame()
            if opcode == 0x8:
                code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
                raise EOFError(f"closed by the server: {code} {payload[2:].decode(errors='replace')}")
            if opcode == 0x1:
                message = json.loads(payload)
                if type_ is None or message["type"] == type_:
                    return message

    def ended(self, timeout=10.0):
        """Reads and discards until the server ends the connection; True if it did in time."""
        self.sock.settimeout(timeout)
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                if not self.sock.recv(65536):
                    return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False
        return False

    def close(self):
        self.sock.close()


def assert_a_new_player_can_play(server):
    """The node still serves: /healthz answers 200 and a player made now signs in, starts a
    game and is sent its first step. For tests that throw hostile input at a live server."""
    health = server.request("GET", "/healthz")
    assert health.status == 200, health.body
    token = create_player(server, "Checker")

    async def scenario():
        client = await GameClient.signed_in(server, token)
        await client.start("cruise", practice=True)
        step = await client.expect("step")
        assert step["step"] >= 0
        await client.close()

    run(scenario())
