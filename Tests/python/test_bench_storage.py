"""`retrorapid bench-storage` runs to the end on both backends at a tiny size: every figure the
benchmark reports (docs/BENCHMARKS.md, "Storage" and "Checkpoints of running games") is printed, and the
PostgreSQL run drops the database it made for itself. Figures are not checked: speed is for
the benchmark, never for a test."""

import re
import subprocess

from test_cli_conventions import BINARY, MIGRATIONS, clean_environment

SMALL = ["--scores", "300", "--games", "20", "--queries", "10", "--running-games", "40"]
FIGURES = ["record", "fill", "top20_first_page", "around_me_5", "top20_page_at_random_depth", "record_on_full_board",
           "checkpoint", "checkpoint_compacting_slice", "compaction_part", "recover_after_crash"]


def bench(tmp_path, *extra):
    result = subprocess.run([BINARY, "bench-storage", *SMALL, "--migrations-path", MIGRATIONS, *extra],
                            cwd=tmp_path, env=clean_environment(), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def figures(output):
    return {line.split()[0] for line in output.splitlines() if line.strip()}


def test_the_sqlite_benchmark_reports_every_figure_and_leaves_nothing(tmp_path):
    output = bench(tmp_path, "--dir", str(tmp_path))
    assert set(FIGURES) <= figures(output), output
    assert "recover_after_crash games=40 " in output
    assert list(tmp_path.iterdir()) == []


def test_the_postgresql_benchmark_reports_every_figure_and_drops_its_database(tmp_path, postgres_server):
    before = set(postgres_server.psql("SELECT datname FROM pg_database").split())
    output = bench(tmp_path, "--postgres-url", postgres_server.admin_url)
    assert set(FIGURES) <= figures(output), output
    assert re.search(r"^record synchronous_commit=on games=20 ", output, re.M), output
    # What a plain checkpoint round adds to the server's write-ahead log, a count and not a time.
    assert re.search(r"^checkpoint running_games=40 .* wal_bytes_median=[1-9][0-9]*$", output, re.M), output
    assert "recover_after_crash games=40 " in output
    made = re.search(r"database=(retrorapid_bench_\w+)", output).group(1)
    after = set(postgres_server.psql("SELECT datname FROM pg_database").split())
    assert made not in after and after == before
