"""The live frame fuzzer (Tests/python/frame_fuzzer.py) against the real binary, briefly: raw
frames of every shape on real game connections, and after every batch /healthz and a new
player's game must still work. Then each saved finding of Tests/Fuzz/frames is sent again
and must no longer break the node. `make fuzz` runs the fuzzer far longer
(scripts/fuzz-frames.sh; docs/FUZZING.md, "The live frame fuzzer")."""

import json
import os
from pathlib import Path

import pytest

from conftest import REPO
from frame_fuzzer import Target, fuzz, new_player, run_batch, Stats

FINDINGS = sorted((REPO / "Tests/Fuzz/frames").glob("*.json"))
# Room for the one player each batch's check makes.
ROOMY = ("--new-players-per-address", "100000/600", "--new-players-per-server", "100000/600")


def test_the_live_frame_fuzzer_finds_nothing(server_factory, tmp_path):
    server = server_factory(*ROOMY)
    seconds = float(os.environ.get("FRAME_FUZZ_SECONDS", "20"))
    seed = int(os.environ.get("FRAME_FUZZ_SEED", "7"))
    stats = fuzz(Target(server.base_url), seconds, seed, artifacts=tmp_path / "findings")
    assert stats.findings == [], stats.findings[0]["problem"]
    assert stats.batches >= 5 and stats.frames >= 50, stats
    assert server.process.poll() is None, server.log()


@pytest.mark.parametrize("finding", FINDINGS, ids=[path.stem for path in FINDINGS])
def test_a_saved_finding_no_longer_breaks_the_node(server_factory, finding):
    server = server_factory(*ROOMY)
    target = Target(server.base_url)
    script = json.loads(finding.read_text())["script"]
    stats = Stats()
    assert run_batch(target, script, new_player(target), stats) is None
    assert stats.connections > 0 and server.process.poll() is None, server.log()
