"""Race rooms and quick races over /ws (docs/PROTOCOL.md "Race rooms"), with real clients on a
real server: the lobby's rules and refusals, plays consumed per racer, a 4-racer race to the
end in the right finish order, a racer who drops and comes back, the rematch, the quick race."""

import asyncio

from ws_client import GameClient, create_player, run

# Short waits so a race starts at once; the standings at most 5 a second.
FAST = ("--race-countdown-seconds", "1", "--quick-race-wait-seconds", "1", "--standings-interval-ms", "200")


async def signed_in_players(server, names):
    return [await GameClient.signed_in(server, create_player(server, name)) for name in names]


async def room_of(client):
    return (await client.expect("room"))["room"]


async def open_room(client, **fields):
    await client.send(type="openRoom", level=fields.pop("level", "cruise"), **fields)
    return await room_of(client)


async def join(client, code):
    await client.send(type="joinRoom", code=code)
    return await room_of(client)


async def settle(clients):
    """Reads what each client has waiting, so the next expectation sees only what follows."""
    for client in clients:
        try:
            while True:
                await client.recv(timeout=0.3)
        except (asyncio.TimeoutError, TimeoutError):
            pass


def plays_left(server, client_token):
    return server.request("GET", "/api/v1/quota", token=client_token).json()["playsLeft"]


def assert_stored(server, over, names):
    """The race `raceOver` names is stored with these racers, and it ends no sooner than it starts."""
    stored = server.request("GET", f"/api/v1/races/{over['raceId']}")
    assert stored.status == 200, stored.body
    race = stored.json()
    assert {result["name"] for result in race["results"]} == names
    assert all(result["reason"] == "abandoned" for result in race["results"])
    assert race["startedAt"] <= race["endedAt"]


def test_a_room_is_opened_joined_by_code_as_typed_and_shows_everyone(server_factory):
    server = server_factory(*FAST)

    async def scenario():
        ada, bo = await signed_in_players(server, ["Ada", "Bo"])
        room = await open_room(ada, seats=3)
        code = room["code"]
        assert len(code) == 6 and not set(code) & set("01OI")
        assert room["link"] == f"/race.html?room={code}"
        assert (room["level"], room["seats"], room["practice"], room["quick"]) == ("cruise", 3, False, False)
        assert (room["state"], room["hostSeat"], room["you"], room["race"], room["watchers"]) == ("lobby", 0, 0, 1, 0)
        assert room["racers"] == [{"seat": 0, "name": "Ada", "ready": False, "connected": True}]
        joined = await join(bo, f" {code[:3].lower()}-{code[3:].lower()} ")
        assert joined["you"] == 1 and [r["name"] for r in joined["racers"]] == ["Ada", "Bo"]
        seen_by_host = await room_of(ada)
        assert seen_by_host["you"] == 0 and len(seen_by_host["racers"]) == 2
        await bo.send(type="ready", ready=True)
        assert [r["ready"] for r in (await room_of(ada))["racers"]] == [False, True]
        fetched = server.request("GET", f"/api/v1/rooms/{code.lower()}")
        assert fetched.status == 200, fetched.body
        body = fetched.json()
        assert (body["code"], body["level"], body["seats"], body["state"], body["practice"]) == (code, "cruise", 3, "lobby", False)
        assert [r["name"] for r in body["racers"]] == ["Ada", "Bo"]
        missing = server.request("GET", "/api/v1/rooms/ZZZZZZ")
        assert missing.status == 404 and missing.json()["error"]["code"] == "room_not_found"

    run(scenario())


def test_bad_room_requests_are_refused_and_change_nothing(server_factory):
    server = server_factory(*FAST)

    async def scenario():
        ada, bo, cy, di = await signed_in_players(server, ["Ada", "Bo", "Cy", "Di"])
        for bad in ({"seats": 1}, {"seats": 9}, {"seats": "four"}, {"level": "warp"}):
            await ada.send(**{"type": "openRoom", "level": "cruise", **bad})
            refusal = await ada.expect_error("bad_message")
            assert refusal["inReplyTo"] == "openRoom"
        await bo.send(type="joinRoom", code="K7QXM2")
        assert (await bo.expect_error("room_not_found"))["inReplyTo"] == "joinRoom"
        await bo.send(type="joinRoom")
        await bo.expect_error("bad_message")
        for message, code in (({"type": "ready"}, "not_in_room"), ({"type": "startRace"}, "not_in_room"),
                              ({"type": "leaveRoom"}, "not_in_room"), ({"type": "leaveQueue"}, "not_in_queue")):
            await bo.send(**message)
            assert (await bo.expect_error(code))["inReplyTo"] == message["type"]
        room = await open_room(ada, seats=2)
        await ada.send(type="openRoom", level="cruise")
        await ada.expect_error("already_in_room")
        await ada.send(type="joinRoom", code=room["code"])
        await ada.expect_error("already_in_room")
        await ada.send(type="startRace")
        alone = await ada.expect_error("not_ready")
        assert "2 racers" in alone["message"]
        await join(bo, room["code"])
        await room_of(ada)
        await bo.send(type="joinRoom", code=room["code"])
        await bo.expect_error("already_in_room")
        await cy.send(type="joinRoom", code=room["code"])
        await cy.expect_error("room_full")
        await bo.send(type="startRace")
        await bo.expect_error("not_host")
        await ada.send(type="startRace")
        not_ready = await ada.expect_error("not_ready")
        assert "Bo" in not_ready["message"]
        # A player with a game of their own cannot join, and one in a room cannot start a game.
        await di.start("cruise", practice=True)
        await di.send(type="joinRoom", code=room["code"])
        await di.expect_error("game_in_progress")
        await di.send(type="quit")
        await di.expect("gameOver")
        # Nothing changed: still two racers, nobody ready, in the lobby.
        await settle([ada, bo])
        fetched = server.request("GET", f"/api/v1/rooms/{room['code']}").json()
        assert fetched["state"] == "lobby" and [r["ready"] for r in fetched["racers"]] == [False, False]

    run(scenario())


def test_leaving_passes_the_host_and_the_last_one_out_closes_the_room(server_factory):
    server = server_factory(*FAST)

    async def scenario():
        ada, bo = await signed_in_players(server, ["Ada", "Bo"])
        room = await open_room(ada)
        await join(bo, room["code"])
        await room_of(ada)
        await ada.send(type="leaveRoom")
        left = await ada.expect("roomLeft")
        assert left == {"type": "roomLeft", "code": room["code"], "reason": "left"}
        after = await room_of(bo)
        assert after["hostSeat"] == 1 and [r["name"] for r in after["racers"]] == ["Bo"]
        await bo.send(type="leaveRoom")
        await bo.expect("roomLeft")
        assert server.request("GET", f"/api/v1/rooms/{room['code']}").status == 404

    run(scenario())


async def race_to_the_end(clients, first_stop):
    """The racers end one after another, each on a higher score than the one before, by
    construction rather than by luck: every racer dodges by the cue (the road never sets a
    trap, docs/GAME_RULES.md, so it survives) until its turn, then steers into the traffic and
    crashes. Racer 0's turn comes at step `first_stop`; racer i's once racer i-1's `gameOver`
    has come and a step shows a score above that racer's final one. A score never goes down,
    so each racer ends above the one before, however the steps and the messages are timed.
    Returns each one's `gameOver`, the `standings` it saw, its `raceOver`, and the score it
    had when it turned."""
    finals = {}
    turned_at = {}
    ended = [asyncio.Event() for _ in clients]

    def its_turn(index, step):
        if index == 0:
            return step["step"] >= first_stop
        return ended[index - 1].is_set() and step["score"] > finals[index - 1]

    async def racer(index, client):
        standings = []
        over = None
        while True:
            message = await client.recv(timeout=60)
            kind = message["type"]
            if kind == "standings":
                standings.append(message)
            elif kind == "step" and over is None:
                safe, lane = message["safeLanes"], message["lane"]
                if index not in turned_at and its_turn(index, message):
                    turned_at[index] = message["score"]
                if index not in turned_at:
                    goal = min(safe, key=lambda candidate: abs(candidate - lane)) if safe else lane
                else:
                    danger = [candidate for candidate in (0, 1, 2) if candidate not in safe]
                    goal = min(danger, key=lambda candidate: abs(candidate - lane)) if danger else lane
                for _ in range(abs(goal - lane)):
                    await client.send(type="move", direction="left" if goal < lane else "right", step=message["step"])
            elif kind == "gameOver":
                over = message
                assert index in turned_at, f"racer {index} crashed before its turn: {message}"
                finals[index] = message["score"]
                ended[index].set()
            elif kind == "raceOver":
                assert over is not None, "raceOver before the racer's own gameOver"
                return over, standings, message, turned_at[index]
            elif kind == "error":
                raise AssertionError(f"unexpected error {message}")

    return await asyncio.gather(*(racer(index, client) for index, client in enumerate(clients)))


def places_by_the_rule(entries):
    """docs/PROTOCOL.md "Race rooms": place by score, then steps, then seat."""
    return [entry["seat"] for entry in sorted(entries, key=lambda e: (-e["score"], -e["steps"], e["seat"]))]


def test_four_racers_race_to_the_end_in_the_right_order_and_a_rematch_keeps_the_room(server_factory):
    server = server_factory(*FAST)
    names = ["Ada", "Bo", "Cy", "Di"]
    tokens = [create_player(server, name) for name in names]

    async def scenario():
        clients = [await GameClient.signed_in(server, token) for token in tokens]
        # Rapid: most rows have a car, so a racer steering into traffic crashes within a step or
        # two, and the next racer soon scores more.
        room = await open_room(clients[0], seats=4, level="rapid")
        code = room["code"]
        for client in clients[1:]:
            await join(client, code)
        for client in clients[1:]:
            await client.send(type="ready", ready=True)
        await settle(clients)
        await clients[0].send(type="startRace")
        starts = []
        for client in clients:
            started = await client.expect("started")
            countdown = await client.expect("countdown")
            assert countdown["code"] == code and 0 < countdown["startsInMs"] <= 1000
            starts.append(started)
        games = [started["game"] for started in starts]
        assert all(game["race"] == code and game["practice"] is False for game in games)
        assert len({game["gameId"] for game in games}) == 4
        assert all(game["grid"] == games[0]["grid"] for game in games)  # one road
        assert [started["quota"]["playsLeft"] for started in starts] == [4, 4, 4, 4]
        # A move before the deadline is refused.
        await clients[1].send(type="move", direction="left", step=0)
        early = await clients[1].expect_error("not_started")
        assert early["inReplyTo"] == "move"
        # Seat 0 turns into the traffic at step 4, each next seat once the one before has
        # crashed and it scores more: they finish in reverse seat order, each score higher.
        results = await race_to_the_end(clients, 4)
        race_over = results[0][2]
        assert all(result[2] == race_over for result in results)
        assert race_over["code"] == code
        order = [entry["seat"] for entry in race_over["results"]]
        assert order == [3, 2, 1, 0], race_over
        assert [entry["place"] for entry in race_over["results"]] == [1, 2, 3, 4]
        scores = [entry["score"] for entry in race_over["results"]]
        assert scores == sorted(scores, reverse=True) and len(set(scores)) == 4, scores
        for seat, (over, standings, _, turned_at) in enumerate(results):
            entry = next(e for e in race_over["results"] if e["seat"] == seat)
            assert (entry["gameId"], entry["score"], entry["reason"]) == (over["gameId"], over["score"], "crash")
            assert over["saved"] is True and over["reason"] == "crash"
            assert over["score"] >= turned_at
            if seat > 0:
                assert turned_at > results[seat - 1][0]["score"]
            # The standings came at a bounded rate, the last with every racer crashed.
            assert standings, "no standings"
            assert [e["state"] for e in standings[-1]["racers"]] == ["crashed"] * 4
            assert [e["seat"] for e in standings[-1]["racers"]] == order
            assert [e["place"] for e in standings[-1]["racers"]] == [1, 2, 3, 4]
        stored = server.query("SELECT public_id, score, steps, end_reason, seed FROM games")
        assert {row[3] for row in stored} == {"crash"} and len({row[4] for row in stored}) == 1
        by_game = {row[0]: row for row in stored}
        # The places are the rule's, applied to what the server reported and to what it stored.
        reported = [{"seat": e["seat"], "score": e["score"], "steps": by_game[e["gameId"]][2]} for e in race_over["results"]]
        assert places_by_the_rule(reported) == order
        assert [by_game[e["gameId"]][1] for e in race_over["results"]] == scores
        # The race is stored with its finish order, beside the games.
        assert race_over["raceId"]
        entries = server.query(
            "SELECT r.room_code, r.level, r.practice, e.place, e.seat, e.game_id, e.score, e.end_reason "
            "FROM race_entries e JOIN races r ON r.id = e.race_id WHERE r.public_id = ? ORDER BY e.place",
            (race_over["raceId"],))
        assert entries == [(code, "rapid", 0, entry["place"], entry["seat"], entry["gameId"], entry["score"], "crash")
                           for entry in race_over["results"]]
        stored_entries = [{"seat": row[4], "score": row[6], "steps": by_game[row[5]][2]} for row in entries]
        assert places_by_the_rule(stored_entries) == [row[4] for row in entries] == order
        # Back in the lobby: the same code, the next race, nobody ready.
        for client in clients:
            lobby = await room_of(client)
            while lobby["state"] != "lobby":
                lobby = await room_of(client)
            assert (lobby["code"], lobby["race"]) == (code, 2)
            assert not any(racer["ready"] for racer in lobby["racers"])
        assert [plays_left(server, token) for token in tokens] == [4, 4, 4, 4]
        # The rematch: ready again, the host starts, the same room races again.
        for client in clients[1:]:
            await client.send(type="ready", ready=True)
        await settle(clients)
        await clients[0].send(type="startRace")
        again = [await client.expect("started") for client in clients]
        assert all(started["game"]["race"] == code for started in again)
        assert [started["quota"]["playsLeft"] for started in again] == [3, 3, 3, 3]
        for client in clients:
            await client.send(type="quit")
        for client in clients:
            await client.expect("gameOver")
            over = await client.expect("raceOver")
        assert {entry["reason"] for entry in over["results"]} == {"abandoned"}

    run(scenario())


def test_a_practice_room_consumes_no_play_and_a_racer_without_plays_sits_out(server_factory):
    server = server_factory(*FAST, "--daily-free-plays", "1")
    tokens = [create_player(server, name) for name in ["Ada", "Bo", "Cy"]]

    async def scenario():
        ada, bo, cy = [await GameClient.signed_in(server, token) for token in tokens]
        room = await open_room(ada, practice=True)
        await join(bo, room["code"])
        await bo.send(type="ready")
        await settle([ada, bo])
        await ada.send(type="startRace")
        for client in (ada, bo):
            started = await client.expect("started")
            assert started["game"]["practice"] is True and started["quota"] is None
            await client.send(type="quit")
        # Both quit inside the countdown: the race is still stored (docs/PROTOCOL.md, "The end").
        for client in (ada, bo):
            over = await client.expect("raceOver")
            assert over["raceId"] is not None, over
        assert_stored(server, over, {"Ada", "Bo"})
        assert [plays_left(server, token) for token in tokens[:2]] == [1, 1]
        for client in (ada, bo):
            await client.send(type="leaveRoom")
            await client.expect("roomLeft")
        # Bo spends his one play alone; then a ranked race: Bo sits out, Ada and Cy race.
        await bo.start("cruise")
        await bo.send(type="quit")
        await bo.expect("gameOver")
        room = await open_room(ada)
        for client in (bo, cy):
            await join(client, room["code"])
            await client.send(type="ready")
        await settle([ada, bo, cy])
        await ada.send(type="startRace")
        refusal = await bo.expect_error("no_plays_left")
        assert refusal["inReplyTo"] == "startRace" and refusal["quota"]["playsLeft"] == 0
        for client in (ada, cy):
            started = await client.expect("started")
            assert started["quota"]["playsLeft"] == 0
        lobby = await room_of(bo)
        while lobby["state"] == "lobby":
            lobby = await room_of(bo)
        assert lobby["state"] == "countdown"
        assert next(r for r in lobby["racers"] if r["name"] == "Bo")["ready"] is False
        for client in (ada, cy):
            await client.send(type="quit")
        for client in (ada, cy):
            over = await client.expect("raceOver")
            assert over["raceId"] is not None, over
        assert {entry["name"] for entry in over["results"]} == {"Ada", "Cy"}
        assert_stored(server, over, {"Ada", "Cy"})

    run(scenario())


def test_a_start_left_with_one_racer_gives_every_play_back(server_factory):
    server = server_factory(*FAST, "--daily-free-plays", "1")
    tokens = [create_player(server, name) for name in ["Ada", "Bo"]]

    async def scenario():
        ada, bo = [await GameClient.signed_in(server, token) for token in tokens]
        await bo.start("cruise")
        await bo.send(type="quit")
        await bo.expect("gameOver")
        room = await open_room(ada)
        await join(bo, room["code"])
        await bo.send(type="ready")
        await settle([ada, bo])
        await ada.send(type="startRace")
        await bo.expect_error("no_plays_left")
        why = await ada.expect_error("not_ready")
        assert "Bo" in why["message"] and "given back" in why["message"]
        lobby = await room_of(ada)
        assert lobby["state"] == "lobby" and lobby["race"] == 1
        assert [r["ready"] for r in lobby["racers"]] == [False, False]
        # Ada's play was taken and given back: she still has it.
        for _ in range(50):
            if plays_left(server, tokens[0]) == 1:
                break
            await asyncio.sleep(0.1)
        assert plays_left(server, tokens[0]) == 1
        assert server.request("GET", f"/api/v1/rooms/{room['code']}").json()["state"] == "lobby"

    run(scenario())


def test_a_racer_who_drops_is_away_and_resumes_within_the_grace(server_factory):
    server = server_factory(*FAST)
    tokens = [create_player(server, name) for name in ["Ada", "Bo"]]

    async def scenario():
        ada, bo = [await GameClient.signed_in(server, token) for token in tokens]
        room = await open_room(ada)
        await join(bo, room["code"])
        await bo.send(type="ready")
        await settle([ada, bo])
        await ada.send(type="startRace")
        bo_game = (await bo.expect("started"))["game"]
        await ada.expect("started")
        await bo.expect("step", timeout=5)
        await bo.drop()
        message, _ = await ada.until(lambda m: m["type"] == "standings"
                                     and any(r["seat"] == 1 and r["state"] == "away" for r in m["racers"]), timeout=10)
        back = await GameClient.signed_in(server, tokens[1])
        # The game that waits is named a race game, on reload as on resume.
        waiting = back.welcome["resumable"]
        assert (waiting["gameId"], waiting["race"]) == (bo_game["gameId"], room["code"]), waiting
        await back.send(type="resume")
        snapshot = await back.expect("snapshot")
        assert (snapshot["game"]["gameId"], snapshot["game"]["race"]) == (bo_game["gameId"], room["code"])
        lobby = await room_of(back)
        assert lobby["you"] == 1 and lobby["racers"][1]["connected"] is True
        await ada.until(lambda m: m["type"] == "standings"
                        and any(r["seat"] == 1 and r["state"] == "racing" for r in m["racers"]), timeout=10)
        for client in (ada, back):
            await client.send(type="quit")
        for client in (ada, back):
            over = await client.expect("raceOver")
        assert len(over["results"]) == 2

    run(scenario())


def test_a_quick_race_forms_a_room_from_the_queue(server_factory):
    server = server_factory(*FAST)

    async def scenario():
        ada, bo, cy = await signed_in_players(server, ["Ada", "Bo", "Cy"])
        await ada.send(type="quickRace", level="fast")
        first = await ada.expect("queue")
        assert first == {"type": "queue", "level": "fast", "waiting": 1, "startsInMs": None}
        await ada.send(type="quickRace", level="fast")
        await ada.expect_error("already_in_queue")
        await ada.send(type="openRoom", level="fast")
        await ada.expect_error("already_in_queue")
        await cy.send(type="quickRace", level="cruise")  # another level waits apart
        assert (await cy.expect("queue"))["waiting"] == 1
        await cy.send(type="leaveQueue")
        assert await cy.expect("queue") == {"type": "queue", "level": "cruise", "waiting": 0, "startsInMs": None,
                                            "left": True}
        await bo.send(type="quickRace", level="fast")
        for client in (ada, bo):
            update = await client.expect("queue")
            assert update["waiting"] == 2 and 0 < update["startsInMs"] <= 1000
        rooms = [await room_of(client) for client in (ada, bo)]
        assert rooms[0]["code"] == rooms[1]["code"] and rooms[0]["quick"] is True
        assert rooms[0]["state"] == "countdown" and {r["name"] for r in rooms[0]["racers"]} == {"Ada", "Bo"}
        for client in (ada, bo):
            started = await client.expect("started")
            assert started["game"]["race"] == rooms[0]["code"] and started["quota"]["playsLeft"] == 4
        for client in (ada, bo):
            await client.send(type="quit")
        for client in (ada, bo):
            await client.expect("raceOver")

    run(scenario())


def test_the_time_limit_ends_the_racers_still_racing(server_factory):
    server = server_factory(*FAST, "--race-time-limit-seconds", "10")
    tokens = [create_player(server, name) for name in ["Ada", "Bo"]]

    async def scenario():
        ada, bo = [await GameClient.signed_in(server, token) for token in tokens]
        room = await open_room(ada)
        await join(bo, room["code"])
        await bo.send(type="ready")
        await settle([ada, bo])
        await ada.send(type="startRace")
        await ada.expect("started")
        await bo.expect("started")
        # Bo drops (his game waits through the 60 s grace); Ada quits at once.
        await bo.drop()
        await ada.send(type="quit")
        over = await ada.expect("gameOver")
        assert over["reason"] == "abandoned"
        race_over = await ada.expect("raceOver", timeout=20)
        by_seat = {entry["seat"]: entry for entry in race_over["results"]}
        assert by_seat[0]["reason"] == "abandoned" and by_seat[1]["reason"] == "time_limit"
        stored = server.query(
            "SELECT e.seat, e.end_reason, g.end_reason FROM race_entries e JOIN games g ON g.public_id = e.game_id "
            "ORDER BY e.seat")
        assert stored == [(0, "abandoned", "abandoned"), (1, "time_limit", "abandoned")]

    run(scenario())


def test_a_watcher_watches_a_racer_by_room_and_seat(server_factory):
    server = server_factory("--race-countdown-seconds", "2", "--standings-interval-ms", "200")
    tokens = [create_player(server, name) for name in ["Ada", "Bo", "Eve"]]

    async def scenario():
        ada, bo, eve = [await GameClient.signed_in(server, token) for token in tokens]
        room = await open_room(ada)
        code = room["code"]
        await eve.send(type="watch", room=code)
        lobby_refusal = await eve.expect_error("game_not_found")
        assert "lobby" in lobby_refusal["message"]
        await eve.send(type="watch", room="ZZZZZZ")
        await eve.expect_error("room_not_found")
        await join(bo, code)
        await bo.send(type="ready")
        await settle([ada, bo])
        await ada.send(type="startRace")
        bo_game = (await bo.expect("started"))["game"]
        await ada.expect("started")
        await eve.send(type="watch", room=code.lower(), seat=1)
        watching = await eve.expect("watching")
        assert watching["room"] == code and watching["gameId"] == bo_game["gameId"]
        assert watching["player"]["name"] == "Bo"
        # The watcher gets the racer's frames and the race's standings.
        await eve.expect("step", timeout=10)
        standings = await eve.expect("standings", timeout=10)
        assert standings["code"] == code and {r["name"] for r in standings["racers"]} == {"Ada", "Bo"}
        # The room counts its watchers.
        await ada.send(type="leaveRoom")
        await ada.expect("roomLeft")
        after = await room_of(bo)
        while after["watchers"] != 1:
            after = await room_of(bo)
        await bo.send(type="quit")
        ended = await eve.expect("watchEnded")
        assert ended["gameId"] == bo_game["gameId"]

    run(scenario())


def test_a_racer_back_during_the_countdown_keeps_the_start_and_welcome_names_the_race(server_factory):
    server = server_factory("--race-countdown-seconds", "3", "--standings-interval-ms", "200")
    tokens = [create_player(server, name) for name in ["Ada", "Bo"]]

    async def scenario():
        ada, bo = [await GameClient.signed_in(server, token) for token in tokens]
        room = await open_room(ada)
        code = room["code"]
        await join(bo, code)
        await bo.send(type="ready")
        await settle([ada, bo])
        await ada.send(type="startRace")
        bo_game = (await bo.expect("started"))["game"]
        await ada.expect("started")
        countdown = await bo.expect("countdown")
        # Bo drops at once and comes back well inside the 3 s countdown.
        await bo.drop()
        back = await GameClient.signed_in(server, tokens[1])
        waiting = back.welcome["resumable"]
        assert waiting["gameId"] == bo_game["gameId"] and waiting["race"] == code, waiting
        await back.send(type="resume")
        snapshot = await back.expect("snapshot")
        assert snapshot["game"]["race"] == code and snapshot["game"]["step"] == 0
        resumed = await back.expect("resumed")
        # His first step stays one interval after the race's deadline, as Ada's: the wait
        # includes what is left of the countdown, not just one interval from now.
        assert bo_game["interval"] < resumed["nextStepInMs"] <= countdown["startsInMs"] + bo_game["interval"], resumed
        first = await back.expect("step", timeout=10)
        assert first["step"] == 1
        for client in (ada, back):
            await client.send(type="quit")
        for client in (ada, back):
            await client.expect("raceOver")

    run(scenario())


def test_a_race_watcher_follows_the_race_to_its_finish_and_may_switch_racer(server_factory):
    server = server_factory("--race-countdown-seconds", "2", "--standings-interval-ms", "200")
    tokens = [create_player(server, name) for name in ["Ada", "Bo", "Cy", "Eve"]]

    async def scenario():
        ada, bo, cy, eve = [await GameClient.signed_in(server, token) for token in tokens]
        room = await open_room(ada)
        code = room["code"]
        for client in (bo, cy):
            await join(client, code)
            await client.send(type="ready")
        await settle([ada, bo, cy])
        await ada.send(type="startRace")
        games = [(await client.expect("started"))["game"] for client in (ada, bo, cy)]
        await eve.send(type="watch", room=code, seat=1)
        watching = await eve.expect("watching")
        assert watching["gameId"] == games[1]["gameId"] and watching["room"] == code
        assert watching["game"]["race"] == code
        # The room reaches its watchers too (no seat of theirs): racing once the countdown ends.
        racing, _ = await eve.until(lambda m: m["type"] == "room" and m["room"]["state"] == "racing", timeout=10)
        assert racing["room"]["you"] is None and racing["room"]["watchers"] == 1
        await eve.expect("step", timeout=10)
        # Bo quits: the watch of his game ends, but Eve still follows the race.
        await bo.send(type="quit")
        ended = await eve.expect("watchEnded")
        assert (ended["gameId"], ended["reason"]) == (games[1]["gameId"], "abandoned")
        await eve.until(lambda m: m["type"] == "standings"
                        and any(r["seat"] == 1 and r["state"] == "left" for r in m["racers"]), timeout=10)
        # Bo's seat is over: watching it is refused and changes nothing; Ada's can be watched.
        await eve.send(type="watch", room=code, seat=1)
        await eve.expect_error("game_over")
        await eve.send(type="watch", room=code, seat=0)
        switched = await eve.expect("watching")
        assert switched["gameId"] == games[0]["gameId"] and switched["player"]["name"] == "Ada"
        await eve.expect("step", timeout=10)
        for client in (ada, cy):
            await client.send(type="quit")
        ended = await eve.expect("watchEnded")
        assert ended["gameId"] == games[0]["gameId"]
        # To the finish: the last standings, the results, the room back in its lobby.
        last, _ = await eve.until(lambda m: m["type"] == "standings"
                                  and all(r["state"] != "racing" for r in m["racers"]), timeout=10)
        race_over = await eve.expect("raceOver", timeout=15)
        assert race_over["code"] == code and {r["gameId"] for r in race_over["results"]} == {g["gameId"] for g in games}
        lobby, _ = await eve.until(lambda m: m["type"] == "room" and m["room"]["state"] == "lobby")
        assert lobby["room"]["you"] is None and lobby["room"]["race"] == 2
        # The race is over: the watch with it.
        await eve.send(type="stopWatching")
        await eve.expect_error("not_watching")

    run(scenario())


def test_a_race_watcher_hears_the_room_close_when_every_racer_leaves(server_factory):
    server = server_factory("--race-countdown-seconds", "1", "--standings-interval-ms", "200")
    tokens = [create_player(server, name) for name in ["Ada", "Bo", "Eve"]]

    async def scenario():
        ada, bo, eve = [await GameClient.signed_in(server, token) for token in tokens]
        room = await open_room(ada)
        code = room["code"]
        await join(bo, code)
        await bo.send(type="ready")
        await settle([ada, bo])
        await ada.send(type="startRace")
        bo_game = (await bo.expect("started"))["game"]
        await eve.send(type="watch", room=code, seat=1)
        await eve.expect("watching")
        for client in (ada, bo):
            await client.send(type="leaveRoom")
            await client.expect("roomLeft")
        ended = await eve.expect("watchEnded")
        assert ended["gameId"] == bo_game["gameId"]
        closed = await eve.expect("roomLeft")
        assert closed == {"type": "roomLeft", "code": code, "reason": "closed"}
        await eve.send(type="stopWatching")
        await eve.expect_error("not_watching")

    run(scenario())
