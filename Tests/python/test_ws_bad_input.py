"""Bad input on /ws: each gets a clear error (and a close code where the connection must end)
and changes nothing (docs/PROTOCOL.md, `error`)."""

import asyncio

from websockets.exceptions import InvalidStatus

from ws_client import GameClient, create_player, run


def test_an_oversized_message_closes_with_1009(server):
    token = create_player(server)

    async def scenario():
        client = await GameClient.signed_in(server, token)
        await client.send_raw('{"type":"ping","pad":"' + "x" * 5000 + '"}')
        code, reason = await client.closed()
        assert code == 1009 and "4096" in reason

    run(scenario())


def test_the_size_limit_counts_every_fragment_of_a_message(server):
    token = create_player(server)

    async def scenario():
        client = await GameClient.signed_in(server, token)
        # Five fragments of 1,000 bytes, each well under the limit: 5,000 bytes in all.
        await client.ws.send(['{"type":"ping","pad":"'] + ["y" * 1000] * 5 + ['"}'])
        code, _ = await client.closed()
        assert code == 1009

    run(scenario())


def test_a_long_message_of_multibyte_text_is_read_whole_across_its_pieces(server):
    """The game protocol's rx buffer is 256 bytes, so libwebsockets hands a long message over
    in pieces that can cut a character's UTF-8 bytes apart: it is still read whole and
    answered (docs/LIBWEBSOCKETS-4.1.6.md)."""
    token = create_player(server)

    async def scenario():
        client = await GameClient.signed_in(server, token)
        message = '{"type":"ping","pad":"' + "é🏎" * 600 + '"}'
        assert 256 * 4 < len(message.encode()) <= 4096
        await client.send_raw(message)
        await client.expect("pong")
        await client.close()

    run(scenario())


def test_a_message_just_under_the_limit_is_read_whole(server):
    token = create_player(server)

    async def scenario():
        client = await GameClient.signed_in(server, token)
        message = '{"type":"ping","pad":"' + "p" * 4000 + '"}'
        assert len(message) <= 4096
        await client.send_raw(message)
        await client.expect("pong")
        await client.close()

    run(scenario())


def test_a_fragmented_message_under_the_limit_is_read_whole(server):
    token = create_player(server)

    async def scenario():
        client = await GameClient.signed_in(server, token)
        await client.ws.send(['{"type":', '"ping"', ',"pad":"' + "z" * 1000 + '"}'])
        await client.expect("pong")
        await client.close()

    run(scenario())


def test_malformed_json_unknown_types_and_bad_moves_are_refused_and_change_nothing(server):
    token = create_player(server)

    async def scenario():
        client = await GameClient.signed_in(server, token)
        # Before any game: a move, a pause, a resume have nothing to act on.
        await client.send(type="move", direction="left", step=0)
        assert (await client.expect_error("no_game"))["inReplyTo"] == "move"
        await client.send(type="pause")
        await client.expect_error("no_game")
        await client.send(type="resume")
        await client.expect_error("no_game")

        started = await client.start("cruise")
        first = await client.expect("step")
        await client.send_raw("{this is not json")
        await client.expect_error("bad_json")
        await client.send_raw("[1, 2, 3]")
        await client.expect_error("bad_message")
        await client.send(type="teleport", lane=2)
        error = await client.expect_error("unknown_type")
        assert "teleport" in error["message"]
        await client.send(type="move", direction="sideways", step=first["step"])
        await client.expect_error("bad_message")
        await client.send(type="move", direction="left")
        await client.expect_error("bad_message")
        await client.send(type="move", direction="left", step=first["step"] + 50)
        error = await client.expect_error("step_out_of_range")
        assert error["inReplyTo"] == "move"
        await client.send(type="move", direction="left", step=-1)
        await client.expect_error("step_out_of_range")
        await client.send(type="start", level="fast")
        await client.expect_error("game_in_progress")

        # None of it moved the car or disturbed the steps.
        later, skipped = await client.until(lambda message: message["type"] == "step")
        assert not any(message["type"] in ("moved", "bump") for message in client.received)
        assert later["lane"] == started["game"]["lane"]
        steps = [message["step"] for message in client.received if message["type"] == "step"]
        assert steps == list(range(steps[0], steps[0] + len(steps)))
        await client.close()

    run(scenario())


def test_a_move_after_game_over_is_refused(server):
    token = create_player(server)

    async def scenario():
        client = await GameClient.signed_in(server, token)
        await client.start("rapid")
        step = await client.expect("step")
        await client.send(type="quit")
        over = await client.expect("gameOver")
        assert over["reason"] == "abandoned"
        await client.send(type="move", direction="left", step=step["step"])
        error = await client.expect_error("game_over")
        assert over["gameId"] in error["message"]
        await client.send(type="pause")
        await client.expect_error("game_over")
        await client.close()

    run(scenario())


def test_messages_over_the_rate_are_refused_and_a_flood_is_closed(server):
    token = create_player(server)

    async def scenario():
        client = await GameClient.signed_in(server, token)
        for _ in range(60):
            await client.send(type="ping")
        message, skipped = await client.until(lambda message: message["type"] == "error")
        assert message["code"] == "rate_limited"
        assert len(skipped) >= 30  # the burst was answered
        for _ in range(200):
            await client.send(type="ping")
        code, reason = await client.closed()
        assert code == 1008 and "flooding" in reason

    run(scenario())


def test_connections_per_address_are_limited(server_factory, tmp_path):
    (tmp_path / "server0").mkdir()  # server_factory logs there but does not create it
    server = server_factory("--max-connections-per-ip", "2")

    async def scenario():
        first = await GameClient.open(server)
        second = await GameClient.open(server)
        try:
            await GameClient.open(server)
            raise AssertionError("a third connection was accepted")
        except InvalidStatus as refusal:
            assert refusal.response.status_code == 429
            assert b"too_many_connections" in refusal.response.body
        await first.close()
        await asyncio.sleep(0.3)
        third = await GameClient.open(server)  # a freed place can be taken again
        for client in (second, third):
            await client.close()

    run(scenario())


def test_before_hello_the_answer_follows_the_documented_order(server):
    """docs/PROTOCOL.md: not JSON is bad_json, JSON that is no message is bad_message, and any
    other type than hello is hello_first, whatever its fields and even when unknown."""
    token = create_player(server)

    async def scenario():
        client = await GameClient.open(server)
        await client.send_raw("{this is not json")
        await client.expect_error("bad_json")
        await client.send_raw("[1, 2, 3]")
        await client.expect_error("bad_message")
        await client.send_raw('{"type": 7}')
        await client.expect_error("bad_message")
        await client.send(type="teleport", lane=2)
        assert "inReplyTo" not in await client.expect_error("hello_first")
        await client.send(type="move", direction="sideways", step="x")
        assert (await client.expect_error("hello_first"))["inReplyTo"] == "move"
        await client.send(type="start")
        await client.expect_error("hello_first")
        await client.send(type="hello")  # a hello without its token is a bad hello
        assert "token" in (await client.expect_error("bad_message"))["message"]
        await client.send(type="hello", token=token)
        await client.expect("welcome")
        await client.close()

    run(scenario())


def test_fields_a_type_does_not_use_are_ignored_whatever_they_hold(server):
    token = create_player(server)

    async def scenario():
        client = await GameClient.signed_in(server, token)
        await client.send(type="ping", step="x", direction=3, practice="yes", level=[1])
        await client.expect("pong")
        await client.send(type="pause", token={"a": 1})
        await client.expect_error("no_game")  # read as a pause: there is no game to pause
        await client.send(type="start", level="cruise", practice="yes")
        error = await client.expect_error("bad_message")
        assert "practice" in error["message"] and error["inReplyTo"] == "start"
        await client.close()

    run(scenario())
