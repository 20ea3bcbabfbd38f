"""scripts/bench-cost.sh runs to the end at its smallest size, against the server and the direct
C broadcaster, and reports every figure (docs/BENCHMARKS.md, "Cost per frame"): instructions
and allocations per step frame and per move answered, and the breakdown. Only that the figures
exist and are counted is checked, never their size: cost is for the benchmark, not a test."""

import json
import math
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BINARY = str(Path(os.environ.get("RETRORAPID_BINARY", REPO / ".build/debug/retrorapid")).resolve())
OUR_CODE = "our code (the binary, with the standard library code compiled into it)"  # bench-cost-summary.py


@pytest.mark.skipif(shutil.which("valgrind") is None or (os.cpu_count() or 1) < 2,
                    reason="needs valgrind and 2 CPUs")
def test_the_cost_benchmark_reports_every_figure_for_the_server_and_the_broadcaster(tmp_path):
    work = tmp_path / "cost"
    # The server under another file name, as `--binary` runs another build's copy: its code
    # must still count as ours.
    server = tmp_path / "retrorapid-other-build"
    shutil.copy(BINARY, server)
    result = subprocess.run(
        ["scripts/bench-cost.sh", "--games", "2", "--steps", "3", "--runs", "1",
         "--binary", str(server), "--loadtest", BINARY, "--work", str(work)],
        cwd=REPO, env={**os.environ, "TARGETS": "retrorapid broadcaster-direct"},
        capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]

    runs = [json.loads(line) for line in (work / "runs.jsonl").read_text().splitlines()]
    assert sorted((r["target"], r["kind"]) for r in runs) == sorted(
        (t, k) for t in ("retrorapid", "broadcaster-direct") for k in ("base", "calm", "wander"))
    for r in runs:
        # One game per player, each of its steps (none in the base run), nothing refused.
        assert r["gamesStarted"] == 2 and r["gamesEnded"] == 2 and r["errors"] == 0, r
        assert r["stepFrames"] == (0 if r["kind"] == "base" else 2 * 3) or r["crashes"] > 0, r
        assert r["instructions"] > 0, r
        if r["target"] == "retrorapid":
            assert r["program"] == server.name and r["groups"][OUR_CODE] > 0, r
    # The server allocates when players sign in and start; callgrind sees it.
    assert all(r["allocations"] > 0 for r in runs if r["target"] == "retrorapid")

    # Moves were sent and answered, so the per-move figure is solved from counted runs.
    assert all(r["movesAnswered"] > 0 for r in runs if r["kind"] == "wander"), runs

    figures = json.loads((work / "figures.json").read_text())
    for target in ("retrorapid", "broadcaster-direct"):
        # Solved from two runs of 2 games, a figure may come out below zero where the cost is
        # small beside the runs' noise (the broadcaster answers a move in a few thousand
        # instructions): only that each is a number is checked here.
        for figure in ("instructionsPerStepFrame", "instructionsPerMoveAnswered"):
            assert isinstance(figures[target][figure], float) and math.isfinite(figures[target][figure]), figures
        assert figures[target]["allocationsPerStepFrame"] is not None, figures
    # The server's step frame (the engine's step and its encoding) dwarfs any noise.
    assert figures["retrorapid"]["instructionsPerStepFrame"] > 0, figures
    assert figures["retrorapid"]["allocationsPerStepFrame"] > 0, figures

    report = (work / "results.md").read_text()
    assert report == result.stdout
    for heading in ("instructions per step frame", "Where retrorapid's calm − base goes",
                    "Where broadcaster-direct's calm − base goes", "Top functions", "libwebsockets"):
        assert heading in report, report
