"""A running game survives a crash of the server: the real binary is killed with SIGKILL
mid-game and started again on the same database. The game must come back as a stored
`server_crash` game under the id its player was shown, with the score its last checkpoint
reached, its free play given back (once a day a player at most: a crash never pays), and the
operator's commands must find it."""

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import REPO, start_server
from postgres_databases import backend
from ws_client import GameClient, create_player, nearest_safe_move, run

BINARY = str(Path(os.environ.get("RETRORAPID_BINARY", REPO / ".build/debug/retrorapid")).resolve())
# Small, so the test waits little for a checkpoint; the default is 1000 ms.
CHECKPOINT = ["--checkpoint-interval-milliseconds", "200"]


def retrorapid(server, *args):
    return subprocess.run([BINARY, *args, *server.database_args,
                           "--migrations", str(REPO / "Migrations")],
                          capture_output=True, text=True, timeout=60, cwd=REPO)


async def play_until(client, score):
    """Follows the safe-lane cue until a step shows `score` points; returns that step."""
    while True:
        message = await client.recv(timeout=10)
        assert message["type"] != "gameOver", f"crashed before {score} points: {message}"
        if message["type"] != "step":
            continue
        if message["score"] >= score:
            return message
        direction = nearest_safe_move(message)
        if direction:
            goal = min(message["safeLanes"], key=lambda lane: abs(lane - message["lane"]))
            for _ in range(abs(goal - message["lane"])):
                await client.send(type="move", direction=direction, step=message["step"])


async def start_and_pause_at(client, score):
    """Starts a Rapid game, plays it to `score` and pauses it: paused, the game stands still,
    so what the client saw is what the next checkpoint holds. Returns `started` and the last
    step seen."""
    started = await client.start("rapid")
    last = await play_until(client, score)
    await client.send(type="pause")
    while (message := await client.recv(timeout=5))["type"] != "paused":
        if message["type"] == "step":
            last = message
    return started, last


@pytest.mark.skipif(backend() == "postgres", reason="on PostgreSQL a server is a cluster node: a restart gives the game "
                    "back instead of storing it (test_a_node_restarted_after_sigkill_offers_its_game_back)")
def test_a_game_cut_by_sigkill_is_saved_as_server_crash_at_restart_and_its_play_refunded(tmp_path):
    folder = tmp_path / "server"
    first = start_server(folder, *CHECKPOINT)
    token = create_player(first, "Crash Test")

    async def before_the_crash():
        client = await GameClient.signed_in(first, token)
        started, last = await start_and_pause_at(client, 3)
        return client.welcome["player"]["id"], started, last

    player_id, started, last = run(before_the_crash())
    game_id = started["game"]["gameId"]
    assert started["quota"]["playsUsed"] == 1
    time.sleep(1.0)  # five checkpoint intervals
    assert first.query("SELECT public_id, free_play FROM running_games") == [(game_id, 1)]
    # Appended as the game went: the last row holds the step the client saw last.
    assert first.query("SELECT max(steps) FROM game_checkpoints WHERE public_id = ?", (game_id,)) == [(last["step"],)]
    first.process.send_signal(signal.SIGKILL)
    assert first.process.wait(timeout=10) == -signal.SIGKILL

    second = start_server(folder, *CHECKPOINT)
    try:
        assert (second.database, second.database_url) == (first.database, first.database_url)
        assert "game left running by the last run saved" in second.log()
        rows = second.query("SELECT public_id, end_reason, score, steps, play_refunded, practice FROM games")
        [(running,)] = second.query("SELECT count(*) FROM running_games")
        best = second.query("SELECT score FROM best_scores WHERE level = 'rapid' AND period = 'all'")
        assert rows == [(game_id, "server_crash", last["score"], last["step"], 1, 0)]
        assert last["score"] > 0 and running == 0
        assert best == [(last["score"],)]

        # The play is back, over HTTP and in the welcome; nothing is left to resume.
        quota = second.request("GET", "/api/v1/quota", token=token).json()
        assert quota["playsUsed"] == 0 and quota["playsLeft"] == quota["dailyFreePlays"]

        async def after_the_restart():
            client = await GameClient.signed_in(second, token)
            welcome = client.welcome
            await client.send(type="resume")
            refusal = await client.expect_error("no_game")
            await client.close()
            return welcome, refusal

        welcome, _ = run(after_the_restart())
        assert welcome["quota"]["playsUsed"] == 0 and welcome.get("resumable") is None

        # The operator finds it by the id the player was shown.
        shown = retrorapid(second, "players", "show", player_id)
        assert shown.returncode == 0, shown.stderr
        line = next(line for line in shown.stdout.splitlines() if game_id in line)
        assert "server_crash (play refunded)" in line and f" {last['score']} " in line
        game = retrorapid(second, "games", "show", game_id)
        assert game.returncode == 0, game.stderr
        assert "server_crash (play refunded)" in game.stdout and "replay" in game.stdout
        assert f"matches (score {last['score']}, {last['step']} steps)" in game.stdout
        verified = retrorapid(second, "verify")
        assert verified.returncode == 0, verified.stdout + verified.stderr
        assert "verified 1 games (1 ended by a server crash" in verified.stdout

        # A tampered score is reported under the same id.
        second.execute("UPDATE games SET score = score + 1 WHERE public_id = ?", (game_id,))
        tampered = retrorapid(second, "verify")
        assert tampered.returncode == 1 and game_id in tampered.stdout, tampered.stdout
        second.execute("UPDATE games SET score = score - 1 WHERE public_id = ?", (game_id,))
        unknown = retrorapid(second, "games", "show", "00000000000000ff")
        assert unknown.returncode == 1 and "no game has the id" in unknown.stderr

        # A graceful stop saves its game itself; the next start has nothing to recover.
        async def a_game_then_sigterm():
            client = await GameClient.signed_in(second, token)
            again = await client.start("cruise")
            await client.expect("step")
            second.process.send_signal(signal.SIGTERM)
            over, _ = await client.until(lambda message: message["type"] == "gameOver", timeout=10)
            return again["game"]["gameId"], over

        second_game, over = run(a_game_then_sigterm())
        assert over["reason"] == "shutdown" and over["saved"] is True
        assert second.process.wait(timeout=15) == 0
    finally:
        if second.process.poll() is None:
            second.process.kill()

    third = start_server(folder, *CHECKPOINT)
    try:
        assert "left running" not in third.log()
        ends = third.query("SELECT public_id, end_reason FROM games ORDER BY id")
        [(running,)] = third.query("SELECT count(*) FROM running_games")
        assert ends == [(game_id, "server_crash"), (second_game, "shutdown")] and running == 0
    finally:
        third.stop()


@pytest.mark.skipif(backend() != "postgres", reason="cluster mode: a server on PostgreSQL")
def test_a_node_restarted_after_sigkill_offers_its_game_back(tmp_path):
    """On PostgreSQL every server is a node of a cluster (docs/OPERATIONS.md, "What happens when
    a node dies"): restarted at once after SIGKILL, it waits out its dead predecessor's
    heartbeat instead of refusing to start, and offers the player the game, paused at its last
    checkpoint, instead of storing it."""
    folder = tmp_path / "server"
    first = start_server(folder, *CHECKPOINT)
    token = create_player(first, "Crash Test")

    async def before_the_crash():
        return await start_and_pause_at(await GameClient.signed_in(first, token), 3)

    started, last = run(before_the_crash())
    game_id = started["game"]["gameId"]
    time.sleep(1.0)  # five checkpoint intervals
    first.process.send_signal(signal.SIGKILL)
    assert first.process.wait(timeout=10) == -signal.SIGKILL

    began = time.monotonic()
    second = start_server(folder, *CHECKPOINT)
    try:
        assert time.monotonic() - began < 15, "the restart waited longer than the lease"
        assert "waiting for its heartbeat to lapse" in second.log()

        async def after_the_restart():
            client = await GameClient.signed_in(second, token)
            resumable = client.welcome["resumable"]
            await client.send(type="resume")
            answer, _ = await client.until(lambda m: m["type"] in ("snapshot", "error"), timeout=30)
            await client.close()
            return resumable, answer

        resumable, answer = run(after_the_restart())
        assert resumable is not None and resumable["gameId"] == game_id
        assert answer["type"] == "snapshot", answer
        assert answer["game"]["gameId"] == game_id and answer["game"]["step"] == last["step"]
        assert second.query("SELECT count(*) FROM games") == [(0,)]
    finally:
        second.stop()


def wait_until_stored(server, game_id, seconds=30):
    """The game's (end_reason, score, play_refunded) once it is stored: at once after a SQLite
    restart, after the sweep on PostgreSQL (the restarted node lets go of its games first)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        rows = server.query("SELECT end_reason, score, play_refunded FROM games WHERE public_id = ?", (game_id,))
        if rows:
            return rows[0]
        time.sleep(0.2)
    pytest.fail(f"game {game_id} was not stored within {seconds} s:\n{server.log()}")


def test_crashing_the_server_again_the_same_day_gives_back_no_second_play(tmp_path):
    """A crash never pays (docs/GAME_RULES.md, "When the server crashes"). A player who can crash
    the server (SIGKILL here, as a trap on a crafted message would) during each good run keeps
    each score, as quitting would have, but gets back at most one free play a day however often
    they crash it, and systemd's Restart=on-failure starts it for them each time. On PostgreSQL
    the restarted node offers the game back; this player does not take it, so the sweep stores
    it after the disconnect grace (0 s here), by the same rule."""
    folder = tmp_path / "server"
    arguments = [*CHECKPOINT, "--disconnect-grace-seconds", "0"]
    server = start_server(folder, *arguments)
    try:
        token = create_player(server, "Crash Twice")
        games, used = [], []
        for _ in range(2):
            async def a_good_run_then_a_crash(server=server):
                return await start_and_pause_at(await GameClient.signed_in(server, token), 3)

            started, last = run(a_good_run_then_a_crash())
            time.sleep(1.0)  # five checkpoint intervals
            server.process.send_signal(signal.SIGKILL)
            assert server.process.wait(timeout=10) == -signal.SIGKILL
            server = start_server(folder, *arguments)
            game_id = started["game"]["gameId"]
            assert wait_until_stored(server, game_id)[:2] == ("server_crash", last["score"])
            games.append((game_id, last["score"]))
            used.append(server.request("GET", "/api/v1/quota", token=token).json()["playsUsed"])

        # Two plays taken, one given back: the second crash bought nothing.
        assert used == [0, 1]
        rows = server.query("SELECT public_id, end_reason, score, play_refunded FROM games ORDER BY id")
        assert rows == [(games[0][0], "server_crash", games[0][1], 1), (games[1][0], "server_crash", games[1][1], 0)]
        # Both scores stand (the better one is the player's best), as quit games' would.
        best = server.query("SELECT score FROM best_scores WHERE level = 'rapid' AND period = 'all'")
        assert best == [(max(score for _, score in games),)]

        async def the_welcome():
            client = await GameClient.signed_in(server, token)
            welcome = client.welcome
            await client.close()
            return welcome

        welcome = run(the_welcome())
        assert welcome["quota"]["playsUsed"] == 1 and welcome.get("resumable") is None
        assert welcome["quota"]["playsLeft"] == welcome["quota"]["dailyFreePlays"] - 1

        # The operator sees which play came back and why the second did not.
        second = retrorapid(server, "games", "show", games[1][0])
        assert second.returncode == 0, second.stderr
        assert "server_crash" in second.stdout and "(play refunded)" not in second.stdout
        assert "not given back" in second.stdout
        first = retrorapid(server, "games", "show", games[0][0])
        assert "server_crash (play refunded)" in first.stdout and "given back (at most 1 a player a day" in first.stdout
    finally:
        server.stop()
