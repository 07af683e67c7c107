#!/usr/bin/env python3
"""Does a proxy's CPU per request move with the origin's? The origin as a control for the machine's speed.

usage: analysis/origin-control.py [--after] SITTING_DIR...

Every run of a sitting measures, over the same window, the proxy's CPU µs per request and the origin's (Downstream:
the same build serving the same requests in every run). Within one scenario at one point (same proxy, same load), the
origin's figure can only move with the machine: how fast the cores ran during that run. For each such group with at
least MIN_RUNS runs, each run is put relative to its group's median (proxy / median proxy - 1, origin / median
origin - 1); the script prints, per scenario and over all of them, how many runs, the correlation of the two
deviations and the least-squares slope of the proxy's on the origin's. A slope near 1 with a high correlation says
the run-to-run spread of that proxy's CPU per request is the machine's, not the proxy's.

--after adds a second table: the same deviations grouped by the run that came just before in the sitting (by each
run's measureStartEpochNs, over every point; "first" for a sitting's first run). A proxy or origin that runs slower
after some scenarios than after others points at state one run leaves to the next (memory, page cache, sockets in
TIME_WAIT) rather than at the proxy. Only runs that were kept count: an unsteady attempt that was run again is not
in runs.json, so a run's predecessor is the kept run before it.

Reads DIR/<point>/<scenario>.runs.json (analysis/aggregate.sh's files: proc/cpu/per-request of the application and
downstream jobs). `direct` has no proxy and is left out.
"""
import collections
import glob
import json
import os
import statistics
import sys

# Fewer runs than this leave a median that is one of two values: no spread to explain.
MIN_RUNS = 3


def per_request(job):
    return (job or {}).get("results", {}).get("proc/cpu/per-request")


def groups(dirs):
    """(sitting, point, scenario) -> [(proxy µs, origin µs, predecessor)] over the runs that have both; predecessor
    is the scenario of the sitting's kept run that started just before ("first" when none did)."""
    out = collections.defaultdict(list)
    for d in dirs:
        runs = []  # (start ns, point, scenario, proxy µs, origin µs), direct included: it is a predecessor too
        for path in sorted(glob.glob(os.path.join(d, "*", "*.runs.json"))):
            scenario = os.path.basename(path)[: -len(".runs.json")]
            point = os.path.basename(os.path.dirname(path))
            for run in json.load(open(path)):
                results = run.get("jobResults", {})
                jobs = results.get("jobs", {})
                start = results.get("properties", {}).get("measureStartEpochNs") or 0
                runs.append((start, point, scenario, per_request(jobs.get("application")),
                             per_request(jobs.get("downstream"))))
        runs.sort(key=lambda r: r[0])
        for i, (start, point, scenario, proxy, origin) in enumerate(runs):
            if scenario == "direct" or not (proxy and origin):
                continue
            predecessor = runs[i - 1][2] if i > 0 and start else "first"
            out[(d, point, scenario)].append((proxy, origin, predecessor))
    return out


def main():
    args = sys.argv[1:]
    after = "--after" in args
    dirs = [a for a in args if a != "--after"]
    if not dirs or any(a.startswith("-") for a in dirs):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        sys.exit(2)
    by_scenario = collections.defaultdict(lambda: ([], []))
    by_predecessor = collections.defaultdict(lambda: ([], []))
    for (_, _, scenario), runs in groups(dirs).items():
        if len(runs) < MIN_RUNS:
            continue
        proxy_median = statistics.median(p for p, _, _ in runs)
        origin_median = statistics.median(o for _, o, _ in runs)
        xs, ys = by_scenario[scenario]
        for proxy, origin, predecessor in runs:
            xs.append(origin / origin_median - 1)
            ys.append(proxy / proxy_median - 1)
            by_predecessor[(scenario, predecessor)][0].append(origin / origin_median - 1)
            by_predecessor[(scenario, predecessor)][1].append(proxy / proxy_median - 1)
    if not by_scenario:
        print("origin-control: no group with both figures in at least %d runs" % MIN_RUNS, file=sys.stderr)
        sys.exit(1)
    print("| scenario | runs | correlation | slope | proxy spread (p10-p90) | origin spread (p10-p90) |")
    print("|---|--:|--:|--:|--:|--:|")
    every = ([], [])
    for scenario in sorted(by_scenario):
        xs, ys = by_scenario[scenario]
        every[0].extend(xs)
        every[1].extend(ys)
        print(row(scenario, xs, ys))
    print(row("**all**", *every))
    if after:
        print()
        print("| scenario | after | runs | proxy deviation (median; min-max) | origin deviation (median; min-max) |")
        print("|---|---|--:|--:|--:|")
        for scenario, predecessor in sorted(by_predecessor):
            xs, ys = by_predecessor[(scenario, predecessor)]
            print(f"| {scenario} | {predecessor} | {len(xs)} | {deviation(ys)} | {deviation(xs)} |")


def deviation(v):
    return f"{statistics.median(v) * 100:+.0f} %; {min(v) * 100:+.0f} to {max(v) * 100:+.0f}"


def row(name, xs, ys):
    def spread(v):
        if len(v) < 10:
            return f"{min(v) * 100:+.0f} to {max(v) * 100:+.0f} % (min-max)"
        q = statistics.quantiles(v, n=10)
        return f"{q[0] * 100:+.0f} to {q[-1] * 100:+.0f} %"
    corr = statistics.correlation(xs, ys) if len(xs) > 2 and len(set(xs)) > 1 else float("nan")
    slope = statistics.linear_regression(xs, ys).slope if len(set(xs)) > 1 else float("nan")
    return f"| {name} | {len(xs)} | {corr:.2f} | {slope:.2f} | {spread(ys)} | {spread(xs)} |"


if __name__ == "__main__":
    main()
