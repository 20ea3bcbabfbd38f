"""A node of a cluster that dies loses nothing acknowledged, and its games live on:
two real `retrorapid serve` nodes on one PostgreSQL database, many real clients playing
through node A, A killed with SIGKILL mid-play. Every score a client saw acknowledged
(`gameOver` with `saved: true`) is in the database; each player whose game was running gets it
back through node B, paused at A's last checkpoint with a snapshot, plays it to its end there,
and it is stored once. The play lost is measured from the clients' own step times and printed.

Needs RETRORAPID_TEST_POSTGRES_URL (a PostgreSQL server the test may create databases on);
skipped without it."""

import asyncio
import os
import signal
import statistics
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed

from conftest import REPO, TEST_CLUSTER_SECRET, Server, free_port, wait_until_healthy
from ws_client import GameClient, create_player, nearest_safe_move, run

ADMIN_URL = os.environ.get("RETRORAPID_TEST_POSTGRES_URL")
BINARY = str(Path(os.environ.get("RETRORAPID_BINARY", REPO / ".build/debug/retrorapid")).resolve())
PLAYERS = 24
CHECKPOINT_SECONDS = 1.0  # the default --checkpoint-interval-milliseconds
# The longest step of a rapid game (420 ms at its first stage): the clients see steps, so the
# loss they measure is rounded up to one.
STEP_SECONDS = 0.42

pytestmark = pytest.mark.skipif(not ADMIN_URL, reason="needs RETRORAPID_TEST_POSTGRES_URL")


@pytest.fixture
def database():
    """A fresh, empty PostgreSQL database for the test; dropped afterwards."""
    name = f"rr_failover_{uuid.uuid4().hex[:12]}"
    subprocess.run(["psql", ADMIN_URL, "-qAt", "-c", f"CREATE DATABASE {name}"], check=True, capture_output=True)
    url = ADMIN_URL.rsplit("/", 1)[0] + "/" + name
    yield url
    subprocess.run(["psql", ADMIN_URL, "-qAt", "-c", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"], capture_output=True)


def sql(url, query):
    """Rows of `query` as lists of text."""
    out = subprocess.run(["psql", url, "-qAt", "-F", "\t", "-c", query], check=True, capture_output=True, text=True).stdout
    return [line.split("\t") for line in out.splitlines() if line]


def start_node(folder: Path, url: str, node_id: str) -> Server:
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log_path = folder / "server.log"
    command = [BINARY, "serve", "--host", "127.0.0.1", "--port", str(port), "--database-url", url,
               "--node-id", node_id, "--web-root", str(REPO / "Web"), "--migrations-path", str(REPO / "Migrations"),
               "--cluster-secret", TEST_CLUSTER_SECRET]
    process = subprocess.Popen(command, stdout=open(log_path, "wb"), stderr=subprocess.STDOUT, cwd=folder)
    return wait_until_healthy(Server(port, None, process, log_path, []))


class Player:
    """One client through node A: what it saw acknowledged, and the game it had when A died."""

    def __init__(self, token):
        self.token = token
        self.acknowledged = []  # (gameId, score) of every gameOver with saved: true
        self.game_id = None  # the game running when the connection dropped
        self.steps = []  # (monotonic time, step, score) of that game as the client saw it
        self.started_at = None


async def play_through_a(node, player, stop, dodging=True):
    """Plays games one after another until the connection drops: following the safe-lane cue
    (`dodging`, a game that lasts), or never moving (a game that crashes within seconds, so
    scores are acknowledged all through the run)."""
    client = await GameClient.signed_in(node, player.token)
    try:
        while True:
            await client.send(type="start", level="rapid")
            started = await client.expect("started")
            player.game_id, player.steps, player.started_at = started["game"]["gameId"], [], time.monotonic()
            while True:
                message = await client.recv(timeout=15)
                if message["type"] == "step":
                    player.steps.append((time.monotonic(), message["step"], message["score"]))
                    direction = nearest_safe_move(message) if dodging else None
                    if direction:
                        goal = min(message["safeLanes"], key=lambda lane: abs(lane - message["lane"]))
                        for _ in range(abs(goal - message["lane"])):
                            await client.send(type="move", direction=direction, step=message["step"])
                elif message["type"] == "gameOver":
                    if message["saved"]:
                        player.acknowledged.append((message["gameId"], message["score"]))
                    player.game_id = None
                    break
    except (ConnectionClosed, OSError, asyncio.TimeoutError):
        return  # A died
    finally:
        stop.set()


async def take_back_through_b(node, player):
    """Signs in on B, resumes, and plays the game to its end without moving: what B offered,
    the snapshot, and the gameOver."""
    client = await GameClient.signed_in(node, player.token)
    try:
        resumable = client.welcome["resumable"]
        if player.game_id is None:
            # Killed between a gameOver and the next `started`: a game this client never saw may
            # have begun; it is ended here, so nothing is left running.
            if resumable is not None:
                await client.send(type="quit")
                await client.until(lambda m: m["type"] in ("gameOver", "error"), timeout=30)
            return resumable, None, None
        await client.send(type="resume")
        # B waits out A's lease (about 6 to 9 s) before it takes the game.
        answer, _ = await client.until(lambda m: m["type"] in ("snapshot", "error"), timeout=30)
        if answer["type"] == "error":
            return resumable, answer, None
        await client.expect("resumed")
        over = await client.expect("gameOver", timeout=60)
        return resumable, answer, over
    finally:
        await client.close()


def test_a_killed_node_loses_no_acknowledged_score_and_its_games_come_back_through_the_other(tmp_path, database):
    a = start_node(tmp_path / "a", database, "a")
    b = start_node(tmp_path / "b", database, "b")
    try:
        players = [Player(create_player(a, f"Failover {n}")) for n in range(PLAYERS)]
        # Unlimited play, so the games go on as long as the test needs.
        for row in sql(database, "SELECT id FROM players"):
            sql(database, f"INSERT INTO unlimited_entitlements (player_id, source, reference, granted_at) "
                          f"VALUES ({row[0]}, 'operator', 'failover test', '2026-01-01T00:00:00Z')")

        async def load_then_kill():
            stops = [asyncio.Event() for _ in players]
            # Half the players never move (their games crash and start again: scores acknowledged
            # all through the run), half dodge (their games are running when A dies).
            tasks = [asyncio.create_task(play_through_a(a, p, s, dodging=index % 2 == 0))
                     for index, (p, s) in enumerate(zip(players, stops))]
            await asyncio.sleep(10)  # long enough for games to end and start again, and to checkpoint
            a.process.send_signal(signal.SIGKILL)
            await asyncio.gather(*tasks)

        run(load_then_kill())
        assert a.process.wait(timeout=10) == -signal.SIGKILL

        # Nothing acknowledged is lost.
        stored = {row[0]: int(row[1]) for row in sql(database, "SELECT public_id, score FROM games")}
        acknowledged = [pair for p in players for pair in p.acknowledged]
        assert acknowledged, "no game ended before the kill: the load was too light to prove anything"
        assert [pair for pair in acknowledged if stored.get(pair[0]) != pair[1]] == []

        # Every running game comes back through B, paused at A's last checkpoint.
        running = [p for p in players if p.game_id]
        assert len(running) >= PLAYERS // 2, "most players should have had a game running when A died"

        async def take_back_all():
            return await asyncio.gather(*(take_back_through_b(b, p) for p in players))

        answers = run(take_back_all())
        lost = []
        for player, (resumable, snapshot, over) in zip(players, answers):
            if player.game_id is None:
                continue
            if resumable is None:
                # It had crashed before A died, its gameOver not sent yet: its crash was stored,
                # or was in A's last checkpoint (B offers nothing, and `resume` has B store the
                # crash). Either way it ends up stored once, as it ended.
                assert snapshot["type"] == "error" and snapshot["code"] in ("game_over", "no_game"), snapshot
                rows = sql(database, f"SELECT end_reason FROM games WHERE public_id = '{player.game_id}'")
                assert rows == [["crash"]], (player.game_id, rows)
                continue
            assert resumable["gameId"] == player.game_id, resumable
            if snapshot["type"] == "error":
                # Its crash was being stored when A died: B stores it as the crash it is.
                assert snapshot["code"] == "game_over", snapshot
                continue
            game = snapshot["game"]
            assert game["gameId"] == player.game_id and game["paused"] is True
            seen = [entry for entry in player.steps if entry[1] == game["step"]]
            if game["step"] == 0:
                at = player.started_at
            else:
                # A step the client saw, with the score it had there: the game is exactly as it was.
                assert seen and seen[0][2] == game["score"], (game, player.steps[-3:])
                at = seen[0][0]
            last = player.steps[-1][0] if player.steps else player.started_at
            lost.append(max(0.0, last - at))
            assert over["gameId"] == player.game_id and over["saved"] is True, over
        assert lost, "no game was taken back"
        print(f"\nplay lost by the kill, per game taken back ({len(lost)} games, checkpoint every {CHECKPOINT_SECONDS:g} s): "
              f"median {statistics.median(lost):.2f} s, max {max(lost):.2f} s")
        # At most the checkpoint interval, the batch's write and one step of the client's view.
        assert max(lost) <= CHECKPOINT_SECONDS + STEP_SECONDS + 0.5, lost

        # Each game stored once; nothing left running.
        counts = sql(database, "SELECT public_id, count(*) FROM games GROUP BY public_id HAVING count(*) > 1")
        assert counts == []
        for player in running:
            assert player.game_id in {row[0] for row in sql(database, "SELECT public_id FROM games")}
        assert sql(database, "SELECT count(*) FROM running_games") == [["0"]]
        assert "game taken over from its checkpoint" in b.log()
    finally:
        for node in (a, b):
            if node.process.poll() is None:
                node.stop()
