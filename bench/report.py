#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""report.py - turns the raw output of scripts/bench into build/bench.json,
a Markdown table and build/bench.png.

Inputs: Google Benchmark's JSON report of build/host-bench/host_bench, and
the console output of scripts/guest/guest-bench.sh runs ("BENCH part metric device
value" lines).  Every row compares krwq with a peer measured in the same
process or the same boot.  ratio = krwq / peer; each row says whether
lower or higher is better ("better"), and a goal is a bound on ratio.
build/bench.json is {"meta": {...}, "rows": [...]}: meta says which commit,
when, on which kernel variant and under what host load.
"""
import argparse
import json
import os
import re
import subprocess
import sys


def host_rows(path):
    """Rows from Google Benchmark's JSON (median of the repetitions)."""
    with open(path) as f:
        doc = json.load(f)
    med = {}
    for b in doc["benchmarks"]:
        if b.get("aggregate_name", "median") != "median":
            continue
        name = b.get("run_name", b["name"])
        # single-thread figures use CPU time (steadier on a shared host);
        # the two-thread ones wall time, which is what a pair of threads costs
        t = b["real_time"] if "threads:" in name else b["cpu_time"]
        med[name] = dict(b, t=t)

    def ns(name, per=1.0):
        b = med[name]
        scale = {"ns": 1.0, "us": 1e3, "ms": 1e6}[b["time_unit"]]
        return b["t"] * scale / per

    floor = "Boost spsc_queue (floor)"
    rows = []
    for sge in (1, 4):
        rows.append(row(f"host: post+take, {sge} SGE", "ns/op", "lower",
                        ns(f"BM_krwq_pair/{sge}"), floor, ns(f"BM_floor_pair/{sge}"),
                        "ratio <= 1.5", lambda r: r <= 1.5))
    rows.append(row("host: 32-WR list post + 32 takes, per WR", "ns/WR", "lower",
                    ns("BM_krwq_list32", 32), floor, ns("BM_floor_list32", 32)))
    rows.append(row("host: producer + consumer threads, per WR", "ns/WR", "lower",
                    ns("BM_krwq_threads/real_time/threads:2"), floor,
                    ns("BM_floor_threads/real_time/threads:2")))
    rows.append(row("host: SRQ resize with 64K WRs queued", "us/resize", "lower",
                    ns("BM_krwq_srq_resize64k", 2) / 1e3, "calloc + memcpy (floor)",
                    ns("BM_floor_srq_resize64k", 2) / 1e3))
    base = ns("BM_krwq_depth/16")
    for d in (16, 256, 4096, 65536):
        rows.append(row(f"host: post+take at depth {d}", "ns/op", "lower",
                        ns(f"BM_krwq_depth/{d}"), floor, ns(f"BM_floor_depth/{d}"),
                        "flat: krwq <= 1.5 x krwq at depth 16",
                        lambda r, v=ns(f"BM_krwq_depth/{d}"): v <= 1.5 * base))
    for d in (16, 256, 4096, 65536):
        rows.append(row(f"host: bytes per queue, depth {d}, 1 SGE", "bytes", "lower",
                        med[f"BM_krwq_depth/{d}"]["queue_bytes"], floor,
                        med[f"BM_floor_depth/{d}"]["queue_bytes"]))
    return rows


def slug(name):
    """A row's id: its name in lower case, runs of other characters as "-"."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def row(name, unit, better, krwq, peer=None, peer_value=None, goal=None, test=None,
        note=None, rid=None, floor=None, floor_value=None):
    """One row of bench.json.  better is "lower" or "higher"; a row without
    a peer is a figure on its own (no ratio, no goal).  floor and
    floor_value: what bounds krwq's figure in the same boot, in the row's
    unit; floor_ratio is krwq / floor_value, read the way ratio is."""
    assert better in ("lower", "higher")
    ratio = krwq / peer_value if peer_value else None
    met = None
    if test is not None and ratio is not None:
        met = bool(test(ratio))
    return {"id": rid or slug(name), "name": name, "unit": unit, "better": better,
            "krwq": round(krwq, 4), "peer": peer,
            "peer_value": round(peer_value, 4) if peer_value is not None else None,
            "ratio": round(ratio, 4) if ratio is not None else None,
            "goal": goal, "met": met, "note": note, "floor": floor,
            "floor_value": round(floor_value, 4) if floor_value else None,
            "floor_ratio": round(krwq / floor_value, 4) if floor_value else None}


def abi_rows(path):
    """ABI 2 (mapped rings) against ABI 1 (every verb through the kernel),
    from scripts/guest/abi-bench.sh: both in one boot, krwq.ko reloaded."""
    by_abi, floors = {}, {}
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("abi="):
                kv = dict(x.split("=", 1) for x in line.split())
                by_abi[kv["abi"]] = {k: float(v) for k, v in kv.items() if k != "abi"}
            elif line.startswith("floors "):
                floors = {k: float(v) for k, v in
                          (x.split("=", 1) for x in line.split()[1:])}
    if "1" not in by_abi or "2" not in by_abi:
        return [], [f"{path}: no line for abi=1 and abi=2"]
    two, one = by_abi["2"], by_abi["1"]
    peer = "krwq0, uverbs ABI 1"
    spec = [("ibv_post_recv, 1 WR per call", "post_recv_calls_per_s",
             "calls/s", "higher", ">= 2x ABI 1", lambda r: r >= 2),
            ("ib_send_lat 64 B, typical", "send_lat_64_typical_us",
             "us", "lower", None, None),
            ("ib_send_bw 64 B, message rate", "send_bw_64_mpps",
             "Mpps", "higher", None, None),
            ("ib_send_bw 64 KiB, bandwidth", "send_bw_64k_mbps",
             "MB/s", "higher", None, None)]
    rows = []
    for name, key, unit, better, goal, test in spec:
        if one.get(key) and two.get(key) is not None:
            rows.append(row(f"ABI 2 (mapped rings): {name}", unit, better, two[key], peer,
                            one[key], goal, test))
    ring = floors.get("ring_post_ns")
    if ring and two.get("post_recv_calls_per_s"):
        rows.append(row("floor: ABI 2 ibv_post_recv, 1 WR per call, against the mapped-ring "
                        "floor", "calls/s", "higher", two["post_recv_calls_per_s"],
                        "one WQE written into a mapped ring, no provider (same boot)",
                        1e9 / ring, "ratio >= 0.5", lambda r: r >= 0.5,
                        note=f"the floor: {ring:.2f} ns a WQE (bench/floors.c)"))
    return rows, []


def guest_values(path):
    vals, errors = {}, []
    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r"^BENCH (\w+) (\w+) (\w+) ([0-9.eE+-]+)\s*$", line)
            if m:
                vals[(m[1], m[2], m[3])] = float(m[4])
            elif line.startswith("BENCH-ERROR"):
                errors.append(line.strip())
    return vals, errors


KERNEL = [
    ("post1", "kernel: ib_post_recv, 1 WR", "ns/call", "lower", "ratio <= 1", 1.0),
    ("post_list32", "kernel: ib_post_recv, 32-WR list", "ns/call", "lower",
     "ratio <= 0.5", 0.5),
    ("take", "kernel: take one receive WQE", "ns/op", "lower", "ratio <= 1", 1.0),
    ("pair1", "kernel: post+take, 1 SGE", "ns/op", "lower", None, None),
    ("pair4", "kernel: post+take, 4 SGE", "ns/op", "lower", None, None),
    ("threads", "kernel: producer + consumer on 2 CPUs, per WR", "ns/WR", "lower",
     None, None),
    ("two_qps", "kernel: post+take on 2 QPs, one per CPU, per WR", "ns/WR", "lower",
     None, None),
]

LOWER_US = ("us", "lower")
E2E = [
    ("rc_pingpong_us_64", "ibv_rc_pingpong 64 B", "us/iter", "lower"),
    ("rc_pingpong_us_4096", "ibv_rc_pingpong 4 KiB", "us/iter", "lower"),
    ("send_lat_typical_us_64", "ib_send_lat 64 B, typical", *LOWER_US),
    ("send_bw_mmps_64", "ib_send_bw 64 B, message rate", "msg/s", "higher"),
    ("send_bw_mibs_64", "ib_send_bw 64 B, bandwidth", "MiB/s", "higher"),
    ("send_bw_mmps_4096", "ib_send_bw 4 KiB, message rate", "msg/s", "higher"),
    ("send_bw_mibs_4096", "ib_send_bw 4 KiB, bandwidth", "MiB/s", "higher"),
    ("send_bw_mmps_65536", "ib_send_bw 64 KiB, message rate", "msg/s", "higher"),
    ("send_bw_mibs_65536", "ib_send_bw 64 KiB, bandwidth", "MiB/s", "higher"),
    ("write_bw_mibs_4096", "ib_write_bw 4 KiB, bandwidth", "MiB/s", "higher"),
]

# perftest over rdma_cm (-R) on krwqe0, rxe0 and siw0: the E2E rows that
# apply, and lists of 32 WRs per post; metrics end in _cm
CM = [
    ("send_lat_typical_us_64", "ib_send_lat 64 B, typical", *LOWER_US),
    ("send_bw_mmps_64", "ib_send_bw 64 B, message rate", "msg/s", "higher"),
    ("send_bw_mmps_4096", "ib_send_bw 4 KiB, message rate", "msg/s", "higher"),
    ("send_bw_mibs_65536", "ib_send_bw 64 KiB, bandwidth", "MiB/s", "higher"),
    ("write_bw_mibs_4096", "ib_write_bw 4 KiB, bandwidth", "MiB/s", "higher"),
    ("send_bw_mmps_64_pl32", "ib_send_bw --post_list 32, 64 B, message rate", "msg/s",
     "higher"),
    ("send_bw_mmps_4096_pl32", "ib_send_bw --post_list 32, 4 KiB, message rate", "msg/s",
     "higher"),
    ("write_bw_mmps_4096_pl32", "ib_write_bw --post_list 32, 4 KiB, message rate", "msg/s",
     "higher"),
    ("write_bw_mibs_4096_pl32", "ib_write_bw --post_list 32, 4 KiB, bandwidth", "MiB/s",
     "higher"),
    ("send_bw_mmps_64_q2", "ib_send_bw -q 2, 64 B, message rate", "msg/s", "higher"),
]

# how many times better than each peer krwq is to be: the 64-byte
# post-list message rate, where krwq's own per-WR cost shows, 10x rxe0
# and 5x siw0; every other end-to-end row 3x rxe0 and 2x siw0
GOALS = {"rxe0": 3, "siw0": 2}
GOALS_PL64 = {"rxe0": 10, "siw0": 5}


def goal_bound(better, times_better):
    """The ratio krwq / peer that makes krwq times_better than its peer."""
    return times_better if better == "higher" else round(1 / times_better, 3)


def goal_of(better, times_better):
    """The goal text and test that krwq is times_better than its peer."""
    bound = goal_bound(better, times_better)
    if better == "higher":
        return f"ratio >= {bound:g}", lambda r: r >= bound
    return f"ratio <= {bound:g}", lambda r: r <= bound


def copy_ns(vals, size):
    """One in-guest copy of size bytes, the faster of memcpy and rep movsb."""
    rates = [v for (p, m, d), v in vals.items()
             if p == "e2e" and d == "memcpy" and m.endswith(f"_mibs_{size}") and v > 0]
    return size / (max(rates) * 2**20) * 1e9 if rates else None


def floor_of(vals, metric):
    """What bounds the figure of metric in the same boot: per message, one
    null system call (shared by a list's WRs) and one copy of the message;
    a pingpong iteration is two messages.  (description, value in the
    metric's unit), or (None, None) without the floors."""
    sys_ns = vals.get(("floor", "syscall_ns", "guest"))
    m = re.match(r"^(\w+?)_(us|mmps|mibs)_(\d+)(?:_pl(\d+))?(?:_q\d+)?$", metric)
    if sys_ns is None or not m:
        return None, None
    size, wrs = int(m[3]), int(m[4] or 1)
    copy = copy_ns(vals, size)
    if copy is None:
        return None, None
    per_msg = sys_ns / wrs + copy
    what = (f"null system call{f' / {wrs}' if wrs > 1 else ''} + one "
            f"{size} B copy (same boot)")
    if m[2] == "us":
        n = 2 if m[1].startswith("rc_pingpong") else 1
        return what, n * per_msg / 1e3
    rate = 1e9 / per_msg
    return what, rate if m[2] == "mmps" else rate * size / 2**20


def sig_digits(v):
    """Significant digits of a figure printed with a fixed number of decimals."""
    return len(f"{v:.6f}".replace(".", "").lstrip("0"))


def exact_rates(vals):
    """perftest prints bandwidth with two decimals and the message rate with
    six, so a slow device loses one or the other to rounding.  For each
    size, keep the one with more significant digits and derive the other:
    MiB/s = Mmsg/s * 1e6 * size / 2^20."""
    for (part, metric, dev), v in list(vals.items()):
        m = re.match(r"^(\w+?)_bw_mibs_(\d+)(\w*)$", metric)
        if part != "e2e" or not m:
            continue
        rate_key = ("e2e", f"{m[1]}_bw_mmps_{m[2]}{m[3]}", dev)
        rate, size = vals.get(rate_key), int(m[2])
        if rate is None:
            continue
        if sig_digits(rate * 1e6) > sig_digits(v * 100):
            vals[(part, metric, dev)] = rate * 1e6 * size / 2**20
        else:
            vals[rate_key] = v * 2**20 / size / 1e6


def floor_rows(vals, sfx):
    """The floors of the boot as rows of their own, and krwq0's 64-byte
    send against the null system call (its goals)."""
    rows = []
    sys_ns = vals.get(("floor", "syscall_ns", "guest"))
    ring = vals.get(("floor", "ring_post_ns", "guest"))
    if sys_ns is not None:
        rows.append(row("floor: null system call, syscall(SYS_getppid), best round" + sfx,
                        "ns", "lower", sys_ns))
    if ring is not None:
        rows.append(row("floor: one WQE written into a mapped ring, no provider" + sfx,
                        "ns", "lower", ring))
    for size in (64, 65536):
        c = copy_ns(vals, size)
        if c is not None:
            rows.append(row(f"floor: one {size} B in-guest copy, best of memcpy and rep movsb"
                            + sfx, "ns", "lower", c))
    if sys_ns is None:
        return rows
    k = vals.get(("e2e", "send_bw_mmps_64", "krwq0"))
    if k is not None:
        rows.append(row("floor: ib_send_bw 64 B, 1 WR per call, against the null system call"
                        + sfx, "msg/s", "higher", k * 1e6,
                        "null system calls/s (same boot)", 1e9 / sys_ns, "ratio >= 0.25",
                        lambda r: r >= 0.25))
    k = vals.get(("e2e", "send_lat_typical_us_64", "krwq0"))
    if k is not None:
        rows.append(row("floor: ib_send_lat 64 B, typical, against the null system call" + sfx,
                        "us", "lower", k, "one null system call (same boot)", sys_ns / 1e3,
                        "ratio <= 4", lambda r: r <= 4))
    return rows


# guest-bench.sh's breakdown: each traced level's own time (less its
# traced callees), and the leaves, as medians over the posts
SEGMENTS = [("seg_ioctl_ns", "uverbs: ioctl dispatch, attributes, object lookup"),
            ("seg_uverbs_post_send_ns", "uverbs: WR copy-in and rebuild (ib_uverbs_post_send)"),
            ("seg_krwq_post_send_ns", "krwq_post_send: lock, send-queue entry, run"),
            ("seg_exec_ns", "delivery: destination, MR checks, receive WQE fill"),
            ("seg_take_ns", "the take (krwq_rq_take_fitting)"),
            ("seg_copy_ns", "the 64 B copy (krwq_copy)"),
            ("seg_cq_ns", "both completions (krwq_cq_enter)")]


def breakdown(vals):
    """One 64-byte ibv_post_send on krwq0 as [(segment, ns)], its total,
    krwq's share and the tracer's cost per traced call; None without the
    figures.  Every traced call adds the tracer's cost (the median of the
    traced unlock of the seam, whose body is next to nothing) to its own
    time and to each caller's inclusive time, so each segment loses one
    cost per traced call in it, an inclusive time one per traced call
    under it and itself."""
    def get(what):
        return vals.get(("trace", what, "krwq0"))
    cost, sys_ns, ncq = get("tracer_ns"), vals.get(("floor", "syscall_ns", "guest")), get("cq_calls")
    if cost is None or sys_ns is None or ncq is None or any(get(m) is None for m, _ in SEGMENTS):
        return None
    segs = [("system call entry and exit (the null system call)", sys_ns)]
    for m, name in SEGMENTS:
        calls = ncq if m == "seg_cq_ns" else 1
        segs.append((name, max(get(m) - cost * calls, 0)))
    # traced calls: the ioctl, post_send, krwq_post_send, delivery, take,
    # copy and the completions; krwq_post_send holds the last five
    total = sys_ns + max(get("ioctl_ns") - cost * (6 + ncq), 0)
    mine = max(get("krwq_ns") - cost * (4 + ncq), 0)
    return segs, total, mine, cost


def breakdown_rows(vals, sfx):
    b = breakdown(vals)
    if not b:
        return []
    segs, total, mine, cost = b
    posts = vals.get(("trace", "posts", "krwq0"))
    note = (f"medians over {posts:.0f} posts traced by function_graph, less "
            f"{cost:.0f} ns the tracer adds per traced call")
    rows = [row(f"breakdown: {name}" + sfx, "ns", "lower", v, note=note if i == 0 else None,
                rid=f"breakdown-{i}{slug(sfx)}")
            for i, (name, v) in enumerate(segs)]
    rows.append(row("breakdown: one 64 B ibv_post_send, all" + sfx, "ns", "lower", total,
                    note=f"uverbs and the system call: {(total - mine) / total:.0%}, "
                    f"krwq_post_send: {mine / total:.0%}"))
    rows.append(row("floor: krwq's own share of a 64 B send (krwq_post_send) against the "
                    "null system call" + sfx, "ns", "lower", mine,
                    "one null system call (same boot)", segs[0][1], "ratio <= 1",
                    lambda r: r <= 1))
    return rows


def own_scaling_row(name, unit, better, krwq, peer, base, peer_note, goal=None, test=None,
                    rid=None):
    """krwq's figure with two QPs or jobs against its own with one (BASE
    names it): KRWQ and PEER are (one, two) pairs, and PEER's own ratio
    goes in the note through the format PEER_NOTE.  [] when krwq's pair
    is incomplete."""
    (k1, k2), (p1, p2) = krwq, peer
    if not k1 or not k2:
        return []
    note = peer_note.format(p2 / p1) if p1 and p2 else None
    return [row(name, unit, better, k2, base, k1, goal, test, note=note, rid=rid)]


def kernel_scaling_rows(vals):
    """krwq's post+take on two QPs, one per CPU, against its own one-QP
    pair: per WR, so 0.5 is a second CPU that doubles the rate."""
    def pair(dev):
        return vals.get(("kernel", "pair1", dev)), vals.get(("kernel", "two_qps", dev))

    return own_scaling_row("kernel: post+take, 2 QPs on 2 CPUs against 1 QP, per WR", "ns/WR",
                           "lower", pair("krwq"), pair("rdmavt"), "krwq, 1 QP (same boot)",
                           "rdmavt: {:.2f} of its one-QP figure", rid="kernel_scaling_2qps")


def guest_rows(vals, tag):
    exact_rates(vals)
    rows = []
    sfx = f" ({tag})" if tag else ""
    for metric, name, unit, better, goal, bound in KERNEL:
        k, p = vals.get(("kernel", metric, "krwq")), vals.get(("kernel", metric, "rdmavt"))
        if k is None or p is None:
            continue
        # the in-kernel part uses kernel QPs: the uverbs ABI does not apply
        rows.append(row(name, unit, better, k, "rdmavt (same boot)", p, goal,
                        (lambda r, b=bound: r <= b) if bound else None))
    rows += kernel_scaling_rows(vals)
    def e2e_row(metric, name, unit, better, krwq, peer, cm):
        k, p = vals.get(("e2e", metric + cm, krwq)), vals.get(("e2e", metric + cm, peer))
        if k is None or p is None:
            return
        if "_mmps_" in metric:	# perftest reports millions of messages/s
            k, p = k * 1e6, p * 1e6
        goals = GOALS_PL64 if metric == "send_bw_mmps_64_pl32" else GOALS
        goal, test = goal_of(better, goals[peer])
        what, floor = floor_of(vals, metric)
        via = f", rdma_cm, {krwq} against {peer}" if cm else ""
        rows.append(row("e2e: " + name + via + sfx, unit, better, k, f"{peer} (same boot)",
                        p, goal, test, floor=what, floor_value=floor))

    for metric, name, unit, better in E2E:
        e2e_row(metric, name, unit, better, "krwq0", "rxe0", "")
    for metric, name, unit, better in CM:
        for peer in ("rxe0", "siw0"):
            e2e_row(metric, name, unit, better, "krwqe0", peer, "_cm")
    def rate_pair(dev):  # perftest reports millions of messages/s
        return tuple(v and v * 1e6 for v in (vals.get(("e2e", "send_bw_mmps_64_cm", dev)),
                                             vals.get(("e2e", "send_bw_mmps_64_q2_cm", dev))))

    rows += own_scaling_row("e2e: ib_send_bw 64 B, message rate, 2 QPs against 1 QP, rdma_cm"
                            + sfx, "msg/s", "higher", rate_pair("krwqe0"), rate_pair("rxe0"),
                            "krwqe0, 1 QP (same boot)", "rxe0: {:.2f}x from its second QP")
    rows += floor_rows(vals, sfx)
    rows += breakdown_rows(vals, sfx)
    # the copy limit: the faster of glibc's memcpy and rep movsb
    k = vals.get(("e2e", "send_bw_mibs_65536", "krwq0"))
    copies = [v for (p, m, d), v in vals.items()
              if p == "e2e" and d == "memcpy" and m.endswith("_mibs_65536")]
    if k is not None and copies:
        rows.append(row("e2e: ib_send_bw 64 KiB against a 64 KiB copy" + sfx,
                        "MiB/s", "higher", k,
                        "in-guest memcpy/rep movsb, best (same boot)", max(copies),
                        "ratio >= 0.5", lambda r: r >= 0.5))
    return rows


def ulp_parse(path):
    """guest-ulp.sh's log: BENCH ulp values, fio's JSON reports (BENCH-FIO
    DEV JOB PASS LINE), the irqsoff tracer's windows (BENCH-IRQWIN WHAT
    US KRWQ START END: the longest section of a half second, whether its
    trace named krwq, where it started and ended) and each fio job's
    profile (BENCH-PROF DEV JOB PASS FIGURE VALUE) and perf samples
    (BENCH-PERF DEV JOB PASS SAMPLES DSO FUNCTION)."""
    vals, fio, irq, errors = {}, {}, {}, []
    prof = {}	# (device, job): {pass: {figure: value}}
    perf = {}	# (device, job): {pass: {(dso, function): samples}}
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"^BENCH ulp (\w+) (\w+) ([0-9.eE+-]+)\s*$", line)
            if m:
                vals[(m[1], m[2])] = float(m[3])
                continue
            m = re.match(r"^BENCH-PROF (\w+) (\w+) (\d+) (wq \S+|\w+) (\d+)\s*$", line)
            if m:
                figures = prof.setdefault((m[1], m[2]), {}).setdefault(m[3], {})
                figures[m[4]] = figures.get(m[4], 0) + int(m[5])
                continue
            m = re.match(r"^BENCH-PERF (\w+) (\w+) (\d+) (\d+) (\S+) (\S+)\s*$", line)
            if m:
                funcs = perf.setdefault((m[1], m[2]), {}).setdefault(m[3], {})
                funcs[(m[5], m[6])] = funcs.get((m[5], m[6]), 0) + int(m[4])
                continue
            m = re.match(r"^BENCH-FIO (\w+) (\w+) (\d+) ?(.*)$", line)
            if m:
                fio.setdefault((m[1], m[2], m[3]), []).append(m[4])
                continue
            m = re.match(r"^BENCH-IRQWIN (\w+) (\d+) ([01]) (\S+) (\S+) (\S+)\s*$", line)
            if m:
                irq.setdefault(m[1], []).append((int(m[2]), m[3] == "1", m[4], m[5], m[6]))
            elif line.startswith("BENCH-ERROR"):
                errors.append(line.strip())
    reports = {}	# (device, job): [the read figures of each pass]
    for key, lines in sorted(fio.items()):
        text = "\n".join(lines)
        try:
            # fio may put a warning before the report
            doc, _ = json.JSONDecoder().raw_decode(text[text.index("{"):])
            job = doc["jobs"][0]
            if job.get("error"):
                raise ValueError(f"fio job error {job['error']}")
            reports.setdefault(key[:2], []).append(job["read"])
        except (ValueError, KeyError, IndexError) as e:
            errors.append(f"fio report {key[1]} on {key[0]}, pass {key[2]}: {e}")
    return vals, reports, irq, prof, perf, errors


def per_io(passes, figure):
    """A profile figure per I/O over all passes of one job, or None."""
    ios = sum(p.get("ios", 0) for p in passes.values())
    if not ios or not all(figure in p for p in passes.values()):
        return None
    return sum(p[figure] for p in passes.values()) / ios


def busy_share(passes):
    """The CPUs' mean busy share over all passes of one job, in percent."""
    return mean([v / 10 for p in passes.values() for k, v in p.items() if k.endswith("_busy")])


def top_work(passes):
    """The work items run per I/O by function, most first, as text."""
    ios = sum(p.get("ios", 0) for p in passes.values())
    runs = {}
    for p in passes.values():
        for k, v in p.items():
            if k.startswith("wq "):
                runs[k[3:]] = runs.get(k[3:], 0) + v
    top = sorted(runs.items(), key=lambda kv: -kv[1])[:3]
    return ", ".join(f"{f} {n / ios:.2f}" for f, n in top) if ios and top else ""


def profile_rows(prof):
    """What each NVMe-oF 4 KiB random-read job cost the guest per I/O, on
    krwqe0 against rxe0: context switches, work-item runs, the CPUs' busy
    share.  Figures to explain the throughput rows; no goals."""
    rows, peer = [], "rxe0 (same boot)"
    for job, name, _, _ in NVMEOF[:2]:
        k, p = prof.get(("krwqe0", job)), prof.get(("rxe0", job))
        if not k or not p:
            continue
        for fig, what, get in (
                ("ctxt", "context switches per I/O", lambda x: per_io(x, "ctxt")),
                ("wq_runs", "work items run per I/O", lambda x: per_io(x, "wq_runs")),
                ("irq_poll", "IRQ_POLL softirqs per I/O", lambda x: per_io(x, "irq_poll"))):
            kv, pv = get(k), get(p)
            if kv is None or pv is None:
                continue
            note = None
            if fig == "wq_runs":
                note = f"krwqe0: {top_work(k)}; rxe0: {top_work(p)}"
            rows.append(row(f"ulp profile: NVMe-oF {name}, {what}", "per I/O", "lower", kv,
                            peer, pv, note=note, rid=f"ulp_prof_{job}_{fig}"))
        # how much of the CPUs the job kept busy: no ratio, since a higher
        # share is better only with the throughput to show for it, so
        # rxe0's share goes into the note
        kv, pv = busy_share(k), busy_share(p)
        if kv is not None and pv is not None:
            rows.append(row(f"ulp profile: NVMe-oF {name}, CPU busy share (mean of CPUs)",
                            "%", "higher", kv, note=f"rxe0 (same boot): {pv:.1f}%",
                            rid=f"ulp_prof_{job}_busy"))
    return rows


# The layers of the ULP profile, in the picture's order: what perf's
# samples of an NVMe-oF job count for, idle aside.
LAYERS = [("user", "fio and the rest of user space"),
          ("io", "system calls, aio and the block layer"),
          ("nvme_host", "NVMe host (nvme-rdma, nvme-core, nvme-fabrics)"),
          ("rdma_core", "RDMA core (ib_core, rdma_cm)"),
          ("krwq_send", "krwq: post, send queue's run and delivery"),
          ("krwq_completion", "krwq: completion queues"),
          ("krwq_other", "krwq: the rest"),
          ("rxe", "rdma_rxe"),
          ("nvme_target", "NVMe target (nvmet-rdma, nvmet, null_blk)"),
          ("sched", "scheduling, wake-ups and work items"),
          ("irq", "interrupts, softirqs, IPIs and timers"),
          ("kernel", "the rest of the kernel")]
# one colour per layer: krwq's in warm tones, rxe's in grey, the rest cool
LAYER_COLORS = ["#9e9ac8", "#6baed6", "#2171b5", "#41ab5d", "#f16913", "#d94801",
                "#fee391", "#969696", "#74c476", "#c994c7", "#e7298a", "#d9d9d9"]
MODULE_LAYERS = {"nvme_rdma": "nvme_host", "nvme_core": "nvme_host",
                 "nvme_fabrics": "nvme_host", "nvmet_rdma": "nvme_target",
                 "nvmet": "nvme_target", "null_blk": "nvme_target", "rdma_rxe": "rxe"}
# krwq's files by role.  A send is posted, run and delivered (the
# responder's take, copy and receive completion) in one section under the
# QP's s_lock with interrupts off, so its samples land where the run lets
# them back on: the post, the run and the delivery are one layer.  The
# completion queues' own (polling, arming) are another.
KRWQ_ROLES = {"krwq_send": ("qp.o", "req.o", "sq.o", "tx.o", "wire_req.o", "fabric.o",
                            "resp.o", "recv.o", "rq.o", "srq.o", "mr.o", "wire_resp.o",
                            "seam.o", "receive_queue.o"),
              "krwq_completion": ("cq.o", "comp.o")}
# the built-in kernel's functions, by name, first match
KERNEL_LAYERS = [
    ("idle", r"_idle$|^do_idle|^cpu_idle|safe_halt|^mwait|^cpuidle|^default_idle"),
    ("rdma_core", r"^_*(ib|rdma|cma|cm|iw|ucma|uverbs)_"),
    ("io", r"^_*(blk|bio|bdev|blkdev|submit_bio|aio|io_|x64_sys|do_syscall|entry_SYSCALL|"
           r"syscall|sbitmap|iomap|dio|lookup_ioctx|read_events|bvec|iov_iter|ksys_)"),
    ("sched", r"^_*(schedule|switch_to|switch_mm|finish_task_switch|context_switch|"
              r"try_to_wake_up|ttwu_|wake_up|(en|de)queue_(task|entity)|pick_next|"
              r"update_curr|update_load|task_tick|psi_|select_task_rq|sched_|"
              r"process_one_work|worker_thread|queue_work|kthread|complete|wait_for_common)"),
    ("irq", r"irq|apic|ipi|smp_call|hrtimer|tick|timer|clockevent|sysvec|^asm_"),
]


def read_krwq_functions(path):
    """krwq's function names and their object files (scripts/bench)."""
    funcs = {}
    if path:
        with open(path) as f:
            for line in f:
                name, _, obj = line.strip().partition(" ")
                funcs[name] = os.path.basename(obj)
    return funcs


def layer_of(dso, func, krwq_functions):
    """The layer (LAYERS, or "idle") a sample counts for.  A module is
    named [NAME], or by the path of its .ko where perf found the file."""
    ko = re.match(r"^/.*/([^/]+)\.ko(\.[a-z]+)?$", dso)
    if ko:
        dso = "[" + ko[1].replace("-", "_") + "]"
    if not dso.startswith("["):
        return "user"
    mod = dso.strip("[]")
    if mod == "krwq":
        obj = krwq_functions.get(func)
        for role, objs in KRWQ_ROLES.items():
            if obj in objs:
                return role
        return "krwq_other"
    if mod in MODULE_LAYERS:
        return MODULE_LAYERS[mod]
    if mod in ("vdso", "unknown"):
        return "user"
    if mod == "kernel.kallsyms":
        for layer, pattern in KERNEL_LAYERS:
            if re.search(pattern, func):
                return layer
    return "kernel"


def job_layers(passes, prof_passes, hz, krwq_functions):
    """One fio job's CPU time per I/O by layer, in microseconds, over the
    passes that have samples, idle apart; None without samples or I/Os."""
    ios = sum((prof_passes or {}).get(n, {}).get("ios", 0) for n in passes or {})
    if not passes or not ios:
        return None
    us = {}
    for funcs in passes.values():
        for (dso, func), n in funcs.items():
            layer = layer_of(dso, func, krwq_functions)
            us[layer] = us.get(layer, 0) + n * 1e6 / hz / ios
    return us


def ulp_layers(perf, prof, hz, krwq_functions):
    """{(device, job): {layer: us per I/O}} for the 4 KiB random reads."""
    out = {}
    for job, _, _, _ in NVMEOF[:3]:
        for dev in ("krwqe0", "rxe0"):
            us = job_layers(perf.get((dev, job)), prof.get((dev, job)), hz, krwq_functions)
            if us:
                out[(dev, job)] = us
    return out


def busy_us(us):
    """The sum of a job's layers but idle."""
    return sum(v for layer, v in us.items() if layer != "idle")


def layer_rows(perf, prof, hz, krwq_functions):
    """The CPU time per I/O of each 4 KiB random-read job on krwqe0 against
    rxe0: every layer's, and the sum of the busy ones.  Figures to
    explain the throughput rows; no goals."""
    rows, peer = [], "rxe0 (same boot)"
    layers = ulp_layers(perf, prof, hz, krwq_functions)
    for job, name, _, _ in NVMEOF[:3]:
        k, p = layers.get(("krwqe0", job)), layers.get(("rxe0", job))
        if not k or not p:
            continue
        rows.append(row(f"ulp profile: NVMe-oF {name}, CPU time per I/O, all busy", "us",
                        "lower", busy_us(k), peer, busy_us(p),
                        note=f"perf samples at {hz:.0f} Hz on each CPU; idle per I/O: "
                        f"krwqe0 {fmt(k.get('idle', 0))} us, rxe0 {fmt(p.get('idle', 0))} us",
                        rid=f"ulp_layer_{job}_all"))
        for layer, label in LAYERS:
            kv, pv = k.get(layer, 0), p.get(layer, 0)
            if kv or pv:
                rows.append(row(f"ulp profile: NVMe-oF {name}, CPU time per I/O, {label}",
                                "us", "lower", kv, peer if pv else None, pv or None,
                                rid=f"ulp_layer_{job}_{layer}"))
    return rows


def irqoff_summary(windows):
    """The longest section of all windows, and the longest of those whose
    trace named krwq, each with where it started and ended."""
    if not windows:
        return None, None
    top = max(windows, key=lambda w: w[0])
    mine = [w for w in windows if w[1]]
    best = max(mine, key=lambda w: w[0]) if mine else None
    return top, best


NVMEOF = [
    ("randread_4k_qd1", "4 KiB random read, iodepth 1", "IOPS", "iops"),
    ("randread_4k_qd32", "4 KiB random read, iodepth 32", "IOPS", "iops"),
    ("randread_4k_qd32_2jobs", "4 KiB random read, iodepth 32, 2 jobs", "IOPS", "iops"),
    ("read_128k_qd4", "128 KiB sequential read, iodepth 4", "MB/s", "bw_bytes"),
]


def pass_values(runs, key, scale=1):
    """A fio job's figure KEY in each of its passes, divided by SCALE."""
    return [r[key] / scale for r in runs or []]


def mean(values):
    return sum(values) / len(values) if values else None


def scaling_rows(fio):
    """Two fio jobs against one at iodepth 32 on krwqe0: what the second
    CPU and I/O queue add, against krwq's own one-job figure."""
    def mean_iops(dev, job):
        return mean(pass_values(fio.get((dev, job)), "iops"))

    def pair(dev):
        return mean_iops(dev, "randread_4k_qd32"), mean_iops(dev, "randread_4k_qd32_2jobs")

    return own_scaling_row("ulp: NVMe-oF 4 KiB random read, iodepth 32, 2 jobs against 1 job",
                           "IOPS", "higher", pair("krwqe0"), pair("rxe0"),
                           "krwqe0, 1 job (same boot)", "rxe0: {:.2f}x from its second job",
                           "ratio >= 1.6", lambda r: r >= 1.6, rid="ulp_scaling_2jobs")


def ulp_rows(path, krwq_functions):
    """NVMe-oF and rping set-ups on krwqe0 against rxe0, the profile of
    the 4 KiB random reads, and the interrupts-off figures, from one
    guest-ulp.sh boot; KRWQ_FUNCTIONS maps krwq's functions to their
    files."""
    vals, fio, irq, prof, perf, errors = ulp_parse(path)
    rows = []
    peer = "rxe0 (same boot)"
    for job, name, unit, key in NVMEOF:
        k, p = fio.get(("krwqe0", job)), fio.get(("rxe0", job))
        if not k or not p:
            continue
        # the mean of the passes (krwqe0, rxe0, rxe0, krwqe0)
        scale = 1e6 if key == "bw_bytes" else 1
        kv, pv = pass_values(k, key, scale), pass_values(p, key, scale)
        note = (f"passes: krwqe0 {', '.join(fmt(v) for v in kv)}; "
                f"rxe0 {', '.join(fmt(v) for v in pv)}")
        rows.append(row(f"ulp: NVMe-oF (nvme-rdma, fio) {name}", unit, "higher",
                        mean(kv), peer, mean(pv), "ratio >= 3",
                        lambda r: r >= 3, note=note))
    rows += scaling_rows(fio)
    rows += profile_rows(prof)
    hz = vals.get(("perf_hz", "all"))
    if hz:
        rows += layer_rows(perf, prof, hz, krwq_functions)
    k, p = vals.get(("rping_setup_ms", "krwqe0")), vals.get(("rping_setup_ms", "rxe0"))
    if k is not None and p is not None:
        n = int(vals.get(("rping_setups", "krwqe0"), 0))
        rows.append(row(f"ulp: rping connection set-up (rping -c -C 1), mean of {n}",
                        "ms/connection", "lower", k, peer, p, "ratio <= 1", lambda r: r <= 1))

    secs = vals.get(("irqoff_seconds", "krwq0"))
    copies = {how: v for (m, how), v in vals.items() if m == "copy_us_16384"}
    copy = min(copies.values()) if copies else None
    busy, mine = irqoff_summary(irq.get("krwq0", []))
    idle, _ = irqoff_summary(irq.get("idle", []))
    nwin = len(irq.get("krwq0", []))
    nmine = sum(1 for w in irq.get("krwq0", []) if w[1])
    if busy:
        rows.append(row("irq-off: longest section of any code, during 16 MiB ib_write_bw + "
                        "ib_send_bw on krwq0", "us", "lower", busy[0],
                        note=f"started at {busy[2]}, ended at {busy[3]}, caller {busy[4]}; "
                        + ("krwq's" if busy[1] else "not krwq's") + f"; {nwin} half-second windows",
                        rid="irqoff_max_us"))
    if idle:
        rows.append(row("irq-off: longest section of any code, idle for as long", "us", "lower",
                        idle[0], note=f"started at {idle[2]}, ended at {idle[3]}, caller {idle[4]}"
                        + (f"; {secs:.0f} s" if secs is not None else ""),
                        rid="irqoff_idle_max_us"))
    if copy is not None:
        rows.append(row("one 16 KiB copy in user space, best of memcpy and rep movsb", "us",
                        "lower", copy,
                        note=", ".join(f"{h} {v:.3f} us" for h, v in sorted(copies.items()))
                        + "; the best round of 16 copies of 201",
                        rid="copy_16k_us"))
    if busy and copy is not None:
        # krwq's longest section is at least the longest window-maximum its
        # trace names, and at most the longest section of any code
        if mine:
            rows.append(row("irq-off: krwq's longest section seen / 16 KiB copy", "us", "lower",
                            mine[0], "one 16 KiB copy (same boot)", copy, "ratio <= 1.0",
                            lambda r: r <= 1.0, rid="irqoff_over_copy_16k",
                            note=f"started at {mine[2]}, ended at {mine[3]}, caller {mine[4]}; krwq's was the "
                            f"longest section in {nmine} of {nwin} windows, and no krwq section "
                            f"was longer than {fmt(busy[0])} us (the longest of any code)"))
        else:
            rows.append(row("irq-off: krwq's longest section seen / 16 KiB copy", "us", "lower",
                            busy[0], "one 16 KiB copy (same boot)", copy, "ratio <= 1.0",
                            lambda r: r <= 1.0, rid="irqoff_over_copy_16k",
                            note=f"an upper bound: in none of {nwin} windows was krwq's section "
                            "the longest, so krwq's longest is at most the longest of any code"))
    return rows, [f"{path}: {e}" for e in errors]


WIRE = [  # metric, name, unit, better, the floor's metric
    ("send_bw_mibs_64", "ib_send_bw 64 B", "MiB/s", "higher", "bw_mibs_64"),
    ("send_bw_mibs_4096", "ib_send_bw 4 KiB", "MiB/s", "higher", "bw_mibs_4096"),
    ("send_bw_mibs_65536", "ib_send_bw 64 KiB", "MiB/s", "higher", "bw_mibs_65536"),
    ("send_lat_typical_us_64", "ib_send_lat 64 B, typical", "us", "lower", "lat_us_64"),
    ("send_lat_ud_typical_us_64", "ib_send_lat -c UD 64 B, typical", "us", "lower", "lat_us_64"),
    ("write_bw_mibs_4096", "ib_write_bw 4 KiB", "MiB/s", "higher", "bw_mibs_4096"),
    ("read_bw_mibs_4096", "ib_read_bw 4 KiB", "MiB/s", "higher", "bw_mibs_4096"),
]


WIRE_DELAY = [  # metric, name: over veths that delay each packet 1 ms each way
    ("send_bw_mibs_4096_delay", "ib_send_bw 4 KiB"),
    ("write_bw_mibs_4096_delay", "ib_write_bw 4 KiB"),
]
# what a window of 128 PSNs (both krwq's and rxe's) allows on that link:
# 128 packets of the path MTU, 1024 bytes, per round trip of 2 ms
WIRE_DELAY_WINDOW_MIBS = 128 * 1024 / 2e-3 / 2**20


def wire_delay_rows(runs):
    """The RC window: krwq's requester to krwq, and to rxe, against rxe's
    requester to krwq over the same delayed link (goal: as fast)."""
    rows = []
    for metric, name in WIRE_DELAY:
        v = {p: runs.get((metric, p)) for p in ("kk", "kr", "rk")}
        avg = {p: mean(r) for p, r in v.items() if r}
        if "rk" not in avg:
            continue
        note = "runs " + "; ".join(f"{p}: {', '.join(fmt(x) for x in r)}"
                                   for p, r in v.items() if r)
        peer = "rxe0's requester to krwqw0 over a delayed veth (same boot)"
        for p, who in (("kk", "krwq to krwq"), ("kr", "krwq to rxe")):
            if p not in avg:
                continue
            goal, test = goal_of("higher", 1)
            rows.append(row(f"wire: {name}, {who} over a veth with 1 ms each way",
                            "MiB/s", "higher", avg[p], peer, avg["rk"], goal, test,
                            note=note, floor="a 128-PSN window per 2 ms round trip",
                            floor_value=WIRE_DELAY_WINDOW_MIBS))
    return rows


def pair_runs(path, part, pairs):
    """The "BENCH PART METRIC PAIR VALUE" lines of a guest's output, for
    the given pairs of devices: {(metric, pair): [value, ...]}, and its
    BENCH-ERROR lines."""
    runs, errors = {}, []
    pat = re.compile(rf"^BENCH {part} (\w+) ({'|'.join(pairs)}) ([0-9.eE+-]+)\s*$")
    with open(path, errors="replace") as f:
        for line in f:
            m = pat.match(line)
            if m:
                runs.setdefault((m[1], m[2]), []).append(float(m[3]))
            elif line.startswith("BENCH-ERROR"):
                errors.append(line.strip())
    return runs, errors


def wire_rows(path):
    """perftest over RoCEv2 from one wire-bench.sh boot: krwq to krwq
    through a veth against rxe to rxe (goal 2x), krwq to rxe against rxe
    to rxe, and krwq's local path against krwq through the veth; then
    the RC window over delayed veths (wire_delay_rows()).  Each
    pair ran twice per test; the figure is the mean of its runs.  The
    floor of the rows through the veth: udp_floor's datagrams, as long as
    the test's packets, on the same path with no RDMA stack."""
    runs, errors = pair_runs(path, "wire", ("kk", "kr", "rk", "rr", "kl", "udp"))
    rows = []
    floor_name = "UDP datagrams over the kwa-kwb veth (udp_floor)"
    for metric, name, unit, better, floor_metric in WIRE:
        v = {p: runs.get((metric, p)) for p in ("kk", "kr", "rr", "kl")}
        v["udp"] = runs.get((floor_metric, "udp"))
        avg = {p: mean(r) for p, r in v.items() if r}
        floor = avg.get("udp")
        note = "; ".join(f"{p}: {', '.join(fmt(x) for x in r)}" for p, r in v.items() if r)
        if "kk" in avg and "rr" in avg:
            goal, test = goal_of(better, 2)
            # the figure the goal asks of krwq, against what the path allows
            want = avg["rr"] * goal_bound(better, 2)
            if floor and (want > floor if better == "higher" else want < floor):
                note += (f"; the goal asks for {fmt(want)} {unit}, past the path's "
                         f"floor of {fmt(floor)}")
            rows.append(row(f"wire: {name}, krwq to krwq over a veth", unit, better,
                            avg["kk"], "rxe0 to itself (same boot)", avg["rr"], goal, test,
                            note="runs " + note, floor=floor and floor_name,
                            floor_value=floor))
        if "kr" in avg and "rr" in avg:
            rows.append(row(f"wire: {name}, krwq to rxe over a veth", unit, better,
                            avg["kr"], "rxe0 to itself (same boot)", avg["rr"]))
        if "kl" in avg and "kk" in avg:
            rows.append(row(f"wire: {name}, krwq to itself, no packet", unit, better,
                            avg["kl"], "krwq to krwq over a veth (same boot)", avg["kk"]))
    return rows + wire_delay_rows(runs), errors


HOSTS = [  # metric, name
    ("randread_4k_qd1_iops", "NVMe-oF 4 KiB random read, iodepth 1"),
    ("randread_4k_qd32_iops", "NVMe-oF 4 KiB random read, iodepth 32"),
]
HOSTS_PAIRS = {"kk": "krwq to krwq", "rk": "rxe host to krwq target",
               "kr": "krwq host to rxe target"}


def hosts_rows(path):
    """NVMe-oF between two VMs of Debian's kernel (hosts.sh bench-drive):
    B's nvme-rdma against A's nvmet-rdma over a link between the VMs, one
    CPU each, for each pair of devices in turn.  krwq to krwq against rxe
    to rxe, goal 2x; the mixed pairs against rxe to rxe, without one."""
    runs, errors = pair_runs(path, "hosts", ("kk", "rk", "rr", "kr"))
    rows = []
    peer = "rxe to rxe between the same two VMs (same boots)"
    for metric, name in HOSTS:
        avg = {p: mean(runs[(metric, p)]) for p in ("kk", "rk", "rr", "kr")
               if runs.get((metric, p))}
        if "rr" not in avg:
            continue
        note = ("Debian's kernel, one CPU per VM; " +
                "; ".join(f"{p}: {fmt(v)}" for p, v in avg.items()))
        for p, who in HOSTS_PAIRS.items():
            if p not in avg:
                continue
            goal, test = goal_of("higher", 2) if p == "kk" else (None, None)
            rows.append(row(f"wire: {name}, {who}, two VMs", "IOPS", "higher",
                            avg[p], peer, avg["rr"], goal, test, note=note))
    return rows, [f"{path}: {e}" for e in errors]


def fmt(v):
    if v is None:
        return "-"
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 100:
        return f"{v:,.0f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def goal_advantage(r):
    """The row's goal on the same axis as advantage(): "ratio >= 3" on a
    higher-is-better row is 3, "ratio <= 0.5" on a lower-is-better one 2."""
    m = re.match(r"^ratio [<>]= ([0-9.]+)$", r.get("goal") or "")
    if not m or not float(m[1]):
        return None
    x = float(m[1])
    return x if r["better"] == "higher" else 1 / x


SECTIONS = ["host", "kernel", "e2e", "floor", "breakdown", "abi", "ulp", "wire"]


def section_rank(name):
    """Where a row's section (the word before its first colon) comes."""
    head = name.split(":", 1)[0]
    return SECTIONS.index(head) if head in SECTIONS else len(SECTIONS)


def advantage(r):
    """How many times better krwq is than the peer (>1: krwq better)."""
    if not r["ratio"]:
        return None
    return r["ratio"] if r["better"] == "higher" else 1 / r["ratio"]


def words(r):
    """What "better" and "worse" mean for the row's unit."""
    if r["unit"] == "bytes":
        return "smaller", "larger"
    if r["id"].startswith("irqoff"):
        return "shorter", "longer"
    return "faster", "slower"


def times(v):
    if v >= 100:
        return f"{v:,.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def compare(r):
    """krwq against its peer in words: "2.10× faster", "1.40× slower"."""
    adv = advantage(r)
    if adv is None:
        return "-"
    good, bad = words(r)
    if abs(adv - 1) < 0.005:
        return "the same"
    return f"{times(adv)}× {good}" if adv > 1 else f"{times(1 / adv)}× {bad}"


def met_word(r):
    """Whether a row's goal is met, as the tables say it."""
    return {True: "yes", False: "**no**", None: "-"}[r["met"]]


def markdown(rows):
    out = ["| benchmark | unit | krwq | peer | peer value | ratio | krwq against peer | goal | met "
           "| krwq / floor |",
           "| --- | --- | ---: | --- | ---: | ---: | ---: | --- | --- | ---: |"]
    notes = []
    for r in rows:
        met = met_word(r)
        name = r["name"]
        if r["note"]:
            notes.append(r["note"])
            name += f" [{len(notes)}]"
        out.append(f"| {name} | {r['unit']}, {r['better']} is better | {fmt(r['krwq'])} | "
                   f"{r['peer'] or '-'} | {fmt(r['peer_value'])} | {fmt(r['ratio'])} | "
                   f"{compare(r)} | {r['goal'] or '-'} | {met} | {fmt(r.get('floor_ratio'))} |")
    if notes:
        out.append("")
        out += [f"[{i}] {n}" for i, n in enumerate(notes, 1)]
    return "\n".join(out)


def conditions(meta):
    """The Markdown's first line: when, which commit and kernel, what load."""
    parts = [f"Measured {meta['date']} at commit {meta['commit']}",
             f"{meta['host_cpus']} host CPUs"]
    if meta["kernel_variant"]:
        parts.append(f"{meta['kernel_variant']} kernel")
    for load in meta["host_load"]:
        what = f"{load['part']}: host load average {load['before']}"
        if load["after"] is not None:
            what += f" before, {load['after']} after"
        parts.append(what)
    return "; ".join(parts) + "."


def read_load(path):
    """scripts/bench's load file: PART<TAB>BEFORE[<TAB>AFTER] lines."""
    out = []
    with open(path) as f:
        for line in f:
            part, before, *after = line.rstrip("\n").split("\t")
            out.append({"part": part, "before": float(before),
                        "after": float(after[0]) if after and after[0] else None})
    return out


def plot(rows, host_json, png, workdir):
    """ns/op against depth (krwq and the floor) and krwq's advantage bars."""
    depth = [(int(re.search(r"depth (\d+)$", r["name"])[1]), r["krwq"], r["peer_value"])
             for r in rows if r["name"].startswith("host: post+take at depth")]
    # bars for krwq against another implementation (not bytes, not the
    # interrupts-off section against a copy, not krwq's local path against
    # its own wire)
    bars = [(r["name"], advantage(r), goal_advantage(r)) for r in rows
            if advantage(r) and not r["name"].startswith(("host: bytes", "floor:"))
            and not r["id"].startswith("irqoff") and not r["name"].endswith("no packet")]
    # grouped by section, in the order of the table: host, kernel, end to end
    bars.sort(key=lambda b: section_rank(b[0]))
    dfile = os.path.join(workdir, "depth.dat")
    bfile = os.path.join(workdir, "bars.dat")
    with open(dfile, "w") as f:
        for d, k, p in depth:
            f.write(f"{d} {k} {p}\n")
    gfile = os.path.join(workdir, "goals.dat")
    with open(bfile, "w") as f, open(gfile, "w") as g:
        for i, (n, a, goal) in enumerate(bars):
            y = len(bars) - 1 - i	# the first row at the top
            label = n.replace('"', "'")
            f.write(f'{y} {a} "{label}"\n')
            if goal:
                g.write(f"{y} {goal}\n")
    if not depth and not bars:
        return
    marks = [a for _, a, _ in bars] + [goal for _, _, goal in bars if goal]
    lo = min(marks + [1.0]) / 2
    hi = max(marks + [1.0]) * 2
    panels = (1 if depth else 0) + (1 if bars else 0)
    depth_gp = f"""
set title "post+take with the ring half full, against queue depth (host)"
set logscale x 2
set xlabel "queue depth (WRs)"
set ylabel "ns per post+take"
set yrange [0:*]
set key top left
plot "{dfile}" using 1:2 with linespoints lw 2 title "krwq core", \\
     "{dfile}" using 1:3 with linespoints lw 2 title "Boost spsc_queue floor"
"""
    bars_gp = f"""
set title "krwq against its peer, same boot or process (>1: krwq better; diamond: goal)"
set logscale x 10
set xrange [{lo}:{hi}]
set xlabel "krwq better by (x, log scale)"
unset ylabel
set yrange [-1:{len(bars)}]
set ytics font ",8"
set style fill solid 0.6
set key off
set grid xtics
set arrow 1 from 1, graph 0 to 1, graph 1 nohead lw 2 lc rgb "black"
plot "{bfile}" using 2:1:($2 < 1 ? $2 : 1):($2 < 1 ? 1 : $2):($1 - 0.35):($1 + 0.35):($2 < 1 ? 0xc05050 : 0x4080c0):ytic(3) \\
     with boxxyerrorbars lc rgb variable, \\
     "{gfile}" using 2:1 with points pt 13 ps 1.5 lc rgb "black"
"""
    script = f"""
set terminal pngcairo size {1500 if panels == 2 else 1000},{520 + 20 * len(bars)} font ",9" noenhanced
set output "{png}"
set multiplot layout 1,{panels}
{depth_gp if depth else ""}
{bars_gp if bars else ""}
unset multiplot
"""
    sfile = os.path.join(workdir, "bench.gp")
    with open(sfile, "w") as f:
        f.write(script)
    subprocess.run(["gnuplot", sfile], check=True)


def plot_stacked(png, workdir, name, title, ylabel, columns, bars, size="1100,600",
                 boxwidth=0.5, extra=""):
    """One stacked bar per (label, values) of BARS, one segment per name of
    COLUMNS, drawn by gnuplot into PNG; its data and script go to WORKDIR
    as NAME.dat and NAME.gp.  EXTRA: gnuplot lines before the plot, and
    the plot's own line style (after "lc", one colour per column from the
    word list "colors" that EXTRA may set)."""
    dfile = os.path.join(workdir, f"{name}.dat")
    with open(dfile, "w") as f:
        f.write("what " + " ".join(f'"{c}"' for c in columns) + "\n")
        for label, values in bars:
            f.write(f'"{label}" ' + " ".join(f"{v:.2f}" for v in values) + "\n")
    style = " lc rgb word(colors, i - 1)" if "colors =" in extra else ""
    script = f"""
set terminal pngcairo size {size} font ",9" noenhanced
set output "{png}"
set title "{title}"
set style data histograms
set style histogram rowstacked
set style fill solid 0.8 border -1
set boxwidth {boxwidth}
set ylabel "{ylabel}"
set yrange [0:*]
set key outside right top vertical
set grid ytics
{extra}
plot for [i=2:{len(columns) + 1}] "{dfile}" using i:xtic(1) title columnheader(i){style}
"""
    sfile = os.path.join(workdir, f"{name}.gp")
    with open(sfile, "w") as f:
        f.write(script)
    subprocess.run(["gnuplot", sfile], check=True)


def plot_send(rows, png, workdir):
    """The breakdown of a 64-byte send as one stacked bar beside the null
    system call, per boot that has one."""
    runs = {}
    for r in rows:
        m = re.match(r"^breakdown: (.*?)( \((abi=\d)\))?$", r["name"])
        if m and not m[1].startswith("one 64 B"):
            runs.setdefault(m[3] or "", []).append((m[1], r["krwq"]))
    if not runs:
        return False
    names = next(iter(runs.values()))
    bars = [(f"64 B ibv_post_send{' ' + tag if tag else ''}", [v for _, v in segs])
            for tag, segs in runs.items()]
    bars.append(("null system call", [names[0][1]] + [0] * (len(names) - 1)))
    plot_stacked(png, workdir, "send", "Where one 64-byte ibv_post_send on krwq0 spends its "
                 "time (function_graph medians, TCG)", "ns", [n for n, _ in names], bars)
    return True


def plot_ulp(rows, png, workdir):
    """The CPU time per I/O of the 4 KiB random reads by layer: one stacked
    bar per device and job (the layer_rows)."""
    bars = []
    for job, name, _, _ in NVMEOF[:3]:
        got = {r["id"]: r for r in rows if r["id"].startswith(f"ulp_layer_{job}_")}
        if not got:
            continue
        for dev, key in (("krwqe0", "krwq"), ("rxe0", "peer_value")):
            bars.append((f"{dev}, {name.replace('4 KiB random read, ', '')}",
                         [(got.get(f"ulp_layer_{job}_{layer}") or {}).get(key) or 0
                          for layer, _ in LAYERS]))
    if not bars:
        return False
    plot_stacked(png, workdir, "ulp", "NVMe-oF 4 KiB random reads: CPU time per I/O by layer "
                 "(perf samples of both CPUs, idle left out; TCG)", "CPU microseconds per I/O",
                 [label for _, label in LAYERS], bars, size="1200,620", boxwidth=0.6,
                 extra=f'set xtics rotate by -20\ncolors = "{" ".join(LAYER_COLORS)}"')
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", help="Google Benchmark JSON of host_bench")
    ap.add_argument("--guest", action="append", default=[],
                    help="LOG[:TAG] console output of guest-bench.sh")
    ap.add_argument("--abi", help="output of scripts/guest/abi-bench.sh")
    ap.add_argument("--ulp", help="console output of scripts/guest/guest-ulp.sh")
    ap.add_argument("--krwq-functions", help="krwq's functions and their object files")
    ap.add_argument("--ulp-png", help="the stacked bars of the ULP profile's layers")
    ap.add_argument("--wire", help="console output of scripts/guest/wire-bench.sh")
    ap.add_argument("--hosts", help="host B's output of scripts/guest/hosts.sh bench-drive")
    ap.add_argument("--json", required=True)
    ap.add_argument("--md", required=True)
    ap.add_argument("--png")
    ap.add_argument("--send-png", help="the stacked bar of a 64-byte send's time")
    ap.add_argument("--commit", default="unknown", help="the commit measured")
    ap.add_argument("--date", required=True, help="when, UTC")
    ap.add_argument("--variant", help="the test kernel variant the VM booted")
    ap.add_argument("--cpus", type=int, default=os.cpu_count())
    ap.add_argument("--load", help="PART<TAB>BEFORE[<TAB>AFTER] host load averages")
    a = ap.parse_args()
    meta = {"commit": a.commit, "date": a.date, "kernel_variant": a.variant,
            "host_cpus": a.cpus, "host_load": read_load(a.load) if a.load else []}

    rows, errors = [], []
    if a.host:
        rows += host_rows(a.host)
    for g in a.guest:
        path, _, tag = g.partition(":")
        vals, errs = guest_values(path)
        rows += guest_rows(vals, tag)
        errors += [f"{path}: {e}" for e in errs]
    if a.abi:
        abi, errs = abi_rows(a.abi)
        rows += abi
        errors += errs
    if a.ulp:
        ulp, errs = ulp_rows(a.ulp, read_krwq_functions(a.krwq_functions))
        rows += ulp
        errors += errs
    if a.wire:
        wire, errs = wire_rows(a.wire)
        rows += wire
        errors += errs
    if a.hosts:
        hosts, errs = hosts_rows(a.hosts)
        rows += hosts
        errors += errs
    with open(a.json, "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
        f.write("\n")
    md = conditions(meta) + "\n\n" + markdown(rows)
    with open(a.md, "w") as f:
        f.write(md + "\n")
    print(md)
    goals = [r for r in rows if r["met"] is not None]
    met = [r for r in goals if r["met"]]
    print(f"\ngoals met: {len(met)} of {len(goals)}")
    for r in goals:
        print(f"  {'met   ' if r['met'] else 'MISSED'} {r['name']}: ratio {fmt(r['ratio'])}, "
              f"goal {r['goal']}")
    for e in errors:
        print(f"error: {e}", file=sys.stderr)
    if a.png:
        plot(rows, a.host, a.png, os.path.dirname(a.json) or ".")
    if a.send_png:
        plot_send(rows, a.send_png, os.path.dirname(a.json) or ".")
    if a.ulp_png:
        plot_ulp(rows, a.ulp_png, os.path.dirname(a.json) or ".")
    return 0


if __name__ == "__main__":
    sys.exit(main())
