"""Daily free plays over /ws: a start consumes one atomically; the sixth of the day is refused
saying when plays reset and how to unlock; an unlock code lifts the limit (docs/API.md)."""

import datetime
import subprocess

from ws_client import GameClient, create_player, run


def next_utc_midnight():
    now = datetime.datetime.now(datetime.timezone.utc)
    tomorrow = (now + datetime.timedelta(days=1)).date()
    return f"{tomorrow.isoformat()}T00:00:00Z"


def test_the_sixth_start_of_the_day_is_refused_with_the_reset_time_then_allowed_after_an_unlock(server):
    token = create_player(server)

    async def five_plays_then_a_refusal():
        client = await GameClient.signed_in(server, token)
        for left in (4, 3, 2, 1, 0):
            started = await client.start("rapid")
            assert started["quota"]["playsLeft"] == left
            await client.send(type="quit")
            over = await client.expect("gameOver")
            assert over["reason"] == "abandoned" and over["quota"]["playsLeft"] == left
        await client.send(type="start", level="rapid")
        refusal = await client.expect_error("no_plays_left")
        assert refusal["inReplyTo"] == "start"
        assert refusal["resetsAt"] == next_utc_midnight() == refusal["quota"]["resetsAt"]
        assert refusal["quota"]["playsLeft"] == 0 and refusal["quota"]["unlimited"] is False
        assert "reset" in refusal["message"] and "code" in refusal["message"]
        assert refusal["unlock"]
        # A practice game is still allowed: it consumes no play.
        practice = await client.start("cruise", practice=True)
        assert practice["game"]["practice"] is True
        await client.send(type="quit")
        await client.expect("gameOver")
        await client.close()

    run(five_plays_then_a_refusal())

    created = subprocess.run(
        [server.process.args[0], "codes", "create", "PRESS-2026", "--force", "--unlock",
         *server.database_args, "--migrations", server.process.args[server.process.args.index("--migrations-path") + 1]],
        capture_output=True, text=True, timeout=30)
    assert created.returncode == 0, created.stderr
    redeemed = server.request("POST", "/api/v1/codes/redeem", {"code": "press2026"}, token=token)
    assert redeemed.status in (200, 201), redeemed.body

    async def unlimited_now():
        client = await GameClient.signed_in(server, token)
        assert client.welcome["quota"]["unlimited"] is True
        started = await client.start("rapid")
        # One shape on both sides (docs/PROTOCOL.md): playsLeft stays the free plays left, a
        # number, and unlimited says they do not limit; the socket's quota is GET /quota's.
        assert started["quota"]["unlimited"] is True and started["quota"]["playsLeft"] == 0
        assert started["quota"] == server.request("GET", "/api/v1/quota", token=token).json()
        await client.send(type="quit")
        await client.expect("gameOver")
        await client.close()

    run(unlimited_now())


def test_two_devices_racing_for_the_last_play_get_one_game(server_factory, tmp_path):
    (tmp_path / "server0").mkdir()  # server_factory logs there but does not create it
    server = server_factory("--daily-free-plays", "1")
    token = create_player(server)

    async def race():
        first = await GameClient.signed_in(server, token)
        second = await GameClient.signed_in(server, token)
        await first.send(type="start", level="fast")
        await second.send(type="start", level="fast")
        answers = [await first.until(lambda m: m["type"] in ("started", "error")),
                   await second.until(lambda m: m["type"] in ("started", "error"))]
        kinds = sorted(answer[0]["type"] if answer[0]["type"] == "started" else answer[0]["code"] for answer in answers)
        for client in (first, second):
            await client.close()
        return kinds

    kinds = run(race())
    assert kinds[1] == "started" and kinds[0] in ("start_pending", "game_in_progress", "no_plays_left")
