"""Getting onto /ws: the subprotocol, the path, the token in the first message (never in a
URL), bad and revoked tokens, and nothing before hello (docs/PROTOCOL.md)."""

import json
import time

import pytest
from websockets.exceptions import InvalidStatus

from postgres_databases import backend
from ws_client import GameClient, create_player, link_second_device, run


def refused_upgrade(server, **kwargs):
    """Opens /ws expecting the HTTP refusal; returns (status, JSON error)."""
    async def attempt():
        with pytest.raises(InvalidStatus) as refusal:
            client = await GameClient.open(server, **kwargs)
            await client.close()
        response = refusal.value.response
        import json
        return response.status_code, json.loads(response.body)["error"]

    return run(attempt())


def test_a_wrong_subprotocol_is_refused_with_a_clear_reason(server):
    status, error = refused_upgrade(server, subprotocols=("chat",))
    assert status == 400
    assert error["code"] == "subprotocol_required"
    assert "retrorapid.v1" in error["message"] and "chat" in error["message"]


def test_a_missing_subprotocol_is_refused_with_a_clear_reason(server):
    status, error = refused_upgrade(server, subprotocols=())
    assert status == 400
    assert error["code"] == "subprotocol_required"


def test_only_the_ws_path_upgrades(server):
    async def attempt():
        from websockets.asyncio.client import connect
        with pytest.raises(InvalidStatus) as refusal:
            async with connect(server.base_url.replace("http", "ws") + "/api/v1/me",
                               subprotocols=["retrorapid.v1"]):
                pass
        return refusal.value.response.status_code

    assert run(attempt()) == 404


def test_a_query_after_the_ws_path_is_ignored_and_an_encoded_one_is_another_path(server):
    """`/ws?node=b` is how a client asks nginx for a node of a cluster (docs/OPERATIONS.md,
    "Scale out"): the server takes it as /ws whatever the query says. A `?` written as %3F
    is part of the path, which is then not /ws."""
    from websockets.asyncio.client import connect

    token = create_player(server, "Routed")
    base = server.base_url.replace("http", "ws")

    async def scenario():
        for query in ("?node=b", "?node=no-such-node&x=1", "?"):
            async with connect(base + "/ws" + query, subprotocols=["retrorapid.v1"]) as ws:
                await ws.send(json.dumps({"type": "hello", "token": token}))
                welcome = json.loads(await ws.recv())
                assert welcome["type"] == "welcome", (query, welcome)
                if backend() == "sqlite":
                    # One server on SQLite is no node of a cluster: no `node` in its welcome.
                    assert "node" not in welcome, welcome
                else:
                    # On PostgreSQL every server is a node: its id, the host name by default.
                    assert isinstance(welcome["node"], str) and welcome["node"], welcome
        with pytest.raises(InvalidStatus) as refusal:
            async with connect(base + "/ws%3Fnode=b", subprotocols=["retrorapid.v1"]):
                pass
        response = refusal.value.response
        assert response.status_code == 404
        assert json.loads(response.body)["error"]["code"] == "not_found"

    run(scenario())


def test_the_server_agrees_on_the_subprotocol(server):
    async def scenario():
        client = await GameClient.open(server)
        assert client.ws.subprotocol == "retrorapid.v1"
        await client.close()

    run(scenario())


def test_a_bad_token_gets_an_error_and_close_4401_and_nothing_else(server):
    async def scenario():
        client = await GameClient.open(server)
        await client.send(type="hello", token="x" * 43, client="pytest")
        error = await client.recv()
        assert error["type"] == "error" and error["code"] == "unauthorized" and error["inReplyTo"] == "hello"
        code, reason = await client.closed()
        assert code == 4401 and "token" in reason
        assert [message["type"] for message in client.received] == ["error"]

    run(scenario())


def test_a_revoked_device_is_refused(server):
    first = create_player(server, "Owner")
    second = link_second_device(server, first)
    devices = server.request("GET", "/api/v1/devices", token=first).json()["devices"]
    other = next(device for device in devices if not device["current"])
    assert server.request("DELETE", f"/api/v1/devices/{other['id']}", token=first).status == 200

    async def scenario():
        client = await GameClient.open(server)
        await client.send(type="hello", token=second)
        error = await client.expect_error("unauthorized")
        assert "signed out" in error["message"]
        code, _ = await client.closed()
        assert code == 4401

    run(scenario())


def test_signing_a_device_out_closes_its_open_game_connection(server):
    """A leaked token stops working at once: the game connection it opened is closed (4401),
    not only its next hello; the game waits and the player's other device takes it back."""
    first = create_player(server, "Owner")
    second = link_second_device(server, first)
    devices = server.request("GET", "/api/v1/devices", token=first).json()["devices"]
    other = next(device for device in devices if not device["current"])

    async def scenario():
        thief = await GameClient.signed_in(server, second)
        started = await thief.start(level="cruise")
        owner = await GameClient.signed_in(server, first)
        assert server.request("DELETE", f"/api/v1/devices/{other['id']}", token=first).status == 200
        error = await thief.expect_error("unauthorized")
        assert "signed out" in error["message"]
        code, reason = await thief.closed()
        assert code == 4401 and "signed out" in reason
        # The owner's own connection stays open and can take the game back.
        await owner.send(type="resume")
        snapshot = await owner.expect("snapshot")
        assert snapshot["game"]["gameId"] == started["game"]["gameId"]
        await owner.close()

    run(scenario())


def test_nothing_but_hello_is_accepted_first(server):
    token = create_player(server)

    async def scenario():
        client = await GameClient.open(server)
        await client.send(type="start", level="fast")
        error = await client.expect_error("hello_first")
        assert error["inReplyTo"] == "start"
        await client.send(type="hello", token=token)  # still open: hello now works
        welcome = await client.expect("welcome")
        assert welcome["quota"]["playsLeft"] == 5  # the refused start consumed nothing
        await client.send(type="hello", token=token)
        await client.expect_error("already_authenticated")
        await client.close()

    run(scenario())


def test_a_client_that_never_says_hello_is_closed(server):
    async def scenario():
        client = await GameClient.open(server)
        opened = time.monotonic()
        await client.expect_error("hello_timeout", timeout=20)
        code, reason = await client.closed(timeout=5)
        return code, reason, time.monotonic() - opened

    # The default bound (--hello-timeout-seconds); test_ws_timeouts.py has a short one.
    code, reason, elapsed = run(scenario())
    assert (code, reason) == (4408, "hello timeout: no hello within 10 s")
    assert 9.9 <= elapsed <= 12, elapsed
