"""The database URL (docs/OPERATIONS.md, "The database"), with the real binary: `serve` and the
operator commands take `--database-url` (or RETRORAPID_DATABASE_URL), `sqlite:PATH` being the
same store as `--database-path PATH`; a URL that cannot be used is refused before anything is
created, naming what is wrong; and a password in a postgres:// URL never appears in anything
the binary prints."""

import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, TEST_CLUSTER_SECRET, Server, free_port, wait_until_healthy
from test_cli_conventions import BINARY, MIGRATIONS, clean_environment, run

PASSWORD = "Pa55-w0rd-never-shown"


def serve(cwd: Path, *flags: str, **environment: str) -> Server:
    """`retrorapid serve` from `cwd`, its database named only by `flags` / `environment` (and
    the cluster secret a PostgreSQL database needs, unless `environment` names its own)."""
    cwd.mkdir(parents=True, exist_ok=True)
    environment.setdefault("RETRORAPID_CLUSTER_SECRET", TEST_CLUSTER_SECRET)
    port = free_port()
    log_path = cwd.parent / f"{cwd.name}-server.log"
    log = open(log_path, "wb")
    process = subprocess.Popen(
        [BINARY, "serve", "--host", "127.0.0.1", "--port", str(port), "--web-root", str(REPO / "Web"),
         "--migrations-path", MIGRATIONS, *flags],
        cwd=cwd, env=clean_environment(**environment), stdout=log, stderr=subprocess.STDOUT)
    return wait_until_healthy(Server(port, Path("(named by the flags)"), process, log_path, list(flags)))


def stopped(server: Server) -> str:
    """Stops `server` gracefully and returns its log."""
    assert server.stop() == 0, server.log()
    return server.log()


def new_player(server: Server, name: str) -> str:
    reply = server.request("POST", "/api/v1/players", {"displayName": name})
    assert reply.status == 201, reply.body
    return reply.json()["player"]["id"]


def stored_names(database: Path) -> list[str]:
    with sqlite3.connect(database) as connection:
        return [row[0] for row in connection.execute("SELECT display_name FROM players ORDER BY id")]


def serve_refused(cwd: Path, *flags: str, **environment: str) -> subprocess.CompletedProcess:
    """`serve` that must exit by itself; it gets a port so it could only have started by mistake.
    It has the cluster secret a PostgreSQL database needs, unless `environment` names its own."""
    cwd.mkdir(parents=True, exist_ok=True)
    environment.setdefault("RETRORAPID_CLUSTER_SECRET", TEST_CLUSTER_SECRET)
    return subprocess.run(
        [BINARY, "serve", "--host", "127.0.0.1", "--port", str(free_port()), "--web-root", str(REPO / "Web"),
         "--migrations-path", MIGRATIONS, *flags],
        cwd=cwd, env=clean_environment(**environment), capture_output=True, text=True, timeout=60)


def closed_port() -> int:
    """A loopback port nothing listens on, for a postgres:// URL that must never be reached."""
    return free_port()


# MARK: sqlite: stores where it says, and --database-path is the same


@pytest.mark.parametrize("form", ["relative", "absolute", "sqlite-triple-slash"])
def test_serve_stores_in_the_sqlite_file_the_url_names(tmp_path, form):
    cwd = tmp_path / "work"
    expected = {"relative": cwd / "stores" / "rr.sqlite", "absolute": tmp_path / "abs" / "rr.sqlite",
                "sqlite-triple-slash": tmp_path / "triple" / "rr.sqlite"}[form]
    url = {"relative": "sqlite:stores/rr.sqlite", "absolute": f"sqlite:{expected}",
           "sqlite-triple-slash": f"sqlite://{expected}"}[form]
    server = serve(cwd, "--database-url", url)
    new_player(server, "Url Writer")
    log = stopped(server)
    # Created with its folder, holding what the server acknowledged; nothing at the default.
    assert stored_names(expected) == ["Url Writer"]
    assert not (cwd / "data").exists()
    assert f"db.path={expected if form != 'relative' else 'stores/rr.sqlite'}" in log, log


def test_the_environment_variable_names_the_database_too(tmp_path):
    cwd = tmp_path / "work"
    server = serve(cwd, RETRORAPID_DATABASE_URL="sqlite:from-env.sqlite")
    new_player(server, "Env Writer")
    stopped(server)
    assert stored_names(cwd / "from-env.sqlite") == ["Env Writer"]


def test_database_path_still_works_and_is_the_same_store_as_the_sqlite_url(tmp_path):
    database = tmp_path / "shared.sqlite"
    server = serve(tmp_path / "first", "--database-path", str(database))
    new_player(server, "Path Writer")
    stopped(server)
    # The same file by the other spelling: the player is there, and a second one joins it.
    server = serve(tmp_path / "second", "--database-url", f"sqlite:{database}")
    new_player(server, "Url Writer")
    stopped(server)
    assert stored_names(database) == ["Path Writer", "Url Writer"]
    # Both spellings agreeing is one database, not a conflict.
    server = serve(tmp_path / "third", "--database-path", str(database), "--database-url", f"sqlite:{database}")
    stopped(server)


def test_a_flag_beats_the_environment_whichever_spelling_each_uses(tmp_path):
    cwd = tmp_path / "work"
    server = serve(cwd, "--database-path", "flag.sqlite",
                   RETRORAPID_DATABASE_URL=f"postgres://rr:{PASSWORD}@127.0.0.1:{closed_port()}/rr")
    new_player(server, "Flag Wins")
    log = stopped(server)
    assert stored_names(cwd / "flag.sqlite") == ["Flag Wins"]
    assert PASSWORD not in log


# MARK: A URL that cannot be used: refused, naming why, creating nothing


@pytest.mark.parametrize("url, problem", [
    ("mysql://rr@127.0.0.1/rr", "uses 'mysql', which is not a database this server can use"),
    ("data/retrorapid.sqlite", "has no scheme"),
    ("sqlite:", "has no file path after sqlite:"),
    ("sqlite://data/rr.sqlite", "names a host after sqlite://"),
    ("postgres://rr@/rr", "has no host"),
    ("postgres://rr@127.0.0.1", "has no database name"),
])
def test_a_bad_url_exits_64_naming_the_problem_and_the_forms_and_creates_nothing(tmp_path, url, problem):
    cwd = tmp_path / "work"
    result = serve_refused(cwd, "--database-url", url)
    assert result.returncode == 64, result
    assert f"--database-url expects a database URL: '{url}' {problem}" in result.stderr, result.stderr
    assert "Accepted: sqlite:PATH" in result.stderr and "postgres://[USER[:PASSWORD]@]HOST" in result.stderr
    assert list(cwd.iterdir()) == []
    # The same from the environment, named as such.
    from_environment = serve_refused(cwd, RETRORAPID_DATABASE_URL=url)
    assert from_environment.returncode == 64, from_environment
    assert f"environment variable RETRORAPID_DATABASE_URL expects a database URL: '{url}' {problem}" in from_environment.stderr
    assert list(cwd.iterdir()) == []


def test_the_two_spellings_disagreeing_are_refused_and_create_nothing(tmp_path):
    cwd = tmp_path / "work"
    result = serve_refused(cwd, "--database-path", "a.sqlite", "--database-url", "sqlite:b.sqlite")
    assert result.returncode == 64, result
    assert ("--database-url (sqlite:b.sqlite) and --database-path (a.sqlite) name different databases; "
            "give one of them") in result.stderr, result.stderr
    assert list(cwd.iterdir()) == []
    # An operator command refuses the same way, changing nothing.
    listed = run("codes", "list", "--database-path", "a.sqlite", "--database-url", "sqlite:b.sqlite", cwd=cwd)
    assert listed.returncode == 64 and "name different databases" in listed.stderr, listed
    assert list(cwd.iterdir()) == []


# MARK: A password is never shown


def postgres_url() -> str:
    return f"postgres://rr:{PASSWORD}@127.0.0.1:{closed_port()}/retrorapid?sslmode=disable"


def test_serve_with_a_postgres_url_never_shows_its_password(tmp_path):
    cwd = tmp_path / "work"
    url = postgres_url()
    redacted = url.replace(PASSWORD, "***")
    for given in [{"flags": ["--database-url", url]}, {"environment": {"RETRORAPID_DATABASE_URL": url}}]:
        result = serve_refused(cwd, *given.get("flags", []), **given.get("environment", {}))
        assert result.returncode == 1, result
        assert PASSWORD not in result.stdout + result.stderr
        assert redacted in result.stderr, result.stderr
        assert not (cwd / "data").exists()
    # An env file is read the same way, and its mistakes are reported redacted too.
    env_file = tmp_path / "retrorapid.env"
    env_file.write_text(f"RETRORAPID_DATABASE_URL={url}\n")
    from_file = serve_refused(cwd, RETRORAPID_ENV_FILE=str(env_file))
    assert from_file.returncode == 1 and PASSWORD not in from_file.stdout + from_file.stderr, from_file
    env_file.write_text(f"RETRORAPID_DATABASE_URL=postgres://rr:{PASSWORD}@/retrorapid\n")
    bad = serve_refused(cwd, RETRORAPID_ENV_FILE=str(env_file))
    assert bad.returncode == 64, bad
    assert "line 1: RETRORAPID_DATABASE_URL expects a database URL: 'postgres://rr:***@/retrorapid' has no host" in bad.stderr
    assert PASSWORD not in bad.stdout + bad.stderr


def test_a_postgres_database_that_does_not_exist_is_named_with_how_to_create_it(tmp_path, postgres_server):
    # The server makes tables, never databases: a missing one is the operator's to create.
    from urllib.parse import urlsplit, urlunsplit
    parts = urlsplit(postgres_server.admin_url)
    missing = urlunsplit(parts._replace(path="/rr_no_such_database"))
    result = serve_refused(tmp_path / "work", "--database-url", missing)
    assert result.returncode == 1, result
    assert "no database rr_no_such_database on the PostgreSQL server" in result.stderr, result.stderr
    assert "createdb" in result.stderr
    assert postgres_server.psql("SELECT count(*) FROM pg_database WHERE datname = 'rr_no_such_database'").strip() == "0"


@pytest.mark.parametrize("arguments", [
    ["migrate"], ["migrate", "--status"], ["codes", "list"], ["players", "show", "D7TWTD3VV82F"],
    ["verify"], ["games", "show", "gm_unknown"], ["backup", "copy.sqlite"],
])
def test_operator_commands_never_show_the_password(tmp_path, arguments):
    url = postgres_url()
    for extra, environment in [(["--database-url", url], {}), ([], {"RETRORAPID_DATABASE_URL": url}),
                               (["--database-url", f"postgres://rr:{PASSWORD}@/rr"], {})]:
        result = run(*arguments, *extra, "--migrations-path", MIGRATIONS, cwd=tmp_path, **environment)
        assert result.returncode in (1, 64), result
        assert PASSWORD not in result.stdout + result.stderr, result
        assert "postgres://rr:***@" in result.stderr, result.stderr
    assert list(tmp_path.iterdir()) == []


def test_backup_of_a_postgres_database_points_to_pg_dump(tmp_path):
    result = run("backup", "copy.sqlite", "--database-url", postgres_url(), cwd=tmp_path)
    assert result.returncode == 1, result
    assert "backup copies a SQLite database with SQLite's online backup" in result.stderr
    assert "back it up with pg_dump" in result.stderr and PASSWORD not in result.stderr
    assert list(tmp_path.iterdir()) == []


# MARK: The operator commands take --database-url


def test_migrate_codes_and_players_take_the_database_url(tmp_path):
    database = tmp_path / "ops" / "rr.sqlite"
    url = f"sqlite:{database}"
    status = run("migrate", "--status", "--database-url", url, "--migrations-path", MIGRATIONS, cwd=tmp_path)
    assert status.returncode == 0 and f"no database at {database} yet" in status.stdout, status
    assert not database.parent.exists()

    migrated = run("migrate", "--database-url", url, "--migrations-path", MIGRATIONS, cwd=tmp_path)
    assert migrated.returncode == 0 and "applied  0001_initial" in migrated.stdout, migrated
    assert database.exists()
    status = run("migrate", "--status", "--database-url", url, "--migrations-path", MIGRATIONS, cwd=tmp_path)
    assert status.returncode == 0 and f"database {database}" in status.stdout and "up to date" in status.stdout, status

    created = run("codes", "create", "4Q39-6MV1-2CKP", "--unlock", "--database-url", url, "--migrations-path", MIGRATIONS,
                  cwd=tmp_path)
    assert created.returncode == 0, created
    listed = run("codes", "list", "--database-url", url, "--migrations-path", MIGRATIONS, cwd=tmp_path)
    assert listed.returncode == 0 and "4Q396MV12CKP" in listed.stdout, listed
    # The environment variable reaches the operator commands as it reaches serve.
    by_environment = run("codes", "list", cwd=tmp_path, RETRORAPID_DATABASE_URL=url, RETRORAPID_MIGRATIONS_PATH=MIGRATIONS)
    assert by_environment.returncode == 0 and by_environment.stdout == listed.stdout, by_environment

    server = serve(tmp_path / "server", "--database-url", url)
    player = new_player(server, "Shown By Url")
    stopped(server)
    shown = run("players", "show", player, "--database-url", url, "--migrations-path", MIGRATIONS, cwd=tmp_path)
    assert shown.returncode == 0 and "Shown By Url" in shown.stdout, shown
    by_path = run("players", "show", player, "--database-path", str(database), "--migrations-path", MIGRATIONS,
                  cwd=tmp_path)
    assert by_path.returncode == 0 and by_path.stdout == shown.stdout, by_path

    copy = tmp_path / "copy.sqlite"
    copied = run("backup", str(copy), "--database-url", url, cwd=tmp_path)
    assert copied.returncode == 0 and f"backed up {database} to {copy}" in copied.stdout, copied
    assert stored_names(copy) == ["Shown By Url"]


def test_an_operator_command_refuses_a_missing_sqlite_file_naming_the_url_flag(tmp_path):
    result = run("codes", "list", "--database-url", "sqlite:nowhere.sqlite", "--migrations-path", MIGRATIONS, cwd=tmp_path)
    assert result.returncode == 1, result
    assert "no database at nowhere.sqlite. Pass --database-url URL (or --database-path PATH)" in result.stderr, result
    assert list(tmp_path.iterdir()) == []


def test_every_command_that_takes_the_database_path_takes_the_url_and_says_so():
    # crash-writer is a test aid for SQLite's durability and names its file on purpose.
    for name in ["migrate", "codes", "players", "orders", "games", "backup", "verify", "seed-players"]:
        text = subprocess.run([BINARY, "help", name], capture_output=True, text=True, timeout=30, check=True).stdout
        assert "--database-url" in text and "--database-path" in text, f"{name}:\n{text}"
    serve_help = subprocess.run([BINARY, "help", "serve"], capture_output=True, text=True, timeout=30, check=True).stdout
    assert "--database-url URL   (env RETRORAPID_DATABASE_URL)" in serve_help
    assert "Default: sqlite:data/retrorapid.sqlite." in serve_help
