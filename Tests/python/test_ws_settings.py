"""A settings change made on one device reaches the player's other connected devices live,
over /ws (docs/API.md, "Settings"; docs/PROTOCOL.md, `settings`)."""

import asyncio

from ws_client import GameClient, create_player, link_second_device, run


def test_a_settings_change_is_pushed_to_the_players_other_devices_only(server):
    laptop = create_player(server, "Mia")
    phone = link_second_device(server, laptop)
    stranger = create_player(server, "Someone Else")

    async def scenario():
        on_laptop = await GameClient.signed_in(server, laptop)
        on_phone = await GameClient.signed_in(server, phone)
        on_other = await GameClient.signed_in(server, stranger)
        reply = await asyncio.to_thread(
            server.request, "PATCH", "/api/v1/settings", {"cueVolume": 35, "audioCueMode": "chord"},
            laptop, {"If-Match": '"0"'})
        assert reply.status == 200, reply.body
        pushed = await on_phone.expect("settings", timeout=5)
        document = pushed["document"]
        assert document["version"] == 1
        assert document["settings"]["cueVolume"] == 35 and document["settings"]["audioCueMode"] == "chord"
        # The device that made the change has the HTTP answer; other players hear nothing.
        for client in (on_laptop, on_other):
            await client.send(type="ping")
            pong, skipped = await client.until(lambda message: message["type"] == "pong")
            assert not any(message["type"] == "settings" for message in skipped)
        for client in (on_laptop, on_phone, on_other):
            await client.close()

    run(scenario())


def test_the_push_follows_the_players_connections_as_they_come_and_go(server):
    # The registry keeps a player's first connection apart from the later ones
    # (ConnectionRegistry.swift): closing the first, then a later one, leaves the rest reached.
    laptop = create_player(server, "Noor")
    phone = link_second_device(server, laptop)

    async def scenario():
        first = await GameClient.signed_in(server, phone)
        second = await GameClient.signed_in(server, phone)
        third = await GameClient.signed_in(server, phone)
        on_laptop = await GameClient.signed_in(server, laptop)
        await first.close()  # returns once the server has closed its side too

        async def change(version, volume):
            reply = await asyncio.to_thread(
                server.request, "PATCH", "/api/v1/settings", {"cueVolume": volume},
                laptop, {"If-Match": f'"{version}"'})
            assert reply.status == 200, reply.body

        await change(0, 20)
        for client in (second, third):
            pushed = await client.expect("settings", timeout=5)
            assert pushed["document"]["settings"]["cueVolume"] == 20
        await third.close()
        await change(1, 30)
        pushed = await second.expect("settings", timeout=5)
        assert pushed["document"]["settings"]["cueVolume"] == 30
        # The device that made the changes heard neither.
        _, skipped = await pong(on_laptop)
        assert not any(message["type"] == "settings" for message in skipped)
        for client in (second, on_laptop):
            await client.close()

    run(scenario())


async def pong(client):
    await client.send(type="ping")
    return await client.until(lambda message: message["type"] == "pong")
