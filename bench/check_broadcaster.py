#!/usr/bin/env python3
"""Check bench/broadcaster.c from the outside (a dev tool, not part of the test suite).

Start the broadcaster first, then:
    .build/venv/bin/python bench/check_broadcaster.py [--url ws://127.0.0.1:8090/ws]
        [--clients 200] [--seconds 12] [--ramp 1.0]

N clients connect with subprotocol retrorapid.v1, send hello and start (most at fast, one in
twenty at cruise and one in twenty at rapid), move about every 2 s, and read steps. Halfway,
one in ten hangs up abruptly (TCP abort, no close frame); at the end the others send quit.
Checks: every message a text frame holding valid JSON; welcome and started arrive; steps are
numbered 1, 2, 3... with no gap; step intervals average the level's interval with small
jitter and do not drift; every move gets a moved; quit gets gameOver and no step after it;
the server still answers new connections (hello, ping) after the aborts. Prints a summary and
PASS/FAIL; exit status 0 on PASS.
"""
import argparse
import asyncio
import json
import random
import statistics
import sys
import time

try:
    from websockets.asyncio.client import connect  # websockets >= 13
except ImportError:  # pragma: no cover
    from websockets import connect  # type: ignore

LEVELS = {"cruise": 800, "fast": 600, "rapid": 420}


class Client:
    def __init__(self, index, level, abort):
        self.index = index
        self.level = level
        self.interval = LEVELS[level]
        self.abort = abort
        self.errors = []
        self.started_at = None
        self.steps = []            # (step number, arrival monotonic seconds)
        self.move_sent = []        # FIFO of send times, matched by `moved` in order
        self.move_latencies = []   # ms
        self.moves = 0
        self.moved = 0
        self.game_over = False
        self.steps_after_game_over = 0
        self.sizes = {}            # type -> frame length in bytes

    def fail(self, what):
        self.errors.append(f"client {self.index}: {what}")


async def recv_json(ws, client):
    raw = await ws.recv()
    if not isinstance(raw, str):
        client.fail("binary frame (expected text)")
        raw = raw.decode()
    try:
        msg = json.loads(raw)
    except ValueError:
        client.fail(f"invalid JSON: {raw[:80]!r}")
        return {"type": "?"}, raw
    client.sizes.setdefault(msg.get("type"), len(raw.encode()))
    return msg, raw


async def run_client(url, c, seconds, start_gate, ramp):
    await start_gate
    await asyncio.sleep(random.uniform(0, ramp))  # spread the starts, as real players are
    try:
        async with connect(url, subprotocols=["retrorapid.v1"], open_timeout=20,
                           ping_interval=None, max_size=2**16) as ws:
            await ws.send('{"type":"hello","token":"load-test-token","client":"check"}')
            msg, _ = await recv_json(ws, c)
            if msg.get("type") != "welcome":
                c.fail(f"expected welcome, got {msg.get('type')}")
                return c
            await ws.send(json.dumps({"type": "start", "level": c.level, "practice": False},
                                     separators=(",", ":")))
            sent_start = time.monotonic()
            msg, _ = await recv_json(ws, c)
            if msg.get("type") != "started" or msg["game"]["interval"] != c.interval:
                c.fail(f"expected started at {c.interval} ms, got {msg}")
                return c
            c.started_at = sent_start

            loop = asyncio.get_running_loop()
            end = loop.time() + (seconds / 2 if c.abort else seconds)
            next_move = loop.time() + random.uniform(0.5, 2.0)
            while True:
                now = loop.time()
                if now >= end:
                    break
                timeout = min(end, next_move) - now
                try:
                    msg, _ = await asyncio.wait_for(recv_json(ws, c), timeout)
                except asyncio.TimeoutError:
                    msg = None
                if msg is not None:
                    handle(c, msg)
                if loop.time() >= next_move:
                    last = c.steps[-1][0] if c.steps else 0
                    c.move_sent.append(time.monotonic())
                    c.moves += 1
                    await ws.send(json.dumps({"type": "move", "direction": "left", "step": last},
                                             separators=(",", ":")))
                    next_move = loop.time() + random.uniform(1.5, 2.5)

            if c.abort:
                ws.transport.abort()  # abrupt: no close frame, RST-like from the server's view
                return c

            await ws.send('{"type":"quit"}')
            # Steps already queued may arrive before gameOver; none may arrive after it.
            deadline = loop.time() + 3
            while not c.game_over and loop.time() < deadline:
                msg, _ = await asyncio.wait_for(recv_json(ws, c), deadline - loop.time())
                handle(c, msg)
            if not c.game_over:
                c.fail("no gameOver after quit")
                return c
            try:
                while True:
                    msg, _ = await asyncio.wait_for(recv_json(ws, c), c.interval * 1.5 / 1000)
                    if msg.get("type") == "step":
                        c.steps_after_game_over += 1
            except asyncio.TimeoutError:
                pass
            if c.steps_after_game_over:
                c.fail(f"{c.steps_after_game_over} step(s) after gameOver")
    except Exception as e:  # noqa: BLE001 - report everything
        c.fail(f"{type(e).__name__}: {e}")
    return c


def handle(c, msg):
    t = msg.get("type")
    now = time.monotonic()
    if t == "step":
        if c.game_over:
            c.steps_after_game_over += 1
        else:
            c.steps.append((msg["step"], now))
    elif t == "moved":
        if c.move_sent:
            c.move_latencies.append((now - c.move_sent.pop(0)) * 1000)
        c.moved += 1
    elif t == "gameOver":
        c.game_over = True
    else:
        c.fail(f"unexpected message {t}")


async def probe_alive(url):
    """A fresh connection after everything: hello -> welcome, ping -> pong, unknown -> error."""
    async with connect(url, subprotocols=["retrorapid.v1"], ping_interval=None) as ws:
        await ws.send('{"type": "hello", "token": "x"}')  # spaces after colons on purpose
        a = json.loads(await ws.recv())
        await ws.send('{"type":"ping"}')
        b = json.loads(await ws.recv())
        await ws.send('{"type":"quit"}')
        d = json.loads(await ws.recv())
        return [a.get("type"), b.get("type"), d.get("code")]


def pct(values, p):
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


async def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", default="ws://127.0.0.1:8090/ws")
    ap.add_argument("--clients", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=12.0)
    ap.add_argument("--ramp", type=float, default=1.0, help="spread connects over this many s")
    args = ap.parse_args()
    if not args.url.startswith(("ws://127.", "ws://localhost")):
        sys.exit("loopback targets only")

    clients = []
    for i in range(args.clients):
        level = "cruise" if i % 20 == 0 else "rapid" if i % 20 == 1 else "fast"
        clients.append(Client(i, level, abort=(i % 10 == 5)))

    gate = asyncio.get_running_loop().create_future()
    tasks = []
    for c in clients:
        tasks.append(asyncio.create_task(run_client(args.url, c, args.seconds, gate, args.ramp)))
    gate.set_result(None)
    t0 = time.monotonic()
    await asyncio.gather(*tasks)
    wall = time.monotonic() - t0
    try:
        alive = await probe_alive(args.url)
    except Exception as e:  # noqa: BLE001
        alive = [f"{type(e).__name__}: {e}"]

    # ---- analysis ----
    errors = [e for c in clients for e in c.errors]
    gaps = 0
    per_level = {lvl: {"dt": [], "drift": [], "first": []} for lvl in LEVELS}
    total_steps = 0
    for c in clients:
        nums = [n for n, _ in c.steps]
        total_steps += len(nums)
        if nums and nums != list(range(1, len(nums) + 1)):
            gaps += 1
            errors.append(f"client {c.index}: steps not consecutive from 1: {nums[:10]}...")
        if len(c.steps) < 2:
            errors.append(f"client {c.index}: only {len(c.steps)} steps")
        if len(c.steps) < 3:  # too few to time
            continue
        d = per_level[c.level]
        times = [t for _, t in c.steps]
        d["first"].append((times[0] - c.started_at) * 1000)
        d["dt"].extend((b - a) * 1000 for a, b in zip(times, times[1:]))
        # Drift: arrival of step k versus step 1 + (k-1) * interval.
        d["drift"].extend((t - times[0]) * 1000 - (n - 1) * c.interval for n, t in c.steps)

    moves = sum(c.moves for c in clients)
    moved = sum(c.moved for c in clients)
    lat = [x for c in clients for x in c.move_latencies]
    quitters = [c for c in clients if not c.abort]
    game_overs = sum(1 for c in quitters if c.game_over)
    after_go = sum(c.steps_after_game_over for c in quitters)
    sizes = {}
    for c in clients:
        for k, v in c.sizes.items():
            sizes.setdefault(k, v)

    print(f"clients {len(clients)} ({sum(c.abort for c in clients)} aborted halfway), "
          f"wall {wall:.1f} s, steps received {total_steps}")
    print("frame bytes: " + ", ".join(f"{k} {v}" for k, v in sorted(sizes.items())))
    ok = True
    for lvl, iv in LEVELS.items():
        d = per_level[lvl]
        if not d["dt"]:
            continue
        mean = statistics.fmean(d["dt"])
        jit = [abs(x - iv) for x in d["dt"]]
        drift = [abs(x) for x in d["drift"]]
        first = statistics.fmean(d["first"])
        print(f"{lvl:6} interval mean {mean:7.2f} ms (want {iv}), |jitter| p50 {pct(jit, 50):.2f} "
              f"p99 {pct(jit, 99):.2f} max {max(jit):.2f} ms, |drift| max {max(drift):.2f} ms, "
              f"start->step1 mean {first:.1f} ms")
        if abs(mean - iv) > iv * 0.01 or pct(jit, 99) > 25 or max(drift) > 50:
            ok = False
            errors.append(f"{lvl}: timing out of bounds")
    print(f"moves {moves}, moved {moved}, move->moved p50 {pct(lat, 50):.2f} p99 {pct(lat, 99):.2f} "
          f"max {max(lat) if lat else float('nan'):.2f} ms")
    print(f"quit: {game_overs}/{len(quitters)} got gameOver, steps after gameOver {after_go}")
    print(f"after the run, a fresh connection got: {alive}")

    if moves != moved:
        errors.append(f"moves {moves} != moved {moved}")
    if game_overs != len(quitters):
        errors.append("not every quit got gameOver")
    if alive != ["welcome", "pong", "no_game"]:
        errors.append(f"server not answering after the run: {alive}")
    ok = ok and not errors and gaps == 0
    for e in errors[:20]:
        print("  error:", e)
    if len(errors) > 20:
        print(f"  ... and {len(errors) - 20} more")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
