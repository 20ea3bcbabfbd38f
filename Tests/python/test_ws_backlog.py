"""A client that falls behind and catches up (docs/PROTOCOL.md, "Limits and timeouts"): the
server writes each message at once while the socket takes it, and once the socket is full
the rest wait in the connection's queue, behind the one write libwebsockets finishes itself.
Every message must then arrive whole and in order: none lost, none repeated, none cut or
spliced (messages written at once share one encoding buffer on the server), and the server
counts the ones that waited."""

import json
import time

from ws_client import RawGameSocket, create_player, link_second_device, metric

QUEUED = "retrorapid_websocket_messages_queued_total"
PUSHES = 60  # ~700-byte settings pushes: ~42 KB, well past the 16 KiB send buffer
LATE_PUSHES = 30


def test_messages_that_wait_for_a_busy_socket_arrive_whole_and_in_order(server_factory, tmp_path):
    (tmp_path / "server0").mkdir()  # server_factory logs there but does not create it
    server = server_factory()  # the default queue: 100 messages
    token = create_player(server)
    other_device = link_second_device(server, token)

    reader = RawGameSocket.connect(server, receive_buffer=1024)
    reader.send(type="hello", token=token)
    reader.receive("welcome")
    reader.send(type="start", level="cruise")  # no car can reach the player before step 7
    first_step = reader.receive("step")["step"]
    queued_before = metric(server, QUEUED)

    # The client reads nothing while its other device changes a setting PUSHES times; each
    # change is pushed to this connection (and steps keep coming, one every 800 ms).
    versions = []
    version = server.request("GET", "/api/v1/settings", None, other_device).json()["version"]
    for push in range(PUSHES):
        reply = server.request("PATCH", "/api/v1/settings", {"cueVolume": push}, other_device,
                               {"If-Match": f'"{version}"'})
        assert reply.status == 200, reply.body
        version = reply.json()["version"]
        versions.append(version)
    # Counters reach /metrics once per timer batch (within 50 ms).
    deadline = time.monotonic() + 2
    while metric(server, QUEUED) == queued_before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert metric(server, QUEUED) > queued_before, "the socket took everything at once: this test did not fill it"

    # Now read everything, and while the backlog drains push LATE_PUSHES more, one per message
    # read: those must queue behind the backlog, not overtake it. Frames parse (RawGameSocket
    # decodes every text frame as JSON), the pushes come in order with nothing missing, and
    # steps stay consecutive.
    pushed, steps = [], [first_step]
    reader.sock.settimeout(5)
    deadline = time.monotonic() + 30
    while len(pushed) < len(versions):
        assert time.monotonic() < deadline, f"only {len(pushed)} of {len(versions)} pushes arrived"
        if len(versions) < PUSHES + LATE_PUSHES:
            reply = server.request("PATCH", "/api/v1/settings", {"cueVolume": len(versions)}, other_device,
                                   {"If-Match": f'"{version}"'})
            assert reply.status == 200, reply.body
            version = reply.json()["version"]
            versions.append(version)
        message = reader.receive()
        if message["type"] == "settings":
            pushed.append(message["document"]["version"])
            assert message["document"]["settings"]["cueVolume"] == len(pushed) - 1
        elif message["type"] == "step":
            steps.append(message["step"])
    assert pushed == versions
    assert steps == list(range(first_step, first_step + len(steps))), steps
    # Caught up: the next messages are written at once again and still arrive.
    next_step = reader.receive("step")["step"]
    assert next_step == steps[-1] + 1
    assert metric(server, "retrorapid_websocket_clients_dropped_total", reason="slow_reader") == 0
    reader.close()
