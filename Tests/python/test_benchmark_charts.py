"""scripts/draw-benchmark-charts.py draws docs/BENCHMARKS.md's two charts from the committed
CSVs and from the benchmarks' own output (docs/BENCHMARKS.md, "Capacity on one core" and
"Scale out"). No server: only that each SVG parses, says what it shows to a screen reader, has
a mark for every figure, and that the CSVs hold the numbers BENCHMARKS.md prints."""

import csv
import json
import subprocess
import sys
import xml.etree.ElementTree as ET

from conftest import REPO

SCRIPT = REPO / "scripts" / "draw-benchmark-charts.py"
FIGURES = REPO / "docs" / "figures"
SVG = "{http://www.w3.org/2000/svg}"


def draw(*arguments, out):
    result = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out), *arguments],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return out


def elements(path, css_class):
    return [e for e in ET.parse(path).iter() if e.get("class") == css_class]


def rows(path):
    return list(csv.DictReader(line for line in path.read_text().splitlines() if not line.startswith("#")))


def test_the_committed_csvs_draw_both_charts_with_a_title_and_every_figure(tmp_path):
    draw(out=tmp_path)
    for name in ("capacity-sweep.svg", "cluster-cost.svg"):
        root = ET.parse(tmp_path / name).getroot()
        assert root.get("role") == "img"
        assert root.find(f"{SVG}title").text.strip() and root.find(f"{SVG}desc").text.strip()
        # Drawn from the same CSVs, the committed SVG is the same bytes: `make charts` was run.
        assert (tmp_path / name).read_text() == (FIGURES / name).read_text(), name

    capacity = rows(FIGURES / "capacity-sweep.csv")
    # One marker a figure in each of the two panels, one line per target and panel.
    assert len(elements(tmp_path / "capacity-sweep.svg", "point")) == 2 * len(capacity)
    assert len(elements(tmp_path / "capacity-sweep.svg", "series")) == 2 * len({r["target"] for r in capacity})

    cluster = rows(FIGURES / "cluster-cost.csv")
    segments = elements(tmp_path / "cluster-cost.svg", "segment")
    assert len(elements(tmp_path / "cluster-cost.svg", "bar")) == len(cluster)
    # A part with no share (empty: the shape has no such process; 0.0: it had nothing to do) draws nothing.
    assert len(segments) == sum(1 for r in cluster for part in ("nodes", "nginx", "postgres")
                                if r[f"{part}_cpu_percent"] and float(r[f"{part}_cpu_percent"]) > 0)


def test_the_csvs_hold_the_numbers_in_benchmarks_md(tmp_path):
    text = (REPO / "docs" / "BENCHMARKS.md").read_text()
    # The capacity CSV is what the summary table of today's sweep says, read back from it.
    draw("--capacity", str(REPO / "docs" / "BENCHMARKS.md"), "--write-csv", out=tmp_path)
    assert rows(tmp_path / "capacity-sweep.csv") == rows(FIGURES / "capacity-sweep.csv")
    # The cluster's chart table: the CSV's shares over the games, in µs a game a second.
    for r in rows(FIGURES / "cluster-cost.csv"):
        games = int(r["games"])
        us = [float(r[f"{p}_cpu_percent"]) * 10_000 / games if r[f"{p}_cpu_percent"] else None
              for p in ("nodes", "nginx", "postgres")]
        cells = [f"{games:,}", r["shape"]] + ["–" if v is None else f"{v:.1f}" for v in us] + [f"{sum(v or 0 for v in us):.1f}"]
        assert "| " + " | ".join(cells) + " |" in text, cells


def test_the_benchmarks_own_runs_are_read_as_medians(tmp_path):
    capacity_runs = tmp_path / "capacity-runs.jsonl"
    lines = [{"target": "retrorapid", "kind": "idle", "connections": 100, "gamesRunning": 0, "serverCoreShare": 0.004,
              "latencyMs": {"p99": 0}, "jitterMs": {"p99": 0}}]
    for target, share in (("retrorapid", 0.5), ("broadcaster-direct", 0.3)):
        for n in (5000, 10000):
            for run, p99 in enumerate((3.0, 1.0, 2.0)):
                lines.append({"target": target, "kind": "games", "connections": n, "gamesRunning": n - run,
                              "serverCoreShare": share * n / 5000 + run / 100, "latencyMs": {"p99": p99 * n / 5000},
                              "jitterMs": {"p99": p99 + 1}})
    capacity_runs.write_text("\n".join(json.dumps(line) for line in lines) + "\n")

    cluster_runs = tmp_path / "cluster-runs.jsonl"
    cluster_runs.write_text("\n".join(json.dumps(
        {"shape": shape, "nodes_cpu_percent": 10.0 + run, "nginx_cpu_percent": 0.0 if shape == "direct" else 8.0,
         "postgres_cpu_percent": 3.0, "report": {"connections": 2000, "latencyMs": {"p99": 1.5}, "jitterMs": {"p99": 2.5}}})
        for run in range(3) for shape in ("direct", "nginx-one", "nginx-two")) + "\n")

    draw("--capacity", str(capacity_runs), "--cluster", str(cluster_runs), "--write-csv", out=tmp_path)
    capacity = rows(tmp_path / "capacity-sweep.csv")
    assert [(r["target"], r["games_asked"], r["games_running"], r["cpu_percent"], r["p99_ms"], r["jitter_p99_ms"])
            for r in capacity] == [
        ("retrorapid", "5000", "4999", "51.0", "2.00", "3.00"),
        ("retrorapid", "10000", "9999", "101.0", "4.00", "3.00"),
        ("broadcaster-direct", "5000", "4999", "31.0", "2.00", "3.00"),
        ("broadcaster-direct", "10000", "9999", "61.0", "4.00", "3.00"),
    ]
    cluster = rows(tmp_path / "cluster-cost.csv")
    assert [(r["shape"], r["nodes_cpu_percent"], r["nginx_cpu_percent"]) for r in cluster] == [
        ("direct", "11.0", ""), ("nginx-one", "11.0", "8.0"), ("nginx-two", "11.0", "8.0")]
    assert len(elements(tmp_path / "capacity-sweep.svg", "point")) == 8
