"""A whole game over /ws against the real server: hello, start, server-driven steps, moves,
crash, game over with the score saved and on the leaderboard (docs/PROTOCOL.md)."""

import time

from ws_client import GameClient, create_player, metric, run

LATENESS = "retrorapid_game_step_lateness_seconds_count"


async def play_until_over(client, follow_cues_for, timeout=90):
    """Follows the safe-lane cue for `follow_cues_for` steps (scoring), then stops moving so
    the road ends the game. Returns (last step message, crash message, game over message)."""
    deadline = time.monotonic() + timeout
    last_step = crash = None
    while time.monotonic() < deadline:
        message = await client.recv(timeout=5)
        kind = message["type"]
        if kind == "step":
            last_step = message
            if message["step"] <= follow_cues_for and message["safeLanes"] and message["lane"] not in message["safeLanes"]:
                target = min(message["safeLanes"], key=lambda lane: abs(lane - message["lane"]))
                direction = "left" if target < message["lane"] else "right"
                for _ in range(abs(target - message["lane"])):
                    await client.send(type="move", direction=direction, step=message["step"])
        elif kind == "crash":
            crash = message
        elif kind == "gameOver":
            return last_step, crash, message
        elif kind == "error":
            raise AssertionError(f"unexpected error {message}")
    raise AssertionError("the game did not end in time")


def test_a_full_game_ends_in_game_over_with_its_score_saved_and_ranked(server):
    token = create_player(server, "Ada")

    async def scenario():
        client = await GameClient.signed_in(server, token)
        welcome = client.welcome
        assert welcome["protocol"] == "retrorapid.v1"
        assert welcome["player"]["displayName"] == "Ada"
        assert welcome["quota"]["playsLeft"] == 5
        assert welcome["resumable"] is None

        started = await client.start("rapid")
        game = started["game"]
        assert game["level"] == "rapid" and game["step"] == 0 and game["lane"] == 1
        assert game["interval"] == 420 and len(game["grid"]) == 7
        assert started["quota"]["playsLeft"] == 4

        last_step, crash, over = await play_until_over(client, follow_cues_for=40)
        assert crash is not None and crash["haptic"] == "crash"
        assert crash["step"] == last_step["step"] and crash["score"] == last_step["score"]
        assert over["gameId"] == game["gameId"]
        assert over["reason"] == "crash" and over["saved"] is True
        assert over["score"] == last_step["score"] and over["steps"] == last_step["step"]
        assert over["personalBest"] == over["score"] and over["rank"] == 1 and over["newBest"] is True
        assert over["standings"]["today"]["rank"] == 1
        assert over["quota"]["playsLeft"] == 4
        await client.close()
        return over

    over = run(scenario())
    board = server.request("GET", "/api/v1/leaderboards/rapid/today")
    assert board.status == 200, board.body
    entries = board.json()["entries"]
    assert [(entry["displayName"], entry["score"], entry["rank"]) for entry in entries] == [("Ada", over["score"], 1)]


def test_steps_carry_the_grid_lane_score_interval_and_cue(server):
    token = create_player(server)

    async def scenario():
        client = await GameClient.signed_in(server, token)
        await client.start("fast")
        first = await client.expect("step")
        second = await client.expect("step")
        assert second["step"] == first["step"] + 1
        for step in (first, second):
            assert step["interval"] == 600 and step["lane"] in (0, 1, 2)
            assert len(step["grid"]) == 7 and all(len(row) == 3 for row in step["grid"])
            assert set(step["safeLanes"]) <= {0, 1, 2} and step["haptic"] == "step"
        await client.close()

    timed_before = metric(server, LATENESS)
    steps_before = metric(server, "retrorapid_game_steps_total")
    run(scenario())
    # Each step sent is timed against its deadline for /metrics (counters reach it once per
    # timer batch, within 50 ms).
    deadline = time.monotonic() + 2
    while metric(server, LATENESS) < timed_before + 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert metric(server, LATENESS) >= timed_before + 2
    # Every step timed is a step counted.
    assert metric(server, "retrorapid_game_steps_total") - steps_before == metric(server, LATENESS) - timed_before


def test_a_move_is_answered_with_the_new_lane_and_whether_it_is_safe(server):
    token = create_player(server)

    async def scenario():
        client = await GameClient.signed_in(server, token)
        await client.start("cruise")
        step = await client.expect("step")
        await client.send(type="move", direction="left", step=step["step"])
        moved = await client.expect("moved")
        assert moved["lane"] == 0 and isinstance(moved["safe"], bool)
        if moved["safe"]:
            assert moved["haptic"] == "move"
            await client.send(type="move", direction="left", step=step["step"])
            bump = await client.expect("bump")  # the edge: perceivable, changes nothing
            assert bump["direction"] == "left" and bump["haptic"] == "bump"
        await client.close()

    run(scenario())


def test_a_practice_game_consumes_no_play_and_scores_nothing(server):
    token = create_player(server, "Practiser")

    async def scenario():
        client = await GameClient.signed_in(server, token)
        started = await client.start("cruise", practice=True)
        assert started["game"]["practice"] is True and started["quota"] is None
        await client.expect("step")
        await client.send(type="quit")
        over = await client.expect("gameOver")
        assert over["practice"] is True and over["reason"] == "abandoned" and over["saved"] is True
        assert over["personalBest"] is None and over["rank"] is None and over["standings"] == {}
        assert over["quota"]["playsLeft"] == 5
        await client.close()

    run(scenario())
    board = server.request("GET", "/api/v1/leaderboards/cruise/today")
    assert board.json()["entries"] == []
