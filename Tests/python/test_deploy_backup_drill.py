"""The backup and restore drill of docs/OPERATIONS.md ("Back up and restore"), rehearsed for
real: players finish games while `retrorapid backup` copies the live database; the copy is
restored into a new server, `retrorapid verify` passes on it, and every game acknowledged
(`gameOver` with `saved: true`) before the backup began is in it and on its leaderboard."""

import asyncio
import shutil
import subprocess
import threading
import time

from conftest import REPO
from ws_client import GameClient, create_player

PLAYERS = 4


async def keep_playing(server, token, acknowledged, stop):
    """Starts games and quits each after a few steps, until `stop`; records each
    acknowledged game as (gameId, time acknowledged)."""
    client = await GameClient.signed_in(server, token)
    try:
        while not stop.is_set():
            await client.start("cruise")
            for _ in range(3):
                await client.expect("step")
            await client.send(type="quit")
            over = await client.expect("gameOver")
            assert over["saved"] is True, over
            acknowledged.append((over["gameId"], time.monotonic()))
    finally:
        await client.close()


def test_a_backup_taken_while_games_are_saved_restores_every_acknowledged_game(server_factory, tmp_path):
    server = server_factory("--daily-free-plays", "1000")
    binary = server.process.args[0]
    tokens = [create_player(server, f"Drill {n}") for n in range(PLAYERS)]
    acknowledged, stop = [], threading.Event()

    def players():
        async def all_of_them():
            await asyncio.gather(*(keep_playing(server, token, acknowledged, stop) for token in tokens))
        asyncio.run(all_of_them())

    playing = threading.Thread(target=players)
    playing.start()
    try:
        deadline = time.monotonic() + 20
        while len(acknowledged) < 8 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(acknowledged) >= 8, "the players did not get going"
        backup = tmp_path / "backups" / "drill.sqlite"
        backup.parent.mkdir()
        began = time.monotonic()
        before = {game for game, at in acknowledged if at < began}
        copied = subprocess.run([binary, "backup", str(backup), "--database", str(server.database)],
                                capture_output=True, text=True, timeout=60)
        assert copied.returncode == 0, copied.stderr
        during = len(acknowledged)
        time.sleep(0.5)  # games go on being saved after the copy
    finally:
        stop.set()
        playing.join(timeout=30)
    assert len(acknowledged) > during, "no game was saved after the backup: the drill did not overlap"

    # Restore into a new server, as docs/OPERATIONS.md says: the copy at the database path.
    # (server_factory's second server keeps its database there).
    restored_path = tmp_path / "server1" / "data" / "retrorapid.sqlite"
    restored_path.parent.mkdir(parents=True)
    shutil.copy(backup, restored_path)
    verified = subprocess.run([binary, "verify", "--database", str(restored_path), "--migrations", str(REPO / "Migrations")],
                              capture_output=True, text=True, timeout=120)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    for game in sorted(before):
        shown = subprocess.run([binary, "games", "show", game, "--database", str(restored_path)],
                               capture_output=True, text=True, timeout=30)
        assert shown.returncode == 0, (game, shown.stdout + shown.stderr)

    restored = server_factory()
    assert restored.database == restored_path
    board = restored.request("GET", "/api/v1/leaderboards/cruise/today?limit=100").json()
    assert {entry["displayName"] for entry in board["entries"]} == {f"Drill {n}" for n in range(PLAYERS)}
    # The restored server goes on: its players sign in with the tokens they had.
    assert restored.request("GET", "/api/v1/me", token=tokens[0]).status == 200
