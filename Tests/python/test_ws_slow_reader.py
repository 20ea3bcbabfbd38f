"""A client that stops reading while its game streams steps (docs/PROTOCOL.md, "Limits and
timeouts"): once its bounded outgoing queue is full it is dropped (1008), counted in the
metrics, and its game waits for the player as after a lost network; the server stays
responsive to everyone else meanwhile."""

import asyncio
import time

from ws_client import GameClient, RawGameSocket, create_player, link_second_device, metric, run

DROPPED = "retrorapid_websocket_clients_dropped_total"


def test_a_client_that_stops_reading_is_dropped_and_its_game_waits(server_factory, tmp_path):
    (tmp_path / "server0").mkdir()  # server_factory logs there but does not create it
    server = server_factory("--websocket-max-queued-messages", "8")
    token = create_player(server)
    other_device = link_second_device(server, token)

    # A small receive buffer, so the client's kernel holds little of what it does not read.
    reader = RawGameSocket.connect(server, receive_buffer=1024)
    reader.send(type="hello", token=token)
    assert reader.receive("welcome")["quota"]["playsLeft"] == 5
    reader.send(type="start", level="cruise")  # no car can reach the player before step 7
    started = reader.receive("started")
    # From here on the client reads nothing. Steps alone (~170 bytes every 800 ms) would take
    # minutes to fill the kernel's buffers and the queue; a settings change made on the
    # player's other device is pushed to this one too (~700 bytes each), which is quicker.
    version, slowest_health, pushes = 0, 0.0, 0
    deadline = time.monotonic() + 20
    while metric(server, DROPPED, reason="slow_reader") == 0:
        assert time.monotonic() < deadline, f"not dropped after {pushes} pushes:\n{server.log()}"
        for _ in range(5):
            reply = server.request("PATCH", "/api/v1/settings", {"cueVolume": pushes % 100}, other_device,
                                   {"If-Match": f'"{version}"'})
            assert reply.status == 200, reply.body
            version, pushes = reply.json()["version"], pushes + 1
        asked = time.monotonic()
        assert server.request("GET", "/healthz").status == 200
        slowest_health = max(slowest_health, time.monotonic() - asked)

    assert slowest_health < 0.5, slowest_health
    assert "dropping a client that does not read" in server.log()
    assert reader.ended(timeout=10), "the server kept the dropped connection open"
    reader.close()

    async def come_back():
        again = await GameClient.signed_in(server, token)
        waiting = again.welcome["resumable"]
        assert waiting is not None and waiting["gameId"] == started["game"]["gameId"]
        assert waiting["paused"] is True
        assert again.welcome["quota"]["playsLeft"] == 4  # still the one play
        await again.send(type="resume")
        snapshot = await again.expect("snapshot")
        assert snapshot["game"]["step"] == waiting["step"]
        await again.expect("resumed")
        step = await again.expect("step")
        assert step["step"] == waiting["step"] + 1
        await again.close()

    run(come_back())
    assert metric(server, DROPPED, reason="slow_reader") == 1
    assert server.request("GET", "/healthz").status == 200
