"""Replays and ghost races with real clients (docs/PROTOCOL.md, "Replays and ghosts"): a real
game is played with moves to its crash and stored; its replay sends the very frames the player
got (the raw text, step by step); pause, play and seek; a ghost race whose `ghost` messages
follow the stored game's lanes and scores; and every bad request."""

import asyncio
import json

from ws_client import GameClient, create_player, run

# The frames of a game a replay sends again (a pause or a late move's revision is not in the
# stored log, and the original game here has neither).
FRAMES = {"step", "moved", "bump", "stepRevised", "speedUpSoon", "speedUp", "crash"}


async def raw(client, timeout=15.0):
    """The next text message exactly as the server sent it."""
    return await asyncio.wait_for(client.ws.recv(), timeout)


def safe_moves(step):
    """The moves (0 to 2) that take the player to the nearest lane the cue says is safe."""
    lane, safe = step["lane"], step["safeLanes"]
    if not safe or lane in safe:
        return []
    target = min(safe, key=lambda candidate: abs(candidate - lane))
    return ["left" if target < lane else "right"] * abs(target - lane)


async def play_original(client):
    """A ranked game at rapid: at step 1 three moves left (the last two bump into the edge),
    then the safe-lane cue for a few steps, then no moves until the road ends it. Returns the
    `started`, the `gameOver` and every frame's raw text in order."""
    started = await client.start("rapid")
    frames = []
    while True:
        text = await raw(client)
        message = json.loads(text)
        kind = message["type"]
        if kind in FRAMES:
            frames.append(text)
        if kind == "gameOver":
            return started, message, frames
        if kind == "error":
            raise AssertionError(f"unexpected error {message}")
        if kind == "step" and message["step"] == 1:
            for _ in range(3):
                await client.send(type="move", direction="left", step=1)
        elif kind == "step" and 2 <= message["step"] <= 6:
            for direction in safe_moves(message):
                await client.send(type="move", direction=direction, step=message["step"])


def steps_of(frames):
    """The step frames' raw texts by step number."""
    return {json.loads(text)["step"]: text for text in frames if json.loads(text)["type"] == "step"}


async def replay_until_ended(client):
    """Reads a replay's frames until its `replayState` says it ended; returns both."""
    frames = []
    while True:
        text = await raw(client)
        message = json.loads(text)
        if message["type"] == "replayState" and message["ended"]:
            return frames, message
        if message["type"] == "error":
            raise AssertionError(f"unexpected error {message}")
        if message["type"] in FRAMES:
            frames.append(text)


def test_a_replay_sends_the_stored_games_frames_byte_for_byte(server):
    player_token = create_player(server, "Ada")
    viewer_token = create_player(server, "Bo")

    async def scenario():
        player = await GameClient.signed_in(server, player_token)
        started, over, original = await play_original(player)
        game_id = started["game"]["gameId"]
        assert over["reason"] == "crash" and over["steps"] > 1
        # Moves on time only: nothing was revised, so the replay must send all of it again.
        kinds = [json.loads(text)["type"] for text in original]
        assert "stepRevised" not in kinds and "bump" in kinds and "moved" in kinds and kinds[-1] == "crash"

        viewer = await GameClient.signed_in(server, viewer_token)
        await viewer.send(type="replay", gameId=game_id)
        replaying = json.loads(await raw(viewer))
        assert replaying["type"] == "replaying", replaying
        assert replaying["gameId"] == game_id and replaying["player"] == {"name": "Ada"}
        assert replaying["level"] == "rapid" and replaying["reason"] == "crash"
        assert replaying["score"] == over["score"] and replaying["steps"] == over["steps"]
        assert replaying["step"] == 0 and replaying["playing"] is True
        game = replaying["game"]
        assert game["gameId"] == game_id and game["step"] == 0 and game["score"] == 0 and game["paused"] is False
        assert game["grid"] == started["game"]["grid"] and game["lane"] == started["game"]["lane"]
        frames, ended = await replay_until_ended(viewer)
        assert ended == {"type": "replayState", "gameId": game_id, "step": over["steps"], "playing": False, "ended": True}
        # Step by step, the very text the player got.
        assert steps_of(frames) == steps_of(original)
        assert frames == original

        # The player may replay their own game too, from the connection they played on.
        await player.send(type="replay", gameId=game_id)
        assert (await player.expect("replaying"))["gameId"] == game_id
        await player.send(type="stopWatching")
        stopped = await player.expect("watchEnded")
        assert stopped["gameId"] == game_id and stopped["reason"] == "stopped"
        await player.close()
        await viewer.close()

    run(scenario())


def test_bad_replay_requests_are_refused_and_change_nothing(server):
    token = create_player(server, "Ada")

    async def scenario():
        client = await GameClient.signed_in(server, token)
        started, over, _ = await play_original(client)
        game_id = started["game"]["gameId"]

        await client.send(type="replay", gameId="0123456789abcdef")
        error = await client.expect_error("game_not_found")
        assert error["inReplyTo"] == "replay" and "0123456789abcdef" in error["message"]
        await client.send(type="raceGhost", gameId="0123456789abcdef")
        assert (await client.expect_error("game_not_found"))["inReplyTo"] == "raceGhost"
        for message in ({"type": "replay"}, {"type": "replay", "gameId": ""}, {"type": "replay", "gameId": 7},
                        {"type": "raceGhost"}):
            await client.send(**message)
            error = await client.expect_error("bad_message")
            assert error["inReplyTo"] == message["type"], error
            assert "gameId" in error["message"]
        # Nothing to control yet.
        await client.send(type="replayControl", action="pause")
        assert (await client.expect_error("not_watching"))["inReplyTo"] == "replayControl"

        # While this connection plays a game, neither a replay nor a ghost race.
        playing = await client.start("rapid", practice=True)
        await client.send(type="replay", gameId=game_id)
        error = await client.expect_error("game_in_progress")
        assert error["inReplyTo"] == "replay" and playing["game"]["gameId"] in error["message"]
        await client.send(type="raceGhost", gameId=game_id)
        assert (await client.expect_error("game_in_progress"))["inReplyTo"] == "raceGhost"
        # The game goes on as before.
        await client.expect("step")
        await client.send(type="quit")
        assert (await client.expect("gameOver"))["gameId"] == playing["game"]["gameId"]

        # Bad controls of a replay.
        await client.send(type="replay", gameId=game_id)
        await client.expect("replaying")
        await client.send(type="replayControl", action="pause")
        paused = await client.expect("replayState")
        for message, code in (
            ({"action": "seek", "step": -1}, "step_out_of_range"),
            ({"action": "seek", "step": over["steps"] + 1}, "step_out_of_range"),
            ({"action": "seek"}, "bad_message"),
            ({"action": "seek", "step": "3"}, "bad_message"),
            ({"action": "rewind"}, "bad_message"),
            ({}, "bad_message"),
        ):
            await client.send(type="replayControl", **message)
            error = await client.expect_error(code)
            assert error["inReplyTo"] == "replayControl", (message, error)
        # Still held where it was.
        await client.send(type="ping")
        _, skipped = await client.until(lambda m: m["type"] == "pong")
        assert not any(m["type"] in FRAMES for m in skipped), skipped
        await client.send(type="replayControl", action="pause")
        assert (await client.expect("replayState"))["step"] == paused["step"]
        await client.close()

    run(scenario())


def test_pause_play_and_seek_a_replay(server):
    player_token = create_player(server, "Ada")
    viewer_token = create_player(server, "Bo")

    async def scenario():
        player = await GameClient.signed_in(server, player_token)
        started, over, original = await play_original(player)
        await player.close()
        game_id, last = started["game"]["gameId"], over["steps"]
        by_step = steps_of(original)
        viewer = await GameClient.signed_in(server, viewer_token)
        await viewer.send(type="replay", gameId=game_id)
        await viewer.expect("replaying")

        # Pause after the first step: the state says where it stopped, and no step follows.
        seen = []
        while True:
            text = await raw(viewer)
            message = json.loads(text)
            if message["type"] == "step":
                seen.append(text)
                break
        await viewer.send(type="replayControl", action="pause")
        while True:
            message = json.loads(await raw(viewer))
            if message["type"] == "step":
                seen.append(json.dumps(message))
            if message["type"] == "replayState":
                break
        assert message["playing"] is False and message["ended"] is False
        assert message["step"] == json.loads(seen[-1])["step"]
        await asyncio.sleep(1.0)  # two steps' time at rapid
        await viewer.send(type="ping")
        assert json.loads(await raw(viewer))["type"] == "pong"

        # Seek to the middle: the state, then the picture there, still paused.
        middle = last // 2
        await viewer.send(type="replayControl", action="seek", step=middle)
        state = json.loads(await raw(viewer))
        assert state == {"type": "replayState", "gameId": game_id, "step": middle, "playing": False, "ended": False}
        snapshot = json.loads(await raw(viewer))
        assert snapshot["type"] == "snapshot" and snapshot["game"]["step"] == middle and snapshot["game"]["paused"] is True
        if middle > 0:
            frame = json.loads(by_step[middle])
            for key in ("grid", "lane", "score"):
                assert snapshot["game"][key] == frame[key], key

        # Play from there: exactly what the player got after that step.
        await viewer.send(type="replayControl", action="play")
        state = json.loads(await raw(viewer))
        assert state == {"type": "replayState", "gameId": game_id, "step": middle, "playing": True, "ended": False}
        rest, ended = await replay_until_ended(viewer)
        after = original.index(by_step[middle]) + 1 if middle > 0 else 0
        assert rest == original[after:]
        assert ended["step"] == last

        # At the end a seek still works, and play starts it again from step 0.
        await viewer.send(type="replayControl", action="seek", step=1)
        assert json.loads(await raw(viewer))["step"] == 1
        assert json.loads(await raw(viewer))["game"]["step"] == 1
        await viewer.send(type="replayControl", action="seek", step=last)
        state = json.loads(await raw(viewer))
        assert state["step"] == last and state["ended"] is True and state["playing"] is False
        await viewer.expect("snapshot")
        await viewer.send(type="replayControl", action="play")
        state = json.loads(await raw(viewer))
        assert state == {"type": "replayState", "gameId": game_id, "step": 0, "playing": True, "ended": False}
        assert json.loads(await raw(viewer))["game"]["step"] == 0
        assert await raw(viewer) == original[0]

        # stopWatching ends it; then there is nothing to control.
        await viewer.send(type="stopWatching")
        stopped, _ = await viewer.until(lambda m: m["type"] == "watchEnded")
        assert stopped["gameId"] == game_id and stopped["reason"] == "stopped"
        await viewer.send(type="replayControl", action="play")
        await viewer.expect_error("not_watching")
        await viewer.close()

    run(scenario())


def test_a_ghost_race_runs_the_stored_game_beside_the_player(server):
    token = create_player(server, "Ada")

    async def scenario():
        client = await GameClient.signed_in(server, token)
        started, over, original = await play_original(client)
        game_id, last = started["game"]["gameId"], over["steps"]
        by_step = {step: json.loads(text) for step, text in steps_of(original).items()}
        crash = json.loads(original[-1])

        await client.send(type="raceGhost", gameId=game_id)
        race = await client.expect("started")
        game = race["game"]
        assert game["ghost"] == {"gameId": game_id, "name": "Ada", "score": over["score"]}
        assert game["practice"] is True and game["level"] == "rapid" and game["gameId"] != game_id
        assert race["quota"] is None  # a practice game: no play used
        # The same road: the first picture is the stored game's.
        assert game["grid"] == started["game"]["grid"]

        ghosts, player_step, paused_once = [], 0, False
        while True:
            message = json.loads(await raw(client))
            kind = message["type"]
            if kind == "error":
                raise AssertionError(f"unexpected error {message}")
            if kind == "gameOver":
                raise AssertionError(f"the player crashed before the ghost: {message}")
            if kind == "step":
                player_step = message["step"]
                for direction in safe_moves(message):
                    await client.send(type="move", direction=direction, step=player_step)
                if player_step == 3 and not paused_once:
                    # A pause holds the ghost too: nothing of it while the player is paused.
                    paused_once = True
                    await client.send(type="pause")
                    _, skipped = await client.until(lambda m: m["type"] == "paused")
                    # The ghost's step 3 came with the player's; nothing after it.
                    assert [m["step"] for m in skipped if m["type"] == "ghost"] == [3], skipped
                    ghosts += [m for m in skipped if m["type"] == "ghost"]
                    await asyncio.sleep(1.0)
                    await client.send(type="ping")
                    pong = json.loads(await raw(client))
                    assert pong["type"] == "pong", pong
                    await client.send(type="resume")
            if kind == "ghost":
                # Started together: the ghost's step comes with the player's.
                assert message["step"] == player_step, (message, player_step)
                ghosts.append(message)
                if message["state"] != "racing":
                    break
        assert paused_once
        # One per stored step, its lane and score as the stored game had them.
        assert [g["step"] for g in ghosts] == list(range(1, last + 1))
        for ghost in ghosts[:-1]:
            frame = by_step[ghost["step"]]
            assert ghost == {"type": "ghost", "step": frame["step"], "lane": frame["lane"], "score": frame["score"],
                             "state": "racing"}
        assert ghosts[-1] == {"type": "ghost", "step": last, "lane": crash["lane"], "score": over["score"],
                              "state": "crashed"}

        # The race goes on without it; quitting ends it, as a practice game.
        await client.send(type="quit")
        ended = await client.expect("gameOver")
        assert ended["gameId"] == game["gameId"] and ended["practice"] is True
        # A new game starts as usual afterwards: nothing of the ghost race is left.
        again = await client.start("rapid", practice=True)
        await client.send(type="quit")
        assert (await client.expect("gameOver"))["gameId"] == again["game"]["gameId"]
        await client.close()

    run(scenario())
