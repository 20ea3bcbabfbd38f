"""Input an attacker writes by hand, against the real binary: frames whose length fields
announce up to 2^64 − 1 bytes (alone, after a fragment, as a continuation), and moves whose
step has more digits than any integer. Each is refused (1009, 1002 or an `error`), and
afterwards the node still answers /healthz and a new player can play (docs/SECURITY.md,
"Numbers from outside")."""

from raw_frames import CONTINUATION, TEXT, close_status, frame, read_frames, upgrade
from ws_client import GameClient, assert_a_new_player_can_play, create_player, run

HUGE_LENGTHS = [2**63 - 1, 2**63, 2**64 - 1, 2**63 - 8, 2**32, 4097]


def refused(answer, length):
    """Refused with 1009 (over the message limit) or 1002; a length with its top bit set,
    which RFC 6455 forbids, libwebsockets 4.1.6 ends without a close frame (docs/PROTOCOL.md,
    "Frames")."""
    return close_status(answer) in (1009, 1002) or (length >= 2**63 and answer == [])


def send_and_read(server, *frames):
    sock = upgrade("127.0.0.1", server.port)
    try:
        sock.sendall(b"".join(frames))
        return read_frames(sock, timeout=5)
    finally:
        sock.close()


def test_a_continuation_that_announces_a_huge_length_is_refused_and_the_node_lives(server):
    for length in HUGE_LENGTHS:
        answer = send_and_read(server, frame(TEXT, b'{"type":', final=False),
                               frame(CONTINUATION, b'"ping"}', length=length, length_form=64))
        assert refused(answer, length), (length, answer)
    assert_a_new_player_can_play(server)


def test_a_first_frame_that_announces_a_huge_length_is_refused_and_the_node_lives(server):
    for length in HUGE_LENGTHS:
        answer = send_and_read(server, frame(TEXT, b'{"type":"ping"}', length=length, length_form=64))
        assert refused(answer, length), (length, answer)
    assert_a_new_player_can_play(server)


def test_many_fragments_whose_lengths_add_past_any_integer_are_refused(server):
    fragments = [frame(TEXT, b"{", final=False)] + [
        frame(CONTINUATION, b"x", final=False, length=2**62, length_form=64) for _ in range(4)]
    answer = send_and_read(server, *fragments)
    assert close_status(answer) == 1009, answer
    assert_a_new_player_can_play(server)


def test_a_move_whose_step_no_integer_holds_gets_an_error_and_the_game_goes_on(server):
    token = create_player(server)

    async def scenario():
        client = await GameClient.signed_in(server, token)
        await client.start("cruise", practice=True)
        await client.expect("step")
        for step in ["99999999999999999999", "9223372036854775808", "9223372036854775807", "1000000000000000",
                     "18446744073709551616", "9" * 400]:
            await client.send_raw('{"type":"move","direction":"left","step":' + step + "}")
            message, _ = await client.until(lambda m: m["type"] in ("error", "moved", "gameOver"))
            # A step that fits an integer but is no step of this game is too late or too early
            # (an `error` too); one that fits none is of the wrong kind. Nothing is moved.
            assert message["type"] == "error", (step, message)
        await client.send(type="ping")
        await client.expect("pong")
        await client.close()

    run(scenario())
    assert_a_new_player_can_play(server)


def test_the_huge_continuation_through_the_shipped_nginx_site_over_wss_is_refused(server_factory, tmp_path):
    """nginx passes a game connection's bytes through untouched once upgraded, so the same
    frame reaches the node over wss: it is refused there and the node lives."""
    from nginx_proxy import start_nginx

    server = server_factory("--trusted-proxies", "127.0.0.1")
    proxy = start_nginx(tmp_path / "nginx", server.port, source_address="127.0.0.2")
    try:
        sock = upgrade("127.0.0.1", proxy.https_port, tls_context=proxy.tls, source_address="127.0.0.2")
        try:
            sock.sendall(frame(TEXT, b'{"type":', final=False)
                         + frame(CONTINUATION, b'"ping"}', length=2**63 - 1, length_form=64))
            assert close_status(read_frames(sock, timeout=5)) == 1009
        finally:
            sock.close()
        assert_a_new_player_can_play(proxy)
        assert_a_new_player_can_play(server)
    finally:
        proxy.stop()
