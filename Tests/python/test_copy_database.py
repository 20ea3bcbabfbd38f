"""`retrorapid copy-database` end to end: a real `serve` on SQLite stores players, devices, a
link code, settings, a redeemed code and played games through the API; the server is stopped;
the real binary copies the file into a fresh database on the test PostgreSQL server; psql then
finds every row there. Needs RETRORAPID_TEST_POSTGRES_URL (a server on loopback, as the Swift
storage tests do) and psql."""

import os
import secrets
import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, TEST_CLUSTER_SECRET, Server, free_port, wait_until_healthy
from ws_client import create_player, link_second_device, play_to_score

ADMIN_URL = os.environ.get("RETRORAPID_TEST_POSTGRES_URL", "")

pytestmark = pytest.mark.skipif(not ADMIN_URL, reason="needs RETRORAPID_TEST_POSTGRES_URL (a PostgreSQL server for the tests)")


def binary() -> str:
    return str(Path(os.environ.get("RETRORAPID_BINARY", REPO / ".build/debug/retrorapid")).resolve())


def psql(url: str, sql: str) -> list[list[str]]:
    """Rows of one query, as text (unaligned, tab-separated)."""
    done = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1", url, "-c", sql],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return [line.split("\t") for line in done.stdout.splitlines() if line]


def database_url(name: str, password: str | None = None) -> str:
    """The test server's URL for database `name`, with `password` when given (the test server
    trusts loopback, so any password connects: what matters is that none is printed)."""
    scheme, rest = ADMIN_URL.split("://", 1)
    authority, _, _ = rest.partition("/")
    if password is not None:
        user, _, host = authority.rpartition("@")
        authority = f"{user.split(':')[0] or 'postgres'}:{password}@{host}"
    return f"{scheme}://{authority}/{name}"


@pytest.fixture
def fresh_database():
    """A new, empty database on the test server; dropped afterwards."""
    name = "rr_copy_" + secrets.token_hex(6)
    psql(ADMIN_URL, f"CREATE DATABASE {name}")
    yield name
    psql(ADMIN_URL, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def copy_database(database: Path, url: str) -> subprocess.CompletedProcess:
    return subprocess.run([binary(), "copy-database", "--to", url, "--database-path", str(database),
                           "--migrations-path", str(REPO / "Migrations")],
                          capture_output=True, text=True, timeout=300)


def served_and_stopped(server_factory) -> Server:
    """A server that stored a little of everything through the API, then stopped."""
    first = server_factory()
    code = subprocess.run([binary(), "codes", "create", "K7Q4-M2XD-9P3R", "--unlock", "--database-path", str(first.database),
                           "--migrations-path", str(REPO / "Migrations")], capture_output=True, text=True, timeout=60)
    assert code.returncode == 0, code.stderr
    ada = create_player(first, "Ada")
    link_second_device(first, ada)
    assert first.request("PATCH", "/api/v1/settings", {"cueVolume": 35}, token=ada, headers={"If-Match": '"0"'}).status == 200
    bob = create_player(first, "Bob")
    assert first.request("POST", "/api/v1/codes/redeem", {"code": "K7Q4M2XD9P3R"}, token=bob).status in (200, 201)
    play_to_score(first, ada, "cruise", 3)
    play_to_score(first, bob, "cruise", 5)
    first.board = first.request("GET", "/api/v1/leaderboards/cruise/allTime?limit=100").json()
    assert [entry["displayName"] for entry in first.board["entries"]] == ["Bob", "Ada"]
    # Stopped first, as docs/OPERATIONS.md says: the copy is of one snapshot, later writes are not in it.
    assert first.stop() == 0
    return first


def sqlite_counts(path: Path) -> dict[str, int]:
    with sqlite3.connect(path) as db:
        tables = [row[0] for row in db.execute(
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite%' AND name <> 'schema_migrations'")]
        return {table: db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in tables}


def printed_counts(stdout: str) -> dict[str, int]:
    """The TABLE / ROWS / HOW table the command prints."""
    lines = stdout.splitlines()
    start = next(index for index, line in enumerate(lines) if line.split()[:3] == ["TABLE", "ROWS", "HOW"])
    counts = {}
    for line in lines[start + 1:]:
        cells = line.split()
        if len(cells) < 3 or not cells[1].isdigit():
            break
        counts[cells[0]] = int(cells[1])
    return counts


def test_a_served_database_is_copied_into_postgresql_row_for_row(server_factory, fresh_database):
    served = served_and_stopped(server_factory)
    url = database_url(fresh_database)
    expected = sqlite_counts(served.database)
    for table in ["players", "devices", "link_codes", "player_settings", "promo_codes", "code_redemptions",
                  "unlimited_entitlements", "games", "best_scores", "score_counts", "plays"]:
        assert expected[table] > 0, f"the API left {table} empty"

    copied = copy_database(served.database, url)
    assert copied.returncode == 0, copied.stdout + copied.stderr
    assert printed_counts(copied.stdout) == expected
    inserted = sum(rows for table, rows in expected.items() if table != "score_counts")
    assert f"copied {inserted} rows from {served.database} to {url}" in copied.stdout
    assert "copied, checked" in copied.stdout and "rebuilt by PostgreSQL's trigger, checked" in copied.stdout
    assert f"of {inserted} rows" in copied.stderr  # progress
    assert "applied migration 0001_initial" in copied.stderr

    # psql finds it all: the counts, and the rows themselves.
    for table, rows in expected.items():
        assert psql(url, f"SELECT count(*) FROM {table}") == [[str(rows)]], table
    with sqlite3.connect(served.database) as db:
        players = [[str(i), p, n] for i, p, n in db.execute("SELECT id, public_id, display_name FROM players ORDER BY id")]
        games = [[str(r[0]), r[1], str(r[2]), r[3], "t" if r[4] else "f"] for r in
                 db.execute("SELECT id, public_id, score, input_log, practice FROM games ORDER BY id")]
        tokens = [[str(i), h.hex()] for i, h in db.execute("SELECT id, token_hash FROM devices ORDER BY id")]
        board = [[p, str(s)] for p, s in db.execute(
            "SELECT p.public_id, b.score FROM best_scores b JOIN players p ON p.id = b.player_id "
            "WHERE b.level = 'cruise' AND b.period = 'all' ORDER BY b.score DESC")]
    assert psql(url, "SELECT id, public_id, display_name FROM players ORDER BY id") == players
    assert psql(url, "SELECT id, public_id, score, input_log, practice FROM games ORDER BY id") == games
    assert psql(url, "SELECT id, encode(token_hash, 'hex') FROM devices ORDER BY id") == tokens
    # The leaderboard the server showed, as PostgreSQL now holds it.
    assert board == [[entry["playerId"], str(entry["score"])] for entry in served.board["entries"]]
    assert psql(url, "SELECT p.public_id, b.score FROM best_scores b JOIN players p ON p.id = b.player_id "
                     "WHERE b.level = 'cruise' AND b.period = 'all' ORDER BY b.score DESC") == board
    # New rows get new ids.
    assert psql(url, "SELECT nextval(pg_get_serial_sequence('players', 'id'))") == [[str(len(players) + 1)]]

    # A second copy into the now filled database is refused and changes nothing.
    before = psql(url, "SELECT count(*), max(id) FROM players")
    again = copy_database(served.database, url)
    assert again.returncode == 1
    assert "already holds rows" in again.stderr and "changed nothing there" in again.stderr
    assert psql(url, "SELECT count(*), max(id) FROM players") == before


def test_a_password_in_the_url_is_never_printed(server_factory, fresh_database):
    served = served_and_stopped(server_factory)
    password = "pw-" + secrets.token_hex(8)
    copied = copy_database(served.database, database_url(fresh_database, password))
    assert copied.returncode == 0, copied.stdout + copied.stderr
    assert password not in copied.stdout + copied.stderr
    assert ":***@" in copied.stdout
    # Nor when the server cannot be reached, in the message that says so.
    unreachable = copy_database(served.database, f"postgres://postgres:{password}@127.0.0.1:{free_port()}/x?password={password}")
    assert unreachable.returncode == 1
    assert password not in unreachable.stdout + unreachable.stderr
    assert "cannot reach the PostgreSQL database postgres://postgres:***@127.0.0.1:" in unreachable.stderr
    assert "password=***" in unreachable.stderr


def test_a_bad_call_exits_64_and_copies_nothing(tmp_path):
    missing = subprocess.run([binary(), "copy-database", "--database-path", str(tmp_path / "x.sqlite")],
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode == 64 and "needs --to postgres://" in missing.stderr
    wrong = subprocess.run([binary(), "copy-database", "--to", "mysql://root:hunter2@localhost/db"],
                           capture_output=True, text=True, timeout=60)
    assert wrong.returncode == 64 and "uses 'mysql'" in wrong.stderr and "postgresql://" in wrong.stderr.splitlines()[0]
    assert "hunter2" not in wrong.stdout + wrong.stderr
    assert not (tmp_path / "x.sqlite").exists()


def test_serve_on_the_copied_database_shows_the_same_leaderboard(server_factory, fresh_database, tmp_path):
    served = served_and_stopped(server_factory)
    url = database_url(fresh_database)
    assert copy_database(served.database, url).returncode == 0
    port = free_port()
    log_path = tmp_path / "on-postgres.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen([binary(), "serve", "--host", "127.0.0.1", "--port", str(port), "--database-url", url,
                                    "--web-root", str(REPO / "Web"), "--migrations-path", str(REPO / "Migrations"),
                                    "--cluster-secret", TEST_CLUSTER_SECRET],
                                   stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path)
    on_postgres = wait_until_healthy(Server(port, served.database, process, log_path))
    try:
        board = on_postgres.request("GET", "/api/v1/leaderboards/cruise/allTime?limit=100").json()
        assert board["entries"] == served.board["entries"]
    finally:
        on_postgres.stop()
