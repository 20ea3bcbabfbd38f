"""Graceful shutdown: on SIGTERM every running game ends as "shutdown" with its score saved,
the player hears so, and the server exits 0."""

import asyncio
import signal

from ws_client import GameClient, create_player, run


def test_sigterm_saves_a_running_game_and_tells_its_player(server):
    token = create_player(server, "Night Owl")

    async def scenario():
        client = await GameClient.signed_in(server, token)
        started = await client.start("cruise")
        last = None
        for _ in range(3):
            last = await client.expect("step")
        server.process.send_signal(signal.SIGTERM)
        over, _ = await client.until(lambda message: message["type"] == "gameOver", timeout=10)
        code, reason = await client.closed()
        return started["game"]["gameId"], last, over, code, reason

    game_id, last, over, code, reason = run(scenario())
    assert over["gameId"] == game_id and over["reason"] == "shutdown" and over["saved"] is True
    assert over["score"] >= last["score"] and over["steps"] >= last["step"]
    assert code == 1001 and "saved" in reason
    assert server.process.wait(timeout=15) == 0

    rows = server.query("SELECT end_reason, score, steps, practice FROM games")
    best = server.query("SELECT score FROM best_scores WHERE period = 'all'")
    assert rows == [("shutdown", over["score"], over["steps"], 0)]
    assert best == [(over["score"],)]


def test_sigterm_saves_a_game_waiting_for_its_player(server):
    token = create_player(server)

    async def scenario():
        client = await GameClient.signed_in(server, token)
        await client.start("fast")
        await client.expect("step")
        await client.drop()
        await asyncio.sleep(0.3)

    run(scenario())
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(timeout=15) == 0
    rows = server.query("SELECT end_reason FROM games")
    assert rows == [("shutdown",)]
