#!/usr/bin/env python3
"""One-switch dodge against the keyboard, in the real page (docs/BENCHMARKS.md, "One-switch play").

Starts the real server (--daily-free-plays 1000) and headless Chromium, then plays GAMES games
per level with each bot of Tests/python/switch_bots.py, each game until it crashes or reaches
MAX_STEPS (then quits), and prints each game and the medians of steps and score per bot and level.

    RETRORAPID_BINARY=.build/release/retrorapid \\
      .build/venv/bin/python scripts/bench-switch.py --bots switch keyboard --levels cruise rapid \\
      --games 3 --max-steps 120
"""
import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "Tests" / "python"))

import switch_bots  # noqa: E402
from conftest import start_server  # noqa: E402
from test_client_support import new_browser, open_page, wait_for, device_token  # noqa: E402


def patch_settings(server, driver, patch):
    token = device_token(driver)
    version = server.request("GET", "/api/v1/settings", token=token).json()["version"]
    reply = server.request("PATCH", "/api/v1/settings", patch, token=token, headers={"If-Match": f'"{version}"'})
    assert reply.status == 200, reply.body


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", nargs="+", default=["switch", "keyboard"], choices=["switch", "keyboard", "scan"])
    parser.add_argument("--levels", nargs="+", default=["cruise"], choices=["cruise", "fast", "rapid"])
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--max-steps", type=int, default=120)
    args = parser.parse_args()
    server = start_server(Path(tempfile.mkdtemp(prefix="bench-switch-")), "--daily-free-plays", "1000")
    summary = []
    try:
        for bot in args.bots:
            driver = new_browser()
            try:
                switch_bots.setup(server, driver, bot, patch_settings, open_page, wait_for)
                for level in args.levels:
                    games = []
                    for seed in range(1, args.games + 1):
                        result = switch_bots.play(driver, bot, seed, level, args.max_steps, wait_for)
                        games.append(result)
                        print(json.dumps({"bot": bot, "level": level, "seed": seed, **result}), flush=True)
                    line = {"bot": bot, "level": level, "games": len(games),
                            "medianSteps": statistics.median(g["steps"] for g in games),
                            "medianScore": statistics.median(g["score"] for g in games),
                            "crashed": sum(g["crashed"] for g in games)}
                    summary.append(line)
            finally:
                driver.quit()
    finally:
        server.stop()
    for line in summary:
        print("SUMMARY " + json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
