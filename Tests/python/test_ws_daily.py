"""The daily road with real clients against the real server (docs/PROTOCOL.md, "The daily
road"): two players get the same road (identical grids, step by step), one scored attempt each
per day (a second is refused `daily_played` and consumes nothing; practice on the road stays
free), both reach the day's board, and `resetsAt` is the next 00:00 UTC."""

import datetime

from ws_client import GameClient, create_player, nearest_safe_move, run

STEPS = 12


def today():
    return datetime.datetime.now(datetime.timezone.utc).date()


def next_midnight():
    return (today() + datetime.timedelta(days=1)).isoformat() + "T00:00:00Z"


async def play_daily(client, practice=False, steps=STEPS):
    """Starts today's daily rapid road, follows the safe lanes for `steps` steps, then quits.
    Returns (started, the grids seen: the start's then each step's, gameOver)."""
    await client.send(type="start", level="rapid", road="daily", practice=practice)
    started = await client.expect("started")
    grids = [started["game"]["grid"]]
    while True:
        message = await client.recv(timeout=10)
        if message["type"] == "step":
            grids.append(message["grid"])
            if message["step"] >= steps:
                await client.send(type="quit")
                return started, grids, await client.expect("gameOver")
            direction = nearest_safe_move(message)
            if direction:
                goal = min(message["safeLanes"], key=lambda lane: abs(lane - message["lane"]))
                for _ in range(abs(goal - message["lane"])):
                    await client.send(type="move", direction=direction, step=message["step"])
        elif message["type"] == "gameOver":
            raise AssertionError(f"the daily game ended before step {steps}: {message}")
        elif message["type"] == "error":
            raise AssertionError(f"unexpected error {message}")


def test_two_players_share_the_daily_road_and_have_one_scored_attempt_each(server):
    ada_token = create_player(server, "Ada")
    bo_token = create_player(server, "Bo")

    async def scenario():
        ada = await GameClient.signed_in(server, ada_token)
        bo = await GameClient.signed_in(server, bo_token)
        try:
            ada_started, ada_grids, ada_over = await play_daily(ada)
            bo_started, bo_grids, bo_over = await play_daily(bo)
            for started in (ada_started, bo_started):
                assert started["game"]["road"] == "daily" and started["game"]["day"] == today().isoformat()
                assert started["game"]["practice"] is False and started["quota"]["playsLeft"] == 4
            # The same road for both, step by step; and different games.
            assert len(ada_grids) == len(bo_grids) == STEPS + 1
            assert ada_grids == bo_grids
            assert ada_started["game"]["gameId"] != bo_started["game"]["gameId"]
            for over, started in ((ada_over, ada_started), (bo_over, bo_started)):
                assert over["gameId"] == started["game"]["gameId"] and over["saved"] is True
                assert over["daily"]["day"] == today().isoformat() and over["daily"]["best"] == over["score"]
                assert over["daily"]["rank"] in (1, 2)
            assert {ada_over["daily"]["rank"], bo_over["daily"]["rank"]} == {1, 2}

            # A second scored attempt today: refused, nothing consumed, the connection still usable.
            quota_before = server.request("GET", "/api/v1/quota", token=ada_token).json()
            await ada.send(type="start", level="rapid", road="daily")
            refusal = await ada.expect_error("daily_played")
            assert refusal["inReplyTo"] == "start" and refusal["resetsAt"] == next_midnight()
            assert server.request("GET", "/api/v1/quota", token=ada_token).json() == quota_before

            # Practice on it is free, as often as wanted, on the same road.
            for _ in range(2):
                started, grids, over = await play_daily(ada, practice=True, steps=3)
                assert started["game"]["practice"] is True and started["game"]["road"] == "daily" and started["quota"] is None
                assert grids == ada_grids[:4]
                assert over["daily"] is None and over["practice"] is True
            assert server.request("GET", "/api/v1/quota", token=ada_token).json() == quota_before

            # A random road is still the default, and says so.
            random_started = await ada.start("rapid")
            assert random_started["game"]["road"] == "random" and "day" not in random_started["game"]
            await ada.send(type="quit")
            await ada.expect("gameOver")
        finally:
            await ada.close()
            await bo.close()
        return ada_over, bo_over

    ada_over, bo_over = run(scenario())

    board = server.request("GET", "/api/v1/leaderboards/rapid/daily")
    assert board.status == 200, board.body
    body = board.json()
    assert body["day"] == today().isoformat() and body["resetsAt"] == next_midnight() and body["total"] == 2
    assert {entry["gameId"] for entry in body["entries"]} == {ada_over["gameId"], bo_over["gameId"]}
    assert {entry["displayName"] for entry in body["entries"]} == {"Ada", "Bo"}
    road = server.request("GET", "/api/v1/daily/rapid", token=ada_token).json()
    assert road["scoredAttempt"]["gameId"] == ada_over["gameId"] and road["resetsAt"] == next_midnight()
    # Another player's daily game of today cannot be replayed yet; your own can.
    assert server.request("GET", f"/api/v1/games/{ada_over['gameId']}", token=bo_token).json()["replayable"] is False
    assert server.request("GET", f"/api/v1/games/{ada_over['gameId']}", token=ada_token).json()["replayable"] is True


def test_a_bad_road_is_refused_and_starts_nothing(server):
    token = create_player(server, "Ada")

    async def scenario():
        client = await GameClient.signed_in(server, token)
        try:
            for road in ("weekly", 3, ""):
                await client.send(type="start", level="rapid", road=road)
                refusal = await client.expect_error("bad_message")
                assert refusal["inReplyTo"] == "start" and "road" in refusal["message"]
        finally:
            await client.close()

    run(scenario())
    assert server.request("GET", "/api/v1/quota", token=token).json()["playsLeft"] == 5
    assert server.query("SELECT count(*) FROM games") == [(0,)] and server.query("SELECT count(*) FROM daily_attempts") == [(0,)]


def test_a_replay_of_a_daily_game_names_its_road_and_day_at_every_position(server):
    """`replaying.game` is the picture at step 0 "as in `started`": a daily game's replay says
    `daily` and its day, and so does the picture after every seek."""
    token = create_player(server, "Ada")

    async def scenario():
        client = await GameClient.signed_in(server, token)
        try:
            started, _, over = await play_daily(client, steps=6)
            assert started["game"]["road"] == "daily"
            await client.send(type="replay", gameId=over["gameId"])
            replaying = await client.expect("replaying")
            assert replaying["game"]["road"] == "daily" and replaying["game"]["day"] == today().isoformat()
            assert replaying["game"]["grid"] == started["game"]["grid"]
            for step in (3, 0, over["steps"]):
                await client.send(type="replayControl", action="seek", step=step)
                snapshot = await client.expect("snapshot")
                assert snapshot["game"]["step"] == step
                assert snapshot["game"]["road"] == "daily" and snapshot["game"]["day"] == today().isoformat()
        finally:
            await client.close()

    run(scenario())
