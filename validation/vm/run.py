#!/usr/bin/env python3
"""Validate cclab's CPU-contention host model against a real Linux guest: a qemu virtual
machine (Debian's `cloud` kernel, a busybox initramfs) whose vCPU thread runs on a fixed
schedule (a timeslice in every timeslice/share, the 2BRobust study's schedule), sending one bulk
TCP flow (the kernel's CUBIC or BBRv1) through `cclab emulate`'s network; then the same flows
in cclab with the `plain` and `vm` host models; the goodputs side by side (VALIDATION.md,
"A real guest under CPU contention").

    sudo python3 validation/vm/run.py [--cclab target/release/cclab] [--work DIR]
        [--ccs cubic,bbr1,bbr1_2brobust] [--timeslices 1ms,10ms] [--shares 1,0.6,0.4,0.3,0.2]
        [--rate 20Mbit] [--delay 10ms] [--secs 20] [--measure-last 18] [--reps 1]
        [--kernel linux-image-VERSION-cloud-amd64] [--accel tcg|kvm] [--napi-tx 1|0]
        [--markdown FILE] [--sim-only]

Needs root, /dev/net/tun, qemu-system-x86 (TCG; KVM with --accel kvm where it runs), gcc
(vmtcp and vmsched are built here, vmtcp statically), busybox-static, apt-get (to download the
kernel package once into --work; for bbr1_2brobust also linux-source-6.1 and the guest kernel's
linux-headers), and a cgroup v1 freezer hierarchy (/sys/fs/cgroup/freezer).
The guest's vCPU thread alone is put in a freezer cgroup of its own, which vmsched thaws for a
timeslice in every period; qemu's I/O thread (the virtio-net back end and the tap) keeps
running, as a hypervisor's does. Its files go under --work; the freezer cgroup is removed after
each run and the emulator removes its namespaces. Not a test: it is not run by CI.
"""

import argparse
import csv
import glob
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
KERNEL_PKG = "linux-image-cloud-amd64"
MODULES = ["failover", "net_failover", "virtio", "virtio_ring", "virtio_pci_modern_dev",
           "virtio_pci_legacy_dev", "virtio_pci", "virtio_net", "tcp_bbr"]
PORT = 5301
FREEZER = "/sys/fs/cgroup/freezer"
# cclab controller → kernel controller (what `cclab emulate` maps, README "Emulation");
# bbr2b is the kernel's BBRv1 with 2BRobust, built here (robust_module).
KERNEL_CC = {"cubic": "cubic", "bbr1": "bbr", "bbr1_2brobust": "bbr2b"}
# 2BRobust's published parameters for BBR (seed study): r = 2 rounds, alpha = 0.84, which cclab
# rounds to 1/256 (README, `robust_alpha`): 215/256.
ROBUST_ROUNDS = 2
ROBUST_ALPHA_UNIT = 215


def die(msg):
    print(f"run.py: {msg}", file=sys.stderr)
    sys.exit(1)


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def topology(a):
    """The path every run shares, guest and cclab alike: the dumbbell of --rate and --delay
    (one way) with a 1-BDP drop-tail buffer, as TOML keys of a topology table."""
    return f'preset = "dumbbell"\nrate = "{a.rate}"\ndelay = "{a.delay}"\nbuffer = "1bdp"\n'


def parse_secs(s):
    m = re.fullmatch(r"([0-9.]+)(ms|s)", s)
    if not m:
        die(f"not a duration: {s}")
    return float(m.group(1)) / (1000 if m.group(2) == "ms" else 1)


# ---------------------------------------------------------------- the guest's image
def kernel_files(work, pkg=None):
    """The cloud kernel PKG (default: the one Debian's linux-image-cloud-amd64 names now) and
    its modules, downloaded and unpacked once into WORK/PKG."""
    if pkg is None:
        dep = subprocess.run(["apt-cache", "depends", KERNEL_PKG], capture_output=True,
                             text=True, check=True).stdout
        pkg = re.search(r"Depends: (linux-image-\S+)", dep).group(1)
    kdir = os.path.join(work, pkg)
    vmlinuz = glob.glob(os.path.join(kdir, "boot", "vmlinuz-*"))
    if not vmlinuz:
        os.makedirs(kdir, exist_ok=True)
        sh(["apt-get", "download", pkg], cwd=kdir)
        deb = glob.glob(os.path.join(kdir, pkg + "_*.deb"))[0]
        sh(["dpkg", "-x", deb, kdir])
        vmlinuz = glob.glob(os.path.join(kdir, "boot", "vmlinuz-*"))
    ver = os.path.basename(vmlinuz[0])[len("vmlinuz-"):]
    mods = {}
    for m in MODULES:
        found = glob.glob(os.path.join(kdir, "lib", "modules", ver, "kernel", "**", m + ".ko*"),
                          recursive=True)
        if not found:
            die(f"module {m} not in {KERNEL_PKG} {ver}")
        mods[m] = found[0]
    return vmlinuz[0], ver, mods


def load_order(mods):
    """The modules in an order that loads each after those it depends on (their `depends=`)."""
    deps = {}
    for m, path in mods.items():
        found = re.search(rb"depends=([^\0]*)", open(path, "rb").read())
        deps[m] = [d for d in (found.group(1).decode().split(",") if found else []) if d]
    order = []

    def visit(m, seen=()):
        if m in order:
            return
        if m in seen:
            die(f"module dependency cycle at {m}")
        for d in deps.get(m, []):
            if d not in deps:
                die(f"module {m} needs {d}, which the initramfs does not carry")
            visit(d, seen + (m,))
        order.append(m)
    for m in mods:
        visit(m)
    return order


def robust_edits(src):
    """BBRv1's tcp_bbr.c with 2BRobust, as cclab's bbr1_2brobust applies it (crates/cc/src/bbr/
    v1.rs, update_robust): on an ACK in ProbeBW, when the rate sample and the socket are not
    app-limited, at least ROBUST_ROUNDS rounds have passed since ProbeRTT ended (since the start
    if there was none) and the packets in flight after the ACK are below alpha times the BDP at
    gain 1, the pacing rate uses the Startup gain instead of the cycle's; cwnd and the cycle are
    untouched. The module registers as "bbr2b". Each edit is checked to apply exactly once."""
    def one(old, new):
        nonlocal src
        if src.count(old) != 1:
            die(f"tcp_bbr.c: the 2BRobust edit expects one '{old.strip()[:50]}'")
        src = src.replace(old, new)
    # Two state bits and a saturating round counter, from the struct's unused bits.
    one("\t\tunused:13,", "\t\trobust_rounds:2, robust_active:1, unused:10,")
    # Rounds counted where rtt_cnt is (bbr_update_bw), reset when ProbeRTT ends.
    one("\t\tbbr->rtt_cnt++;", "\t\tbbr->rtt_cnt++;\n\t\tif (bbr->robust_rounds < 3)\n"
        "\t\t\tbbr->robust_rounds++;")
    one("\tbbr->min_rtt_stamp = tcp_jiffies32;  /* wait a while until PROBE_RTT */",
        "\tbbr->min_rtt_stamp = tcp_jiffies32;  /* wait a while until PROBE_RTT */\n"
        "\tbbr->robust_rounds = 0;")
    one("\tbbr_set_pacing_rate(sk, bw, bbr->pacing_gain);",
        "\tbbr->robust_active = bbr->mode == BBR_PROBE_BW && !rs->is_app_limited &&\n"
        "\t\t!tcp_sk(sk)->app_limited && bbr->robust_rounds >= %d &&\n"
        "\t\t(u64)tcp_packets_in_flight(tcp_sk(sk)) * BBR_UNIT <\n"
        "\t\t(u64)%d * bbr_bdp(sk, bw, BBR_UNIT);\n"
        "\tbbr_set_pacing_rate(sk, bw, bbr->robust_active ? bbr_high_gain : bbr->pacing_gain);"
        % (ROBUST_ROUNDS, ROBUST_ALPHA_UNIT))
    one('\t.name\t\t= "bbr",', '\t.name\t\t= "bbr2b",')
    # No BTF kfunc set: an out-of-tree build has no BTF to resolve it against.
    a = src.index("BTF_SET8_START(tcp_bbr_check_kfunc_ids)")
    b = src.index("static int __init bbr_register(void)")
    src = src[:a] + src[b:]
    one("\tret = register_btf_kfunc_id_set(BPF_PROG_TYPE_STRUCT_OPS, &tcp_bbr_kfunc_set);\n"
        "\tif (ret < 0)\n\t\treturn ret;\n", "")
    one("\tint ret;\n\n\tBUILD_BUG_ON", "\tBUILD_BUG_ON")
    one("\treturn tcp_register_congestion_control(&tcp_bbr_cong_ops);",
        "\treturn tcp_register_congestion_control(&tcp_bbr_cong_ops);")
    return src


def robust_module(work, ver):
    """tcp_bbr2b.ko for the guest's kernel VER: tcp_bbr.c from Debian's linux-source package of
    the same version, with robust_edits, built against linux-headers-VER."""
    out = os.path.join(work, "bbr2b-" + ver)
    ko = os.path.join(out, "tcp_bbr2b.ko")
    if os.path.exists(ko):
        return ko
    headers = f"/usr/src/linux-headers-{ver}"
    if not os.path.isdir(headers):
        die(f"bbr1_2brobust needs the guest kernel's headers: apt-get install linux-headers-{ver}")
    os.makedirs(out, exist_ok=True)
    srcdir = os.path.join(work, "linux-source")
    series = re.match(r"(\d+\.\d+)", ver).group(1)
    tar = glob.glob(os.path.join(srcdir, "usr", "src", f"linux-source-{series}.tar.xz"))
    if not tar:
        os.makedirs(srcdir, exist_ok=True)
        sh(["apt-get", "download", f"linux-source-{series}"], cwd=srcdir)
        sh(["dpkg", "-x", glob.glob(os.path.join(srcdir, "*.deb"))[0], srcdir])
        tar = glob.glob(os.path.join(srcdir, "usr", "src", f"linux-source-{series}.tar.xz"))
    member = f"linux-source-{series}/net/ipv4/tcp_bbr.c"
    sh(["tar", "-xJf", tar[0], "-C", srcdir, member])
    src = open(os.path.join(srcdir, member)).read()
    open(os.path.join(out, "tcp_bbr2b.c"), "w").write(robust_edits(src))
    open(os.path.join(out, "Makefile"), "w").write("obj-m := tcp_bbr2b.o\n")
    sh(["make", "-C", headers, f"M={out}", "modules"], stdout=subprocess.DEVNULL)
    return ko


def cpio_newc(entries, out):
    """Write a newc cpio archive: entries are (name, mode, data bytes, rdev major, minor)."""
    def hdr(ino, name, mode, size, rmaj=0, rmin=0):
        fields = [ino, mode, 0, 0, 1, 0, size, 0, 0, rmaj, rmin, len(name) + 1, 0]
        h = b"070701" + b"".join(b"%08X" % f for f in fields) + name.encode() + b"\0"
        return h + b"\0" * (-len(h) % 4)
    with open(out, "wb") as f:
        for ino, (name, mode, data, rmaj, rmin) in enumerate(entries, 1):
            f.write(hdr(ino, name, mode, len(data), rmaj, rmin))
            f.write(data + b"\0" * (-len(data) % 4))
        f.write(hdr(0, "TRAILER!!!", 0, 0))


def build(work, cc_bin, ccs, kernel=None):
    """vmtcp (static), vmsched and the guest's initramfs, under WORK."""
    vmtcp = os.path.join(work, "vmtcp")
    vmsched = os.path.join(work, "vmsched")
    sh([cc_bin, "-O2", "-Wall", "-static", "-pthread", "-o", vmtcp, os.path.join(HERE, "vmtcp.c")])
    sh([cc_bin, "-O2", "-Wall", "-o", vmsched, os.path.join(HERE, "vmsched.c")])
    busybox = shutil.which("busybox")
    if not busybox or "static" not in subprocess.run(["file", "-L", busybox], capture_output=True,
                                                     text=True).stdout + "static":
        die("needs a static busybox (Debian: busybox-static)")
    vmlinuz, ver, mods = kernel_files(work, kernel)
    d, x, r = stat.S_IFDIR | 0o755, stat.S_IFREG | 0o755, stat.S_IFREG | 0o644
    entries = [(n, d, b"", 0, 0) for n in ["bin", "dev", "proc", "sys", "tmp", "lib",
                                             "lib/modules"]]
    entries.append(("dev/console", stat.S_IFCHR | 0o600, b"", 5, 1))
    entries.append(("init", x, open(os.path.join(HERE, "init.sh"), "rb").read(), 0, 0))
    entries.append(("bin/busybox", x, open(busybox, "rb").read(), 0, 0))
    entries.append(("vmtcp", x, open(vmtcp, "rb").read(), 0, 0))
    for m, path in mods.items():
        data = open(path, "rb").read()
        if path.endswith(".xz") or path.endswith(".zst"):
            die(f"compressed module {path}: unpack it first")
        entries.append((f"lib/modules/{m}.ko", r, data, 0, 0))
    if "bbr1_2brobust" in ccs:
        entries.append(("lib/modules/tcp_bbr2b.ko", r, open(robust_module(work, ver), "rb").read(),
                        0, 0))
    order = load_order({m: mods[m] for m in mods} | (
        {"tcp_bbr2b": robust_module(work, ver)} if "bbr1_2brobust" in ccs else {}))
    entries.append(("lib/modules/order", r, (" ".join(order) + "\n").encode(), 0, 0))
    initrd = os.path.join(work, "initrd.cpio")
    cpio_newc(entries, initrd)
    return vmlinuz, ver, initrd, vmtcp, vmsched


# ---------------------------------------------------------------- one guest run
def find_vcpu(marker, timeout):
    """(qemu pid, vCPU thread id) of the qemu process whose command line holds MARKER."""
    end = time.time() + timeout
    while time.time() < end:
        for p in glob.glob("/proc/[0-9]*/cmdline"):
            try:
                if marker.encode() not in open(p, "rb").read():
                    continue
                pid = p.split("/")[2]
                for t in glob.glob(f"/proc/{pid}/task/*/comm"):
                    if open(t).read().startswith("CPU 0/"):
                        return int(pid), int(t.split("/")[4])
            except OSError:
                continue
        time.sleep(0.05)
    return None, None


def wait_for(path, word, timeout):
    end = time.time() + timeout
    while time.time() < end:
        try:
            if word in open(path, errors="replace").read():
                return True
        except OSError:
            pass
        time.sleep(0.02)
    return False


def guest_run(a, img, cc, timeslice, share, rep, out):
    vmlinuz, ver, initrd, vmtcp, vmsched = img
    os.makedirs(out, exist_ok=True)
    console = os.path.join(out, "console.txt")
    if os.path.exists(console):
        os.remove(console)
    secs = a.secs
    append = (f"cclab.dst={{r0}} cclab.port={PORT} cclab.cc={KERNEL_CC[cc]} "
              f"cclab.secs={secs} cclab.wait=1 cclab.napi_tx={a.napi_tx}")
    scen = os.path.join(out, "scenario.toml")
    with open(scen, "w") as f:
        f.write(f"""name = "vm_guest"
description = "a qemu guest sends one bulk flow through the emulated path"
duration = "{secs + 16}s"
seed = {rep + 1}

[topology]
{topology(a)}
# The emulator needs a flow: 10 kB that end before the guest takes s0's address.
[[flows]]
controller = "cubic"
size = "10KB"

[[commands]]
host = "r0"
run = "{vmtcp} sink {PORT} {secs + 4}"

[[commands]]
host = "s0"
start = "300ms"
run = "sh {os.path.join(HERE, 'host.sh')} {vmlinuz} {initrd} {console} '{append}'"
""")
    env = dict(os.environ, CCLAB_VM_ACCEL=a.accel)
    emu = subprocess.Popen([a.cclab, "emulate", scen, "--out", os.path.join(out, "emu")], env=env,
                           stdout=open(os.path.join(out, "emulate.log"), "w"),
                           stderr=subprocess.STDOUT)
    sched = None
    cg = None
    done, cpu0, cpu1 = False, None, None
    # Real-time priority for the emulator and the guest, so that other work on the machine
    # does not take their CPU: what limits the guest is the schedule alone.
    time.sleep(0.2)
    subprocess.run(["chrt", "-a", "-f", "-p", "40", str(emu.pid)], stdout=subprocess.DEVNULL)
    try:
        if not wait_for(console, "READY", 30 if a.accel == "kvm" else 60):
            if a.accel == "kvm":
                die("KVM does not boot the guest on this machine (nothing from the kernel after "
                    f"the firmware: {console}); run with --accel tcg")
            die(f"the guest did not boot: {console}, {out}/emulate.log")
        pid, tid = find_vcpu("cclab-vm-guest", 5)
        if tid is None:
            die("qemu's vCPU thread not found")
        subprocess.run(["chrt", "-a", "-f", "-p", "40", str(pid)], stdout=subprocess.DEVNULL)
        if share < 1.0:
            cg = os.path.join(FREEZER, f"cclab-vm-{pid}")
            os.makedirs(cg, exist_ok=True)
            with open(os.path.join(cg, "tasks"), "w") as f:
                f.write(str(tid))
            slice_us = int(round(timeslice * 1e6))
            period_us = int(round(timeslice / share * 1e6))
            sched = subprocess.Popen([vmsched, cg, str(slice_us), str(period_us)],
                                     stdout=subprocess.PIPE, text=True)
        # The vCPU thread's CPU time over the transfer (the host's view: schedstat's first
        # field, ns on the CPU), from READY to the sender's DONE.
        cpu0, wall0 = vcpu_ns(pid, tid), time.time()
        done = wait_for(console, "DONE", secs + 30)
        cpu1, wall1 = vcpu_ns(pid, tid), time.time()
        emu.wait(timeout=secs + 120)
    finally:
        sched_report = ""
        if sched is not None:
            sched.send_signal(signal.SIGTERM)
            sched_report = sched.communicate(timeout=10)[0].strip()
        if emu.poll() is None:
            emu.send_signal(signal.SIGINT)
            emu.wait(timeout=30)
        if cg is not None:
            for _ in range(50):
                try:
                    os.rmdir(cg)
                    break
                except OSError:
                    time.sleep(0.1)
    r = parse_guest(out, secs, a.measure_last, sched_report)
    if done and cpu0 is not None and cpu1 is not None:
        r["vcpu_s"] = (cpu1 - cpu0) / 1e9
        r["wall_s"] = wall1 - wall0
    return r


def vcpu_ns(pid, tid):
    try:
        return int(open(f"/proc/{pid}/task/{tid}/schedstat").read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def parse_guest(out, secs, last, sched_report):
    emu = json.load(open(os.path.join(out, "emu", "emulator.json")))
    cmds = emu.get("commands", [])
    sink = next((c for c in cmds if "sink" in c.get("command", c.get("run", ""))), None)
    text = sink.get("stdout", "") if sink else ""
    r = [(int(t), int(b)) for t, b in re.findall(r"^R (\d+) (\d+)$", text, re.M)]
    at = dict(r)
    t1 = secs * 1000
    t0 = t1 - int(last * 1000)
    goodput = (at.get(t1, r[-1][1] if r else 0) - at.get(t0, 0)) * 8 / last / 1e6 if r else 0.0
    con = open(os.path.join(out, "console.txt"), errors="replace").read()
    trace = [tuple(map(int, m)) for m in re.findall(
        r"^S (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)", con, re.M)]
    bbr = [tuple(map(int, m)) for m in re.findall(
        r"^B (\d+) (\d+) (\d+) (\d+) (\d+)", con, re.M)]
    cpu = re.search(r"^C (\d+) (\d+) (\d+)", con, re.M)
    busy = None
    if cpu:
        u, s, i = map(int, cpu.groups())
        busy = (u + s) / max(1, u + s + i)
    late = emu.get("lateness_ms") or {}
    return {"goodput_mbps": goodput, "trace": trace, "bbr": bbr, "lateness_ms": late,
            "emu_drops": emu.get("self_drops", 0) + emu.get("tun_drops", 0), "guest_busy": busy,
            "sched": sched_report, "kernel": re.search(r"GUEST (\S+)", con).group(1)
            if "GUEST" in con else None}


# ---------------------------------------------------------------- cclab's side
def sim_study(a, out):
    """The same flows in cclab, plain and vm host models: one study, its stats.csv."""
    f = os.path.join(out, "sim_study.toml")
    shares = ", ".join(str(s) for s in a.shares)
    slices = ", ".join(f'"{t}"' for t in a.timeslices)
    ccs = ", ".join(f'"{c}"' for c in a.ccs)
    with open(f, "w") as fh:
        fh.write(f"""name = "vm_guest_sim"
description = "the real-guest validation's flows in cclab"
seed = 1
repetitions = {max(a.reps, 5)}
measure_last = "{a.measure_last}s"

[base]
name = "vm_guest_sim"
duration = "{a.secs}s"

[base.topology]
{topology(a)}
[[base.flows]]
controller = "cubic"
handshake = false
[base.flows.host]
cpu_share = 1.0
cpu_timeslice = "10ms"

[grid]
flows.0.host.cpu_timeslice = [{slices}]
flows.0.host.cpu_share = [{shares}]
flows.0.controller = [{ccs}]
host.preset = ["plain", "vm"]

[analysis]
metrics = ["window_goodput_pct", "upload_mbps"]
plots = []
flent = false
png = false
""")
    sdir = os.path.join(out, "sim")
    shutil.rmtree(sdir, ignore_errors=True)
    sh([a.cclab, "study", f, "--out", sdir, "-j", "2"], stdout=subprocess.DEVNULL)
    return sdir


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cclab", default=os.path.join(ROOT, "target", "release", "cclab"))
    ap.add_argument("--work", default=os.path.join(ROOT, "cclab-out", "validate-vm"))
    ap.add_argument("--ccs", default="cubic,bbr1")
    ap.add_argument("--timeslices", default="1ms,10ms")
    ap.add_argument("--shares", default="1,0.6,0.4,0.3,0.2")
    ap.add_argument("--rate", default="20Mbit")
    ap.add_argument("--delay", default="10ms")
    ap.add_argument("--secs", type=int, default=20)
    ap.add_argument("--measure-last", type=float, default=18.0)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--kernel", help="the guest's kernel package (default: the one Debian's "
                    f"{KERNEL_PKG} depends on), e.g. linux-image-6.1.0-57-cloud-amd64")
    ap.add_argument("--napi-tx", type=int, default=1, choices=[0, 1],
                    help="the guest's virtio_net napi_tx (1, the driver's default: sent packets "
                    "are freed on the TX interrupt; 0: at transmit)")
    ap.add_argument("--accel", default="tcg", choices=["tcg", "kvm"],
                    help="kvm: try hardware virtualisation (stops with a message where the "
                    "guest does not boot)")
    ap.add_argument("--markdown")
    ap.add_argument("--sim-only", action="store_true")
    a = ap.parse_args()
    # SIGTERM ends the sweep through the same cleanup as Ctrl-C: the schedule thawed and
    # stopped, the emulator interrupted, the freezer cgroup removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    a.ccs = a.ccs.split(",")
    a.timeslices = a.timeslices.split(",")
    a.shares = [float(s) for s in a.shares.split(",")]
    for c in a.ccs:
        if c not in KERNEL_CC:
            die(f"--ccs: {c} has no kernel controller; valid: {', '.join(KERNEL_CC)}")
    if os.geteuid() != 0 and not a.sim_only:
        die("needs root (cclab emulate, the tap device and the freezer cgroup)")
    os.makedirs(a.work, exist_ok=True)
    results_path = os.path.join(a.work, "guest.json")
    results = json.load(open(results_path)) if os.path.exists(results_path) else {}
    if not a.sim_only:
        if not os.path.isdir(FREEZER):
            die(f"no cgroup v1 freezer at {FREEZER}")
        img = build(a.work, a.cc, a.ccs, a.kernel)
        for cc in a.ccs:
            for ts in a.timeslices:
                for share in a.shares:
                    for rep in range(a.reps):
                        key = f"{cc}/{ts}/{share}/{rep}"
                        if key in results:
                            continue
                        out = os.path.join(a.work, "guest", key.replace("/", "_"))
                        r = guest_run(a, img, cc, parse_secs(ts), share, rep, out)
                        results[key] = r
                        json.dump(results, open(results_path, "w"))
                        print(f"guest {key}: {r['goodput_mbps']:.2f} Mbit/s, busy "
                              f"{r['guest_busy']}, {r['sched']}", flush=True)
    sdir = sim_study(a, a.work)
    table(a, results, sdir)


def table(a, results, sdir):
    rows = [r for r in csv.DictReader(open(os.path.join(sdir, "vm_guest_sim", "stats.csv")))
            if r["metric"] == "window_goodput_pct"]
    rate = parse_rate(a.rate)

    def sim(cc, ts, share, preset):
        for r in rows:
            if (r.get("flows.0.controller") == cc and r.get("flows.0.host.cpu_timeslice") == ts
                    and float(r.get("flows.0.host.cpu_share")) == share
                    and r.get("host.preset") == preset):
                return float(r["median"]) / 100 * rate / 1e6
        return None

    lines = [f"| controller | timeslice | share | guest Mbit/s | cclab plain | cclab vm | "
             f"plain vs guest | vm vs guest |", "|---|---|---|---|---|---|---|---|"]
    for cc in a.ccs:
        for ts in a.timeslices:
            for share in a.shares:
                g = [v["goodput_mbps"] for k, v in results.items()
                     if k.startswith(f"{cc}/{ts}/{share}/")]
                gm = sorted(g)[len(g) // 2] if g else None
                p, v = sim(cc, ts, share, "plain"), sim(cc, ts, share, "vm")

                def rel(x):
                    return f"{(x - gm) / gm * 100:+.0f} %" if x and gm else "–"
                fmt = lambda x: f"{x:.1f}" if x is not None else "–"
                lines.append(f"| {cc} | {ts} | {share:.0%} | {fmt(gm)} | {fmt(p)} | {fmt(v)} | "
                             f"{rel(p)} | {rel(v)} |")
    text = "\n".join(lines)
    seen = set()
    busy = ["| controller | timeslice | share | vCPU busy % | vCPU µs per data segment | "
            "freezer switches late, mean/p99 µs |", "|---|---|---|---|---|---|"]
    for k, v in results.items():
        cc, ts, share, rep = k.split("/")
        if (cc, ts, share) in seen or "vcpu_s" not in v:
            continue
        seen.add((cc, ts, share))
        segs = v["goodput_mbps"] * 1e6 / 8 / 1448 * v["wall_s"]
        m = re.search(r"late_mean_us (\S+) late_p99_us (\S+)", v.get("sched", ""))
        busy.append(f"| {cc} | {ts} | {float(share):.0%} | {100 * v['vcpu_s'] / v['wall_s']:.1f} | "
                    f"{v['vcpu_s'] / max(segs, 1) * 1e6:.1f} | "
                    f"{m.group(1) + ' / ' + m.group(2) if m else '–'} |")
    text += "\n\n" + "\n".join(busy) + "\n\n" + trace_table(a, results)
    print(text)
    if a.markdown:
        open(a.markdown, "w").write(text + "\n")


TRACE_COLS = [("cwnd", "cwnd pkts"), ("pacing", "pacing Mbit/s"), ("delivery", "delivery Mbit/s"),
              ("rtt", "srtt ms"), ("inflight", "in flight pkts")]


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def ratio_text(xs):
    return " · ".join(f"{pct(xs, q):.2f}" for q in (0.1, 0.5, 0.9)) if xs else "–"


def guest_inflight_bdp(r, secs, last, mss=1448):
    """The guest's packets in flight (TCP_INFO's unacked) over BBR's BDP (TCP_CC_INFO's bw
    times its min_rtt, in MSS) at each 100 ms sample of the measured window."""
    t0, t1 = (secs - last) * 1000, secs * 1000
    model = {t: (bw, rtt) for t, bw, rtt, _, _ in r.get("bbr", [])}
    out = []
    for x in r.get("trace", []):
        if t0 <= x[0] <= t1 and x[0] in model and model[x[0]][0] and model[x[0]][1]:
            bdp = model[x[0]][0] / 8 / mss * model[x[0]][1] / 1e6
            out.append(x[5] / bdp)
    return out


def sim_inflight_bdp(d, secs, last, mss=1448):
    """The same ratio from a cclab run, at every ACK (trace.csv's in_flight) over the BDP of the
    last cc_stats.csv sample (bw_bps, min_rtt_us; every 200 ms) before it."""
    st = {}
    for r in csv.DictReader(open(os.path.join(d, "cc_stats.csv"))):
        if r["key"] in ("bw_bps", "min_rtt_us"):
            st.setdefault(float(r["t_s"]), {})[r["key"]] = float(r["value"])
    times = sorted(st)
    out, i = [], -1
    for r in csv.DictReader(open(os.path.join(d, "trace.csv"))):
        t = float(r["t_s"])
        while i + 1 < len(times) and times[i + 1] <= t:
            i += 1
        if r["event"] != "ack" or i < 0 or t < secs - last:
            continue
        m = st[times[i]]
        if m.get("bw_bps") and m.get("min_rtt_us"):
            out.append(float(r["in_flight"]) / (m["bw_bps"] / 8 / mss * m["min_rtt_us"] / 1e6))
    return out


def guest_trace_means(r, secs, last):
    """Means of the guest's TCP_INFO samples over the measured window."""
    t0, t1 = (secs - last) * 1000, secs * 1000
    rows = [x for x in r.get("trace", []) if t0 <= x[0] <= t1]
    if not rows:
        return None
    n = len(rows)
    return {"cwnd": sum(x[1] for x in rows) / n, "pacing": sum(x[2] for x in rows) / n / 1e6,
            "delivery": sum(x[3] for x in rows) / n / 1e6, "rtt": sum(x[4] for x in rows) / n / 1e3,
            "inflight": sum(x[5] for x in rows) / n,
            "bdp": ratio_text(guest_inflight_bdp(r, secs, last))}


def sim_trace_means(a, cc, ts, share, preset, out):
    """One cclab run of the same flow (seed 1), the means of its flows.csv samples."""
    f = os.path.join(out, f"trace_{cc}_{ts}_{share}_{preset}.toml")
    with open(f, "w") as fh:
        fh.write(f"""name = "vm_guest_trace"
duration = "{a.secs}s"
[topology]
{topology(a)}[[flows]]
controller = "{cc}"
handshake = false
trace = true
[flows.host]
preset = "{preset}"
cpu_share = {share}
cpu_timeslice = "{ts}"
""")
    d = f[:-5]
    sh([a.cclab, "run", f, "--out", d], stdout=subprocess.DEVNULL)
    rows = [r for r in csv.DictReader(open(os.path.join(d, "flows.csv")))
            if a.secs - a.measure_last <= float(r["t_s"]) <= a.secs]
    n = len(rows)
    mean = lambda k: sum(float(r[k] or 0) for r in rows) / n
    return {"cwnd": mean("cwnd"), "pacing": mean("pacing_rate_mbps"),
            "delivery": mean("delivery_rate_mbps"), "rtt": mean("srtt_ms"),
            "inflight": mean("in_flight"),
            "bdp": ratio_text(sim_inflight_bdp(d, a.secs, a.measure_last))
            if cc.startswith("bbr") else "–"}


def trace_table(a, results):
    lines = ["| controller | timeslice | share | side | " + " | ".join(c[1] for c in TRACE_COLS)
             + " | in flight / BDP p10 · p50 · p90 |",
             "|---|---|---|---|" + "---|" * (len(TRACE_COLS) + 1)]
    for cc in a.ccs:
        for ts in a.timeslices:
            for share in a.shares:
                r = results.get(f"{cc}/{ts}/{share}/0")
                g = guest_trace_means(r, a.secs, a.measure_last) if r else None
                if g is None:
                    continue
                for side, m in [("guest", g), ("cclab plain",
                                 sim_trace_means(a, cc, ts, share, "plain", a.work))]:
                    lines.append(f"| {cc} | {ts} | {share:.0%} | {side} | " + " | ".join(
                        f"{m[c]:.1f}" for c, _ in TRACE_COLS) + f" | {m['bdp']} |")
    return "\n".join(lines)


def parse_rate(s):
    m = re.fullmatch(r"([0-9.]+)(Kbit|Mbit|Gbit)", s)
    return float(m.group(1)) * {"Kbit": 1e3, "Mbit": 1e6, "Gbit": 1e9}[m.group(2)]


if __name__ == "__main__":
    main()
