#!/usr/bin/env python3
"""Per-request figures from session.sh outputs.

usage: summarize.py DIR LABEL...        one row per label: requests, CPU µs/request, syscalls and context switches
       summarize.py load DIR LABEL...   count mode: the proxy's, the origin's and wrk's CPU µs, syscalls and context
                                        switches per request, and the proxy's connections to the origin
       summarize.py strace DIR LABEL... syscalls per request by name from strace -c
A label may be a prefix ending in ".r" to aggregate rounds: "base.r" reads base.r1, base.r2, ...
"""
import csv
import glob
import os
import re
import statistics
import sys

CLK_TCK = os.sysconf("SC_CLK_TCK")


def requests(path):
    """Requests the load completed: wrk's "N requests in", or h2load's succeeded count ("requests: ... N succeeded")."""
    text = open(path).read()
    m = re.search(r"(\d+) requests in", text) or re.search(r"^requests: .* (\d+) succeeded", text, re.M)
    return int(m.group(1)) if m else 0


def perf_stat(path):
    """Counters of a `perf stat -x,` file (session.sh): event name -> value (cpu-clock in ms). Its rows are
    value,unit,event,run time,share of run time,metric,metric unit; a counter perf could not read has a value such as
    "<not counted>" and is left out, so that the figures built on it read as missing, not as zero."""
    if not os.path.exists(path):
        old = path[: -len(".csv")] + ".txt"
        hint = f" (sessions before `perf stat -x,` wrote {os.path.basename(old)}: their README has the tables)" if os.path.exists(old) else ""
        sys.exit(f"summarize: {path}: no such file{hint}")
    out = {}
    with open(path, newline="") as f:
        for row in csv.reader(f):
            if len(row) < 3 or row[0].startswith("#"):
                continue
            try:
                out[row[2]] = float(row[0])
            except ValueError:
                continue
    return out


def proc(path):
    rows = [dict(kv.split("=") for kv in line.split()[1:]) for line in open(path) if line.strip()]
    a, b = rows[0], rows[-1]
    return {k: int(b[k]) - int(a[k]) for k in ("utime", "stime", "vol", "invol")}


def one(d, label):
    n = requests(f"{d}/{label}.wrk.txt")
    s = perf_stat(f"{d}/{label}.perf-stat.csv")
    p = proc(f"{d}/{label}.proc.txt")
    r = {"requests": n, "rps": n / 1.0}
    r["cpu_us"] = s.get("cpu-clock", 0) * 1000.0 / n
    r["cpu_us_proc"] = (p["utime"] + p["stime"]) * 1e6 / CLK_TCK / n
    r["sys_share"] = p["stime"] / max(1, p["utime"] + p["stime"])
    r["ctx"] = s.get("context-switches", 0) / n
    r["vol"] = p["vol"] / n
    r["invol"] = p["invol"] / n
    r["syscalls"] = s.get("raw_syscalls:sys_enter", float("nan")) / n
    for k, v in s.items():
        if k.startswith("syscalls:sys_enter_"):
            r[k[len("syscalls:sys_enter_"):]] = v / n
    return r


def load_side(d, label):
    n = requests(f"{d}/{label}.wrk.txt")
    r = {}
    for side in ("proxy", "origin", "wrk"):
        s = perf_stat(f"{d}/{label}.perf-stat.csv" if side == "proxy" else f"{d}/{label}.{side}-perf-stat.csv")
        r[f"{side}_us"] = s.get("cpu-clock", float("nan")) * 1000.0 / n
        r[f"{side}_syscalls"] = s.get("raw_syscalls:sys_enter", float("nan")) / n
        r[f"{side}_ctx"] = s.get("context-switches", float("nan")) / n
    r["load_us"] = r["origin_us"] + r["wrk_us"]
    conns = f"{d}/{label}.origin-connections.txt"
    r["origin_connections"] = float(open(conns).read()) if os.path.exists(conns) else float("nan")
    return r


def labels(d, label):
    if label.endswith(".r"):
        return sorted(os.path.basename(p)[: -len(".wrk.txt")] for p in glob.glob(f"{d}/{label}[0-9]*.wrk.txt"))
    return [label]


def main():
    if sys.argv[1] == "strace":
        d = sys.argv[2]
        for label in sys.argv[3:]:
            n = requests(f"{d}/{label}.wrk.txt")
            print(f"\n**{label}**: {n} requests under strace\n\n| syscall | calls | per request | errors |\n|---|--:|--:|--:|")
            for line in open(f"{d}/{label}.strace.txt"):
                f = line.split()
                if len(f) >= 5 and f[0][0].isdigit() and f[-1] not in ("total",):
                    calls, errors, name = int(f[3]), (int(f[4]) if len(f) == 6 else 0), f[-1]
                    if calls / max(n, 1) >= 0.01:
                        print(f"| {name} | {calls} | {calls / n:.2f} | {errors} |")
        return
    if sys.argv[1] == "load":
        d = sys.argv[2]
        keys = ["proxy_us", "origin_us", "wrk_us", "load_us", "proxy_syscalls", "origin_syscalls", "wrk_syscalls",
                "proxy_ctx", "origin_ctx", "wrk_ctx", "origin_connections"]
        print("| run | rounds | " + " | ".join(keys) + " |")
        print("|---|--:|" + "--:|" * len(keys))
        for label in sys.argv[3:]:
            rows = [load_side(d, l) for l in labels(d, label)]
            cells = [f"{statistics.median(r[k] for r in rows):.2f}" for k in keys]
            print(f"| {label.rstrip('.r')} | {len(rows)} | " + " | ".join(cells) + " |")
        return
    d = sys.argv[1]
    keys = ["cpu_us", "cpu_us_proc", "syscalls", "ctx", "vol", "invol", "recvfrom", "sendto", "sendmsg", "writev",
            "epoll_wait", "futex", "sched_yield", "poll"]
    print("| run | rounds | requests (median) | " + " | ".join(keys) + " |")
    print("|---|--:|--:|" + "--:|" * len(keys))
    for label in sys.argv[2:]:
        rows = [one(d, l) for l in labels(d, label)]
        med = {k: statistics.median([r.get(k, float("nan")) for r in rows]) for k in keys + ["requests"]}
        cells = []
        for k in keys:
            vals = [r.get(k, float("nan")) for r in rows]
            if len(rows) > 1 and k.startswith("cpu"):
                cells.append(f"{med[k]:.1f} ({min(vals):.1f}–{max(vals):.1f})")
            else:
                cells.append(f"{med[k]:.2f}" if med[k] == med[k] else "–")
        print(f"| {label.rstrip('.r')} | {len(rows)} | {int(med['requests'])} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
