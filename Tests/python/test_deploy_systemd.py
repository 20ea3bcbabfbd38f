"""The systemd units operators install (Deploy/systemd/): each passes `systemd-analyze verify`
with nothing to say and keeps its exposure low (`systemd-analyze security --offline`), and the
backup job really backs up a live server's database and keeps only the newest copies.
systemd itself does not run here (no init on these machines): the units are checked, not
started; docs/OPERATIONS.md says so."""

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import REPO
from ws_client import create_player, play_to_score

UNITS = REPO / "Deploy/systemd"
BACKUP_SCRIPT = UNITS / "retrorapid-backup.sh"


def binary():
    return str(Path(os.environ.get("RETRORAPID_BINARY", REPO / ".build/debug/retrorapid")).resolve())


def systemd_analyze():
    tool = shutil.which("systemd-analyze")
    assert tool, "systemd-analyze is not installed: `make test` installs systemd (scripts/install-deps.sh)"
    return tool


def installed_copy(folder: Path):
    """The units as installed, with the two programs they start pointed at this build (verify
    checks that each ExecStart exists and is executable); nothing else changes."""
    folder.mkdir(parents=True, exist_ok=True)
    copies = []
    for unit in sorted(UNITS.glob("*.service")) + sorted(UNITS.glob("*.timer")):
        text = unit.read_text()
        text = text.replace("ExecStart=/usr/local/bin/retrorapid ", f"ExecStart={binary()} ")
        text = text.replace("ExecStart=/usr/local/lib/retrorapid/retrorapid-backup.sh", f"ExecStart={BACKUP_SCRIPT}")
        (folder / unit.name).write_text(text)
        copies.append(folder / unit.name)
    return copies


def test_every_unit_passes_systemd_analyze_verify_without_a_warning(tmp_path):
    copies = installed_copy(tmp_path / "units")
    assert {unit.name for unit in copies} == {"retrorapid.service", "retrorapid-backup.service", "retrorapid-backup.timer"}
    for unit in copies:
        # verify exits 0 even for an unknown key or a value it ignores: any output is a failure.
        checked = subprocess.run([systemd_analyze(), "verify", str(unit)], capture_output=True, text=True, cwd=tmp_path)
        assert (checked.returncode, checked.stdout + checked.stderr) == (0, ""), unit.name


def test_the_units_are_hardened(tmp_path):
    for unit in installed_copy(tmp_path / "units"):
        if unit.suffix != ".service":
            continue
        text = unit.read_text()
        for setting in ("DynamicUser=yes", "User=retrorapid", "StateDirectory=retrorapid", "ProtectSystem=strict",
                        "NoNewPrivileges=yes", "CapabilityBoundingSet=\n"):
            assert setting in text, (unit.name, setting)
        # systemd's own exposure score, 0 (locked down) to 10; `--threshold` fails above 2.0.
        scored = subprocess.run([systemd_analyze(), "security", "--offline=yes", "--threshold=20", str(unit)],
                                capture_output=True, text=True, cwd=tmp_path)
        assert scored.returncode == 0, scored.stdout[-400:] + scored.stderr
        exposure = float(re.search(r"Overall exposure level for \S+: ([0-9.]+)", scored.stdout)[1])
        assert exposure <= 2.0, (unit.name, exposure)
    service = (UNITS / "retrorapid.service").read_text()
    assert "Restart=on-failure" in service and "KillSignal=SIGTERM" in service
    # Stopping waits for the running games to be saved: longer than the server's own flush.
    assert int(re.search(r"TimeoutStopSec=(\d+)s", service)[1]) >= 10
    assert int(re.search(r"LimitNOFILE=(\d+)", service)[1]) >= 2 * 19_900


def test_the_backup_job_copies_a_live_database_and_keeps_the_newest(server, tmp_path):
    token = create_player(server, "Backed up")
    over = play_to_score(server, token, "cruise", 3)
    folder = tmp_path / "backups"
    environment = {**os.environ, "RETRORAPID_BINARY": binary(), "RETRORAPID_DATABASE_PATH": str(server.database),
                   "RETRORAPID_BACKUP_DIR": str(folder), "RETRORAPID_BACKUP_KEEP": "2"}
    for _ in range(3):
        ran = subprocess.run([str(BACKUP_SCRIPT)], env=environment, capture_output=True, text=True, timeout=60)
        assert ran.returncode == 0, ran.stderr
        time.sleep(1.1)  # backups are named by the second
    kept = sorted(path.name for path in folder.iterdir())
    assert len(kept) == 2 and all(re.fullmatch(r"retrorapid-\d{8}T\d{6}Z\.sqlite", name) for name in kept), kept
    assert "removed" in ran.stdout
    for name in kept:
        verified = subprocess.run([binary(), "verify", "--database", str(folder / name),
                                   "--migrations", str(REPO / "Migrations")], capture_output=True, text=True, timeout=60)
        assert verified.returncode == 0, verified.stdout + verified.stderr
        shown = subprocess.run([binary(), "games", "show", over["gameId"], "--database", str(folder / name)],
                               capture_output=True, text=True, timeout=60)
        assert shown.returncode == 0 and str(over["score"]) in shown.stdout, shown.stdout + shown.stderr


def test_the_backup_job_refuses_a_bad_count_and_leaves_older_backups(server, tmp_path):
    folder = tmp_path / "backups"
    folder.mkdir()
    (folder / "retrorapid-20260101T000000Z.sqlite").write_bytes(b"older")
    for keep in ("0", "two", "-1"):
        environment = {**os.environ, "RETRORAPID_BINARY": binary(), "RETRORAPID_DATABASE_PATH": str(server.database),
                       "RETRORAPID_BACKUP_DIR": str(folder), "RETRORAPID_BACKUP_KEEP": keep}
        ran = subprocess.run([str(BACKUP_SCRIPT)], env=environment, capture_output=True, text=True, timeout=60)
        assert ran.returncode == 64 and "RETRORAPID_BACKUP_KEEP" in ran.stderr, (keep, ran.stderr)
    # A backup that fails (no such database) removes nothing.
    environment["RETRORAPID_BACKUP_KEEP"] = "1"
    environment["RETRORAPID_DATABASE_PATH"] = str(tmp_path / "missing.sqlite")
    ran = subprocess.run([str(BACKUP_SCRIPT)], env=environment, capture_output=True, text=True, timeout=60)
    assert ran.returncode != 0
    assert sorted(path.name for path in folder.iterdir()) == ["retrorapid-20260101T000000Z.sqlite"]
