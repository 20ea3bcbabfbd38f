"""Group commit loses nothing it acknowledged: many players start and quit games at
the same moment, so their starts and records wait together on the storage thread and are
committed in shared transactions; the server is killed with SIGKILL the moment the last
`gameOver` arrives. Every game a player was told was started and saved must be in the store
after the restart, once, and none may be left running."""

import asyncio
import signal

from conftest import start_server
from ws_client import GameClient, create_player, metric, run

PLAYERS = 20


def test_every_acknowledged_game_of_a_shared_commit_survives_sigkill(tmp_path):
    folder = tmp_path / "server"
    first = start_server(folder)
    tokens = [create_player(first, f"Group {index}") for index in range(PLAYERS)]

    async def burst():
        clients = await asyncio.gather(*(GameClient.signed_in(first, token) for token in tokens))
        # All starts at once, then all quits at once: each burst queues on the storage thread.
        for client in clients:
            await client.send(type="start", level="cruise", practice=False)
        started = await asyncio.gather(*(client.expect("started") for client in clients))
        await asyncio.gather(*(client.expect("step") for client in clients))
        for client in clients:
            await client.send(type="quit")
        overs = await asyncio.gather(*(client.expect("gameOver") for client in clients))
        return [message["game"]["gameId"] for message in started], overs

    games, overs = run(burst())
    assert all(over["saved"] is True and over["reason"] == "abandoned" for over in overs)
    assert sorted(over["gameId"] for over in overs) == sorted(games)
    # The bursts really were committed in shared transactions.
    assert metric(first, "retrorapid_database_grouped_jobs_total") > 0
    first.process.send_signal(signal.SIGKILL)
    assert first.process.wait(timeout=10) == -signal.SIGKILL

    second = start_server(folder)
    try:
        stored = second.query("SELECT public_id, end_reason FROM games")
        assert sorted(stored) == sorted((game, "abandoned") for game in games)
        assert second.query("SELECT count(*) FROM running_games") == [(0,)]
        assert "left running" not in second.log()
    finally:
        second.stop()
