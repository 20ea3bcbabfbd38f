"""`retrorapid loadtest` in its race and watch modes against a real server with rooms and
watching (docs/PROTOCOL.md): the real binary on loopback, real rooms, races and watchers. Only
counts and shapes are checked; what it costs is measured by scripts/bench-play-together.sh into
docs/BENCHMARKS.md ("Play together"), never asserted here."""
import json

from test_loadtest_cli import retrorapid, seed


def test_loadtest_races_in_rooms_with_watchers_without_a_protocol_error(server_factory, tmp_path):
    # 8 racers in 2 rooms of 4, and 4 watchers (two a room, on different racers).
    server = server_factory("--race-countdown-seconds", "1")
    tokens = seed(server, tmp_path, 12)
    result = retrorapid("loadtest", "--tokens-file", str(tokens), "--connections", "8",
                        "--mode", "race", "--room-seats", "4", "--watchers", "4",
                        "--port", str(server.port), "--level", "rapid", "--settle-seconds", "4",
                        "--hold-seconds", "4", "--server-pid", str(server.process.pid), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["mode"] == "race" and report["rooms"] == 2 and report["roomSeats"] == 4
    # Not one error from the server over the whole run, lobby included; nobody dropped.
    assert report["errorsWholeRun"] == 0, report["errorCodesWholeRun"]
    assert report["errors"] == 0 and report["disconnects"] == 0 and report["connectFailures"] == 0
    assert report["connectionsHeld"] == 12
    race = report["race"]
    assert race["roomsOpened"] == 2 and race["racesStarted"] >= 2
    # The racers play their race games as solo players do, and hear the standings.
    assert report["gamesRunning"] + report["gamesEnded"] >= 8
    assert report["movesSent"] > 0 and report["latencyMs"]["count"] > 0
    assert race["standingsPerSecond"] > 0
    watch = report["watch"]
    assert watch["watchesStarted"] >= 4
    assert watch["stepFramesPerSecond"] > 0 and watch["lagMs"]["count"] > 0
    assert watch["lagMs"]["p50"] <= watch["lagMs"]["p99"] <= watch["lagMs"]["max"]
    assert "rooms opened" in result.stderr and "watchers watching" in result.stderr


def test_loadtest_watches_solo_games_by_their_id(server, tmp_path):
    tokens = seed(server, tmp_path, 5)
    result = retrorapid("loadtest", "--tokens-file", str(tokens), "--connections", "3",
                        "--watchers", "2", "--port", str(server.port), "--level", "rapid",
                        "--settle-seconds", "2", "--hold-seconds", "3", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["mode"] == "solo" and "race" not in report
    assert report["errorsWholeRun"] == 0, report["errorCodesWholeRun"]
    assert report["connectionsHeld"] == 5
    assert report["watch"]["watchesStarted"] >= 2 and report["watch"]["stepFramesPerSecond"] > 0
