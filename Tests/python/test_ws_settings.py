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
