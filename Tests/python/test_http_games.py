"""Stored games over HTTP against the real server, after real games over /ws: a player's recent
games, a game's public summary, the leaderboards naming the game behind each score, the daily
board's bad days, and the refusals for ids nothing has (docs/API.md, "Games and races")."""

import datetime

from ws_client import create_player, play_to_score


def error_of(reply):
    return reply.json()["error"]


def test_my_games_and_a_games_summary_after_real_games(server):
    token = create_player(server, "Ada")
    first = play_to_score(server, token, "cruise", 1)
    # Past the first game's score whatever it was: a step that overtakes two cars scores 2, so
    # "2" could tie with the first game, and a tie keeps the first game on the board.
    second = play_to_score(server, token, "cruise", first["score"] + 1)

    mine = server.request("GET", "/api/v1/me/games?limit=1", token=token)
    assert mine.status == 200, mine.body
    body = mine.json()
    assert [game["gameId"] for game in body["games"]] == [second["gameId"]]
    game = body["games"][0]
    assert game["level"] == "cruise" and game["score"] == second["score"] and game["steps"] == second["steps"]
    assert game["road"] == "random" and "day" not in game and "race" not in game
    assert game["reason"] == "abandoned" and game["practice"] is False
    assert body["nextBefore"] == second["gameId"]
    rest = server.request("GET", f"/api/v1/me/games?before={body['nextBefore']}", token=token).json()
    assert [game["gameId"] for game in rest["games"]] == [first["gameId"]] and "nextBefore" not in rest

    # Another player cannot page by your games, and bad pages change nothing.
    other = create_player(server, "Bo")
    refused = server.request("GET", f"/api/v1/me/games?before={first['gameId']}", token=other)
    assert refused.status == 400 and error_of(refused)["code"] == "invalid" and error_of(refused)["field"] == "before"
    assert server.request("GET", "/api/v1/me/games?limit=0", token=token).status == 400
    assert server.request("GET", "/api/v1/me/games").status == 401

    summary = server.request("GET", f"/api/v1/games/{first['gameId']}")
    assert summary.status == 200, summary.body
    assert summary.json()["player"]["name"] == "Ada" and summary.json()["replayable"] is True
    assert summary.json()["score"] == first["score"] and summary.json()["road"] == "random"
    missing = server.request("GET", "/api/v1/games/0123456789abcdef")
    assert missing.status == 404 and error_of(missing)["code"] == "game_not_found"
    assert server.request("GET", "/api/v1/races/0123456789abcdef").status == 404

    # The board names the game behind the score.
    board = server.request("GET", "/api/v1/leaderboards/cruise/allTime").json()
    assert board["entries"][0]["gameId"] == second["gameId"]


def test_the_daily_board_refuses_bad_days_and_says_when_it_resets(server):
    token = create_player(server, "Ada")
    today = datetime.datetime.now(datetime.timezone.utc).date()
    board = server.request("GET", "/api/v1/leaderboards/rapid/daily")
    assert board.status == 200, board.body
    assert board.json()["day"] == today.isoformat() and board.json()["total"] == 0
    assert board.json()["resetsAt"] == (today + datetime.timedelta(days=1)).isoformat() + "T00:00:00Z"
    for bad in [(today + datetime.timedelta(days=1)).isoformat(), "2026-02-30", "yesterday"]:
        reply = server.request("GET", f"/api/v1/leaderboards/rapid/daily?day={bad}")
        assert reply.status == 400 and error_of(reply)["code"] == "invalid" and error_of(reply)["field"] == "day", bad
    road = server.request("GET", "/api/v1/daily/rapid", token=token)
    assert road.status == 200 and road.json()["scoredAttempt"] is None and road.json()["day"] == today.isoformat()
