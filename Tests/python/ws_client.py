"""A small game client for the end-to-end tests of /ws (docs/PROTOCOL.md): the real
`websockets` library against the real server, plus player creation over the HTTP API."""

import asyncio
import json
import time

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

SUBPROTOCOL = "retrorapid.v1"


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
    async def open(cls, server, subprotocols=(SUBPROTOCOL,), **kwargs):
        ws = await connect(server.ws_url, subprotocols=list(subprotocols) if subprotocols else None,
                           open_timeout=5, **kwargs)
        return cls(ws)

    @classmethod
    async def signed_in(cls, server, token, client="pytest"):
        """Connected and past hello; `welcome` holds the welcome message."""
        self = await cls.open(server)
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
