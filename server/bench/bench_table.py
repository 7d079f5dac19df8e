#!/usr/bin/env python3
"""The table server_bench.sh prints: medians of each server's runs per test and pipeline,
ratios against redis-server and against the baseline, and each server's spread over its runs
((max - min) / median). A test where today's median is below the baseline's by more than the
larger of the two spreads is flagged as a regression (exit status 2).

    bench_table.py results.csv    (lines "server,test,pipeline,rps,p50,p99")
"""

import collections
import statistics
import sys


def main(path):
    runs = collections.defaultdict(list)
    p99 = collections.defaultdict(list)
    order = []
    for line in open(path):
        parts = line.strip().split(",")
        if len(parts) != 6 or not parts[3]:
            continue
        server, test, pipe, rps = parts[0], parts[1], parts[2], float(parts[3])
        key = (test, pipe)
        if key not in order:
            order.append(key)
        runs[(server, key)].append(rps)
        p99[(server, key)].append(float(parts[5] or "nan"))
    have_base = any(s == "baseline" for s, _ in runs)

    def med(s, k):
        xs = runs.get((s, k))
        return statistics.median(xs) if xs else None

    def spread(s, k):
        xs = runs.get((s, k))
        if not xs or len(xs) < 2:
            return 0.0
        return (max(xs) - min(xs)) / statistics.median(xs)

    head = "| command | pipeline | redis-server | today | vs redis | p99 ms redis / today |"
    rule = "|---|---:|---:|---:|---:|---:|"
    if have_base:
        head += " baseline | today vs baseline | spread today / baseline |"
        rule += "---:|---:|---:|"
    print(head)
    print(rule)
    regressions = []
    fmt = lambda v: "—" if v is None else f"{v / 1000:.1f}k"
    for k in order:
        test, pipe = k
        r, t, b = med("redis", k), med("today", k), med("baseline", k)
        ratio = f"{t / r:.2f}x" if r and t else "—"
        lat = lambda s: f"{statistics.median(p99[(s, k)]):.2f}" if p99.get((s, k)) else "—"
        row = f"| {test.upper()} | {pipe} | {fmt(r)} | {fmt(t)} | {ratio} | {lat('redis')} / {lat('today')} |"
        if have_base:
            vs = t / b if t and b else None
            sp = max(spread("today", k), spread("baseline", k))
            flag = ""
            if vs is not None and vs < 1 - sp:
                flag = " **slower**"
                regressions.append(f"{test} -P {pipe}: {vs:.2f}x the baseline (spread {sp:.0%})")
            row += (
                f" {fmt(b)} | {'—' if vs is None else f'{vs:.2f}x'}{flag} |"
                f" {spread('today', k):.0%} / {spread('baseline', k):.0%} |"
            )
        print(row)
    for r in regressions:
        print("REGRESSION:", r)
    return 2 if regressions else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
