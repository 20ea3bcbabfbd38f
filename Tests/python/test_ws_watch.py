"""Watching a running game with real clients (docs/PROTOCOL.md, "Watching"): a watcher gets
exactly the frames the player gets, byte for byte; the cap per game; the count the player
hears; a finished game; a dropped player; and every bad `watch`."""

import asyncio
import json
import time

from ws_client import GameClient, RawGameSocket, create_player, link_second_device, metric, nearest_safe_move, run

# What a watcher of a seat receives: the seat's game frames (docs/PROTOCOL.md, "Watching").
GAME_FRAMES = {"step", "moved", "bump", "stepRevised", "speedUpSoon", "speedUp", "crash", "paused", "resumed"}


async def raw(client, timeout=15.0):
    """The next text message exactly as the server sent it."""
    return await asyncio.wait_for(client.ws.recv(), timeout)


def test_a_watcher_gets_exactly_the_players_frames(server):
    player_token = create_player(server, "Ada")
    watcher_token = create_player(server, "Bo")

    async def scenario():
        player = await GameClient.signed_in(server, player_token)
        watcher = await GameClient.signed_in(server, watcher_token)
        started = await player.start("rapid")  # a ranked game
        game_id = started["game"]["gameId"]
        await watcher.send(type="watch", gameId=game_id)
        watching = json.loads(await raw(watcher))
        assert watching["type"] == "watching", watching
        assert watching["gameId"] == game_id and watching["player"] == {"name": "Ada"}
        assert watching["room"] is None and watching["watchers"] == 1
        assert watching["game"]["gameId"] == game_id and watching["game"]["level"] == "rapid"

        player_frames, watcher_frames, counts = [], [], []

        async def play():
            # A pause and a resume, moves into the edge (a bump), then the safe-lane cue for a
            # few steps, then no moves at all until the road ends the game.
            stage, followed = "pause", 0
            while True:
                text = await raw(player)
                message = json.loads(text)
                kind = message["type"]
                if kind in GAME_FRAMES:
                    player_frames.append(text)
                if kind == "watchers":
                    counts.append(message)
                elif kind == "gameOver":
                    return message
                elif kind == "error":
                    raise AssertionError(f"unexpected error {message}")
                elif kind == "paused":
                    await player.send(type="resume")
                elif kind == "step" and stage == "pause":
                    stage = "bump"
                    await player.send(type="pause")
                elif kind == "step" and stage == "bump":
                    stage = "follow"
                    for _ in range(3):
                        await player.send(type="move", direction="left", step=message["step"])
                elif kind == "step" and stage == "follow" and followed < 5:
                    followed += 1
                    direction = nearest_safe_move(message)
                    if direction:
                        await player.send(type="move", direction=direction, step=message["step"])

        async def watch():
            while True:
                text = await raw(watcher)
                message = json.loads(text)
                if message["type"] == "watchEnded":
                    return message
                watcher_frames.append(text)

        over, ended = await asyncio.gather(play(), watch())
        await player.close()
        await watcher.close()
        return watching, over, ended, player_frames, watcher_frames, counts

    watching, over, ended, player_frames, watcher_frames, counts = run(scenario())
    kinds = [json.loads(text)["type"] for text in watcher_frames]
    assert set(kinds) <= GAME_FRAMES, kinds
    assert {"step", "paused", "resumed", "moved", "bump", "crash"} <= set(kinds), kinds
    # The watcher came in after the game's first frames, if any: what it got is the end of
    # what the player got, the same text frame for frame.
    assert len(watcher_frames) <= len(player_frames)
    assert player_frames[len(player_frames) - len(watcher_frames):] == watcher_frames
    first_step = next(json.loads(text) for text in watcher_frames if json.loads(text)["type"] == "step")
    assert first_step["step"] == watching["game"]["step"] + 1
    assert over["reason"] == "crash" and ended["reason"] == "crash"
    assert ended["gameId"] == over["gameId"] and ended["score"] == over["score"]
    assert counts and counts[0] == {"type": "watchers", "gameId": over["gameId"], "count": 1}


def test_the_cap_and_the_count_the_player_hears(server_factory):
    server = server_factory("--watchers-per-game", "2")
    player_token = create_player(server, "Ada")
    tokens = [create_player(server, name) for name in ("Bo", "Cy", "Di")]

    async def scenario():
        player = await GameClient.signed_in(server, player_token)
        first, second, third = [await GameClient.signed_in(server, token) for token in tokens]
        game_id = (await player.start("cruise", practice=True))["game"]["gameId"]
        before_first = time.monotonic()
        await first.send(type="watch", gameId=game_id)
        assert (await first.expect("watching"))["watchers"] == 1
        await second.send(type="watch", gameId=game_id)
        assert (await second.expect("watching"))["watchers"] == 2
        await third.send(type="watch", gameId=game_id)
        refused = await third.expect_error("watchers_full")
        assert refused["inReplyTo"] == "watch" and "2" in refused["message"]
        # The player hears 1 at once, then 2 no sooner than a second after that.
        heard, before = await player.until(lambda m: m["type"] == "watchers" and m["count"] == 2)
        assert time.monotonic() - before_first >= 1.0
        assert [m["count"] for m in before if m["type"] == "watchers"] == [1]
        assert heard["gameId"] == game_id
        await first.send(type="stopWatching")
        stopped = await first.expect("watchEnded")
        assert stopped["gameId"] == game_id and stopped["reason"] == "stopped" and isinstance(stopped["score"], int)
        await first.send(type="stopWatching")
        await first.expect_error("not_watching")
        # The freed place is the third's.
        await third.send(type="watch", gameId=game_id)
        assert (await third.expect("watching"))["watchers"] == 2
        for client in (player, first, second, third):
            await client.close()

    run(scenario())


def test_a_finished_game_and_bad_watches_are_refused(server):
    player_token = create_player(server, "Ada")
    watcher_token = create_player(server, "Bo")

    async def scenario():
        player = await GameClient.signed_in(server, player_token)
        watcher = await GameClient.signed_in(server, watcher_token)
        game_id = (await player.start("cruise"))["game"]["gameId"]
        # The player's own connection plays: it cannot watch.
        await player.send(type="watch", gameId=game_id)
        assert (await player.expect_error("game_in_progress"))["inReplyTo"] == "watch"
        await player.send(type="quit")
        await player.expect("gameOver")
        await watcher.send(type="watch", gameId=game_id)
        over = await watcher.expect_error("game_over")
        assert game_id in over["message"] and "replay" in over["message"]
        await watcher.send(type="watch", gameId="0123456789abcdef")
        await watcher.expect_error("game_not_found")
        for bad in ({}, {"gameId": 5}, {"gameId": game_id, "room": "K7QXM2"}, {"room": "K7QXM2", "seat": -1},
                    {"gameId": ""}):
            await watcher.send(type="watch", **bad)
            refused = await watcher.expect_error("bad_message")
            assert refused["inReplyTo"] == "watch", (bad, refused)
        await watcher.send(type="stopWatching")
        await watcher.expect_error("not_watching")
        await player.close()
        await watcher.close()

    run(scenario())


def test_watchers_see_the_player_drop_and_come_back(server):
    token = create_player(server, "Ada")
    second_device = link_second_device(server, token)

    async def scenario():
        player = await GameClient.signed_in(server, token)
        game_id = (await player.start("cruise", practice=True))["game"]["gameId"]
        await player.expect("step")
        # Watching your own game from another device is allowed.
        watcher = await GameClient.signed_in(server, second_device)
        await watcher.send(type="watch", gameId=game_id)
        assert (await watcher.expect("watching"))["player"] == {"name": "Ada"}
        await player.drop()
        paused = await watcher.expect("paused")
        assert paused["reason"] == "disconnected"
        back = await GameClient.signed_in(server, token)
        await back.send(type="resume")
        await back.expect("snapshot")
        await watcher.expect("resumed")
        count, _ = await back.until(lambda m: m["type"] == "watchers")
        assert count == {"type": "watchers", "gameId": game_id, "count": 1}
        await back.send(type="quit")
        ended = await watcher.expect("watchEnded")
        assert ended["gameId"] == game_id and ended["reason"] == "abandoned"
        await back.close()
        await watcher.close()

    run(scenario())


def test_a_watcher_that_stops_reading_is_dropped_and_the_game_goes_on(server_factory, tmp_path):
    (tmp_path / "server0").mkdir()  # server_factory logs there but does not create it
    server = server_factory("--websocket-max-queued-messages", "8")
    player_token = create_player(server, "Ada")
    watcher_token = create_player(server, "Bo")
    watchers_other_device = link_second_device(server, watcher_token)

    async def scenario():
        player = await GameClient.signed_in(server, player_token)
        game_id = (await player.start("cruise", practice=True))["game"]["gameId"]
        await player.send(type="pause")
        await player.expect("paused")
        # A watcher on a small receive buffer that reads nothing after `watching`; settings
        # pushed to it from its other device (~700 bytes each) fill its queue quickly.
        watcher = RawGameSocket.connect(server, receive_buffer=1024)
        watcher.send(type="hello", token=watcher_token)
        watcher.receive("welcome")
        watcher.send(type="watch", gameId=game_id)
        assert watcher.receive("watching")["watchers"] == 1
        count, _ = await player.until(lambda m: m["type"] == "watchers")
        assert count["count"] == 1
        version, pushes = 0, 0
        while metric(server, "retrorapid_websocket_clients_dropped_total", reason="slow_reader") == 0:
            assert pushes < 400, f"not dropped after {pushes} pushes:\n{server.log()}"
            reply = server.request("PATCH", "/api/v1/settings", {"cueVolume": pushes % 100}, watchers_other_device,
                                   {"If-Match": f'"{version}"'})
            assert reply.status == 200, reply.body
            version, pushes = reply.json()["version"], pushes + 1
        assert watcher.ended(timeout=10), "the server kept the dropped watcher open"
        watcher.close()
        # The game never noticed: the player hears nobody watches any more, and plays on.
        count, _ = await player.until(lambda m: m["type"] == "watchers" and m["count"] == 0)
        assert count["gameId"] == game_id
        await player.send(type="resume")
        await player.expect("resumed")
        step = await player.expect("step")
        assert step["step"] >= 1
        await player.close()

    run(scenario())
