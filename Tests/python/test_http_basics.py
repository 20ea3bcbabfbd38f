"""The server as a browser first meets it: health, the client's files, security headers."""

import signal
from pathlib import Path


def test_healthz_answers_ok(server):
    reply = server.request("GET", "/healthz")
    assert reply.status == 200
    assert reply.json() == {"status": "ok"}


def test_index_is_served_with_a_csp_that_forbids_inline_script(server):
    reply = server.request("GET", "/")
    assert reply.status == 200
    assert reply.headers["Content-Type"].startswith("text/html")
    csp = reply.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert reply.headers["x-content-type-options"] == "nosniff"
    assert b"<h1" in reply.body


def test_the_working_threads_are_named_for_operators(server):
    """docs/OPERATIONS.md: `top -H` and `perf` show rr-service and rr-storage."""
    names = {(task / "comm").read_text().strip()
             for task in Path(f"/proc/{server.process.pid}/task").iterdir()}
    assert {"rr-service", "rr-storage"} <= names, names


def test_an_unknown_api_path_is_a_json_404(server):
    reply = server.request("GET", "/api/v1/no-such-thing")
    assert reply.status == 404
    assert reply.json()["error"]["code"] == "not_found"


def test_sigterm_stops_the_server_cleanly(server):
    assert server.stop(signal.SIGTERM) == 0
    assert server.database.exists()
