"""Fixtures for end-to-end tests: a real `retrorapid serve` on a loopback port with a
fresh SQLite file, and small HTTP helpers. The binary comes from RETRORAPID_BINARY
(make test sets it), else .build/debug/retrorapid."""

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Response:
    status: int
    headers: "email.message.Message"  # case-insensitive lookups
    body: bytes

    def json(self):
        return json.loads(self.body) if self.body else None


@dataclass
class Server:
    """A running server process and how to reach it."""

    port: int
    database: Path
    process: subprocess.Popen
    log_path: Path
    extra_args: list = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def request(self, method: str, path: str, body=None, token: str | None = None,
                headers: dict | None = None, raw: bytes | None = None) -> Response:
        """One HTTP request; never raises for an HTTP error status."""
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        request = urllib.request.Request(self.base_url + path, data=data, method=method)
        if data is not None and raw is None:
            request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=10) as reply:
                return Response(reply.status, reply.headers, reply.read())
        except urllib.error.HTTPError as error:
            return Response(error.code, error.headers, error.read())

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self, sig=signal.SIGTERM, timeout: float = 15) -> int:
        """Signals the server and waits for it to exit; returns its exit status."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        return self.process.wait(timeout=timeout)


def start_server(tmp_path: Path, *extra_args: str, port: int | None = None) -> Server:
    binary = str(Path(os.environ.get("RETRORAPID_BINARY", REPO / ".build/debug/retrorapid")).resolve())
    if not Path(binary).exists():
        pytest.fail(f"server binary {binary} not found: build it (make test does) or set RETRORAPID_BINARY")
    tmp_path.mkdir(parents=True, exist_ok=True)
    port = port or free_port()  # given when a flag must name it first (--public-base-url)
    database = tmp_path / "data" / "retrorapid.sqlite"
    log_path = tmp_path / "server.log"
    command = [
        binary, "serve", "--host", "127.0.0.1", "--port", str(port),
        "--database-path", str(database),
        "--web-root", str(REPO / "Web"),
        "--migrations-path", str(REPO / "Migrations"),
        *extra_args,
    ]
    log = open(log_path, "wb")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path)
    return wait_until_healthy(Server(port, database, process, log_path, list(extra_args)))


def wait_until_healthy(server: Server, seconds: float = 20) -> Server:
    """Returns `server` once /healthz answers 200; fails the test (with the server's log) if the
    process exits first or `seconds` pass, killing it in the second case."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            pytest.fail(f"server exited with {server.process.returncode}:\n{server.log()}")
        try:
            if server.request("GET", "/healthz").status == 200:
                return server
        except OSError:
            pass
        time.sleep(0.05)
    server.process.kill()
    pytest.fail(f"server did not answer /healthz within {seconds:g} s:\n{server.log()}")


@pytest.fixture
def server(tmp_path):
    """A fresh server and database per test; stopped (SIGTERM, then SIGKILL) afterwards."""
    running = start_server(tmp_path)
    yield running
    if running.process.poll() is None:
        try:
            running.stop()
        except subprocess.TimeoutExpired:
            running.process.kill()


@pytest.fixture
def server_factory(tmp_path):
    """Starts servers with extra flags (e.g. --daily-free-plays 1); all stopped afterwards."""
    started = []

    def start(*extra_args: str, port: int | None = None) -> Server:
        running = start_server(tmp_path / f"server{len(started)}", *extra_args, port=port)
        started.append(running)
        return running

    yield start
    for running in started:
        if running.process.poll() is None:
            running.process.kill()
            running.process.wait()
