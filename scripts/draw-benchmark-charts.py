#!/usr/bin/env python3
"""Draws docs/BENCHMARKS.md's two charts as SVG, from the benchmarks' own output.

    scripts/draw-benchmark-charts.py                  both charts from docs/figures/*.csv (`make charts`)
    scripts/draw-benchmark-charts.py --capacity .build/bench/capacity/runs.jsonl --out /tmp/charts
    scripts/draw-benchmark-charts.py --cluster run-2000.jsonl run-5000.jsonl --out /tmp/charts

Charts (file names in --out, default docs/figures):

  capacity-sweep.svg  p99 input→result latency and server CPU against the games running, one
                      line per target (default: RetroRapid and the direct C broadcaster).
  cluster-cost.svg    CPU per running game, in µs of a core a second, split into the nodes,
                      nginx and PostgreSQL, one stacked bar per shape and size.

What --capacity reads (one or more files, each recognised by its content):

  - a CSV with a header naming at least target, games_asked, games_running, cpu_percent,
    p99_ms and jitter_p99_ms (docs/figures/capacity-sweep.csv; other columns are ignored);
  - scripts/bench-capacity.sh's .build/bench/capacity/runs.jsonl: one `retrorapid loadtest
    --json` line a run, with "target" and "kind" added. The medians of each target and size
    are taken as scripts/bench-capacity-summary.py takes them; idle runs are left out;
  - that summary's Markdown table (.build/bench/capacity/results.md, or a table copied from
    docs/BENCHMARKS.md): the columns target, load, games, server CPU, input→result
    p50 / p95 / p99 / max and jitter p99, found by their headers.

What --cluster reads:

  - a CSV with a header naming games, shape, nodes_cpu_percent, nginx_cpu_percent and
    postgres_cpu_percent (docs/figures/cluster-cost.csv; p99_ms and jitter_p99_ms are kept
    but not drawn; an empty cell is a process the shape does not have);
  - scripts/bench-cluster.sh's .build/bench/cluster/runs.jsonl: one line a run, the games
    read from its report's "connections". The script empties its folder on every start, so
    keep each size's file (e.g. copy it to run-2000.jsonl) and pass them all.

In a CSV, lines starting with # are comments; the first one is printed under the chart's title
(say there when and where the figures were measured).

To put a new run's figures in the docs: run the benchmark, then

    scripts/draw-benchmark-charts.py --capacity .build/bench/capacity/runs.jsonl --write-csv

which writes docs/figures/capacity-sweep.csv (the medians the chart shows) beside the SVG, and
the same with --cluster FILES for cluster-cost.csv. Add a comment line with the date and the
machine to the CSV, then put the same numbers in BENCHMARKS.md's table under the chart and run
`make charts`. Python 3's standard library only; the SVG is written by hand, and the same input
always gives the same bytes.
"""
import argparse
import csv
import io
import json
import math
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from xml.sax.saxutils import escape

REPO = Path(__file__).resolve().parents[1]
FIGURES = REPO / "docs" / "figures"
FONT = "DejaVu Sans, Verdana, Arial, sans-serif"

# How each capacity target is drawn: a name, a colour, a dash pattern and a marker, so two
# lines differ in greyscale too.
TARGETS = {
    "retrorapid": ("RetroRapid", "#1b4f9c", None, "circle"),
    "broadcaster-direct": ("direct C broadcaster", "#c85200", "7 4", "square"),
    "broadcaster": ("queued C broadcaster", "#6a3d9a", "2 3", "triangle"),
    "baseline": ("baseline build", "#555555", "10 3 2 3", "diamond"),
}
# The cluster's cost parts, bottom to top: a name, a colour and a fill pattern.
PARTS = [
    ("nodes", "node", "#1b4f9c", None),
    ("nginx", "nginx (the proxy)", "#e08a2c", "stripes"),
    ("postgres", "PostgreSQL (storage)", "#2f8f5b", "dots"),
]
SHAPES = {"direct": "direct", "nginx-one": "nginx, 1 node", "nginx-two": "nginx, 2 nodes", "straight-two": "straight, 2 nodes"}


# ---------------------------------------------------------------------------------------------
# Reading


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def number(text):
    """A figure as the tables print it ("12,500", "90.4 (32.6 / 56.3)", "–"), or None."""
    match = re.search(r"-?\d[\d,]*(?:\.\d+)?", text or "")
    return float(match.group(0).replace(",", "")) if match else None


def read_text(path):
    text = Path(path).read_text(encoding="utf-8")
    comments = [line[1:].strip() for line in text.splitlines() if line.startswith("#")]
    return text, (comments[0] if comments else "")


def csv_rows(text):
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    return list(csv.DictReader(io.StringIO("\n".join(lines))))


def json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.strip().startswith("{")]


def markdown_rows(text):
    """The rows of the first Markdown table whose header names a target and a load."""
    rows, header = [], None
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")] if line.lstrip().startswith("|") else None
        if cells is None:
            if header and rows:
                break
            header = None
            continue
        if header is None:
            if cells and cells[0] == "target" and "load" in cells:
                header = cells
            continue
        if set(line.replace("|", "").strip()) <= set("-: "):
            continue
        rows.append(dict(zip(header, cells)))
    return rows


def column(row, prefix):
    for key, value in row.items():
        if key.startswith(prefix):
            return value
    return None


def read_capacity(paths):
    """{target: [(games_asked, games_running, cpu %, p99 ms, jitter p99 ms)…]} and a caption."""
    points, captions = defaultdict(list), []
    for path in paths:
        text, caption = read_text(path)
        captions.append(caption or f"from {Path(path).name}")
        if text.lstrip().startswith("{"):
            groups = defaultdict(list)
            for run in json_lines(text):
                if run.get("kind", "games") == "games":
                    groups[(run["target"], run["connections"])].append(run)
            for (target, asked), runs in groups.items():
                points[target].append((
                    asked, median([r.get("gamesRunning") for r in runs]),
                    (median([r.get("serverCoreShare") for r in runs]) or 0) * 100,
                    median([r["latencyMs"]["p99"] for r in runs]),
                    median([r["jitterMs"]["p99"] for r in runs])))
        elif text.lstrip().startswith("|") or "\n|" in text:
            for row in markdown_rows(text):
                if "idle" in row["load"]:
                    continue
                latency = column(row, "input→result").split("/")
                points[row["target"]].append((
                    number(row["load"]), number(row["games"]), number(column(row, "server CPU")),
                    number(latency[2]), number(column(row, "jitter p99"))))
        else:
            for row in csv_rows(text):
                if not number(row["games_running"]):
                    continue
                points[row["target"]].append(tuple(number(row[k]) for k in (
                    "games_asked", "games_running", "cpu_percent", "p99_ms", "jitter_p99_ms")))
    for target in points:
        points[target].sort(key=lambda p: p[1])
    return dict(points), "; ".join(c for c in captions if c)


def read_cluster(paths):
    """[(games, shape, {part: cpu % or None}, p99 ms, jitter ms)…] and a caption."""
    bars, captions = [], []
    for path in paths:
        text, caption = read_text(path)
        captions.append(caption or f"from {Path(path).name}")
        if text.lstrip().startswith("{"):
            groups = defaultdict(list)
            for run in json_lines(text):
                groups[(run["report"]["connections"], run["shape"])].append(run)
            for (games, shape), runs in groups.items():
                parts = {part: median([r.get(f"{part}_cpu_percent") for r in runs]) for part, *_ in PARTS}
                if shape == "direct":
                    parts["nginx"] = None  # no proxy in this shape; the script reads 0 for it
                bars.append((games, shape, parts,
                             median([r["report"]["latencyMs"]["p99"] for r in runs]),
                             median([r["report"]["jitterMs"]["p99"] for r in runs])))
        else:
            for row in csv_rows(text):
                parts = {part: number(row[f"{part}_cpu_percent"]) for part, *_ in PARTS}
                bars.append((int(number(row["games"])), row["shape"], parts,
                             number(row.get("p99_ms")), number(row.get("jitter_p99_ms"))))
    order = list(SHAPES)
    bars.sort(key=lambda b: (b[0], order.index(b[1]) if b[1] in order else len(order), b[1]))
    return bars, "; ".join(c for c in captions if c)


def micro_seconds(percent, games):
    """% of a core over `games` running games, as µs of a core per game per second."""
    return (percent or 0) * 10_000 / games


def write_capacity_csv(points, path, caption):
    with open(path, "w", newline="", encoding="utf-8") as out:
        if caption:
            out.write(f"# {caption}\n")
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["target", "games_asked", "games_running", "cpu_percent", "p99_ms", "jitter_p99_ms"])
        for target, rows in points.items():
            for asked, running, cpu, p99, jitter in rows:
                writer.writerow([target, f"{asked:.0f}", f"{running:.0f}", f"{cpu:.1f}", f"{p99:.2f}", f"{jitter:.2f}"])


def write_cluster_csv(bars, path, caption):
    with open(path, "w", newline="", encoding="utf-8") as out:
        if caption:
            out.write(f"# {caption}\n")
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["games", "shape", "nodes_cpu_percent", "nginx_cpu_percent", "postgres_cpu_percent", "p99_ms", "jitter_p99_ms"])
        for games, shape, parts, p99, jitter in bars:
            cell = lambda v, d: "" if v is None else f"{v:.{d}f}"
            writer.writerow([games, shape, cell(parts["nodes"], 1), cell(parts["nginx"], 1),
                             cell(parts["postgres"], 1), cell(p99, 2), cell(jitter, 2)])


# ---------------------------------------------------------------------------------------------
# Drawing


def nice_ceiling(value, ticks=5):
    """A round axis end at or above `value`, and the step between its ticks."""
    if value <= 0:
        return 1, 0.2
    raw = value / ticks
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    return step * math.ceil(value / step - 1e-9), step


def grouped(value, digits=0):
    return f"{value:,.{digits}f}"


class Svg:
    def __init__(self, width, height, title, desc):
        self.width, self.height = width, height
        self.parts = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-labelledby="chart-title chart-desc" '
            f'font-family="{FONT}" font-size="12">',
            f'<title id="chart-title">{escape(title)}</title>',
            f'<desc id="chart-desc">{escape(desc)}</desc>',
            f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        ]

    def add(self, element):
        self.parts.append(element)

    def text(self, x, y, content, size=12, anchor="start", weight="normal", fill="#222222", extra=""):
        self.add(f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
                 f'font-weight="{weight}" fill="{fill}"{extra}>{escape(content)}</text>')

    def line(self, x1, y1, x2, y2, stroke="#222222", width=1, dash=None):
        dashes = f' stroke-dasharray="{dash}"' if dash else ""
        self.add(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{stroke}" '
                 f'stroke-width="{width}"{dashes}/>')

    def render(self):
        return "\n".join(self.parts + ["</svg>"]) + "\n"


def marker(svg, shape, x, y, colour, series, kind="point"):
    attributes = f'class="{kind}" data-series="{series}"'
    if shape == "circle":
        svg.add(f'<circle {attributes} cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{colour}" stroke="{colour}" stroke-width="1.5"/>')
    elif shape == "square":
        svg.add(f'<rect {attributes} x="{x - 4.5:.1f}" y="{y - 4.5:.1f}" width="9" height="9" fill="#ffffff" stroke="{colour}" stroke-width="2"/>')
    elif shape == "triangle":
        svg.add(f'<path {attributes} d="M{x:.1f},{y - 6:.1f} L{x + 5.5:.1f},{y + 4:.1f} L{x - 5.5:.1f},{y + 4:.1f} Z" fill="{colour}" stroke="{colour}" stroke-width="1.5"/>')
    else:
        svg.add(f'<path {attributes} d="M{x:.1f},{y - 6:.1f} L{x + 6:.1f},{y:.1f} L{x:.1f},{y + 6:.1f} L{x - 6:.1f},{y:.1f} Z" fill="#ffffff" stroke="{colour}" stroke-width="2"/>')


def axes(svg, left, top, width, height, x_end, x_step, y_end, y_step, x_label, y_label, y_digits=0):
    """Grid, ticks and labels of one panel; returns functions from data to page coordinates."""
    to_x = lambda v: left + width * v / x_end
    to_y = lambda v: top + height - height * v / y_end
    steps = round(y_end / y_step)
    for i in range(steps + 1):
        value = i * y_step
        y = to_y(value)
        svg.line(left, y, left + width, y, stroke="#dddddd")
        svg.line(left - 5, y, left, y)
        svg.text(left - 8, y + 4, grouped(value, y_digits), anchor="end")
    for i in range(round(x_end / x_step) + 1):
        value = i * x_step
        x = to_x(value)
        svg.line(x, top + height, x, top + height + 5)
        svg.text(x, top + height + 19, grouped(value), anchor="middle")
    svg.line(left, top, left, top + height)
    svg.line(left, top + height, left + width, top + height)
    svg.text(left + width / 2, top + height + 40, x_label, anchor="middle")
    svg.text(left - 48, top + height / 2, y_label, anchor="middle",
             extra=f' transform="rotate(-90 {left - 48:.1f} {top + height / 2:.1f})"')
    return to_x, to_y


def capacity_chart(points, caption, targets):
    shown = [t for t in targets if t in points]
    if not shown:
        raise SystemExit(f"draw-benchmark-charts: none of the targets {', '.join(targets)} in the capacity data "
                         f"(found: {', '.join(sorted(points)) or 'nothing'})")
    names = {t: TARGETS.get(t, (t, "#000000", None, "circle"))[0] for t in shown}
    words = []
    for t in shown:
        words.append(f"{names[t]}: " + "; ".join(
            f"{grouped(running)} games running ({grouped(asked)} asked for): p99 input→result "
            f"{p99:.2f} ms, server CPU {cpu:.1f} % of a core" for asked, running, cpu, p99, _ in points[t]))
    title = "p99 input→result latency and server CPU against running games, " + " beside ".join(names[t] for t in shown)
    desc = (f"Two line charts sharing one x axis, running games at Fast. Left: p99 input→result latency in "
            f"milliseconds, with the 10 ms goal as a dashed line. Right: server CPU in % of one core. "
            f"{'. '.join(words)}. {caption}".strip())
    svg = Svg(920, 440, title, desc)
    svg.text(30, 28, "Capacity on one core: " + " beside ".join(names[t] for t in shown), size=16, weight="bold")
    if caption:
        svg.text(30, 48, caption, size=11, fill="#555555")

    # Legend: a line sample with its marker for each target.
    x = 30
    for t in shown:
        name, colour, dash, shape = TARGETS.get(t, (t, "#000000", None, "circle"))
        svg.line(x, 72, x + 36, 72, stroke=colour, width=2.5, dash=dash)
        marker(svg, shape, x + 18, 72, colour, t, kind="legend-point")
        svg.text(x + 44, 76, name)
        x += 60 + 7.2 * len(name)

    all_points = [p for t in shown for p in points[t]]
    x_end, x_step = nice_ceiling(max(p[1] for p in all_points), 4)
    panels = [
        (3, "p99 input→result, ms", nice_ceiling(max(max(p[3] for p in all_points), 10) * 1.08), (10, "10 ms goal"), 2),
        (2, "server CPU, % of one core", (100, 20) if max(p[2] for p in all_points) <= 100 else nice_ceiling(max(p[2] for p in all_points)),
         (100, "one core"), 1),
    ]
    label_points = max(len(points[t]) for t in shown) <= 6
    for index, (field, label, (y_end, y_step), (reference, reference_label), digits) in enumerate(panels):
        left, top, width, height = 100 + index * 440, 104, 330, 250
        svg.text(left, top - 10, label, size=13, weight="bold")
        to_x, to_y = axes(svg, left, top, width, height, x_end, x_step, y_end, y_step, "running games at Fast", label)
        if reference <= y_end:
            svg.line(left, to_y(reference), left + width, to_y(reference), stroke="#999999", width=1.2, dash="3 3")
            svg.text(left + width - 4, to_y(reference) - 5, reference_label, size=11, anchor="end", fill="#666666")
        for series_index, t in enumerate(shown):
            name, colour, dash, shape = TARGETS.get(t, (t, "#000000", None, "circle"))
            coordinates = [(to_x(p[1]), to_y(p[field])) for p in points[t]]
            dashes = f' stroke-dasharray="{dash}"' if dash else ""
            svg.add(f'<polyline class="series" data-series="{t}" fill="none" stroke="{colour}" stroke-width="2.5"{dashes} '
                    f'points="{" ".join(f"{x:.1f},{y:.1f}" for x, y in coordinates)}"/>')
            for p, (x, y) in zip(points[t], coordinates):
                marker(svg, shape, x, y, colour, t)
                if label_points:
                    # The first line's values above and to the left of its points, the others'
                    # below and to the right, so two lines' labels do not meet.
                    if series_index == 0:
                        svg.text(x - 9, y - 9, f"{p[field]:.1f}", size=11, anchor="end", fill=colour)
                    else:
                        svg.text(x + 9, y + 17, f"{p[field]:.1f}", size=11, anchor="start", fill=colour)
    return svg.render()


def pattern_defs():
    return ('<defs>'
            '<pattern id="fill-stripes" patternUnits="userSpaceOnUse" width="7" height="7" patternTransform="rotate(45)">'
            '<rect width="7" height="7" fill="#e08a2c"/><line x1="0" y1="0" x2="0" y2="7" stroke="#ffffff" stroke-width="2.5"/></pattern>'
            '<pattern id="fill-dots" patternUnits="userSpaceOnUse" width="6" height="6">'
            '<rect width="6" height="6" fill="#2f8f5b"/><circle cx="3" cy="3" r="1.4" fill="#ffffff"/></pattern>'
            '</defs>')


def part_fill(colour, pattern):
    return f"url(#fill-{pattern})" if pattern else colour


def cluster_chart(bars, caption):
    if not bars:
        raise SystemExit("draw-benchmark-charts: no cluster runs in the input")
    costs = [(games, shape, {part: micro_seconds(parts[part], games) for part, *_ in PARTS}) for games, shape, parts, _, _ in bars]
    words = "; ".join(
        f"{grouped(games)} games, {SHAPES.get(shape, shape)}: node {c['nodes']:.1f}, nginx {c['nginx']:.1f}, "
        f"PostgreSQL {c['postgres']:.1f}, all {sum(c.values()):.1f} µs" for games, shape, c in costs)
    title = "The cluster's CPU per running game: node, nginx (the proxy) and PostgreSQL (storage)"
    desc = (f"Stacked bars, one per shape and size, in microseconds of one core per running game per second: "
            f"the node at the bottom, nginx striped above it, PostgreSQL dotted on top. {words}. {caption}".strip())
    width = 120 + 110 * len(costs) + 60 * len({c[0] for c in costs})
    svg = Svg(max(width, 760), 470, title, desc)
    svg.add(pattern_defs())
    svg.text(30, 28, "The cluster's cost per running game", size=16, weight="bold")
    if caption:
        svg.text(30, 48, caption, size=11, fill="#555555")
    x = 30
    for part, name, colour, pattern in PARTS:
        svg.add(f'<rect class="legend" x="{x}" y="62" width="18" height="14" fill="{part_fill(colour, pattern)}" stroke="#222222" stroke-width="0.8"/>')
        svg.text(x + 24, 74, name)
        x += 46 + 7.2 * len(name)

    left, top, height = 100, 110, 250
    plot_width = svg.width - left - 30
    y_end, y_step = nice_ceiling(max(sum(c[2].values()) for c in costs) * 1.1)
    to_y = lambda v: top + height - height * v / y_end
    for i in range(round(y_end / y_step) + 1):
        value = i * y_step
        svg.line(left, to_y(value), left + plot_width, to_y(value), stroke="#dddddd")
        svg.line(left - 5, to_y(value), left, to_y(value))
        svg.text(left - 8, to_y(value) + 4, grouped(value), anchor="end")
    svg.line(left, top, left, top + height)
    svg.line(left, top + height, left + plot_width, top + height)
    svg.text(left - 52, top + height / 2, "µs of a core per game per second", anchor="middle",
             extra=f' transform="rotate(-90 {left - 52:.1f} {top + height / 2:.1f})"')

    sizes = sorted({c[0] for c in costs})
    slot = plot_width / (len(costs) + len(sizes))  # a gap of one bar between sizes
    position = 0.5
    for games in sizes:
        group = [c for c in costs if c[0] == games]
        start = left + position * slot
        for _, shape, c in group:
            bar_x, bar_w = left + position * slot + slot * 0.15, slot * 0.7
            base = 0.0
            for part, name, colour, pattern in PARTS:
                value = c[part]
                if value > 0:
                    y0, y1 = to_y(base), to_y(base + value)
                    svg.add(f'<rect class="segment" data-part="{part}" data-games="{games}" data-shape="{shape}" '
                            f'x="{bar_x:.1f}" y="{y1:.1f}" width="{bar_w:.1f}" height="{y0 - y1:.1f}" '
                            f'fill="{part_fill(colour, pattern)}" stroke="#222222" stroke-width="0.8"/>')
                    if y0 - y1 >= 16:
                        svg.text(bar_x + bar_w / 2, (y0 + y1) / 2 + 4, f"{value:.1f}", size=11, anchor="middle",
                                 fill="#ffffff", weight="bold",
                                 extra=' stroke="#222222" stroke-width="2.4" paint-order="stroke"')
                    base += value
            svg.add(f'<g class="bar" data-games="{games}" data-shape="{shape}"/>')
            svg.text(bar_x + bar_w / 2, to_y(base) - 6, f"{base:.1f}", size=12, anchor="middle", weight="bold")
            svg.text(bar_x + bar_w / 2, top + height + 18, SHAPES.get(shape, shape), size=11, anchor="middle")
            position += 1
        svg.text((start + left + position * slot) / 2, top + height + 40, f"{grouped(games)} games at Fast",
                 size=13, anchor="middle", weight="bold")
        position += 1
    return svg.render()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=None)
    parser.add_argument("--capacity", nargs="+", default=[str(FIGURES / "capacity-sweep.csv")], metavar="FILE",
                        help="capacity-sweep.csv, bench-capacity's runs.jsonl or its results.md")
    parser.add_argument("--cluster", nargs="+", default=[str(FIGURES / "cluster-cost.csv")], metavar="FILE",
                        help="cluster-cost.csv or bench-cluster's runs.jsonl (one per size)")
    parser.add_argument("--targets", nargs="+", default=["retrorapid", "broadcaster-direct"],
                        help="the capacity targets drawn, in legend order")
    parser.add_argument("--out", default=str(FIGURES), help="where the SVGs (and CSVs) go")
    parser.add_argument("--write-csv", action="store_true",
                        help="also write the figures drawn as capacity-sweep.csv and cluster-cost.csv in --out")
    args = parser.parse_args(argv)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    points, capacity_caption = read_capacity(args.capacity)
    bars, cluster_caption = read_cluster(args.cluster)
    (out / "capacity-sweep.svg").write_text(capacity_chart(points, capacity_caption, args.targets), encoding="utf-8")
    (out / "cluster-cost.svg").write_text(cluster_chart(bars, cluster_caption), encoding="utf-8")
    written = ["capacity-sweep.svg", "cluster-cost.svg"]
    if args.write_csv:
        capacity_csv, cluster_csv = out / "capacity-sweep.csv", out / "cluster-cost.csv"
        # A CSV read is never overwritten by itself (its comment line would be lost to no gain).
        if capacity_csv.resolve() not in {Path(p).resolve() for p in args.capacity}:
            write_capacity_csv({t: points[t] for t in args.targets if t in points}, capacity_csv, capacity_caption)
            written.append(capacity_csv.name)
        if cluster_csv.resolve() not in {Path(p).resolve() for p in args.cluster}:
            write_cluster_csv(bars, cluster_csv, cluster_caption)
            written.append(cluster_csv.name)
    print(f"draw-benchmark-charts: wrote {', '.join(written)} in {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
