"""Pause and resume, and a dropped connection: the game waits, paused, for the player to come
back within the grace period and then goes on from a full snapshot (docs/PROTOCOL.md)."""

import asyncio
import time

from ws_client import GameClient, create_player, link_second_device, run


def test_a_paused_game_takes_no_steps_until_resumed(server):
    token = create_player(server)

    async def scenario():
        client = await GameClient.signed_in(server, token)
        await client.start("fast")
        step = await client.expect("step")
        await client.send(type="pause")
        paused, between = await client.until(lambda message: message["type"] == "paused")
        assert paused["reason"] == "player"
        last = max([step["step"]] + [m["step"] for m in between if m["type"] == "step"])
        await client.send(type="pause")
        await client.expect_error("already_paused")
        try:
            message = await client.recv(timeout=1.5)  # three steps' worth of silence
            raise AssertionError(f"a paused game sent {message}")
        except asyncio.TimeoutError:
            pass
        await client.send(type="move", direction="left", step=last)
        await client.expect_error("paused")
        await client.send(type="resume")
        resumed = await client.expect("resumed")
        assert resumed["nextStepInMs"] == 600
        following = await client.expect("step")
        assert following["step"] == last + 1  # nothing happened while paused
        await client.send(type="resume")
        await client.expect_error("not_paused")
        await client.close()

    run(scenario())


def test_a_reconnect_within_the_grace_period_resumes_with_a_snapshot(server):
    token = create_player(server)

    async def scenario():
        first = await GameClient.signed_in(server, token)
        started = await first.start("cruise")
        seen = [await first.expect("step") for _ in range(2)]
        await first.drop()  # the network goes; no closing handshake
        await asyncio.sleep(1.0)

        second = await GameClient.signed_in(server, token)
        waiting = second.welcome["resumable"]
        assert waiting is not None and waiting["gameId"] == started["game"]["gameId"]
        assert waiting["paused"] is True and waiting["step"] >= seen[-1]["step"]
        assert second.welcome["quota"]["playsLeft"] == 4  # still the one play

        await second.send(type="resume")
        snapshot = await second.expect("snapshot")
        game = snapshot["game"]
        assert game["gameId"] == waiting["gameId"] and game["step"] == waiting["step"]
        assert len(game["grid"]) == 7 and game["lane"] == waiting["lane"] and game["score"] == waiting["score"]
        assert (await second.expect("resumed"))["nextStepInMs"] == 800
        step = await second.expect("step")
        assert step["step"] == game["step"] + 1
        await second.send(type="move", direction="right", step=step["step"])
        await second.expect("moved")
        await second.close()

    run(scenario())


def test_another_device_can_take_the_game_over(server):
    token = create_player(server)
    other = link_second_device(server, token)

    async def scenario():
        phone = await GameClient.signed_in(server, token)
        started = await phone.start("fast")
        await phone.expect("step")
        tablet = await GameClient.signed_in(server, other)
        assert tablet.welcome["resumable"]["gameId"] == started["game"]["gameId"]
        await tablet.send(type="start", level="fast")
        await tablet.expect_error("game_in_progress")  # one game at a time per player
        await tablet.send(type="resume")
        await tablet.expect("snapshot")
        detached = await phone.expect("detached")
        assert detached["gameId"] == started["game"]["gameId"]
        await tablet.expect("step")
        await phone.send(type="pause")
        await phone.expect_error("no_game")
        for client in (phone, tablet):
            await client.close()

    run(scenario())


def test_a_game_whose_player_never_comes_back_is_saved_as_abandoned(server_factory, tmp_path):
    (tmp_path / "server0").mkdir()  # server_factory logs there but does not create it
    server = server_factory("--disconnect-grace-seconds", "1")
    token = create_player(server)

    async def scenario():
        client = await GameClient.signed_in(server, token)
        started = await client.start("rapid")
        await client.expect("step")
        await client.drop()
        await asyncio.sleep(2.5)
        again = await GameClient.signed_in(server, token)
        assert again.welcome["resumable"] is None
        await again.send(type="resume")
        await again.expect_error("no_game")
        await again.close()
        return started["game"]["gameId"]

    run(scenario())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        rows = server.query("SELECT end_reason, steps FROM games")
        if rows:
            break
        time.sleep(0.1)
    assert len(rows) == 1 and rows[0][0] == "abandoned" and rows[0][1] >= 1


def test_a_waiting_game_can_be_quit_from_a_new_connection(server):
    token = create_player(server)

    async def scenario():
        first = await GameClient.signed_in(server, token)
        started = await first.start("fast")
        await first.expect("step")
        await first.drop()
        second = await GameClient.signed_in(server, token)
        await second.send(type="start", level="fast")
        refusal = await second.expect_error("game_in_progress")
        assert "quit" in refusal["message"]
        await second.send(type="quit")
        over = await second.expect("gameOver")
        assert over["gameId"] == started["game"]["gameId"] and over["reason"] == "abandoned"
        restarted = await second.start("fast")  # and now a new game may start
        assert restarted["game"]["gameId"] != over["gameId"]
        await second.close()

    run(scenario())
