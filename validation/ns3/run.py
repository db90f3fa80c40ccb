#!/usr/bin/env python3
"""Validate cclab against ns-3: build the ns-3 reference program, run every case in ns-3 and in
cclab, and print the two side by side with PASS/FAIL against the targets (VALIDATION.md,
"Against ns-3").

Each case is validation/ns3/<case>.toml for cclab and `ns3_ref --case=<case>` (ns3_ref.cc) for
ns-3, with the same topology. Targets as for the kernel (`cclab validate`): goodput and mean RTT
within 10 %, retransmissions within 15 % (relative to ns-3). RTT p50/p95, queue delay and mean
cwnd are shown for information.

    python3 validation/ns3/run.py [--cclab target/debug/cclab] [--stack linux|ns3]
                                  [--cases cubic,newreno,...] [--seeds N] [--work DIR]
                                  [--markdown FILE]

--stack adds `stack = "<stack>"` to every flow of a temporary copy of each scenario (omitted for
`linux`, the default stack). Needs ns-3 (Debian: libns3-dev; pkg-config ns3-core …), g++ and a
built cclab. Not a test: it is not run by CI.
"""

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

NS3_MODULES = [
    "ns3-core", "ns3-network", "ns3-internet", "ns3-point-to-point", "ns3-applications",
    "ns3-traffic-control",
]

# case → (what it exercises, ns3_ref arguments besides --case)
CASES = {
    "cubic": ("CUBIC alone: slow start/HyStart, tail-drop recovery, CUBIC growth", []),
    "newreno": ("NewReno, 1 % random loss: fast recovery (SACK, PRR), RTOs, Mathis regime", []),
    "bbr": ("BBRv1 with pacing: Startup overshoot, Drain, ProbeBW, ProbeRTT", []),
    "reroute": ("CUBIC over a route flipping +20/+5 ms every 3 s: reordering, spurious recovery",
                ["--delay=5", "--buffer=83"]),
    "ack_thin": ("CUBIC with ACK thinning k = 4 (hold 10 ms): ACK clocking, SACK-carrying ACKs",
                 []),
}

# metric → (label, target relative difference or None for information only)
METRICS = [
    ("goodput_mbps", "goodput Mbit/s", 0.10),
    ("rtt_mean_ms", "RTT mean ms", 0.10),
    ("retransmits", "retransmits", 0.15),
    ("rtt_p50_ms", "RTT p50 ms", None),
    ("rtt_p95_ms", "RTT p95 ms", None),
    ("queue_delay_mean_ms", "queue delay ms", None),
    ("cwnd_mean_segments", "cwnd (segments)", None),
]


def die(msg):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(1)


def ns3_flags():
    if shutil.which("pkg-config") is None:
        die("pkg-config not found; ns-3 is needed (Debian: apt-get install libns3-dev pkg-config)")
    missing = [m for m in NS3_MODULES
               if subprocess.run(["pkg-config", "--exists", m]).returncode != 0]
    if missing:
        die("ns-3 is not installed (pkg-config knows no " + ", ".join(missing) +
            "); Debian: apt-get install libns3-dev")
    version = subprocess.run(["pkg-config", "--modversion", "ns3-core"], capture_output=True,
                             text=True).stdout.strip()
    cflags = subprocess.run(["pkg-config", "--cflags"] + NS3_MODULES, capture_output=True,
                            text=True, check=True).stdout.split()
    libs = subprocess.run(["pkg-config", "--libs"] + NS3_MODULES, capture_output=True,
                          text=True, check=True).stdout.split()
    # Debian's .pc files name libgsl.so and friends by absolute path although only the
    # versioned runtime libraries are installed without libgsl-dev; ns-3's own libraries
    # already link them, so a missing absolute path is left out.
    libs = [t for t in libs if not t.startswith("/") or os.path.exists(t)]
    return version, cflags, libs


def build(work, cflags, libs):
    if shutil.which("g++") is None:
        die("g++ not found")
    exe = os.path.join(work, "ns3_ref")
    src = os.path.join(HERE, "ns3_ref.cc")
    if os.path.exists(exe) and os.path.getmtime(exe) >= os.path.getmtime(src):
        return exe
    # --no-as-needed: the program reaches some libraries only through TypeId registration.
    cmd = ["g++", "-O2", "-std=c++17", src, "-o", exe] + cflags + ["-Wl,--no-as-needed"] + libs
    print("+ " + " ".join(cmd), file=sys.stderr)
    r = subprocess.run(cmd)
    if r.returncode != 0:
        die("building ns3_ref.cc failed")
    return exe


def run_ns3(exe, case, args, seed=1):
    cmd = [exe, f"--case={case}"] + args + ([f"--run={seed}"] if seed != 1 else [])
    print("+ " + " ".join(cmd), file=sys.stderr)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        die(f"ns-3 case {case} failed:\n{r.stderr}")
    return json.loads(r.stdout), cmd


def with_stack(text, stack):
    if stack == "linux":
        return text
    return re.sub(r"(?m)^\[\[flows\]\]\s*$", f'[[flows]]\nstack = "{stack}"', text)


def run_cclab(cclab, case, stack, work, seed=1):
    src = os.path.join(HERE, f"{case}.toml")
    with open(src, encoding="utf-8") as f:
        text = with_stack(f.read(), stack)
    toml = os.path.join(work, f"{case}-{stack}.toml")
    with open(toml, "w", encoding="utf-8") as f:
        f.write(text)
    out = os.path.join(work, f"cclab-{case}-{stack}" + (f"-seed{seed}" if seed != 1 else ""))
    cmd = [cclab, "run", toml, "--out", out] + (["--seed", str(seed)] if seed != 1 else [])
    print("+ " + " ".join(cmd), file=sys.stderr)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        die(f"cclab case {case} failed:\n{r.stderr}")
    with open(os.path.join(out, "summary.json"), encoding="utf-8") as f:
        summary = json.load(f)
    flow = summary["flows"][0]
    queue = next((q for q in summary["queues"] if q["name"] == "bottleneck"), summary["queues"][0])
    cwnd = []
    with open(os.path.join(out, "flows.csv"), encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["flow"] == flow["name"] and row["cwnd"] != "":
                cwnd.append(float(row["cwnd"]))
    return {
        "goodput_mbps": flow["goodput_bps"] / 1e6,
        "rtt_mean_ms": flow["rtt_mean_ms"],
        "rtt_p50_ms": flow["rtt_p50_ms"],
        "rtt_p95_ms": flow["rtt_p95_ms"],
        "retransmits": flow["retransmits"],
        "queue_delay_mean_ms": queue["delay_mean_ms"],
        "cwnd_mean_segments": sum(cwnd) / len(cwnd) if cwnd else 0.0,
        "fast_recoveries": flow.get("fast_recoveries"),
        "rto_count": flow.get("rto_count"),
    }, [os.path.relpath(cclab, ROOT) if cclab.startswith(ROOT) else cclab, "run",
        os.path.relpath(src, ROOT), "--out", "DIR"]


def mean_of(runs):
    """The mean of every numeric field over the runs (one run: itself)."""
    if len(runs) == 1:
        return runs[0]
    out = dict(runs[0])
    for k, v in runs[0].items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            vals = [r[k] for r in runs if isinstance(r.get(k), (int, float))]
            out[k] = sum(vals) / len(vals)
    out["runs"] = len(runs)
    return out


def rel(a, b):
    """cclab relative to ns-3; None when ns-3's value is 0 (then equal counts pass)."""
    if b == 0:
        return 0.0 if a == 0 else None
    return (a - b) / b


def fmt(x):
    if isinstance(x, int):
        return str(x)
    return f"{x:.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cclab", default=os.path.join(ROOT, "target", "debug", "cclab"))
    ap.add_argument("--stack", default="linux", help='cclab TCP stack: "linux" or "ns3"')
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--work", default=os.path.join(ROOT, "target", "ns3-validation"))
    ap.add_argument("--seeds", type=int, default=1,
                    help="runs per case and side, compared by their means: ns-3 with --run=K "
                         "(its RngRun) and cclab with --seed K, K = 1..N (default 1)")
    ap.add_argument("--markdown", default=None,
                    help="write the table as markdown here (default WORK/ns3-validation.md)")
    a = ap.parse_args()

    cases = [c for c in a.cases.split(",") if c]
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        die(f"unknown case {', '.join(unknown)} (valid: {', '.join(CASES)})")
    if not os.access(a.cclab, os.X_OK):
        die(f"no cclab binary at {a.cclab} (cargo build -p cclab, or --cclab PATH)")
    version, cflags, libs = ns3_flags()
    os.makedirs(a.work, exist_ok=True)
    exe = build(a.work, cflags, libs)

    rows = []
    results = {}
    all_pass = True
    for case in cases:
        what, args = CASES[case]
        if a.seeds < 1:
            die("--seeds must be at least 1")
        ns3_runs, cl_runs = [], []
        for seed in range(1, a.seeds + 1):
            n_run, ns3_cmd = run_ns3(exe, case, args, seed)
            c_run, cl_cmd = run_cclab(os.path.abspath(a.cclab), case, a.stack, a.work, seed)
            ns3_runs.append(n_run)
            cl_runs.append(c_run)
        ns3, cl = mean_of(ns3_runs), mean_of(cl_runs)
        results[case] = {"ns3": ns3, "cclab": cl, "ns3_command": ns3_cmd,
                         "cclab_command": cl_cmd}
        for key, label, target in METRICS:
            n, c = ns3[key], cl[key]
            d = rel(c, n)
            if target is None:
                verdict = ""
            elif d is not None and abs(d) <= target:
                verdict = "PASS"
            else:
                verdict = "FAIL"
                all_pass = False
            rows.append((case, label, n, c, d, target, verdict))

    head = ("case", "metric", "ns-3", f"cclab ({a.stack})", "diff", "target", "")
    table = [head] + [
        (case, label, fmt(n), fmt(c), "n/a" if d is None else f"{d * 100:+.1f} %",
         "" if t is None else f"±{t * 100:.0f} %", v)
        for case, label, n, c, d, t, v in rows
    ]
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    for r in table:
        print("  ".join(s.ljust(w) for s, w in zip(r, widths)).rstrip())
    print(f"\nns-3 {version}; cclab stack {a.stack}; means of {a.seeds} run(s) per side; "
          + ("all targets met" if all_pass else "some targets missed"))

    md = [f"| {' | '.join(head)} |", "|" + "---|" * len(head)]
    md += [f"| {' | '.join(r)} |" for r in table[1:]]
    path = a.markdown or os.path.join(a.work, "ns3-validation.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(a.work, "ns3-validation.json"), "w", encoding="utf-8") as f:
        json.dump({"ns3_version": version, "stack": a.stack, "cases": results}, f, indent=1)
    print(f"wrote {path} and {os.path.join(a.work, 'ns3-validation.json')}")


if __name__ == "__main__":
    main()
