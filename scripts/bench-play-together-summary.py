#!/usr/bin/env python3
"""Medians of scripts/bench-play-together.sh's runs, as the Markdown table in docs/BENCHMARKS.md
("Play together"): for each shape (solo, race, race+watch) the median over its runs of the
server's CPU, p99 input-to-result and p99 step jitter (at the players), what reached the
watchers, and server memory per connection; then each shape against solo, as ratios.
"""
import json
import statistics
import sys
from collections import defaultdict

ORDER = {"solo": 0, "race": 1, "race+watch": 2}


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def figures(run):
    watch = run.get("watch", {})
    race = run.get("race", {})
    share = run.get("serverCoreShare")
    return {
        "cpu": share * 100 if share is not None else None,
        "latency_p99": run["latencyMs"]["p99"],
        "jitter_p99": run["jitterMs"]["p99"],
        "games": run["gamesRunning"],
        "held": run["connectionsHeld"],
        "frames": run["stepFramesPerSecond"],
        "watch_messages": watch.get("messagesPerSecond"),
        "watch_steps": watch.get("stepFramesPerSecond"),
        "watching": watch.get("watching"),
        "watch_lag_p99": watch.get("lagMs", {}).get("p99"),
        "watch_jitter_p99": watch.get("jitterMs", {}).get("p99"),
        "standings": race.get("standingsPerSecond"),
        "kib_per_connection": run.get("serverAddedKiBPerConnection",
                                      run["serverAddedKiB"] / run["connections"] if "serverAddedKiB" in run else None),
        "errors": run.get("errorsWholeRun", run["errors"]),
        "disconnects": run["disconnects"],
        "load": run.get("loadAverage"),
    }


def show(value, digits=1):
    if value is None:
        return "–"
    return f"{value:,.{digits}f}"


def main(path):
    groups = defaultdict(list)
    with open(path) as lines:
        for line in lines:
            line = line.strip()
            if line.startswith("{"):
                run = json.loads(line)
                groups[run["shape"]].append(figures(run))
    shapes = sorted(groups, key=lambda s: ORDER.get(s, len(ORDER)))
    medians = {shape: {key: median([run[key] for run in runs]) for key in runs[0]} for shape, runs in groups.items()}
    print("| shape | runs | held | games | server CPU % of a core [runs] | p99 input→result ms [runs] | p99 jitter ms [runs] "
          "| step frames/s to players | standings/s to racers | watchers watching | messages/s to watchers (steps/s) "
          "| watcher lag p99 ms | watcher jitter p99 ms | server KiB per connection | errors | disconnects | load average |")
    print("|" + "---|" * 17)
    for shape in shapes:
        runs, m = groups[shape], medians[shape]
        spread = lambda key, digits: ", ".join(show(run[key], digits) for run in runs)
        print(f"| {shape} | {len(runs)} | {show(m['held'], 0)} | {show(m['games'], 0)} "
              f"| **{show(m['cpu'])}** [{spread('cpu', 1)}] | **{show(m['latency_p99'], 2)}** [{spread('latency_p99', 2)}] "
              f"| **{show(m['jitter_p99'], 2)}** [{spread('jitter_p99', 2)}] | {show(m['frames'], 0)} | {show(m['standings'], 0)} "
              f"| {show(m['watching'], 0)} | {show(m['watch_messages'], 0)} ({show(m['watch_steps'], 0)}) "
              f"| {show(m['watch_lag_p99'], 2)} | {show(m['watch_jitter_p99'], 2)} | {show(m['kib_per_connection'], 2)} "
              f"| {show(m['errors'], 0)} | {show(m['disconnects'], 0)} | {spread('load', 2)} |")
    if "solo" in medians:
        solo = medians["solo"]
        print()
        for shape in shapes:
            if shape == "solo":
                continue
            m = medians[shape]
            ratio = lambda key: (f"{m[key] / solo[key]:.2f}" if m[key] is not None and solo[key] else "–")
            print(f"- {shape} against solo: server CPU {ratio('cpu')} ×, p99 input→result {ratio('latency_p99')} ×, "
                  f"p99 jitter {ratio('jitter_p99')} ×, memory per connection {ratio('kib_per_connection')} ×")


if __name__ == "__main__":
    main(sys.argv[1])
