"""Fresh PostgreSQL databases for the end-to-end tests, on the throwaway server that
scripts/with-test-postgres.sh starts and names in RETRORAPID_TEST_POSTGRES_URL (docs/TESTING.md,
"PostgreSQL in the tests").

Everything goes through `psql` (postgresql-client, installed with the server): no Python driver
to pin, and the same client an operator would use, so what the tests see is what psql sees."""

import contextlib
import glob
import itertools
import json
import os
import secrets
import shutil
import subprocess
from urllib.parse import urlsplit, urlunsplit

ADMIN_URL_VARIABLE = "RETRORAPID_TEST_POSTGRES_URL"
REQUIRE_VARIABLE = "RETRORAPID_REQUIRE_POSTGRES"
BACKEND_VARIABLE = "RETRORAPID_TEST_BACKEND"
BACKENDS = ("sqlite", "postgres")
# Every database a test makes starts with this, so a leftover from a killed run is recognisable.
DATABASE_PREFIX = "rrtest_"

_numbers = itertools.count(1)


class PostgresError(RuntimeError):
    """psql failed; the message carries its stderr."""


def backend() -> str:
    """The storage the end-to-end servers run on: RETRORAPID_TEST_BACKEND, sqlite by default."""
    chosen = os.environ.get(BACKEND_VARIABLE, "sqlite") or "sqlite"
    if chosen not in BACKENDS:
        raise ValueError(f"{BACKEND_VARIABLE}={chosen!r}: expected one of {', '.join(BACKENDS)}")
    return chosen


def required() -> bool:
    """RETRORAPID_REQUIRE_POSTGRES=1 (make test sets it): a missing server is a failure, not a skip."""
    return os.environ.get(REQUIRE_VARIABLE, "") == "1"


def psql_binary() -> str | None:
    found = shutil.which("psql")
    if found:
        return found
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"))
    return candidates[-1] if candidates else None


class PostgresServer:
    """A PostgreSQL server reached through its admin URL (the superuser's `postgres` database)."""

    def __init__(self, admin_url: str):
        parts = urlsplit(admin_url)
        if parts.scheme not in ("postgres", "postgresql") or not parts.hostname:
            raise PostgresError(f"{ADMIN_URL_VARIABLE}={admin_url!r} is not a postgres://user@host:port/database URL")
        psql = psql_binary()
        if psql is None:
            raise PostgresError("psql not found: install postgresql-client (scripts/install-deps.sh postgresql)")
        self.admin_url = admin_url
        self.psql_path = psql

    def psql(self, sql: str, database_url: str | None = None, timeout: float = 30) -> str:
        """Runs `sql` (one statement or several, stopping at the first error) and returns the
        unaligned, header-less output."""
        result = subprocess.run(
            [self.psql_path, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", database_url or self.admin_url, "-c", sql],
            capture_output=True, text=True, timeout=timeout)
        if result.returncode != 0:
            raise PostgresError(f"psql failed ({result.returncode}) on {sql!r}: {result.stderr.strip()}")
        return result.stdout

    def rows(self, sql: str, params=(), database_url: str | None = None) -> list[tuple]:
        """The rows of one SELECT as tuples of JSON-typed values (numbers as int or float, text as
        str, booleans as bool, which equal 1 and 0 as SQLite's do); `?` placeholders as in
        sqlite3, filled with `params` as literals."""
        wrapped = f"SELECT coalesce(json_agg(row_to_json(r)), '[]') FROM ({fill_placeholders(sql, params)}) r"
        # Pairs, not dicts: two columns of one name (count(*) twice) both stay.
        listed = json.loads(self.psql(wrapped, database_url=database_url), object_pairs_hook=list)
        return [tuple(value for _, value in row) for row in listed]

    def check(self) -> None:
        """Raises PostgresError unless the server answers a query."""
        if self.psql("select 1").strip() != "1":
            raise PostgresError(f"{self.admin_url} did not answer select 1")

    def database_url(self, name: str) -> str:
        """The admin URL with `name` as its database."""
        parts = urlsplit(self.admin_url)
        return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))

    def create_database(self) -> str:
        """Makes a new, empty database with a name no other test uses; returns the name."""
        name = f"{DATABASE_PREFIX}{os.getpid()}_{next(_numbers)}_{secrets.token_hex(3)}"
        # template0: nothing anyone added to template1 comes along.
        self.psql(f'CREATE DATABASE "{name}" TEMPLATE template0 ENCODING \'UTF8\'')
        return name

    def drop_database(self, name: str) -> None:
        """Drops `name`, closing any connection still open to it (a server that was SIGKILLed
        leaves none, one that hangs might)."""
        self.psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def database_exists(self, name: str) -> bool:
        return self.psql(f"SELECT count(*) FROM pg_database WHERE datname = '{name}'").strip() == "1"

    def user_relations(self, name: str) -> list[str]:
        """Every table, view, sequence and type a user made in database `name` (none in a fresh one)."""
        listed = self.psql(
            "SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%' "
            "UNION ALL SELECT n.nspname || '.' || t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace "
            "WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%' "
            "ORDER BY 1",
            database_url=self.database_url(name))
        return [line for line in listed.splitlines() if line]


def literal(value) -> str:
    """`value` as an SQL literal: NULL, a number, or a string with its quotes doubled."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def fill_placeholders(sql: str, params) -> str:
    """sqlite3's `?` placeholders replaced by `params` as literals (the tests' queries have no
    `?` inside their own strings)."""
    pieces = sql.split("?")
    if len(pieces) - 1 != len(params):
        raise ValueError(f"{len(pieces) - 1} placeholders for {len(params)} parameters in {sql!r}")
    return pieces[0] + "".join(literal(value) + piece for value, piece in zip(params, pieces[1:]))


def server_from_environment() -> tuple["PostgresServer | None", str]:
    """The server RETRORAPID_TEST_POSTGRES_URL names, checked to answer, or None and why not.
    A URL that is set but does not answer raises: that is a broken setup, never a skip."""
    url = os.environ.get(ADMIN_URL_VARIABLE, "")
    if not url:
        return None, (f"{ADMIN_URL_VARIABLE} is not set: run under scripts/with-test-postgres.sh "
                      "(make test and make test-postgres-e2e do)")
    server = PostgresServer(url)
    server.check()
    return server, ""


@contextlib.contextmanager
def fresh_database(server: PostgresServer):
    """A new, empty database for the `with` block (its URL), dropped when the block ends,
    however it ends."""
    name = server.create_database()
    try:
        yield server.database_url(name)
    finally:
        server.drop_database(name)
