"""The server's own keepalive (docs/PROTOCOL.md, "Limits and timeouts"): a game connection that
sends nothing gets a WebSocket PING; one that answers keeps its game, one that answers nothing
is closed with 1001 and its game waits for the player. Short limits here (--keepalive-*)."""
import asyncio
import os
import struct
import subprocess
from pathlib import Path

from ws_client import GameClient, RawGameSocket, create_player, metric, run

KEEPALIVE = ("--keepalive-ping-seconds", "1", "--keepalive-hangup-seconds", "3")


def test_a_silent_peer_is_pinged_then_closed_and_its_game_waits(server_factory):
    server = server_factory(*KEEPALIVE)
    token = create_player(server)
    raw = RawGameSocket.connect(server, timeout=10)
    raw.send(type="hello", token=token)
    assert raw.receive("welcome")["type"] == "welcome"
    raw.send(type="start", level="cruise", practice=True)
    raw.receive("started")
    # Read everything, answer nothing: a PING must come, then the close.
    opcodes = []
    close_payload = None
    while close_payload is None:
        opcode, payload = raw.frame()
        opcodes.append(opcode)
        if opcode == 0x8:
            close_payload = payload
    assert 0x9 in opcodes, opcodes  # PING
    assert opcodes.index(0x9) < len(opcodes) - 1
    code = struct.unpack("!H", close_payload[:2])[0]
    assert code == 1001 and close_payload[2:] == b"no answer to pings"
    raw.close()
    assert metric(server, "retrorapid_websocket_clients_dropped_total", reason="keepalive") == 1
    assert "closing a connection that answers nothing" in server.log()
    assert "game waits for its player" in server.log()

    async def resume():
        client = await GameClient.signed_in(server, token)
        welcome_resumable = client.welcome["resumable"]
        await client.close()
        return welcome_resumable

    assert run(resume())["practice"] is True  # the game waited for its player


def test_a_peer_that_answers_pings_stays_connected(server_factory):
    server = server_factory(*KEEPALIVE)
    token = create_player(server)

    async def scenario():
        # The websockets client answers PINGs itself; this one sends no message for 5 s.
        client = await GameClient.signed_in(server, token)
        await asyncio.sleep(5.0)  # its reader task keeps answering meanwhile
        await client.send(type="ping")
        pong = await client.expect("pong")
        await client.close()
        return pong

    assert run(scenario())["type"] == "pong"
    assert metric(server, "retrorapid_websocket_clients_dropped_total", reason="keepalive") == 0


def test_hangup_must_come_after_the_ping(tmp_path):
    binary = str(Path(os.environ["RETRORAPID_BINARY"]).resolve())
    result = subprocess.run([binary, "serve", "--keepalive-ping-seconds", "30", "--keepalive-hangup-seconds", "30",
                             "--database-path", str(tmp_path / "db.sqlite")], capture_output=True, text=True, timeout=30)
    assert result.returncode == 64
    assert "keepalive-hangup-seconds (30) must be more than keepalive-ping-seconds (30)" in result.stderr
    assert not (tmp_path / "db.sqlite").exists()
