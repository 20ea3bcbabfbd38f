#!/usr/bin/env python3
"""Adds RetroRapid's own step lateness over the measured window to a loadtest JSON line.

    bench-capacity-lateness.py START END < report.json > report-with-lateness.json

START and END are the `retrorapid_game_step_lateness_seconds_bucket` lines of GET /metrics at
the window's start and end (scripts/bench-capacity.sh scrapes them). Their difference is the
window's steps; the added "serverStepLatenessMs" gives, for p50, p99 and p999, the bucket bound
that percentile falls under (the histogram has no finer grain), and "over10msShare" the share
of the window's steps that went out more than 10 ms after their deadline. With either file
missing or empty the line passes through unchanged.
"""
import json
import re
import sys

LINE = re.compile(r'retrorapid_game_step_lateness_seconds_bucket\{le="([^"]+)"\} (\S+)')


def buckets(path):
    try:
        with open(path) as lines:
            found = [LINE.match(line) for line in lines]
    except OSError:
        return {}
    return {m[1]: float(m[2]) for m in found if m}


def main(start_path, end_path):
    report = json.loads(sys.stdin.read())
    start, end = buckets(start_path), buckets(end_path)
    if start and end and "+Inf" in end:
        bounds = sorted((float(b) for b in end if b != "+Inf"))
        cumulative = [(bound, end[key] - start.get(key, 0.0))
                      for bound, key in ((b, next(k for k in end if k != "+Inf" and float(k) == b)) for b in bounds)]
        total = end["+Inf"] - start.get("+Inf", 0.0)
        if total > 0:
            def under(share):
                for bound, count in cumulative:
                    if count >= share * total:
                        return bound * 1000
                return None  # past the last bound
            within10 = next((count for bound, count in cumulative if abs(bound - 0.01) < 1e-12), None)
            report["serverStepLatenessMs"] = {
                "steps": int(total), "p50": under(0.5), "p99": under(0.99), "p999": under(0.999),
                "over10msShare": None if within10 is None else 1 - within10 / total,
            }
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
