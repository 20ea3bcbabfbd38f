"""The storage threads run below the game loop's priority (`--storage-thread-niceness`, 10 by
default), read from the kernel's own view of the running server's threads, so a checkpoint on a
shared core does not delay steps (docs/ARCHITECTURE.md, "Threads and who owns what")."""

import os
import subprocess
from pathlib import Path

from conftest import REPO


def thread_nice_values(pid: int) -> dict[str, list[int]]:
    """Each thread name of the process with the nice values its threads run at (from
    /proc/PID/task/TID/stat: field 19, counted after the parenthesised name)."""
    threads: dict[str, list[int]] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        name = (task / "comm").read_text().strip()
        stat = (task / "stat").read_text()
        fields = stat[stat.rindex(")") + 2:].split()
        threads.setdefault(name, []).append(int(fields[16]))
    return threads


def test_storage_threads_run_ten_nice_levels_below_the_service_thread(server):
    threads = thread_nice_values(server.process.pid)
    assert threads.get("rr-storage") == [10], threads
    # The libwebsockets service loop (every step and move) keeps the process's priority.
    assert threads.get("rr-service") == [0], threads


def test_the_niceness_is_the_operators_choice_and_zero_keeps_one_priority(server_factory):
    several = server_factory("--storage-threads", "3", "--storage-thread-niceness", "5")
    threads = thread_nice_values(several.process.pid)
    assert sorted(threads.get("rr-storage", []) + threads.get("rr-storage-1", []) + threads.get("rr-storage-2", [])) == [5, 5, 5]
    same = server_factory("--storage-threads", "1", "--storage-thread-niceness", "0")
    assert thread_nice_values(same.process.pid).get("rr-storage") == [0]


def test_a_niceness_out_of_range_is_refused_before_anything_starts(tmp_path):
    binary = str(Path(os.environ.get("RETRORAPID_BINARY", REPO / ".build/debug/retrorapid")).resolve())
    result = subprocess.run([binary, "serve", "--storage-thread-niceness", "20", "--database-path", str(tmp_path / "x.sqlite")],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode != 0
    assert "storage-thread-niceness" in result.stderr
    assert not (tmp_path / "x.sqlite").exists()
