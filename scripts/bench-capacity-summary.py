#!/usr/bin/env python3
"""Medians of scripts/bench-capacity.sh's runs, as the Markdown tables in docs/BENCHMARKS.md.

Reads the JSON lines `retrorapid loadtest --json` printed (with "target" and "kind" added by
the script) and prints, for each target, kind and size, the median of every figure over its
runs; then the largest number of running games whose median p99 input-to-result latency and
median p99 step jitter both stay under 10 ms, for RetroRapid and for the C broadcaster in both
of its modes (`broadcaster`: queued writes, one per WRITEABLE; `broadcaster-direct`: written at
once, as RetroRapid does), and RetroRapid's capacity and CPU against each.
"""
import json
import statistics
import sys
from collections import defaultdict

LIMIT_MS = 10.0
# Table order within each load: the references first, then RetroRapid; anything else last.
TARGET_ORDER = {"broadcaster": 0, "broadcaster-direct": 1, "retrorapid": 2}
# What RetroRapid is compared with, in this order.
REFERENCES = [("broadcaster", "C broadcaster"), ("broadcaster-direct", "C broadcaster (direct writes)")]


def target_key(target):
    return (TARGET_ORDER.get(target, len(TARGET_ORDER)), target)


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def percent(share):
    return None if share is None else share * 100


def thread_share(run, prefix):
    """A run's share of the core for the threads named `prefix` or `prefix-N`; None without them."""
    shares = [v for k, v in (run.get("serverThreadCoreShares") or {}).items() if k == prefix or k.startswith(prefix + "-")]
    return sum(shares) if shares else None


def main(path):
    groups = defaultdict(list)
    with open(path) as lines:
        for line in lines:
            line = line.strip()
            if line.startswith("{"):
                run = json.loads(line)
                groups[(run["target"], run["kind"], run["connections"])].append(run)

    rows = []
    for (target, kind, n), runs in sorted(groups.items(), key=lambda item: (item[0][1], item[0][2], target_key(item[0][0]))):
        m = lambda key: median([r.get(key) for r in runs])
        lat = lambda key: median([r["latencyMs"][key] for r in runs])
        jit = lambda key: median([r["jitterMs"][key] for r in runs])
        added = m("serverAddedKiB")
        rows.append({
            "target": target, "kind": kind, "n": n, "runs": len(runs),
            "held": m("connectionsHeld"), "games": m("gamesRunning"),
            "cpu": (m("serverCoreShare") or 0) * 100,
            # The user-space and kernel parts, and RetroRapid's service and storage threads,
            # where the load generator reported them.
            "cpuUser": percent(m("serverUserCoreShare")),
            "cpuSystem": percent(m("serverSystemCoreShare")),
            "serviceThread": percent(median([thread_share(r, "rr-service") for r in runs])),
            "storageThreads": percent(median([thread_share(r, "rr-storage") for r in runs])),
            "rss": m("serverResidentKiB"), "added": added,
            "perThousand": added / n * 1000 if added is not None else None,
            "framesPerSecond": m("stepFramesPerSecond"), "bytesPerFrame": m("bytesPerStepFrame"),
            "bytesPerGameSecond": m("bytesPerGamePerSecond"),
            "p50": lat("p50"), "p95": lat("p95"), "p99": lat("p99"), "max": lat("max"),
            "jitterP99": jit("p99"), "errors": m("errors"), "disconnects": m("disconnects"),
            "client": (m("clientCoreShare") or 0) * 100,
            # RetroRapid only: how late its steps went out by its own clock (bench-capacity-lateness.py).
            "lateP99": median([(r.get("serverStepLatenessMs") or {}).get("p99") for r in runs]),
            "lateOver10": median([(r.get("serverStepLatenessMs") or {}).get("over10msShare") for r in runs]),
        })

    def fmt(value, digits=1):
        return "–" if value is None else f"{value:,.{digits}f}"

    def lateness(r):
        if r["lateP99"] is None:
            return "–"
        share = "–" if r["lateOver10"] is None else f"{r['lateOver10'] * 100:.2f} %"
        return f"{fmt(r['lateP99'], 1)} / {share}"

    print("| target | load | runs | held | games | server CPU % of a core (user / system) | service / storage threads % | server RSS KiB (+added) | KiB per connection | step frames/s | bytes/frame | bytes/game/s | input→result p50 / p95 / p99 / max ms | jitter p99 ms | server step lateness p99 ms (≤) / share > 10 ms | errors | disconnects | loadtest CPU % |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        load = f"{r['n']:,} {'idle' if r['kind'] == 'idle' else 'games'}"
        print(f"| {r['target']} | {load} | {r['runs']} | {fmt(r['held'], 0)} | {fmt(r['games'], 0)} | {fmt(r['cpu'])} ({fmt(r['cpuUser'])} / {fmt(r['cpuSystem'])}) | "
              f"{fmt(r['serviceThread'])} / {fmt(r['storageThreads'])} | "
              f"{fmt(r['rss'], 0)} (+{fmt(r['added'], 0)}) | {fmt(r['perThousand'] / 1000 if r['perThousand'] else None, 2)} | "
              f"{fmt(r['framesPerSecond'], 0)} | {fmt(r['bytesPerFrame'], 0)} | {fmt(r['bytesPerGameSecond'], 0)} | "
              f"{fmt(r['p50'], 2)} / {fmt(r['p95'], 2)} / {fmt(r['p99'], 2)} / {fmt(r['max'], 2)} | {fmt(r['jitterP99'], 2)} | "
              f"{lateness(r)} | {fmt(r['errors'], 0)} | {fmt(r['disconnects'], 0)} | {fmt(r['client'])} |")

    print()
    capacity = {}
    for target in sorted({r["target"] for r in rows}, key=target_key):
        passing = [r["n"] for r in rows if r["target"] == target and r["kind"] == "games"
                   and r["p99"] is not None and r["p99"] < LIMIT_MS and r["jitterP99"] is not None
                   and r["jitterP99"] < LIMIT_MS and (r["games"] or 0) >= 0.95 * r["n"]]
        tried = sorted(r["n"] for r in rows if r["target"] == target and r["kind"] == "games")
        capacity[target] = max(passing) if passing else 0
        print(f"- {target}: largest number of running games with p99 input→result and p99 jitter under "
              f"{LIMIT_MS:.0f} ms: **{capacity[target]:,}** (tried {', '.join(f'{n:,}' for n in tried)})")
    for reference, name in REFERENCES:
        if "retrorapid" in capacity and capacity.get(reference):
            print(f"- capacity ratio RetroRapid / {name}: **{capacity['retrorapid'] / capacity[reference]:.2f}**")
    # Cost at equal load: each C broadcaster's CPU over ours, for every size both ran.
    for n in sorted({r["n"] for r in rows if r["kind"] == "games"}):
        ours = next((r for r in rows if r["target"] == "retrorapid" and r["kind"] == "games" and r["n"] == n), None)
        for reference, _ in REFERENCES:
            theirs = next((r for r in rows if r["target"] == reference and r["kind"] == "games" and r["n"] == n), None)
            if ours and theirs and ours["cpu"] and theirs["cpu"]:
                print(f"- at {n:,} games: server CPU {ours['cpu']:.1f} % vs {reference} {theirs['cpu']:.1f} % of a core "
                      f"(efficiency ratio {theirs['cpu'] / ours['cpu']:.2f})")


if __name__ == "__main__":
    main(sys.argv[1])
