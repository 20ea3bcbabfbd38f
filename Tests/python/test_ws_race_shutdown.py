"""A race running when the server is stopped (SIGTERM) is stored before the server exits
(docs/OPERATIONS.md, "Stopping"): its racers' games end as `shutdown`, and the race with its
finish order so far (a racer who had already quit included) is in the database after a
restart, as `raceOver` said before the connections closed."""

import asyncio
import signal

from websockets.exceptions import ConnectionClosed

from conftest import start_server
from test_ws_race import FAST, join, open_room, settle
from ws_client import GameClient, create_player, run


async def dodge_until_closed(client, stall=None):
    """Keeps the racer alive on the cue (safe lanes) until the server closes; returns its
    `gameOver` and the `raceOver` it heard. Once `stall` is set the racer stops reading for
    two seconds, as a slow client would: the server ends its game, says the rest and closes
    meanwhile, and what it said must still be there to read."""
    over = race_over = None
    try:
        while True:
            if stall is not None and stall.is_set():
                stall = None
                await asyncio.sleep(2)
            message = await client.recv(timeout=20)
            kind = message["type"]
            if kind == "step" and over is None:
                safe, lane = message["safeLanes"], message["lane"]
                goal = min(safe, key=lambda candidate: abs(candidate - lane)) if safe else lane
                for _ in range(abs(goal - lane)):
                    await client.send(type="move", direction="left" if goal < lane else "right", step=message["step"])
            elif kind == "gameOver":
                over = message
            elif kind == "raceOver":
                race_over = message
    except ConnectionClosed:  # the server closed it (1001) after its last messages
        pass
    return over, race_over


def test_a_race_running_at_sigterm_is_stored_with_its_entries(tmp_path):
    folder = tmp_path / "server"
    first = start_server(folder, *FAST)
    try:
        tokens = [create_player(first, name) for name in ["Ada", "Bo", "Cy"]]

        async def race_then_sigterm():
            ada, bo, cy = [await GameClient.signed_in(first, token) for token in tokens]
            room = await open_room(ada, seats=3)
            code = room["code"]
            for client in (bo, cy):
                await join(client, code)
                await client.send(type="ready", ready=True)
            await settle([ada, bo, cy])
            await ada.send(type="startRace")
            games = [(await client.expect("started"))["game"]["gameId"] for client in (ada, bo, cy)]
            # Everyone is racing; Ada quits after her first step, the others race on.
            for client in (ada, bo, cy):
                await client.expect("step", timeout=10)
            await ada.send(type="quit")
            ada_over = await ada.expect("gameOver")
            assert ada_over["reason"] == "abandoned"
            # Cy reads late from the stop on: the server closes her connection before she has
            # read her last messages.
            stopping = asyncio.Event()
            racing = [asyncio.ensure_future(dodge_until_closed(bo)),
                      asyncio.ensure_future(dodge_until_closed(cy, stall=stopping))]
            await asyncio.sleep(0.3)
            first.process.send_signal(signal.SIGTERM)
            stopping.set()
            ends = await asyncio.gather(*racing)
            return code, games, ends

        code, games, ends = run(race_then_sigterm())
        assert first.process.wait(timeout=15) == 0
        log = first.log()
        assert "could not store a race" not in log, log
        assert "did not end in time" not in log, log
        for over, race_over in ends:
            assert over is not None and over["reason"] == "shutdown" and over["saved"] is True, (over, log[-4000:])
            assert race_over is not None and race_over["raceId"], (race_over, log[-4000:])
        race_id = ends[0][1]["raceId"]
        assert ends[1][1]["raceId"] == race_id
        results = ends[0][1]["results"]
    finally:
        if first.process.poll() is None:
            first.process.kill()

    second = start_server(folder, *FAST)
    try:
        entries = second.query(
            "SELECT r.room_code, e.place, e.seat, e.game_id, e.score, e.end_reason, g.end_reason "
            "FROM race_entries e JOIN races r ON r.id = e.race_id JOIN games g ON g.public_id = e.game_id "
            "WHERE r.public_id = ? ORDER BY e.place", (race_id,))
        assert [(row[2], row[3]) for row in sorted(entries, key=lambda row: row[2])] == list(zip([0, 1, 2], games))
        by_seat = {row[2]: row for row in entries}
        assert (by_seat[0][5], by_seat[0][6]) == ("abandoned", "abandoned")
        assert {(by_seat[seat][5], by_seat[seat][6]) for seat in (1, 2)} == {("shutdown", "shutdown")}
        assert {row[0] for row in entries} == {code} and [row[1] for row in entries] == [1, 2, 3]
        # What raceOver said is what was stored.
        assert [(r["place"], r["seat"], r["gameId"], r["score"], r["reason"]) for r in results] == \
            [(row[1], row[2], row[3], row[4], row[5]) for row in entries]
        fetched = second.request("GET", f"/api/v1/races/{race_id}")
        assert fetched.status == 200, fetched.body
        assert [entry["gameId"] for entry in fetched.json()["results"]] == [row[3] for row in entries]
        assert second.query("SELECT count(*) FROM running_games") == [(0,)]
    finally:
        second.stop()
