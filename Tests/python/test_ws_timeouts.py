"""Silent clients (docs/PROTOCOL.md, "Limits and timeouts"): a connection must say hello in
time, and one with no game running must not stay silent for longer than the idle timeout;
both are told why (an error, then close code 4408). A player who is only listening to a
running game is never idle: the server sends every step, and pressing nothing is playing."""

import asyncio
import time

from ws_client import GameClient, create_player, metric, run


def test_a_client_that_never_says_hello_is_closed_with_4408(server_factory, tmp_path):
    (tmp_path / "server0").mkdir()  # server_factory logs there but does not create it
    server = server_factory("--hello-timeout-seconds", "1")

    async def scenario():
        client = await GameClient.open(server)
        opened = time.monotonic()
        # Anything but hello does not count: the deadline runs from the upgrade.
        await asyncio.sleep(0.5)
        await client.send(type="ping")
        await client.expect_error("hello_first")
        error = await client.expect_error("hello_timeout", timeout=5)
        assert "hello" in error["message"]
        code, reason = await client.closed(timeout=5)
        elapsed = time.monotonic() - opened
        assert code == 4408 and reason == "hello timeout: no hello within 1 s"
        assert 0.9 <= elapsed <= 2.5, elapsed

    run(scenario())
    assert metric(server, "retrorapid_websocket_clients_dropped_total", reason="hello_timeout") == 1


def test_a_signed_in_client_silent_outside_a_game_is_closed_after_the_idle_bound(server_factory, tmp_path):
    (tmp_path / "server0").mkdir()
    server = server_factory("--websocket-idle-timeout-seconds", "2")
    token = create_player(server)

    async def scenario():
        client = await GameClient.signed_in(server, token)
        assert client.welcome["limits"]["idleTimeoutSeconds"] == 2
        # A message of any kind restarts the clock...
        await asyncio.sleep(1.2)
        await client.send(type="ping")
        await client.expect("pong")
        pinged = time.monotonic()
        # ...and then silence for the whole bound ends the connection.
        error = await client.expect_error("idle_timeout", timeout=5)
        assert "ping" in error["message"]
        code, reason = await client.closed(timeout=5)
        elapsed = time.monotonic() - pinged
        assert code == 4408 and reason == "idle timeout: no message for 2 s"
        assert 1.8 <= elapsed <= 3.5, elapsed  # from the ping, not from hello

    run(scenario())
    assert metric(server, "retrorapid_websocket_clients_dropped_total", reason="idle_timeout") == 1


def test_a_player_only_listening_to_a_running_game_is_not_closed(server_factory, tmp_path):
    (tmp_path / "server0").mkdir()
    server = server_factory("--websocket-idle-timeout-seconds", "1")
    token = create_player(server)

    async def scenario():
        client = await GameClient.signed_in(server, token)
        started = await client.start("cruise")
        # Four and a half idle bounds of listening, sending nothing at all. (Cruise steps
        # every 800 ms; the road starts empty, so no car can reach the player before step 7.)
        listening_until = time.monotonic() + 4.5
        steps = []
        while time.monotonic() < listening_until:
            message = await client.recv(timeout=2)
            assert message["type"] not in ("error", "gameOver", "crash"), message
            if message["type"] == "step":
                steps.append(message["step"])
        assert steps == list(range(1, len(steps) + 1)) and len(steps) >= 5, steps

        # A paused game is not running: from the pause on, silence counts.
        await client.send(type="pause")
        await client.expect("paused")
        paused = time.monotonic()
        await client.expect_error("idle_timeout", timeout=5)
        code, _ = await client.closed(timeout=5)
        assert code == 4408 and 0.8 <= time.monotonic() - paused <= 2.5

        # The game waits for its player like any game whose connection went.
        again = await GameClient.signed_in(server, token)
        waiting = again.welcome["resumable"]
        assert waiting["gameId"] == started["game"]["gameId"] and waiting["paused"] is True
        await again.close()

    run(scenario())
    assert metric(server, "retrorapid_websocket_clients_dropped_total", reason="idle_timeout") == 1
