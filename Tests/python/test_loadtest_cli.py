"""`retrorapid seed-players` and `retrorapid loadtest` as an operator runs them: the real binary
against a real server on loopback. Only counts and shapes are checked; speed is measured by
scripts/bench-capacity.sh into docs/BENCHMARKS.md, never asserted here."""
import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from conftest import free_port

BINARY = str(Path(os.environ.get("RETRORAPID_BINARY", ".build/debug/retrorapid")).resolve())
REPO = Path(__file__).resolve().parents[2]


def retrorapid(*args, timeout=120):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=timeout,
                          cwd=REPO)


def seed(server, tmp_path, count):
    tokens = tmp_path / "tokens"
    result = retrorapid("seed-players", "--count", str(count), "--tokens-file", str(tokens),
                        "--database", str(server.database))
    assert result.returncode == 0, result.stderr
    return tokens


def test_seeded_players_have_unlimited_play_and_private_tokens(server, tmp_path):
    tokens = seed(server, tmp_path, 3)
    lines = tokens.read_text().split()
    assert len(lines) == 3 and len(set(lines)) == 3
    assert stat.S_IMODE(tokens.stat().st_mode) == 0o600
    quota = server.request("GET", "/api/v1/quota", token=lines[0])
    assert quota.status == 200
    assert quota.json()["unlimited"] is True
    # An existing tokens file is never overwritten, and nothing is created.
    again = retrorapid("seed-players", "--count", "2", "--tokens-file", str(tokens),
                       "--database", str(server.database))
    assert again.returncode == 1 and "exists" in again.stderr
    assert tokens.read_text().split() == lines
    bad = retrorapid("seed-players", "--count", "0", "--tokens-file", str(tmp_path / "t2"),
                     "--database", str(server.database))
    assert bad.returncode == 64 and not (tmp_path / "t2").exists()


def test_loadtest_plays_games_and_reports_json(server, tmp_path):
    tokens = seed(server, tmp_path, 6)
    result = retrorapid("loadtest", "--tokens-file", str(tokens), "--connections", "6",
                        "--port", str(server.port), "--level", "rapid", "--settle-seconds", "1",
                        "--hold-seconds", "3", "--server-pid", str(server.process.pid),
                        "--source-addresses", "127.0.0.2,127.0.0.3", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["connectionsHeld"] == 6 and report["gamesRunning"] + report["gamesEnded"] >= 6
    assert report["stepFramesPerSecond"] > 0 and 100 < report["bytesPerStepFrame"] < 250
    assert report["movesSent"] > 0 and report["latencyMs"]["count"] > 0
    assert report["latencyMs"]["p50"] <= report["latencyMs"]["p99"] <= report["latencyMs"]["max"]
    assert report["jitterMs"]["count"] > 0
    assert report["errors"] == 0 and report["disconnects"] == 0 and report["connectFailures"] == 0
    assert report["serverResidentKiB"] > 0 and "serverCoreShare" in report
    # The server's CPU split into user space and kernel, and by thread: parts of the same window.
    user, system = report["serverUserCoreShare"], report["serverSystemCoreShare"]
    assert user >= 0 and system >= 0 and abs(user + system - report["serverCoreShare"]) < 1e-9
    threads = report["serverThreadCoreShares"]
    assert "rr-service" in threads and "rr-storage" in threads
    assert threads["rr-service"] > 0  # it sent the steps
    assert sum(threads.values()) <= report["serverCoreShare"] + 0.05  # each thread rounds to its own clock ticks
    assert "measuring for 3 s" in result.stderr  # progress goes to standard error
    # The players' connections came from the asked source addresses, round robin.
    log = server.log()
    assert "client.address=127.0.0.2" in log and "client.address=127.0.0.3" in log


def test_loadtest_follows_the_game_url_a_welcome_names_as_the_browser_does(server_factory, tmp_path):
    # One server on every loopback address, whose welcome names it at another one: each
    # connection comes in on 127.0.0.1, moves there once, and plays.
    port = free_port()
    server = server_factory("--game-url", f"ws://127.0.0.4:{port}/ws", port=port, host="0.0.0.0")
    tokens = seed(server, tmp_path, 4)
    result = retrorapid("loadtest", "--tokens-file", str(tokens), "--connections", "4", "--port", str(server.port),
                        "--level", "rapid", "--settle-seconds", "1", "--hold-seconds", "2", "--follow-game-url", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["movedStraight"] == 4 and report["connectionsHeld"] == 4, report
    assert report["gamesRunning"] + report["gamesEnded"] >= 4 and report["stepFramesPerSecond"] > 0
    assert report["errors"] == 0 and report["disconnects"] == 0 and report["connectFailures"] == 0
    # Without the flag nobody moves, and the report says nothing of it.
    still = retrorapid("loadtest", "--tokens-file", str(tokens), "--connections", "4", "--port", str(server.port),
                       "--level", "rapid", "--settle-seconds", "1", "--hold-seconds", "1", "--json")
    assert still.returncode == 0, still.stderr
    assert "movedStraight" not in json.loads(still.stdout)


def test_loadtest_refuses_other_machines_and_unbounded_runs(server, tmp_path):
    tokens = seed(server, tmp_path, 1)
    cases = [
        (["--host", "192.0.2.10"], "loopback"),
        (["--connections", "20000"], "19900"),
        (["--connections", "2"], "tokens"),
        (["--hold-seconds", "3601"], "3600"),
        (["--source-addresses", "10.0.0.1"], "loopback"),
        (["--miss-chance", "2"], "0 to 1"),
    ]
    for extra, message in cases:
        # One connection unless the case is about how many: each case is the one mistake.
        connections = [] if "--connections" in extra else ["--connections", "1"]
        result = retrorapid("loadtest", "--tokens-file", str(tokens), *connections,
                            "--port", str(server.port), *extra)
        assert result.returncode == 64, (extra, result.stderr)
        # The reason itself says it (the usage is not printed after it).
        assert message in result.stderr.splitlines()[0], (extra, result.stderr)


def test_loadtest_refuses_race_and_watch_options_that_cannot_run(server, tmp_path):
    tokens = seed(server, tmp_path, 4)
    cases = [
        (["--connections", "4", "--mode", "duel"], "one of solo, race"),
        (["--connections", "4", "--mode", "race", "--room-seats", "9"], "from 2 to 8"),
        (["--connections", "4", "--mode", "race", "--room-seats", "1"], "from 2 to 8"),
        (["--connections", "4", "--room-seats", "2"], "goes with --mode race"),
        (["--connections", "3", "--mode", "race", "--room-seats", "2"], "whole number of rooms"),
        (["--connections", "4", "--mode", "race", "--room-seats", "2", "--watchers", "1"],
         "4 connections and 1 watchers need 5 device tokens"),
        (["--connections", "2", "--watchers", "19899"], "at most 19900"),
        (["--connections", "2", "--watchers", "-1"], "--watchers"),
        (["--connections", "2", "--mode", "race", "--room-seats", "2", "--idle"], "--idle"),
        (["--connections", "2", "--watchers", "2", "--idle"], "--idle"),
        (["--connections", "2", "--mode", "race", "--room-seats", "2", "--steps", "5"], "bounded solo workload"),
        (["--connections", "2", "--watchers", "1", "--steps", "5"], "bounded solo workload"),
    ]
    for extra, message in cases:
        result = retrorapid("loadtest", "--tokens-file", str(tokens), "--port", str(server.port), *extra)
        assert result.returncode == 64, (extra, result.stderr)
        assert message in result.stderr, (extra, result.stderr)
        assert result.stdout == "", (extra, result.stdout)
