"""The PostgreSQL test harness itself, against the real server scripts/with-test-postgres.sh
starts (docs/TESTING.md, "PostgreSQL in the tests"): a test's database is new, empty, its own,
and gone afterwards, and the server fixtures point the binary at it with --database-url."""

import subprocess
import time
from pathlib import Path

import pytest

import conftest
from postgres_databases import DATABASE_PREFIX, PostgresError, fresh_database


def database_name(url: str) -> str:
    return url.rsplit("/", 1)[1]


@pytest.fixture
def checked_after_teardown(postgres_server):
    """Set up before `postgres_database_url` when named first, so torn down after it: checks
    then that the database the test saw is gone."""
    seen = {}
    yield seen
    assert "url" in seen, "the test did not record its database"
    assert not postgres_server.database_exists(database_name(seen["url"])), seen["url"]


def test_a_tests_database_is_new_empty_and_dropped_afterwards(checked_after_teardown, postgres_database_url,
                                                            postgres_server):
    checked_after_teardown["url"] = postgres_database_url
    name = database_name(postgres_database_url)
    assert name.startswith(DATABASE_PREFIX)
    assert postgres_server.database_exists(name)
    assert postgres_server.user_relations(name) == []
    # It is a database one can use: psql through the URL the test is given.
    postgres_server.psql("CREATE TABLE probe (id integer PRIMARY KEY); INSERT INTO probe VALUES (1)",
                         database_url=postgres_database_url)
    assert postgres_server.psql("SELECT count(*) FROM probe", database_url=postgres_database_url).strip() == "1"
    assert postgres_server.user_relations(name) != []


def test_each_database_is_its_own(postgres_server):
    with fresh_database(postgres_server) as first, fresh_database(postgres_server) as second:
        assert first != second
        postgres_server.psql("CREATE TABLE only_in_first (id integer)", database_url=first)
        assert postgres_server.user_relations(database_name(second)) == []


def test_the_database_is_dropped_even_when_the_test_fails_and_a_connection_stays_open(postgres_server):
    holder = None
    with pytest.raises(RuntimeError, match="the test failed"):
        with fresh_database(postgres_server) as url:
            name = database_name(url)
            # A client that keeps the database open, as a hung server would: WITH (FORCE) ends it.
            holder = subprocess.Popen([postgres_server.psql_path, "-X", "-q", "-d", url, "-c", "SELECT pg_sleep(60)"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(100):
                if postgres_server.psql(f"SELECT count(*) FROM pg_stat_activity WHERE datname = '{name}'").strip() != "0":
                    break
                time.sleep(0.05)
            else:
                holder.kill()
                pytest.fail("the holding connection never appeared")
            raise RuntimeError("the test failed")
    assert not postgres_server.database_exists(name)
    assert holder.wait(timeout=10) != 0  # its connection was closed under it


def test_a_bad_statement_is_an_error_with_psqls_message(postgres_server):
    with pytest.raises(PostgresError, match="syntax error"):
        postgres_server.psql("SELEC 1")


def test_servers_on_postgres_get_a_database_url_and_keep_it_across_a_restart(postgres_server, tmp_path, monkeypatch):
    # What start_server passes under RETRORAPID_TEST_BACKEND=postgres, without starting the
    # binary (--database-url is the server's flag; this checks the harness's half).
    monkeypatch.setenv("RETRORAPID_TEST_BACKEND", "postgres")
    first = conftest.postgres_database_for(tmp_path / "server0")
    again = conftest.postgres_database_for(tmp_path / "server0")
    other = conftest.postgres_database_for(tmp_path / "server1")
    assert first == again != other
    for url in (first, other):
        assert postgres_server.database_exists(database_name(url))
        assert postgres_server.user_relations(database_name(url)) == []
    conftest.drop_databases_of([(tmp_path / "server0").resolve(), (tmp_path / "server1").resolve()])
    assert not postgres_server.database_exists(database_name(first))
    assert not postgres_server.database_exists(database_name(other))


INNER_CONFTEST = """
import importlib.util, sys
sys.path.insert(0, {folder!r})
spec = importlib.util.spec_from_file_location("retrorapid_conftest", {conftest!r})
module = importlib.util.module_from_spec(spec)
sys.modules["retrorapid_conftest"] = module
spec.loader.exec_module(module)
globals().update({{name: value for name, value in vars(module).items() if not name.startswith("__") and name != "pytest_plugins"}})
"""

INNER_TESTS = """
import pytest
from pathlib import Path
from retrorapid_conftest import postgres_database_for, session_postgres

NAMES = Path({names!r})

@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    return postgres_database_for(tmp_path_factory.mktemp("module-server"))

def test_one(tmp_path, shared):
    own = postgres_database_for(tmp_path / "server0")
    NAMES.write_text(own.rsplit("/", 1)[1] + "\\n" + shared.rsplit("/", 1)[1] + "\\n")

def test_two(shared):
    own, module = NAMES.read_text().split()
    postgres = session_postgres()
    assert not postgres.database_exists(own), "the first test's database outlived it"
    assert postgres.database_exists(module), "the module's database went before the module did"
"""


def test_the_backend_drops_a_tests_databases_after_it_and_the_rest_at_the_end(postgres_server, pytester, tmp_path):
    # A pytest session of its own with these fixtures, on PostgreSQL: a database made in a test's
    # tmp_path goes after that test, one made for a module-scoped server after the session.
    here = Path(__file__).resolve().parent
    names = tmp_path / "names"
    pytester.makeconftest(INNER_CONFTEST.format(folder=str(here), conftest=str(here / "conftest.py")))
    pytester.makepyfile(test_inner=INNER_TESTS.format(names=str(names)))
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=2)
    own, module = names.read_text().split()
    assert not postgres_server.database_exists(own)
    assert not postgres_server.database_exists(module)


def test_a_servers_query_reads_the_same_rows_from_either_backend(postgres_server, postgres_database_url, tmp_path):
    # What the restart and shutdown tests use to look into the database behind the API.
    on_sqlite = conftest.Server(0, tmp_path / "db.sqlite", None, tmp_path / "log")
    on_postgres = conftest.Server(0, tmp_path / "unused", None, tmp_path / "log", database_url=postgres_database_url)
    for server in (on_sqlite, on_postgres):
        server.execute("CREATE TABLE games (public_id TEXT, end_reason TEXT, score INTEGER, refunded BOOLEAN)")
        server.execute("INSERT INTO games VALUES (?, ?, ?, ?)", ("00000000000000ff", "it's over", 42, True))
        server.execute("INSERT INTO games VALUES (?, ?, ?, ?)", ("0000000000000100", None, 7, False))
        server.execute("UPDATE games SET score = score + 1 WHERE public_id = ?", ("00000000000000ff",))
    expected = [("00000000000000ff", "it's over", 43, 1), ("0000000000000100", None, 7, 0)]
    query = "SELECT public_id, end_reason, score, refunded FROM games ORDER BY score DESC"
    assert on_sqlite.query(query) == expected
    assert on_postgres.query(query) == expected
    both_counts = "SELECT count(*), count(*) FROM games WHERE score > ?"
    assert on_sqlite.query(both_counts, (10,)) == on_postgres.query(both_counts, (10,)) == [(1, 1)]
    assert on_postgres.query("SELECT public_id FROM games WHERE score > 1000") == []
    assert on_postgres.database_args == ["--database-url", postgres_database_url]
    assert on_sqlite.database_args == ["--database-path", str(tmp_path / "db.sqlite")]
