"""A frame-level fuzzer against a live server: raw RFC 6455 frames on real game connections,
where the bytes really arrive (docs/FUZZING.md, "The live frame fuzzer").

Each batch opens a few game connections and writes on each a random run of frames: 7-, 16- and
64-bit length forms announcing anything up to 2^64 − 1 (often more than follows), text,
binary, continuation and control frames interleaved, masked and unmasked, RSV bits, reserved
opcodes, close frames of any status, messages of valid and broken JSON (hello, start, move with
any step), frames cut off half-way and writes split at random points; some connections sign in
first, and a connection still open afterwards plays on (hello, start, a move). After every
batch the server must answer /healthz and a player made then must sign in, start a game and be
sent a step. A batch that breaks that is a finding: its bytes are saved for `--replay`.

    python frame_fuzzer.py --base-url http://127.0.0.1:8080 --seconds 60 [--seed N] [--artifacts DIR]
    python frame_fuzzer.py --base-url http://127.0.0.1:8080 --replay FILE

The server should be started with room for the players the checks make
(`--new-players-per-address` and `--new-players-per-server` well above one per batch)."""

import argparse
import asyncio
import json
import random
import socket
import ssl
import struct
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from raw_frames import BINARY, CLOSE, CONTINUATION, PING, PONG, TEXT, frame, upgrade  # noqa: E402

# Lengths a frame header may announce, chosen for the edges of every integer type on the way.
EDGE_LENGTHS = [0, 1, 125, 126, 127, 255, 256, 4095, 4096, 4097, 65535, 65536, 2**31 - 1, 2**31, 2**32 - 1, 2**32,
                2**53, 2**62, 2**63 - 8, 2**63 - 1, 2**63, 2**64 - 2, 2**64 - 1]
STEPS = ["0", "1", "12", "-1", "1.5", "1e3", "999999999999999", "1000000000000000", "9223372036854775807",
         "9223372036854775808", "99999999999999999999", "18446744073709551616", "9" * 300, "null", '"7"', "[]", "{}"]


@dataclass
class Target:
    """Where the server is: its base URL (http or https) and, for https, a TLS context."""

    base_url: str
    tls: ssl.SSLContext | None = None

    @property
    def host(self):
        return urllib.parse.urlsplit(self.base_url).hostname

    @property
    def port(self):
        parts = urllib.parse.urlsplit(self.base_url)
        return parts.port or (443 if parts.scheme == "https" else 80)

    @property
    def ws_url(self):
        return ("wss" if self.base_url.startswith("https") else "ws") + self.base_url[self.base_url.index(":"):] + "/ws"

    def request(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base_url + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"} if data else {})
        try:
            with urllib.request.urlopen(request, timeout=10, context=self.tls) as reply:
                return reply.status, reply.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()


@dataclass
class Stats:
    batches: int = 0
    connections: int = 0
    frames: int = 0
    bytes: int = 0
    refused_upgrades: int = 0
    findings: list = field(default_factory=list)


def json_message(rng, token):
    kind = rng.random()
    if kind < 0.25:
        return json.dumps({"type": "hello", "token": token if rng.random() < 0.5 else "x" * rng.randint(0, 80),
                           "client": "fuzz"}).encode()
    if kind < 0.4:
        return json.dumps({"type": "start", "level": rng.choice(["cruise", "rapid", "x"]),
                           "practice": rng.random() < 0.7}).encode()
    if kind < 0.75:
        return ('{"type":"move","direction":"%s","step":%s}' % (rng.choice(["left", "right", "up"]), rng.choice(STEPS))).encode()
    if kind < 0.85:
        return rng.choice([b'{"type":"ping"}', b'{"type":"pause"}', b'{"type":"resume"}', b'{"type":"quit"}',
                           b'{"type":"replayControl","action":"seek","step":' + rng.choice(STEPS).encode() + b"}",
                           b'{"type":"openRoom","seats":' + rng.choice(STEPS).encode() + b"}"])
    garbage = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 40)))
    return rng.choice([garbage, b"{" * rng.randint(1, 300), b'{"type":"move"' + garbage, b"\xff\xfe", b""])


def random_frame(rng, token):
    """One frame's bytes and whether it was cut short (the connection then waits for the rest)."""
    choice = rng.random()
    payload = json_message(rng, token)
    opcode = TEXT
    if choice < 0.08:
        opcode = rng.choice([BINARY, 0x3, 0x7, 0xB, 0xF])
    elif choice < 0.2:
        opcode = rng.choice([PING, PONG, CLOSE])
        if opcode == CLOSE:
            payload = (struct.pack("!H", rng.choice([1000, 1001, 1002, 1005, 1012, 1013, 1014, 1015, 2999, 3000, 4999,
                                                     5000, 65535, rng.getrandbits(16)]))
                       + bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 8))))
            if rng.random() < 0.1:
                payload = payload[:1]
        else:
            payload = payload[:rng.choice([0, 5, 125, 126, 200])]
    elif choice < 0.35:
        opcode = CONTINUATION
    announced = None
    if rng.random() < 0.3:
        announced = rng.choice(EDGE_LENGTHS + [len(payload) + rng.randint(-3, 3)])
        announced = max(0, announced)
    form = rng.choice([None, None, 7, 16, 64])
    data = frame(opcode, payload, final=rng.random() < 0.75, masked=rng.random() < 0.95, length=announced,
                 rsv=rng.choice([0, 0, 0, 0, 1, 2, 4, 7]), length_form=form)
    cut = rng.random() < 0.05
    if cut:
        data = data[:rng.randint(1, max(1, len(data) - 1))]
    return data, cut or (announced is not None and announced > len(payload))


def fragmented_message(rng, token):
    """A message split into 1–4 fragments, pings and pongs between them; now and then the
    last fragment announces an edge length instead of its own."""
    payload = json_message(rng, token)
    cuts = sorted(rng.sample(range(1, len(payload)), min(rng.randint(0, 3), max(0, len(payload) - 1))))
    pieces = [payload[start:end] for start, end in zip([0] + cuts, cuts + [len(payload)])]
    frames, stalls = [], False
    for index, piece in enumerate(pieces):
        last = index == len(pieces) - 1
        announced = None
        if last and rng.random() < 0.15:
            announced = rng.choice(EDGE_LENGTHS)
            stalls = announced > len(piece)
        frames.append(frame(TEXT if index == 0 else CONTINUATION, piece, final=last, length=announced,
                            length_form=rng.choice([None, None, 16, 64])))
        if not last and rng.random() < 0.3:
            frames.append(frame(rng.choice([PING, PONG]), b"fuzz"))
    return b"".join(frames), stalls


def batch_script(rng, token, connections):
    """The bytes of one batch: per connection, whether it signs in first, its writes in order
    (each a list of chunks written with a pause between), and whether it plays on after."""
    script = []
    for _ in range(connections):
        writes, stalled = [], False
        for _ in range(rng.randint(1, 12)):
            data, stalls = fragmented_message(rng, token) if rng.random() < 0.5 else random_frame(rng, token)
            writes.append(data)
            if stalls:  # nothing after a frame that promised more is read as a new frame
                stalled = True
                break
        stream = b"".join(writes)
        chunks, position = [], 0
        while position < len(stream):
            size = rng.choice([1, 2, 7, 64, len(stream)])
            chunks.append(stream[position:position + size])
            position += size
        script.append({"signIn": rng.random() < 0.5, "chunks": [chunk.hex() for chunk in chunks],
                       "playOn": not stalled and rng.random() < 0.5, "frames": len(writes)})
    return script


def drain(sock, seconds):
    sock.settimeout(seconds)
    try:
        while sock.recv(65536):
            pass
    except (socket.timeout, OSError, ssl.SSLError):
        pass


def run_connection(target, entry, token, stats):
    try:
        sock = upgrade(target.host, target.port, tls_context=target.tls, timeout=5)
    except (ConnectionError, OSError):
        stats.refused_upgrades += 1
        return None
    stats.connections += 1
    try:
        if entry["signIn"]:
            sock.sendall(frame(TEXT, json.dumps({"type": "hello", "token": token, "client": "fuzz"}).encode()))
        for chunk in entry["chunks"]:
            data = bytes.fromhex(chunk)
            sock.sendall(data)
            stats.bytes += len(data)
            if len(entry["chunks"]) > 1:
                time.sleep(0.001)
        stats.frames += entry["frames"]
        if entry["playOn"]:
            for message in ({"type": "hello", "token": token, "client": "fuzz"},
                            {"type": "start", "level": "cruise", "practice": True},
                            {"type": "move", "direction": "left", "step": 1}):
                sock.sendall(frame(TEXT, json.dumps(message).encode()))
        drain(sock, 0.05)
    except (OSError, ssl.SSLError):
        pass  # the server may close at any point: that is an answer, not a finding
    return sock


def new_player(target):
    status, body = target.request("POST", "/api/v1/players", {"displayName": "Fuzz", "deviceLabel": "frame fuzzer"})
    if status != 201:
        raise AssertionError(f"POST /api/v1/players answered {status}: {body[:200]!r}")
    return json.loads(body)["token"]


def node_serves(target):
    """None when /healthz answers 200 and a new player can start a game and get a step; else
    what went wrong."""
    try:
        status, body = target.request("GET", "/healthz")
        if status != 200:
            return f"/healthz answered {status}: {body[:200]!r}"
        token = new_player(target)
    except (OSError, AssertionError) as error:
        return f"the HTTP API failed: {error}"

    async def play():
        from websockets.asyncio.client import connect
        async with connect(target.ws_url, subprotocols=["retrorapid.v1"], open_timeout=5, ssl=target.tls) as ws:
            await ws.send(json.dumps({"type": "hello", "token": token, "client": "fuzz-check"}))
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                message = json.loads(await asyncio.wait_for(ws.recv(), 10))
                if message["type"] == "welcome":
                    await ws.send(json.dumps({"type": "start", "level": "cruise", "practice": True}))
                elif message["type"] == "step":
                    return None
                if message["type"] == "error":
                    return f"a new player's game was refused: {message}"
            return "no step within 10 s"

    try:
        return asyncio.run(play())
    except Exception as error:  # noqa: BLE001 - any failure to play is the finding
        return f"a new player could not play: {error!r}"


def run_batch(target, script, token, stats):
    held = [run_connection(target, entry, token, stats) for entry in script]
    for sock in held:
        if sock is not None:
            sock.close()
    return node_serves(target)


def fuzz(target, seconds, seed, connections=6, artifacts=None, log=print):
    """Runs batches for `seconds`; returns the Stats. Stops at the first finding."""
    stats = Stats()
    token = new_player(target)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        rng = random.Random(seed * 1_000_003 + stats.batches)
        script = batch_script(rng, token, connections)
        problem = run_batch(target, script, token, stats)
        stats.batches += 1
        if problem:
            finding = {"seed": seed, "batch": stats.batches - 1, "problem": problem, "script": script}
            stats.findings.append(finding)
            if artifacts:
                Path(artifacts).mkdir(parents=True, exist_ok=True)
                path = Path(artifacts) / f"frames-seed{seed}-batch{stats.batches - 1}.json"
                path.write_text(json.dumps(finding))
                log(f"frame fuzzer: finding saved to {path}")
            log(f"frame fuzzer: seed {seed} batch {stats.batches - 1}: {problem}")
            break
    return stats


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--connections", type=int, default=6, help="game connections per batch")
    parser.add_argument("--artifacts", default=None, help="folder for the bytes of a batch that broke the server")
    parser.add_argument("--cafile", default=None, help="certificate to trust for an https base URL")
    parser.add_argument("--replay", default=None, help="a saved finding to send again")
    arguments = parser.parse_args()
    tls = ssl.create_default_context(cafile=arguments.cafile) if arguments.base_url.startswith("https") else None
    target = Target(arguments.base_url, tls)
    if arguments.replay:
        finding = json.loads(Path(arguments.replay).read_text())
        stats = Stats()
        problem = run_batch(target, finding["script"], new_player(target), stats)
        print(json.dumps({"replayed": arguments.replay, "problem": problem}))
        sys.exit(1 if problem else 0)
    seed = arguments.seed if arguments.seed is not None else random.SystemRandom().randrange(2**32)
    started = time.monotonic()
    stats = fuzz(target, arguments.seconds, seed, arguments.connections, arguments.artifacts)
    print(json.dumps({"seed": seed, "seconds": round(time.monotonic() - started, 1), "batches": stats.batches,
                      "connections": stats.connections, "frames": stats.frames, "bytes": stats.bytes,
                      "refusedUpgrades": stats.refused_upgrades, "findings": len(stats.findings)}))
    sys.exit(1 if stats.findings else 0)


if __name__ == "__main__":
    main()
