"""scripts/bench-failover.sh at its smallest: two real nodes on a throwaway PostgreSQL behind
nginx, load-generator players on node a reconnecting as the browser does, node a killed with
SIGKILL mid-window (docs/BENCHMARKS.md, "Failover at load"). Every game running on a comes back
on b within the window, nothing acknowledged is lost, no game is stored twice and every game
holds exactly one play. How long it takes is the benchmark's to say, not this test's."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BINARY = str(Path(os.environ.get("RETRORAPID_BINARY", REPO / ".build/debug/retrorapid")).resolve())


@pytest.mark.skipif((os.cpu_count() or 1) < 2 or shutil.which("psql") is None, reason="needs 2 CPUs and PostgreSQL")
def test_a_node_killed_under_load_has_its_games_taken_back_on_the_other_with_nothing_lost(tmp_path):
    work = tmp_path / "failover"
    result = subprocess.run(["scripts/bench-failover.sh", "--games", "40", "--hold", "25", "--kill-after", "5",
                             "--work", str(work), BINARY],
                            cwd=REPO, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    [run] = [json.loads(line) for line in (work / "runs.jsonl").read_text().splitlines()]
    failover = run["failover"]
    assert failover["droppedWhilePlaying"] >= 30, run  # most of the 40 were playing when a died
    assert failover["takenBack"] == failover["droppedWhilePlaying"], run
    assert run["ok"] and run["storedTwice"] == 0 and run["leftRunning"] == 0, run
    assert run["gamesWithoutPlay"] == 0 and run["playsWithoutGame"] == 0 and run["plays"] == run["stored"], run
    assert run["stored"] >= run["acknowledged"] > 0, run
    # The play lost is at most the checkpoint interval (1 s) and a step.
    assert 0 <= failover["lostMs"]["max"] <= 1500, run
    assert "| 40 |" in result.stdout
