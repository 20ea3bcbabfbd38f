#!/usr/bin/env python3
"""The figures of scripts/bench-cost.sh, from callgrind's files and the load generator's reports.

  bench-cost-summary.py run TARGET KIND REP REPORT.json CALLGRIND   one JSON line for the run
  bench-cost-summary.py summary RUNS.jsonl                          the Markdown in BENCHMARKS.md
  bench-cost-summary.py figures RUNS.jsonl                          the medians, as one JSON object

A run's line holds what the load generator counted (step frames, moves answered) and what
callgrind counted in the server process: instructions (Ir), calls into the C allocator
(malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign: allocations), and the
self cost of every function, grouped as docs/BENCHMARKS.md ("Cost per frame") lists them.
The summary solves, per repetition, calm − base = F·f + M·m and wander − base = F'·f + M'·m
for f (per step frame) and m (per move answered), for instructions and for allocations, and
breaks the calm run's extra cost (calm − base) per step frame down by group and function.
"""
import json
import re
import statistics
import subprocess
import sys
from collections import defaultdict

ALLOCATORS = {"malloc", "calloc", "realloc", "posix_memalign", "aligned_alloc", "memalign", "valloc"}
MALLOC_FREE = ALLOCATORS | {
    "free", "cfree", "_int_malloc", "_int_free", "_int_realloc", "_int_memalign", "malloc_consolidate",
    "unlink_chunk", "tcache_init", "__libc_malloc", "__libc_free", "__libc_calloc", "__libc_realloc",
    "_mid_memalign", "sysmalloc", "systrim", "__malloc_arena_thread_freeres", "arena_get2", "tcache_get",
    "tcache_put", "__default_morecore", "__morecore", "malloc_trim", "mtrim",
}
RETAIN_RELEASE = re.compile(r"^swift_(unknownObject|bridgeObject|nonatomic_)?(retain|release|tryRetain)(_n)?$|"
                            r"^swift_(isUniquelyReferenced\w*|retain\w*|release\w*)$|^_swift_(retain|release)_?\w*$")
EXCLUSIVITY = re.compile(r"^swift_(beginAccess|endAccess)$|^_swift_\w*[Aa]ccess\w*$|AccessSet|SwiftTLSContext")
# Group order in the tables (the profile: our code, runtime, malloc/free, SQLite, lws, libev).
GROUPS = [
    "our code (the binary, with the standard library code compiled into it)",
    "Swift runtime: retain/release",
    "Swift runtime: exclusivity checks",
    "Swift runtime: other (allocObject, metadata, casts)",
    "Swift standard library (libswiftCore, not inlined)",
    "Foundation, Dispatch",
    "malloc/free (glibc)",
    "libc: other (memcpy, strlen, system call wrappers, locks)",
    "SQLite",
    "libwebsockets",
    "libev",
    "other (dynamic linker, …)",
]


def group_of(obj, name, program=None):
    """The group of a function's self cost; `program` is the server's own file name (a build
    copied under another name, `--binary`, is still our code)."""
    base = obj.rsplit("/", 1)[-1]
    if name in MALLOC_FREE and base.startswith("libc"):
        return GROUPS[6]
    if "libswiftCore" in base or name.startswith("swift_") or name.startswith("_swift_"):
        if RETAIN_RELEASE.search(name):
            return GROUPS[1]
        if EXCLUSIVITY.search(name):
            return GROUPS[2]
        if name.startswith("swift_") or name.startswith("_swift_"):
            return GROUPS[3]
        return GROUPS[4]
    if "libsqlite3" in base:
        return GROUPS[8]
    if "libwebsockets" in base:
        return GROUPS[9]
    if base.startswith("libev."):
        return GROUPS[10]
    if "Foundation" in base or "dispatch" in base.lower() or "libswift" in base:
        return GROUPS[5]
    if base.startswith("libc.") or base.startswith("libc-") or base.startswith("libpthread") or base.startswith("libm."):
        return GROUPS[7]
    if base in ("retrorapid", "broadcaster") or base == program:
        return GROUPS[0]
    return GROUPS[11]


def parse_callgrind(path):
    """Self instructions per (object, function), calls into the allocator, total Ir, and the
    file name of the program that ran (callgrind's `cmd:` line)."""
    names = {"ob": {}, "fn": {}}
    self_cost = defaultdict(int)
    allocations = 0
    total = None
    ob = cob = ""
    fn = None
    pending_call = None  # (callee name, count): the next cost line is inclusive, not self
    events = None
    program = None

    def name(kind, value):
        # "(12) name" defines id 12; "(12)" refers to it again (--compress-strings).
        m = re.match(r"\((\d+)\)(?: (.*))?$", value)
        if not m:
            return value
        if m.group(2) is not None:
            names[kind][m.group(1)] = m.group(2)
        return names[kind].get(m.group(1), value)

    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            c = line[0]
            if c.isdigit() or c in "+-*":
                parts = line.split()
                cost = int(parts[1]) if len(parts) > 1 else 0
                if pending_call is not None:
                    callee, count = pending_call
                    if callee in ALLOCATORS:
                        allocations += count
                    pending_call = None
                    cob = ob
                elif fn is not None:
                    self_cost[(ob, fn)] += cost
                continue
            key, _, value = line.partition("=")
            if key == "ob":
                ob = name("ob", value)
                cob = ob
            elif key == "cob":
                cob = name("ob", value)
            elif key == "fn":
                fn = name("fn", value)
                cob = ob
            elif key == "cfn":
                callee = name("fn", value)
                pending_callee = callee
            elif key == "calls":
                pending_call = (pending_callee, int(value.split()[0]))
            elif key in ("fl", "fi", "fe", "cfi", "cfl"):
                pass
            elif key == "events":
                events = value.split()
            elif line.startswith("cmd:") and program is None:
                program = line.split()[1].rsplit("/", 1)[-1] if len(line.split()) > 1 else None
            elif line.startswith("summary:") or line.startswith("totals:"):
                total = int(line.split()[1])
    if events and events[0] != "Ir":
        raise SystemExit(f"bench-cost-summary: {path}: expected Ir as the first event, got {events}")
    if total is None:
        total = sum(self_cost.values())
    return self_cost, allocations, total, program


def run(target, kind, rep, report_path, callgrind_path):
    report = json.load(open(report_path))
    self_cost, allocations, total, program = parse_callgrind(callgrind_path)
    groups = defaultdict(int)
    for (obj, fn), cost in self_cost.items():
        groups[group_of(obj, fn, program)] += cost
    top = sorted(self_cost.items(), key=lambda item: -item[1])[:400]
    print(json.dumps({
        "target": target, "kind": kind, "rep": int(rep),
        "stepFrames": report["stepFrames"],
        "movesAnswered": report["latencyMs"]["count"], "movesSent": report["movesSent"],
        "gamesStarted": report["gamesStarted"], "gamesEnded": report["gamesEnded"],
        "crashes": report["crashes"], "errors": report["errors"], "interrupted": report["interrupted"],
        "instructions": total, "allocations": allocations, "groups": groups,
        "functions": [[obj.rsplit("/", 1)[-1], fn, cost] for (obj, fn), cost in top],
        "callgrind": callgrind_path, "program": program,
    }, sort_keys=True))


def extra(run, base, field):
    """What a run cost beyond its games' sign-in, start and quit: the base run, scaled to the
    games the run had (all of them, unless the ramp gave up on a player)."""
    return run[field] - base[field] * run["gamesStarted"] / base["gamesStarted"]


def solve(base, calm, wander, field):
    """f, m from calm − base = F·f + M·m and wander − base = F'·f + M'·m."""
    a1, b1, c1 = calm["stepFrames"], calm["movesAnswered"], extra(calm, base, field)
    a2, b2, c2 = wander["stepFrames"], wander["movesAnswered"], extra(wander, base, field)
    det = a1 * b2 - a2 * b1
    if det == 0:
        return None, None
    return (c1 * b2 - c2 * b1) / det, (a1 * c2 - a2 * c1) / det


def demangle(names):
    try:
        out = subprocess.run(["swift", "demangle", "--simplified", "--compact"], input="\n".join(names),
                             capture_output=True, text=True, timeout=60).stdout.splitlines()
        return out if len(out) == len(names) else names
    except (OSError, subprocess.SubprocessError):
        return names


def fmt(value, digits=0):
    if value is None:
        return "—"
    return f"{value:,.{digits}f}"


def spread(values):
    """Largest distance from the median, in % of it."""
    mid = statistics.median(values)
    return max(abs(v - mid) for v in values) / abs(mid) * 100 if mid else 0


def load(path):
    runs = [json.loads(line) for line in open(path) if line.strip()]
    by = defaultdict(dict)
    for r in runs:
        by[(r["target"], r["rep"])][r["kind"]] = r
    targets = sorted({r["target"] for r in runs}, key=lambda t: (t != "retrorapid", t))
    return by, targets


def figures(path):
    by, targets = load(path)
    out = {}
    for target in targets:
        solved = []
        for key in sorted(k for k in by if k[0] == target):
            kinds = by[key]
            if all(k in kinds for k in ("base", "calm", "wander")):
                f, m = solve(kinds["base"], kinds["calm"], kinds["wander"], "instructions")
                af, am = solve(kinds["base"], kinds["calm"], kinds["wander"], "allocations")
                solved.append({"instructionsPerStepFrame": f, "instructionsPerMoveAnswered": m,
                               "allocationsPerStepFrame": af, "allocationsPerMoveAnswered": am,
                               "stepFrames": kinds["calm"]["stepFrames"] + kinds["wander"]["stepFrames"],
                               "movesAnswered": kinds["calm"]["movesAnswered"] + kinds["wander"]["movesAnswered"]})
        if solved:
            out[target] = {name: statistics.median(s[name] for s in solved if s[name] is not None)
                           if any(s[name] is not None for s in solved) else None for name in solved[0]}
            out[target]["repetitions"] = len(solved)
    print(json.dumps(out, sort_keys=True))


def summary(path):
    by, targets = load(path)
    print("| target | rep | games (base, calm, wander) | frames (calm, wander) | moves answered (calm, wander) | crashes (calm, wander) | instructions per step frame | per move answered | calm − base per frame (moves included) | allocations per step frame | per move answered |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    medians = {}
    for target in targets:
        fs, ms, alls, afs, ams = [], [], [], [], []
        for rep in sorted(rep for (t, rep) in by if t == target):
            kinds = by[(target, rep)]
            if not all(k in kinds for k in ("base", "calm", "wander")):
                continue
            base, calm, wander = kinds["base"], kinds["calm"], kinds["wander"]
            f, m = solve(base, calm, wander, "instructions")
            af, am = solve(base, calm, wander, "allocations")
            overall = extra(calm, base, "instructions") / calm["stepFrames"]
            fs.append(f); ms.append(m); alls.append(overall); afs.append(af); ams.append(am)
            print(f"| {target} | {rep} | {base['gamesStarted']}, {calm['gamesStarted']}, {wander['gamesStarted']} | {calm['stepFrames']:,}, {wander['stepFrames']:,} | "
                  f"{calm['movesAnswered']:,}, {wander['movesAnswered']:,} | {calm['crashes']}, {wander['crashes']} | {fmt(f)} | {fmt(m)} | {fmt(overall)} | "
                  f"{fmt(af, 2)} | {fmt(am, 2)} |")
        if fs:
            medians[target] = (statistics.median(fs), statistics.median(ms), statistics.median(alls),
                               statistics.median(afs), statistics.median(ams))
            print(f"| **{target}, median** | {len(fs)} | | | | | **{fmt(medians[target][0])}** (±{spread(fs):.1f} %) | "
                  f"**{fmt(medians[target][1])}** (±{spread(ms):.1f} %) | {fmt(medians[target][2])} (±{spread(alls):.1f} %) | "
                  f"**{fmt(medians[target][3], 2)}** | **{fmt(medians[target][4], 2)}** |")
    for target in targets:
        reps = [by[k] for k in sorted(by) if k[0] == target and "calm" in by[k] and "base" in by[k]]
        if not reps:
            continue
        print()
        print(f"Where {target}'s calm − base goes, instructions per step frame (median of {len(reps)}; "
              f"moves included, about {statistics.median(r['calm']['movesAnswered'] / r['calm']['stepFrames'] for r in reps):.2f} a frame):")
        print()
        print("| group | per frame | share |")
        print("|---|---|---|")
        per_group = {}
        for g in GROUPS:
            per_group[g] = statistics.median((r["calm"]["groups"].get(g, 0) - r["base"]["groups"].get(g, 0)
                                              * r["calm"]["gamesStarted"] / r["base"]["gamesStarted"])
                                             / r["calm"]["stepFrames"] for r in reps)
        whole = sum(per_group.values())
        for g in GROUPS:
            if abs(per_group[g]) >= 0.5:
                print(f"| {g} | {fmt(per_group[g])} | {per_group[g] / whole * 100:.1f} % |")
        print(f"| all (user space; the kernel is not counted) | {fmt(whole)} | 100 % |")
        # Top functions of the first repetition, calm − base.
        r = reps[0]
        calm = {(o, fn): c for o, fn, c in r["calm"]["functions"]}
        base = {(o, fn): c for o, fn, c in r["base"]["functions"]}
        scale = r["calm"]["gamesStarted"] / r["base"]["gamesStarted"]
        diff = sorted(((calm[k] - base.get(k, 0) * scale, k) for k in calm), reverse=True)[:25]
        names = demangle([k[1] for _, k in diff])
        print()
        print(f"Top functions (self cost, calm − base of repetition {r['calm']['rep']}, per step frame):")
        print()
        print("| per frame | function | object | group |")
        print("|---|---|---|---|")
        for (cost, (obj, fn)), shown in zip(diff, names):
            shown = shown if len(shown) <= 110 else shown[:107] + "…"
            print(f"| {fmt(cost / r['calm']['stepFrames'])} | `{shown.replace('|', '¦')}` | {obj} | {group_of(obj, fn, r['calm'].get('program')).split(' (')[0]} |")


if __name__ == "__main__":
    if len(sys.argv) == 7 and sys.argv[1] == "run":
        run(*sys.argv[2:])
    elif len(sys.argv) == 3 and sys.argv[1] == "summary":
        summary(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "figures":
        figures(sys.argv[2])
    else:
        raise SystemExit(__doc__)
