"""The operator's CLI follows the conventions people type without thinking (docs/OPERATIONS.md,
"The command line"): `--help` and `-h` on every command and subcommand print its usage to
stdout and exit 0 without running anything; `retrorapid help CMD` says the same; and every
command names a setting as `serve` does (`--database-path`, `--migrations-path`), the older
`--database` / `--migrations` still accepted. The commands and subcommands are read from
`retrorapid help` and each usage text, so a new one is covered without editing this file."""

import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import REPO

BINARY = str(Path(os.environ.get("RETRORAPID_BINARY", REPO / ".build/debug/retrorapid")).resolve())
MIGRATIONS = str(REPO / "Migrations")


def clean_environment(**extra: str) -> dict:
    """This process's environment without any RETRORAPID_ setting that could point elsewhere."""
    environment = {name: value for name, value in os.environ.items() if not name.startswith("RETRORAPID_")}
    environment.update(extra)
    return environment


def run(*arguments: str, cwd: Path, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([BINARY, *arguments], cwd=cwd, env=clean_environment(**extra),
                          capture_output=True, text=True, timeout=60)


def command_names() -> list[str]:
    """The commands `retrorapid help` lists, one per indented line under "commands:"."""
    listing = subprocess.run([BINARY, "help"], capture_output=True, text=True, timeout=30, check=True).stdout
    names = re.findall(r"^  ([a-z][a-z0-9-]*)  ", listing.split("commands:", 1)[1], flags=re.MULTILINE)
    assert len(names) >= 10, listing
    return names


def usage(name: str) -> str:
    return subprocess.run([BINARY, "help", name], capture_output=True, text=True, timeout=30, check=True).stdout


def subcommand_names(name: str) -> list[str]:
    """The words after `retrorapid NAME` on the usage lines that are subcommands (`codes create`)."""
    found = re.findall(rf"retrorapid {re.escape(name)} ([a-z][a-z0-9-]*)\b", usage(name))
    return sorted(set(found))


COMMANDS = command_names()
INVOCATIONS = [[name] for name in COMMANDS] + [[name, sub] for name in COMMANDS for sub in subcommand_names(name)]


def test_the_listing_has_the_commands_and_subcommands_this_file_relies_on():
    # Guards the enumeration itself: if the usage texts stopped naming subcommands this way,
    # the tests below would quietly cover less.
    assert {"serve", "migrate", "codes", "players", "orders", "games", "backup", "verify"} <= set(COMMANDS)
    assert ["codes", "create"] in INVOCATIONS and ["players", "grant-unlimited"] in INVOCATIONS
    assert ["orders", "mark-paid"] in INVOCATIONS and ["games", "show"] in INVOCATIONS


@pytest.mark.parametrize("invocation", INVOCATIONS, ids=" ".join)
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_on_every_command_and_subcommand_prints_the_usage_and_exits_0(invocation, flag, tmp_path):
    result = run(*invocation, flag, cwd=tmp_path)
    assert result.returncode == 0, result
    assert result.stdout == usage(invocation[0]), result
    assert result.stdout.startswith("usage: retrorapid " + invocation[0])
    assert result.stderr == ""
    # It ran nothing: no database, no folder, no file appeared where it was started.
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", COMMANDS)
def test_help_comes_first_even_after_other_options(name, tmp_path):
    # `--help` after a bad option still answers with the usage, not the option's error.
    result = run(name, "--no-such-option", "--help", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, usage(name)), result


def test_retrorapid_help_lists_commands_and_rejects_an_unknown_one(tmp_path):
    listing = run("help", cwd=tmp_path)
    for flag in ["--help", "-h"]:
        assert run(flag, cwd=tmp_path).stdout == listing.stdout
        assert run(flag, cwd=tmp_path).returncode == 0
    assert listing.returncode == 0 and "Run 'retrorapid help COMMAND'" in listing.stdout
    unknown = run("help", "no-such-command", cwd=tmp_path)
    assert unknown.returncode == 64 and "unknown command 'no-such-command'" in unknown.stderr, unknown
    # After `--` a word is data, not a request for help.
    assert run("migrate", "--", "--help", cwd=tmp_path).returncode == 64


def test_usage_texts_use_serves_names_and_call_the_old_ones_aliases():
    for name in COMMANDS:
        text = usage(name)
        without_alias_notes = "\n".join(line for line in text.splitlines() if "older name" not in line)
        assert not re.search(r"--(database|migrations)(?![-\w])", without_alias_notes), f"{name}:\n{text}"
        if "--database-path" in text and name != "serve":
            assert "--database is its older name" in text or "--database and --migrations are older names" in text, text


def test_old_and_new_option_names_do_the_same(tmp_path):
    old_db, new_db = tmp_path / "old.sqlite", tmp_path / "new.sqlite"
    old = run("migrate", "--database", str(old_db), "--migrations", MIGRATIONS, cwd=tmp_path)
    new = run("migrate", "--database-path", str(new_db), "--migrations-path", MIGRATIONS, cwd=tmp_path)
    assert old.returncode == new.returncode == 0, (old, new)
    assert old.stdout == new.stdout and "applied  0001_initial" in new.stdout

    for arguments in [["verify"], ["codes", "list"], ["migrate", "--status"]]:
        by_old = run(*arguments, "--database", str(old_db), "--migrations", MIGRATIONS, cwd=tmp_path)
        by_new = run(*arguments, "--database-path", str(new_db), "--migrations-path", MIGRATIONS, cwd=tmp_path)
        assert by_old.returncode == by_new.returncode == 0, (by_old, by_new)
        # The two databases were migrated a moment apart: `migrate --status` shows when each
        # migration was applied, which may fall on different seconds.
        def same_apart_from_times(output, path):
            return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "TIME", output.replace(str(path), "DB"))
        assert same_apart_from_times(by_old.stdout, old_db) == same_apart_from_times(by_new.stdout, new_db)

    created = run("codes", "create", "--random", "--unlock", "--database-path", str(new_db), cwd=tmp_path,
                  RETRORAPID_MIGRATIONS_PATH=MIGRATIONS)
    assert created.returncode == 0, created
    backup = tmp_path / "copy.sqlite"
    copied = run("backup", str(backup), "--database", str(new_db), cwd=tmp_path)
    assert copied.returncode == 0 and backup.exists(), copied


def test_the_migrate_command_reads_the_servers_settings_like_the_others(tmp_path):
    # One name for one setting, from every source: RETRORAPID_DATABASE_PATH reaches migrate too.
    database = tmp_path / "from-env.sqlite"
    result = run("migrate", cwd=tmp_path, RETRORAPID_DATABASE_PATH=str(database), RETRORAPID_MIGRATIONS_PATH=MIGRATIONS)
    assert result.returncode == 0 and database.exists(), result


def test_an_old_and_a_new_name_together_are_one_option_given_twice(tmp_path):
    result = run("verify", "--database", "a.sqlite", "--database-path", "b.sqlite", cwd=tmp_path)
    assert result.returncode == 64, result
    assert "--database-path was given more than once" in result.stderr, result
    assert list(tmp_path.iterdir()) == []


def test_serve_takes_no_old_names(tmp_path):
    # serve's names were always the long ones; nothing to keep.
    result = run("serve", "--database", "x.sqlite", cwd=tmp_path)
    assert result.returncode == 64 and "unknown option --database" in result.stderr, result


def test_a_usage_error_says_what_is_wrong_and_points_to_help_without_burying_it(tmp_path):
    # A weak code refused: the reasons, then one line naming the subcommand's --help.
    database = tmp_path / "retrorapid.sqlite3"
    assert run("migrate", "--database-path", str(database), "--migrations-path", MIGRATIONS, cwd=tmp_path).returncode == 0
    weak = run("codes", "create", "SUMMER2026", "--unlock", "--database-path", str(database), "--migrations-path", MIGRATIONS, cwd=tmp_path)
    assert weak.returncode == 64, weak
    lines = weak.stderr.strip().splitlines()
    assert lines[-1] == "Run 'retrorapid codes create --help' for how to call it.", weak.stderr
    assert "usage:" not in weak.stderr and len(lines) <= 6, weak.stderr
    assert "easy to guess" in lines[0] and "--force" in lines[0], weak.stderr
    # Nothing was created.
    listed = run("codes", "list", "--database-path", str(database), "--migrations-path", MIGRATIONS, cwd=tmp_path)
    assert listed.returncode == 0 and "SUMMER2026" not in listed.stdout, listed
    # A command without subcommands points to its own --help.
    bad = run("migrate", "--no-such-option", cwd=tmp_path)
    assert bad.returncode == 64 and bad.stderr.strip().splitlines()[-1] == "Run 'retrorapid migrate --help' for how to call it.", bad


def test_an_env_file_of_any_kind_is_read_to_its_end_and_one_that_cannot_be_read_says_why(tmp_path):
    database = tmp_path / "retrorapid.sqlite3"
    migrate = ("migrate", "--database-path", str(database), "--migrations-path", MIGRATIONS)
    # /dev/null is an empty env file, as root or not.
    empty = run(*migrate, cwd=tmp_path, RETRORAPID_ENV_FILE="/dev/null")
    assert empty.returncode == 0, empty
    # A pipe (what a shell's <(…) names) is read to its end: the setting in it is used.
    pipe = tmp_path / "settings.pipe"
    os.mkfifo(pipe)
    writer = subprocess.Popen(["sh", "-c", f"printf 'RETRORAPID_DATABASE_PATH={tmp_path / 'from-pipe.sqlite3'}\\n' > '{pipe}'"])
    from_pipe = run("migrate", "--migrations-path", MIGRATIONS, cwd=tmp_path, RETRORAPID_ENV_FILE=str(pipe))
    writer.wait(timeout=10)
    assert from_pipe.returncode == 0 and (tmp_path / "from-pipe.sqlite3").exists(), from_pipe
    # Missing, a folder, not text: the system's reason (or what it is not), exit 64.
    (tmp_path / "binary.env").write_bytes(b"RETRORAPID_PORT=\xff\xfe\n")
    for path, reason in [(tmp_path / "missing.env", "No such file or directory"), (tmp_path, "Is a directory"),
                         (tmp_path / "binary.env", "is not UTF-8 text")]:
        refused = run(*migrate, cwd=tmp_path, RETRORAPID_ENV_FILE=str(path))
        assert refused.returncode == 64, refused
        assert f"RETRORAPID_ENV_FILE names '{path}', which" in refused.stderr and reason in refused.stderr, refused.stderr
        assert "permission" not in refused.stderr.lower(), refused.stderr
