"""Behind a reverse proxy (docs/OPERATIONS.md): with `--trusted-proxies`, a connection from a
listed proxy counts as the client named in X-Forwarded-For (the rightmost address that is
not a trusted proxy), for the API's rate limits and for game connections per address alike.
From anyone else the header is ignored, so a forged one cannot dodge a limit."""

import asyncio

from websockets.exceptions import InvalidStatus

from ws_client import GameClient, run

# Set small here (the default is generous, docs/API.md "Limits") so the limit is quick to reach.
NEW_PLAYERS_PER_ADDRESS = 10
LIMIT = ("--new-players-per-address", f"{NEW_PLAYERS_PER_ADDRESS}/600")


def create_player_via(server, forwarded_for=None):
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
    return server.request("POST", "/api/v1/players", {"deviceLabel": "proxied"}, headers=headers)


def test_behind_a_trusted_proxy_each_forwarded_client_has_its_own_rate_limit(server_factory, tmp_path):
    (tmp_path / "server0").mkdir()  # server_factory logs there but does not create it
    server = server_factory("--trusted-proxies", "127.0.0.1", *LIMIT)
    for _ in range(NEW_PLAYERS_PER_ADDRESS):
        assert create_player_via(server, "203.0.113.7").status == 201
    refused = create_player_via(server, "203.0.113.7")
    assert refused.status == 429 and int(refused.headers["Retry-After"]) >= 1
    # What the client itself wrote stays left of what the proxy appended: it changes nothing.
    assert create_player_via(server, "198.51.100.99, 203.0.113.7").status == 429
    # Another client behind the same proxy has its own bucket, and so has the proxy.
    assert create_player_via(server, "203.0.113.8").status == 201
    assert create_player_via(server).status == 201
    assert "client.address=203.0.113.8" in server.log()


def test_a_chain_of_trusted_proxies_is_skipped_to_the_client(server_factory, tmp_path):
    (tmp_path / "server0").mkdir()
    server = server_factory("--trusted-proxies", "10.0.0.2, 127.0.0.1", *LIMIT)
    for _ in range(NEW_PLAYERS_PER_ADDRESS):
        assert create_player_via(server, "203.0.113.9, 10.0.0.2").status == 201
    assert create_player_via(server, "203.0.113.9, 10.0.0.2").status == 429
    assert create_player_via(server, "203.0.113.10, 10.0.0.2").status == 201


def test_without_trusted_proxies_a_forged_forwarded_for_cannot_dodge_the_limit(server_factory):
    server = server_factory(*LIMIT)
    for index in range(NEW_PLAYERS_PER_ADDRESS):
        assert create_player_via(server, f"203.0.113.{index + 1}").status == 201
    assert create_player_via(server, "203.0.113.200").status == 429
    assert create_player_via(server).status == 429


async def open_via(server, forwarded_for):
    return await GameClient.open(server, additional_headers={"X-Forwarded-For": forwarded_for})


async def assert_refused(server, forwarded_for):
    try:
        client = await open_via(server, forwarded_for)
    except InvalidStatus as refusal:
        assert refusal.response.status_code == 429
        assert b"too_many_connections" in refusal.response.body
        return
    await client.close()
    raise AssertionError(f"a connection forwarded for {forwarded_for} was accepted")


def test_game_connections_per_address_follow_the_same_rule(server_factory, tmp_path):
    (tmp_path / "server0").mkdir()
    (tmp_path / "server1").mkdir()
    trusting = server_factory("--trusted-proxies", "127.0.0.1", "--max-connections-per-ip", "2")
    direct = server_factory("--max-connections-per-ip", "2")

    async def scenario():
        behind_proxy = [await open_via(trusting, "203.0.113.7") for _ in range(2)]
        await assert_refused(trusting, "203.0.113.7")
        await assert_refused(trusting, "198.51.100.99, 203.0.113.7")
        behind_proxy.append(await open_via(trusting, "203.0.113.8"))
        # The count follows the client: a place freed behind the proxy can be taken again.
        await behind_proxy.pop(0).close()
        await asyncio.sleep(0.3)
        behind_proxy.append(await open_via(trusting, "203.0.113.7"))

        spoofing = [await open_via(direct, f"203.0.113.{index + 1}") for index in range(2)]
        await assert_refused(direct, "203.0.113.50")
        for client in behind_proxy + spoofing:
            await client.close()

    run(scenario())


def test_behind_a_proxy_an_ipv6_client_counts_as_its_64_for_game_connections(server_factory, tmp_path):
    (tmp_path / "server0").mkdir()
    server = server_factory("--trusted-proxies", "127.0.0.1", "--max-connections-per-ip", "2")

    async def scenario():
        # One subscriber's /64: every address in it is the same client.
        held = [await open_via(server, "2001:db8:7:1::1"), await open_via(server, "2001:db8:7:1:ffff:ffff:ffff:fffe")]
        await assert_refused(server, "2001:db8:7:1::99")
        await assert_refused(server, "2001:db8:7:1:1234:5678:9abc:def0")
        # The next /64 is someone else; an IPv4-mapped address is its IPv4 address.
        held.append(await open_via(server, "2001:db8:7:2::1"))
        held.append(await open_via(server, "192.0.2.5"))
        held.append(await open_via(server, "::ffff:192.0.2.5"))
        await assert_refused(server, "192.0.2.5")
        for client in held:
            await client.close()

    run(scenario())
