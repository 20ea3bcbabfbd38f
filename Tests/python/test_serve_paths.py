"""Where the real binary finds its Web client, migrations, fonts and OpenAPI document when it is
started outside a source checkout (docs/OPERATIONS.md, "Where the server finds its files"):
a path a setting names is used as given; an unset one is looked for in the working
directory, then in <prefix>/share/retrorapid next to the executable (symlinks resolved), then
in /usr/share/retrorapid. Without the Web client or the migrations it refuses to start, naming
what it tried and the setting that fixes it; without fonts it warns and serves."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, Server, free_port, wait_until_healthy
from test_cli_conventions import BINARY, clean_environment

SYSTEM_SHARE = Path("/usr/share/retrorapid")


def install_prefix(root: Path, fonts: bool = True) -> Path:
    """A prefix as `make install`-style packaging lays it out: bin/retrorapid (a copy, not a
    link) and share/retrorapid/{web,migrations,fonts,openapi.json}. Returns the binary."""
    share = root / "share" / "retrorapid"
    share.mkdir(parents=True)
    shutil.copytree(REPO / "Web", share / "web")
    shutil.copytree(REPO / "Migrations", share / "migrations")
    shutil.copy2(REPO / "docs" / "openapi.json", share / "openapi.json")
    if fonts:
        (share / "fonts").mkdir()
        (share / "fonts" / "LICENSE-test.txt").write_text("a stand-in font folder\n")
    (root / "bin").mkdir()
    binary = root / "bin" / "retrorapid"
    shutil.copy2(BINARY, binary)
    return binary


def serve(binary: Path, cwd: Path, *flags: str, **environment: str) -> Server:
    """`retrorapid serve` from `cwd` with no path settings but the database and `flags`."""
    port = free_port()
    database = cwd / "db.sqlite"
    log_path = cwd.parent / f"{cwd.name}-server.log"
    log = open(log_path, "wb")
    process = subprocess.Popen(
        [str(binary), "serve", "--host", "127.0.0.1", "--port", str(port), "--database-path", str(database), *flags],
        cwd=cwd, env=clean_environment(**environment), stdout=log, stderr=subprocess.STDOUT)
    return wait_until_healthy(Server(port, database, process, log_path, list(flags)))


def refused(binary: Path, cwd: Path, *arguments: str, **environment: str) -> subprocess.CompletedProcess:
    result = subprocess.run([str(binary), *arguments], cwd=cwd, env=clean_environment(**environment),
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 1, result
    return result


def assert_serves_the_checkouts_files(server: Server):
    assert server.request("GET", "/").body == (REPO / "Web" / "index.html").read_bytes()
    assert server.request("GET", "/api/v1/openapi.json").body == (REPO / "docs" / "openapi.json").read_bytes()
    assert server.request("POST", "/api/v1/players", body={"displayName": "Path Finder"}).status == 201


@pytest.fixture
def elsewhere(tmp_path) -> Path:
    """A working directory with nothing of the checkout in it."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    return folder


@pytest.fixture
def no_system_install():
    if SYSTEM_SHARE.exists():
        pytest.skip(f"{SYSTEM_SHARE} exists on this machine, so nothing here can be missing")


def test_an_installed_prefix_is_found_next_to_the_executable(tmp_path, elsewhere, no_system_install):
    binary = install_prefix(tmp_path / "opt")
    share = (tmp_path / "opt" / "share" / "retrorapid").resolve()
    server = serve(binary, elsewhere)
    try:
        assert_serves_the_checkouts_files(server)
        assert server.request("GET", "/fonts/LICENSE-test.txt").body == b"a stand-in font folder\n"
        log = server.log()
        assert f"using the Web client folder {share / 'web'} (next to the executable)" in log, log
        assert f"using the migrations folder {share / 'migrations'} (next to the executable)" in log, log
        assert f"using the OpenAPI document {share / 'openapi.json'} (next to the executable)" in log, log
        assert f"using the fonts folder {share / 'fonts'} (next to the executable)" in log, log
    finally:
        assert server.stop() == 0


def test_a_symlink_to_the_installed_binary_still_finds_its_prefix(tmp_path, elsewhere, no_system_install):
    # /usr/local/bin/retrorapid -> /opt/retrorapid/bin/retrorapid: the link's own folder has no share/.
    binary = install_prefix(tmp_path / "opt")
    links = tmp_path / "links" / "bin"
    links.mkdir(parents=True)
    (links / "retrorapid").symlink_to(binary)
    server = serve(links / "retrorapid", elsewhere)
    try:
        assert_serves_the_checkouts_files(server)
        assert "(next to the executable)" in server.log()
    finally:
        assert server.stop() == 0


def test_the_working_directory_wins_over_the_prefix(tmp_path, no_system_install):
    # A source checkout: started from it, the checkout's own files are used even with an install around.
    binary = install_prefix(tmp_path / "opt")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "Web").symlink_to(REPO / "Web")
    (checkout / "Migrations").symlink_to(REPO / "Migrations")
    server = serve(binary, checkout)
    try:
        assert server.request("GET", "/").status == 200
        log = server.log()
        assert f"using the Web client folder {checkout / 'Web'} (in the working directory)" in log, log
        assert f"using the migrations folder {checkout / 'Migrations'} (in the working directory)" in log, log
        # The checkout has no docs/ or data/fonts here, so those two come from the prefix.
        assert "openapi.json (next to the executable)" in log, log
    finally:
        assert server.stop() == 0


def test_explicit_settings_are_used_from_anywhere(elsewhere, no_system_install):
    server = serve(BINARY, elsewhere, "--openapi-path", str(REPO / "docs" / "openapi.json"),
                   RETRORAPID_WEB_ROOT=str(REPO / "Web"), RETRORAPID_MIGRATIONS_PATH=str(REPO / "Migrations"))
    try:
        assert_serves_the_checkouts_files(server)
        log = server.log()
        assert f"using the Web client folder {REPO / 'Web'} (set by environment variable RETRORAPID_WEB_ROOT)" in log, log
        assert f"(set by --openapi-path)" in log, log
        # No fonts anywhere: a warning, and the server serves anyway.
        assert "fonts folder not found" in log, log
        assert f"optional: the fonts folder was not found; looked in {elsewhere / 'data' / 'fonts'} (in the working directory)" in log, log
        assert server.request("GET", "/fonts/x.woff2").status == 404
    finally:
        assert server.stop() == 0


def test_serve_refuses_without_the_web_client_and_says_where_it_looked(elsewhere, no_system_install):
    result = refused(Path(BINARY), elsewhere, "serve", "--port", "0", "--migrations-path", str(REPO / "Migrations"))
    prefix_share = Path(BINARY).resolve().parent.parent / "share" / "retrorapid"
    message = result.stderr
    assert "the Web client folder was not found; looked in " in message, message
    assert f"{elsewhere / 'Web'} (in the working directory)" in message, message
    assert f"{prefix_share / 'web'} (next to the executable)" in message, message
    assert f"{SYSTEM_SHARE / 'web'} (the system's share folder)" in message, message
    assert "set --web-root or RETRORAPID_WEB_ROOT" in message, message
    # Refused before anything was opened: no database was created.
    assert list(elsewhere.iterdir()) == []


def test_serve_refuses_without_the_migrations(elsewhere, no_system_install):
    result = refused(Path(BINARY), elsewhere, "serve", "--port", "0", "--web-root", str(REPO / "Web"))
    assert "the migrations folder was not found" in result.stderr, result
    assert "set --migrations-path or RETRORAPID_MIGRATIONS_PATH" in result.stderr, result
    assert list(elsewhere.iterdir()) == []


def test_a_wrong_setting_is_refused_not_searched_past(tmp_path, elsewhere):
    # Even with a complete install next to the binary, a mistyped setting is reported as such.
    binary = install_prefix(tmp_path / "opt")
    wrong = tmp_path / "no-such-web"
    result = refused(binary, elsewhere, "serve", "--port", "0", RETRORAPID_WEB_ROOT=str(wrong))
    assert result.stderr.strip() == (
        f"retrorapid: the Web client folder {wrong} (set by environment variable RETRORAPID_WEB_ROOT) is not a folder "
        "that exists. Fix --web-root or RETRORAPID_WEB_ROOT to name it."), result


@pytest.mark.parametrize("arguments", [["migrate"], ["verify"], ["codes", "list"], ["migrate", "--status"],
                                       ["players", "show", "abcdefghijkl"], ["seed-players", "--count", "1", "--tokens-file", "t"],
                                       ["crash-writer", "--database-path", "x.sqlite", "--games", "1"],
                                       ["bench-storage", "--scores", "100", "--games", "1", "--queries", "10"]],
                         ids=" ".join)
def test_commands_that_need_migrations_refuse_without_them(arguments, elsewhere, no_system_install):
    result = refused(Path(BINARY), elsewhere, *arguments, RETRORAPID_DATABASE_PATH=str(elsewhere / "db.sqlite"))
    assert "the migrations folder was not found" in result.stderr, result
    assert "--migrations-path or RETRORAPID_MIGRATIONS_PATH" in result.stderr, result
    assert list(elsewhere.iterdir()) == []


def test_operator_commands_find_the_installed_migrations(tmp_path, elsewhere, no_system_install):
    binary = install_prefix(tmp_path / "opt")
    database = elsewhere / "db.sqlite"
    migrated = subprocess.run([str(binary), "migrate", "--database-path", str(database)], cwd=elsewhere,
                              env=clean_environment(), capture_output=True, text=True, timeout=30)
    assert migrated.returncode == 0 and "applied  0001_initial" in migrated.stdout, migrated
    verified = subprocess.run([str(binary), "verify", "--database-path", str(database)], cwd=elsewhere,
                              env=clean_environment(), capture_output=True, text=True, timeout=30)
    assert verified.returncode == 0, verified


def test_the_systemd_env_example_names_every_file_by_a_real_setting_in_the_installed_layout():
    # Deploy/systemd/retrorapid.env.example sets the paths explicitly; each must be a setting
    # serve knows, and point into /usr/share/retrorapid where the install steps put the files.
    example = (REPO / "Deploy" / "systemd" / "retrorapid.env.example").read_text()
    settings = dict(line.split("=", 1) for line in example.splitlines() if line.startswith("RETRORAPID_"))
    expected = {"RETRORAPID_WEB_ROOT": "web", "RETRORAPID_MIGRATIONS_PATH": "migrations",
                "RETRORAPID_FONTS_PATH": "fonts", "RETRORAPID_OPENAPI_PATH": "openapi.json"}
    help_text = subprocess.run([BINARY, "help", "serve"], capture_output=True, text=True, timeout=30, check=True).stdout
    for variable, name in expected.items():
        assert settings.get(variable) == f"{SYSTEM_SHARE}/{name}", (variable, settings)
        assert f"(env {variable})" in help_text and f"/share/retrorapid/{name}" in help_text, variable
