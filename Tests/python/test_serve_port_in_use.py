"""`retrorapid serve` on a port another program holds: exits non-zero with one clear message,
not after libwebsockets' own "ERROR on binding" lines, which made a passing `make test` look
broken (Sources/RetroRapidLWS/LWSLogging.swift holds them back for errors we explain)."""

import socket
import subprocess
from pathlib import Path

from conftest import REPO
import os


def test_a_port_in_use_is_one_clear_message_without_libwebsockets_noise(tmp_path):
    binary = str(Path(os.environ.get("RETRORAPID_BINARY", REPO / ".build/debug/retrorapid")).resolve())
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = subprocess.run(
            [binary, "serve", "--host", "127.0.0.1", "--port", str(port),
             "--database-path", str(tmp_path / "data" / "retrorapid.sqlite"),
             "--web-root", str(REPO / "Web"), "--migrations-path", str(REPO / "Migrations")],
            cwd=tmp_path, capture_output=True, text=True, timeout=30)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "already in use" in output and str(port) in output, output
    assert "libwebsockets error" not in output, output
