"""Race rooms and watching across two nodes behind the real nginx (Tests/python/cluster.py:
PostgreSQL, nodes a and b, Deploy/nginx/retrorapid-cluster.conf). A room lives on the node its
opener reached; a racer whose connection nginx sent to the other node is refused
`room_elsewhere` with the room's node, follows to `/ws?node=<node>` and joins there; the race
runs to the end and is saved once. A watcher reaches a game held by the other node the same
way (`watch_elsewhere`). docs/PROTOCOL.md, "Cluster: the node that holds it";
docs/OPERATIONS.md, "Scale out".

Every client here goes through nginx, as a browser would; `?node=` picks the node a client
first lands on, so which node holds what is known."""

import asyncio

import pytest

from test_cluster import ROOMY, cluster_database_url, cluster_factory  # noqa: F401
from ws_client import GameClient, create_player, nearest_safe_move, run

# Short waits for the tests: a one-second countdown.
RACE_FLAGS = ("--race-countdown-seconds", "1", "--standings-interval-ms", "100")


@pytest.fixture
def cluster(cluster_factory):  # noqa: F811
    return cluster_factory(*RACE_FLAGS)


async def on_node(cluster, token, node, name="pytest"):
    """A client through nginx asking for `node`; its welcome must say it got there."""
    client = await GameClient.signed_in(cluster.proxy, token, client=name, query=f"?node={node}")
    assert client.welcome["node"] == node, client.welcome
    return client


async def refused_then_followed(cluster, client, token, message, code):
    """Sends `message` on `client`; it must be refused with `code` naming another node. Then does
    what the client does (docs/PROTOCOL.md, "Cluster"): connects to /ws?node=<node> through
    nginx, says hello and sends the message again. Returns (the new client, the node)."""
    await client.send(**message)
    error = await client.expect_error(code)
    assert error["inReplyTo"] == message["type"], error
    node = error["node"]
    assert node in cluster.nodes and node != client.welcome["node"], error
    await client.close()
    moved = await on_node(cluster, token, node)
    await moved.send(**message)
    return moved, node


async def all_ready(client, timeout=10):
    """Reads `room` updates until one shows every racer ready (both readies were taken), so a
    start comes after them."""
    def ready(message):
        if message["type"] == "error":
            raise AssertionError(f"unexpected error in the lobby: {message}")
        return message["type"] == "room" and all(racer["ready"] for racer in message["room"]["racers"])
    await client.until(ready, timeout=timeout)


async def both(client, *types, timeout=10):
    """The next message of each of `types`, in whatever order they come."""
    got = {}
    while len(got) < len(types):
        message, _ = await client.until(lambda m: m["type"] in types and m["type"] not in got, timeout=timeout)
        got[message["type"]] = message
    return got


async def race_to_the_end(client, steering):
    """Plays this racer's race game: follows the safe-lane cue while `steering(score)` says so,
    then lets the road come (a crash). Returns its gameOver and the raceOver."""
    over = race_over = None
    while over is None or race_over is None:
        message = await client.recv(timeout=60)
        if message["type"] == "step" and steering(message["score"]):
            direction = nearest_safe_move(message)
            if direction:
                goal = min(message["safeLanes"], key=lambda lane: abs(lane - message["lane"]))
                for _ in range(abs(goal - message["lane"])):
                    await client.send(type="move", direction=direction, step=message["step"])
        elif message["type"] == "gameOver":
            over = message
        elif message["type"] == "raceOver":
            race_over = message
        elif message["type"] == "error":
            raise AssertionError(f"unexpected error in the race: {message}")
    return over, race_over


def test_a_racer_sent_to_the_other_node_follows_the_room_there_and_the_race_is_saved_once(cluster):
    proxy = cluster.proxy
    ada, bo = create_player(proxy, "Ada"), create_player(proxy, "Bo")

    async def scenario():
        host = await on_node(cluster, ada, "a")
        await host.send(type="openRoom", level="rapid", seats=2, practice=False)
        room = (await host.expect("room"))["room"]
        code = room["code"]
        assert (room["state"], room["you"], room["hostSeat"], room["seats"]) == ("lobby", 0, 0, 2), room

        # Bo's connection went to node b: the room is not there.
        guest = await on_node(cluster, bo, "b")
        guest, node = await refused_then_followed(cluster, guest, bo, {"type": "joinRoom", "code": code.lower()},
                                                  "room_elsewhere")
        assert node == "a"
        joined = (await guest.expect("room"))["room"]
        assert joined["code"] == code and joined["you"] == 1
        assert [racer["name"] for racer in joined["racers"]] == ["Ada", "Bo"]
        assert [racer["name"] for racer in (await host.expect("room"))["room"]["racers"]] == ["Ada", "Bo"]

        # The room's node, asked through either node.
        for entry in cluster.nodes.values():
            placed = entry.request("GET", f"/api/v1/rooms/{code}")
            assert placed.status == 200, placed.body
            assert placed.json()["node"] == "a" and placed.json()["code"] == code

        for racer in (host, guest):
            await racer.send(type="ready", ready=True)
        await all_ready(host)
        await host.send(type="startRace")
        started = {}
        for name, racer in (("Ada", host), ("Bo", guest)):
            got = await both(racer, "countdown", "started")
            assert got["countdown"]["code"] == code and got["countdown"]["startsInMs"] > 0
            assert got["started"]["game"]["race"] == code
            started[name] = got["started"]["game"]["gameId"]

        # Bo lets the road come at once; Ada keeps to the safe lanes until she is 2 points past
        # Bo's end (they share the road, so without steering they would end level).
        bo_end = {}

        def ada_steers(score):
            return "score" not in bo_end or score < bo_end["score"] + 2

        async def watch_bo_end():
            while "score" not in bo_end:
                crash = [m for m in guest.received if m["type"] == "crash"]
                if crash:
                    bo_end["score"] = crash[0]["score"]
                await asyncio.sleep(0.02)

        (ada_over, ada_race), (bo_over, bo_race), _ = await asyncio.gather(
            race_to_the_end(host, steering=ada_steers), race_to_the_end(guest, steering=lambda score: False),
            watch_bo_end())
        assert ada_race == bo_race, (ada_race, bo_race)
        results = ada_race["results"]
        assert ada_race["code"] == code
        assert [(entry["place"], entry["name"]) for entry in results] == [(1, "Ada"), (2, "Bo")], results
        assert {entry["name"]: entry["gameId"] for entry in results} == started
        assert {entry["name"]: entry["score"] for entry in results} == {"Ada": ada_over["score"], "Bo": bo_over["score"]}
        assert ada_over["score"] > bo_over["score"]
        await host.close()
        await guest.close()
        return ada_race["raceId"], started

    race_id, started = run(scenario())
    # Saved once: one race, its two entries, each racer's one game, nothing left running.
    assert cluster.rows("SELECT count(*) FROM races") == [["1"]]
    assert cluster.rows(f"SELECT count(*) FROM races WHERE public_id = '{race_id}'") == [["1"]]
    assert cluster.rows("SELECT count(*) FROM race_entries") == [["2"]]
    assert sorted(cluster.rows("SELECT public_id FROM games")) == sorted([[game] for game in started.values()])
    assert cluster.rows("SELECT count(*) FROM running_games") == [["0"]]
    entries = cluster.rows(
        "SELECT race_entries.place, race_entries.seat, players.display_name, games.public_id, race_entries.score, "
        "games.score FROM race_entries "
        "JOIN races ON races.id = race_entries.race_id JOIN players ON players.id = race_entries.player_id "
        f"JOIN games ON games.public_id = race_entries.game_id WHERE races.public_id = '{race_id}' ORDER BY race_entries.place")
    assert [row[:4] for row in entries] == [["1", "0", "Ada", started["Ada"]], ["2", "1", "Bo", started["Bo"]]], entries
    assert all(row[4] == row[5] for row in entries), entries


def test_a_racer_whose_reconnect_lands_on_the_other_node_is_sent_back_to_the_race(cluster):
    proxy = cluster.proxy
    ada, bo = create_player(proxy, "Ada"), create_player(proxy, "Bo")

    async def scenario():
        host = await on_node(cluster, ada, "a")
        await host.send(type="openRoom", level="rapid", seats=2, practice=True)
        code = (await host.expect("room"))["room"]["code"]
        guest = await on_node(cluster, bo, "a")
        await guest.send(type="joinRoom", code=code)
        await guest.expect("room")
        for racer in (host, guest):
            await racer.send(type="ready", ready=True)
        await all_ready(host)
        await host.send(type="startRace")
        await both(host, "countdown", "started")
        game_id = (await both(guest, "countdown", "started"))["started"]["game"]["gameId"]
        await guest.until(lambda m: m["type"] == "step", timeout=10)
        # Bo's network drops; the reconnect lands on node b, where the race is not.
        await guest.drop()
        back = await on_node(cluster, bo, "b")
        assert back.welcome["resumable"] is not None, back.welcome
        back, node = await refused_then_followed(cluster, back, bo, {"type": "resume"}, "game_elsewhere")
        assert node == "a"
        snapshot = await back.expect("snapshot")
        assert snapshot["game"]["gameId"] == game_id
        assert cluster.rows(f"SELECT node_id FROM game_holders WHERE game_id = '{game_id}'") == [["a"]]
        await back.expect("resumed")
        for racer in (host, back):
            await racer.send(type="quit")
            await racer.expect("gameOver")
        await host.close()
        await back.close()

    run(scenario())


async def steer_until_stopped(client, stop, played):
    """Plays `client`'s game by the safe-lane cue, noting each step, until `stop` is set."""
    while not stop.is_set():
        try:
            message = await client.recv(timeout=0.5)
        except asyncio.TimeoutError:
            continue
        if message["type"] == "step":
            played[message["step"]] = message
            direction = nearest_safe_move(message)
            if direction:
                goal = min(message["safeLanes"], key=lambda lane: abs(lane - message["lane"]))
                for _ in range(abs(goal - message["lane"])):
                    await client.send(type="move", direction=direction, step=message["step"])
        elif message["type"] in ("crash", "gameOver", "error"):
            raise AssertionError(f"the player's game ended early: {message}")


def test_a_watcher_sent_to_the_other_node_follows_the_game_there_and_sees_its_frames(cluster):
    proxy = cluster.proxy
    ada, watcher_token = create_player(proxy, "Ada"), create_player(proxy, "Watcher")

    async def scenario():
        player = await on_node(cluster, ada, "a")
        game_id = (await player.start("cruise"))["game"]["gameId"]
        assert cluster.rows(f"SELECT node_id FROM game_holders WHERE game_id = '{game_id}'") == [["a"]]
        stop, played = asyncio.Event(), {}
        playing = asyncio.create_task(steer_until_stopped(player, stop, played))

        watcher = await on_node(cluster, watcher_token, "b")
        watcher, node = await refused_then_followed(cluster, watcher, watcher_token,
                                                    {"type": "watch", "gameId": game_id}, "watch_elsewhere")
        assert node == "a"
        watching = await watcher.expect("watching")
        assert watching["gameId"] == game_id and watching["player"]["name"] == "Ada"
        # The watcher gets the player's very steps from here on.
        seen = []
        while len(seen) < 3:
            message = await watcher.recv(timeout=10)
            if message["type"] == "step":
                seen.append(message)
        while max(played, default=-1) < seen[-1]["step"]:
            await asyncio.sleep(0.05)
        stop.set()
        await playing
        for step in seen:
            assert step == played[step["step"]], (step, played.get(step["step"]))
        await player.send(type="quit")
        await player.expect("gameOver")
        ended, _ = await watcher.until(lambda m: m["type"] == "watchEnded", timeout=10)
        assert ended["gameId"] == game_id
        await player.close()
        await watcher.close()

    run(scenario())
