"""Fixtures for end-to-end tests: a real `retrorapid serve` on a loopback port with a
fresh SQLite file, and small HTTP helpers. The binary comes from RETRORAPID_BINARY
(make test sets it), else .build/debug/retrorapid.

With RETRORAPID_TEST_BACKEND=postgres the servers run on a fresh PostgreSQL database each
instead (`--database-url`), made on the server RETRORAPID_TEST_POSTGRES_URL names
(scripts/with-test-postgres.sh starts one); `postgres_database_url` gives a test its own empty
database. docs/TESTING.md, "PostgreSQL in the tests"."""

import json
import os
import signal
import socket
import sqlite3
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from postgres_databases import (REQUIRE_VARIABLE, PostgresError, PostgresServer, backend,
                                fill_placeholders, fresh_database, required,
                                server_from_environment)

REPO = Path(__file__).resolve().parents[2]

# Every server on PostgreSQL is a cluster node and refuses to start without a cluster secret
# (docs/OPERATIONS.md, "Signing the cluster bus"): the test servers share this one.
TEST_CLUSTER_SECRET = "rr-test-cluster-secret-9Xq2Lw7Zt4Kp1Vn8Rc3Hs6Jd"

# pytester: test_postgres_harness.py runs a pytest session of its own with these fixtures.
pytest_plugins = ("pytester",)


def pytest_configure(config):
    try:
        backend()
    except ValueError as error:
        raise pytest.UsageError(str(error))


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
    # Set when the server runs on PostgreSQL (RETRORAPID_TEST_BACKEND=postgres); `database` is
    # then a path nothing uses.
    database_url: str | None = None
    # Set when the server serves TLS itself (--tls-certificate-path): the context that trusts it.
    tls: ssl.SSLContext | None = None

    @property
    def connect_options(self) -> dict:
        """What a WebSocket client needs to reach it (ws_client.GameClient.open)."""
        return {"ssl": self.tls} if self.tls is not None else {}

    @property
    def database_args(self) -> list[str]:
        """The flags that point an operator command at this server's database, on either backend."""
        if self.database_url is not None:
            return ["--database-url", self.database_url]
        return ["--database-path", str(self.database)]

    def query(self, sql: str, params=()) -> list[tuple]:
        """The rows of a SELECT on this server's database, on either backend (sqlite3's `?`
        placeholders); for checks a test cannot make through the API."""
        if self.database_url is not None:
            return session_postgres().rows(sql, params, database_url=self.database_url)
        db = sqlite3.connect(self.database)
        try:
            with db:
                return db.execute(sql, params).fetchall()
        finally:
            db.close()

    def execute(self, sql: str, params=()) -> None:
        """Runs one changing statement (a test's deliberate tampering) on either backend."""
        if self.database_url is not None:
            session_postgres().psql(fill_placeholders(sql, params), database_url=self.database_url)
            return
        db = sqlite3.connect(self.database)
        try:
            with db:  # commits
                db.execute(sql, params)
        finally:
            db.close()

    @property
    def base_url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"{'wss' if self.tls else 'ws'}://127.0.0.1:{self.port}/ws"

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
            with urllib.request.urlopen(request, timeout=10, context=self.tls) as reply:
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


def start_server(tmp_path: Path, *extra_args: str, port: int | None = None, host: str = "127.0.0.1") -> Server:
    """`host`: the address to listen on (`::` for every address, IPv4 and IPv6); the tests
    reach the server on 127.0.0.1 whichever."""
    binary = str(Path(os.environ.get("RETRORAPID_BINARY", REPO / ".build/debug/retrorapid")).resolve())
    if not Path(binary).exists():
        pytest.fail(f"server binary {binary} not found: build it (make test does) or set RETRORAPID_BINARY")
    tmp_path.mkdir(parents=True, exist_ok=True)
    port = port or free_port()  # given when a flag must name it first (--public-base-url)
    database = tmp_path / "data" / "retrorapid.sqlite"
    database_url = postgres_database_for(tmp_path) if backend() == "postgres" else None
    log_path = tmp_path / "server.log"
    command = [
        binary, "serve", "--host", host, "--port", str(port),
        *(["--database-url", database_url] if database_url else ["--database-path", str(database)]),
        "--web-root", str(REPO / "Web"),
        "--migrations-path", str(REPO / "Migrations"),
        *extra_args,
    ]
    log = open(log_path, "wb")
    environment = {**os.environ, "RETRORAPID_CLUSTER_SECRET": TEST_CLUSTER_SECRET} if database_url else None
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path, env=environment)
    return wait_until_healthy(Server(port, database, process, log_path, list(extra_args), database_url))


def wait_until_healthy(server: Server, seconds: float = 20) -> Server:
    """Returns `server` once /healthz answers 200 and its log holds the last start-up line
    ("RetroRapid serving …": /healthz answers a moment before it is written, and tests read the
    lines before it); fails the test (with the server's log) if the process exits first or
    `seconds` pass, killing it in the second case."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            pytest.fail(f"server exited with {server.process.returncode}:\n{server.log()}")
        try:
            if server.request("GET", "/healthz").status == 200 and "RetroRapid serving " in server.log():
                return server
        except OSError:
            pass
        time.sleep(0.05)
    server.process.kill()
    pytest.fail(f"server did not answer /healthz within {seconds:g} s:\n{server.log()}")


# PostgreSQL. The session's server is looked up once; each folder start_server is given gets its
# own database, made the first time and reused when a server starts again on the same folder
# (as a restart on the same SQLite file would). Databases made under a test's tmp_path are
# dropped after that test; the rest (module-scoped servers) at the end of the session.
_postgres: dict = {}
_databases_by_folder: dict[Path, str] = {}


def session_postgres() -> PostgresServer:
    """The server RETRORAPID_TEST_POSTGRES_URL names; fails the test if there is none, as a
    test that asked for PostgreSQL must never quietly run without it."""
    if "server" not in _postgres:
        try:
            found, reason = server_from_environment()
        except PostgresError as error:
            found, reason = None, str(error)
        _postgres["server"], _postgres["reason"] = found, reason
    if _postgres["server"] is None:
        pytest.fail(f"no PostgreSQL server for the tests: {_postgres['reason']}")
    return _postgres["server"]


def postgres_database_for(folder: Path) -> str:
    """The URL of the database of the server started on `folder`, made if it is the first."""
    folder = folder.resolve()
    postgres = session_postgres()
    if folder not in _databases_by_folder:
        _databases_by_folder[folder] = postgres.create_database()
    return postgres.database_url(_databases_by_folder[folder])


def drop_databases_of(folders) -> None:
    postgres = _postgres.get("server")
    for folder in list(folders):
        name = _databases_by_folder.pop(folder)
        if postgres is not None:
            postgres.drop_database(name)


@pytest.fixture(scope="session", autouse=True)
def _drop_the_sessions_postgres_databases():
    yield
    drop_databases_of(list(_databases_by_folder))


@pytest.fixture(autouse=True)
def _drop_this_tests_postgres_databases(request):
    # Autouse, so set up before `server` and torn down after it has stopped the server.
    yield
    tmp_path = request.node.funcargs.get("tmp_path") if hasattr(request.node, "funcargs") else None
    if tmp_path is None or not _databases_by_folder:
        return
    root = Path(tmp_path).resolve()
    drop_databases_of([folder for folder in _databases_by_folder if folder.is_relative_to(root)])


@pytest.fixture(scope="session")
def postgres_server() -> PostgresServer:
    """The test PostgreSQL server. Skipped (with the reason) when RETRORAPID_TEST_POSTGRES_URL is
    unset, unless RETRORAPID_REQUIRE_POSTGRES=1 (make test): then that is a failure. A URL that
    is set but does not answer always fails."""
    try:
        found, reason = server_from_environment()
    except PostgresError as error:
        pytest.fail(f"the PostgreSQL test server does not answer: {error}")
    if found is None:
        if required():
            pytest.fail(f"{REQUIRE_VARIABLE}=1 but {reason}")
        pytest.skip(reason)
    return found


@pytest.fixture
def postgres_database_url(postgres_server):
    """A fresh, empty database for this test alone (its URL); dropped afterwards."""
    with fresh_database(postgres_server) as url:
        yield url


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

    def start(*extra_args: str, port: int | None = None, host: str = "127.0.0.1") -> Server:
        running = start_server(tmp_path / f"server{len(started)}", *extra_args, port=port, host=host)
        started.append(running)
        return running

    yield start
    for running in started:
        if running.process.poll() is None:
            running.process.kill()
            running.process.wait()
