#!/usr/bin/python3
"""kazoo_bench.py - scenarios 1, 3 and 6 of zkl-bench for kazoo (Debian's
python3-kazoo), on the same server in the same run, so that the report shows
zkl/kazoo ratios measured side by side.

  /usr/bin/python3 bench/kazoo_bench.py --hosts HOST:PORT [--quick]
        [--iters N] [--duration SEC] [--reps N] [--contenders 2,8,32,128] [--rounds N]
        [--kill-rounds N] [--kill-timeout MS] [--only 1,3,6] [--csv FILE]

Rows are written in zkl-bench's CSV format (impl "kazoo"); zkl-bench
--merge FILE puts them into its table and judges the zkl/kazoo targets.

S1  kazoo Lock acquire+release, one client alone.
S3  N contenders, each a process of its own with its own session (a Python
    process per contender: threads would share one GIL), looping
    acquire/release for a fixed time; handoffs/s, handoff latency, fairness.
S6  kazoo Election: three candidates (threads, own sessions); the leader's
    function returns (resign) and the next one is called; and a leader
    process killed with SIGKILL, its session left to expire.

Every wait is bounded; the run works under /zkl-bench/kazoo-<pid> and
deletes it at the end.  Traffic goes only to the given hosts.
"""
import argparse
import logging
import math
import multiprocessing as mp
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time

from kazoo.client import KazooClient

logging.basicConfig(level=logging.CRITICAL)

WAIT_S = 10.0
LOCK_TIMEOUT_S = 60.0


def now_ns():
    return time.monotonic_ns()


# ---- the server's counters (as bench/server.c) ---------------------------

def four_letters(hosts, word):
    host, port = hosts.split(",")[0].split("/")[0].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=2) as s:
        s.sendall(word.encode())
        data = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
    return data.decode(errors="replace")


MNTR_KEYS = {
    "requests": "zk_packets_received",
    "bytes_in": "zk_bytes_received_count",
    "bytes_out": "zk_response_bytes",
    "reads": "zk_cnt_readlatency",
    "writes": "zk_cnt_updatelatency",
    "watches": "zk_watch_count",
}


def srv_sample(hosts):
    vals = {}
    for line in four_letters(hosts, "mntr").splitlines():
        k, _, v = line.partition("\t")
        vals[k] = v
    four_letters(hosts, "srvr")  # the same cost per sample as zkl-bench's
    return {n: float(vals.get(k, "nan")) for n, k in MNTR_KEYS.items()}


OVERHEAD = None


def srv_calibrate(hosts):
    global OVERHEAD
    a = srv_sample(hosts)
    best = None
    for _ in range(4):
        b = srv_sample(hosts)
        d = {k: b[k] - a[k] for k in a}
        if best is None or d["requests"] < best["requests"]:
            best = d
        a = b
    best["watches"] = 0
    OVERHEAD = best


def srv_delta(a, b):
    return {k: b[k] - a[k] - OVERHEAD[k] for k in a}


def srv_watchers(hosts, path, except_sid):
    n, inside = 0, False
    for line in four_letters(hosts, "wchp").splitlines():
        if line.startswith("/"):
            inside = line == path
        elif inside and line.startswith("\t"):
            if int(line.strip(), 16) != except_sid:
                n += 1
    return n


def wait_watched(hosts, path, except_sid, timeout=WAIT_S):
    deadline = time.monotonic() + timeout
    pause = 0.001
    while time.monotonic() < deadline:
        if srv_watchers(hosts, path, except_sid) > 0:
            return True
        time.sleep(pause)
        pause = min(pause * 2, 0.02)
    return False


# ---- results ---------------------------------------------------------------

ROWS = []
ERRORS = []


def quantile(v, q):
    if not v:
        return float("nan")
    v = sorted(v)
    rank = max(1, min(len(v), math.ceil(q * len(v))))
    return v[rank - 1]


def add(scenario, case, metric, unit, median, p99=float("nan"), n=0):
    ROWS.append((scenario, case, "kazoo", metric, unit, median, p99, n))


def add_samples(scenario, case, metric, unit, v):
    add(scenario, case, metric, unit, quantile(v, 0.5), quantile(v, 0.99),
        len(v))


def add_server(scenario, case, per, d, ops):
    if ops <= 0:
        return
    add(scenario, case, "requests/" + per, "", d["requests"] / ops, n=ops)
    add(scenario, case, "reads/" + per, "", d["reads"] / ops, n=ops)
    add(scenario, case, "writes/" + per, "", d["writes"] / ops, n=ops)
    add(scenario, case, "bytes/" + per, "B",
        (d["bytes_in"] + d["bytes_out"]) / ops, n=ops)


def fmt(x):
    if isinstance(x, float) and math.isnan(x):
        return ""
    return "%.6g" % x


def write_csv(path):
    with open(path, "w") as f:
        f.write("config,kind,scenario,case,impl,metric,unit,median,p99,n,"
                "ratio,limit,verdict\n")
        for s, c, i, m, u, med, p99, n in ROWS:
            f.write(",m,%s,%s,%s,%s,%s,%s,%s,%d,,,\n"
                    % (s, c, i, m, u, fmt(med), fmt(p99), n))


def print_table():
    print("\nkazoo_bench results")
    print("  %-3s %-8s %-16s %-4s %10s %10s %7s"
          % ("S", "case", "metric", "unit", "median", "p99", "n"))
    for s, c, _, m, u, med, p99, n in ROWS:
        print("  %-3s %-8s %-16s %-4s %10s %10s %7d"
              % (s, c, m, u, fmt(med), fmt(p99), n))


def client(hosts, timeout=10.0):
    zk = KazooClient(hosts=hosts, timeout=timeout)
    zk.start(timeout=15)
    return zk


def close(zk):
    try:
        zk.stop()
        zk.close()
    except Exception:  # closing after a failure: report the failure only
        pass


# ---- S1 ---------------------------------------------------------------------

def s1(args, root):
    zk = client(args.hosts)
    path = root + "/s1"
    lock = zk.Lock(path, "kazoo-bench")
    try:
        for _ in range(min(20, args.iters)):
            lock.acquire(timeout=LOCK_TIMEOUT_S)
            lock.release()
        lat = []
        for _ in range(args.iters):
            t0 = now_ns()
            lock.acquire(timeout=LOCK_TIMEOUT_S)
            lock.release()
            lat.append((now_ns() - t0) / 1e3)
        add_samples("1", "cycle", "latency", "us", lat)
        k = min(args.iters, 200)
        a = srv_sample(args.hosts)
        for _ in range(k):
            lock.acquire(timeout=LOCK_TIMEOUT_S)
            lock.release()
        add_server("1", "cycle", "op", srv_delta(a, srv_sample(args.hosts)), k)
    finally:
        close(zk)


# ---- S3 ---------------------------------------------------------------------

def contender(hosts, path, start, stop, holders, violations, last_release,
              out):
    """One contender process: its own session, acquire/release until stop."""
    counted = total = 0
    lat = []
    err = None
    try:
        zk = client(hosts)
        lock = zk.Lock(path, "kazoo-bench-%d" % os.getpid())
        start.wait(60)
        while not stop.is_set():
            if not lock.acquire(timeout=LOCK_TIMEOUT_S):
                err = "lock timed out"
                break
            t_acq = now_ns()
            stopped = stop.is_set()
            with holders.get_lock():
                holders.value += 1
                if holders.value != 1:
                    violations.value += 1
            prev = last_release.value
            if not stopped and prev:
                lat.append((t_acq - prev) / 1e3)
            with holders.get_lock():
                holders.value -= 1
            last_release.value = now_ns()
            if not stopped:
                counted += 1
            total += 1
            lock.release()
        close(zk)
    except Exception as e:  # reported by the parent
        err = "%s: %s" % (type(e).__name__, e)
    out.put((counted, total, lat, err))


def s3_once(args, root, n):
    """One run of n contender processes; (rate, per-contender counts,
    total acquisitions, latencies, server delta)."""
    # forkserver: children forked from a clean process with kazoo loaded,
    # never from this one with its client threads
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["kazoo.client"])
    path = "%s/s3-%d" % (root, n)
    start = ctx.Barrier(n + 1)
    stop = ctx.Event()
    holders = ctx.Value("i", 0)
    violations = ctx.Value("i", 0)
    last_release = ctx.Value("q", 0, lock=False)
    out = ctx.Queue()
    procs = [ctx.Process(target=contender,
                         args=(args.hosts, path, start, stop, holders,
                               violations, last_release, out))
             for _ in range(n)]
    for p in procs:
        p.start()
    a = srv_sample(args.hosts)
    try:
        start.wait(120)
    except threading.BrokenBarrierError:
        ERRORS.append("S3 N=%d: contenders did not start" % n)
    t0 = time.monotonic()
    time.sleep(args.duration)
    stop.set()
    elapsed = time.monotonic() - t0
    results = []
    deadline = time.monotonic() + LOCK_TIMEOUT_S + 30
    while len(results) < n and time.monotonic() < deadline:
        try:
            results.append(out.get(timeout=max(0.1, deadline - time.monotonic())))
        except Exception:
            break
    for p in procs:
        p.join(max(0.1, deadline - time.monotonic()))
        if p.is_alive():  # our own child: stop it
            p.kill()
            p.join()
    b = srv_sample(args.hosts)
    for r in results:
        if r[3]:
            ERRORS.append("S3 N=%d: %s" % (n, r[3]))
    if len(results) < n:
        ERRORS.append("S3 N=%d: %d contenders did not report" % (n, n - len(results)))
    if violations.value:
        ERRORS.append("S3 N=%d: two holders at once %d times" % (n, violations.value))
    counts = [r[0] for r in results]
    return (sum(counts) / elapsed, counts, sum(r[1] for r in results),
            [x for r in results for x in r[2]], srv_delta(a, b))


def s3_run(args, root, n):
    rates, per, lat, total, srv = [], [0] * n, [], 0, None
    for _ in range(args.reps):
        rate, counts, tot, l, d = s3_once(args, root, n)
        rates.append(rate)
        for i, c in enumerate(counts):
            per[i] += c
        lat += l
        total += tot
        srv = d if srv is None else {k: srv[k] + d[k] for k in d}
    case = "N=%d" % n
    # the median run, as zkl-bench reports its own
    add("3", case, "handoffs/s", "1/s", quantile(rates, 0.5), n=sum(per))
    add_samples("3", case, "handoff", "us", lat)
    if per and max(per) > 0:
        add("3", case, "fairness", "", min(per) / max(per), n=n)
    add_server("3", case, "handoff", srv, total)


# ---- S6 ---------------------------------------------------------------------

def lowest_child(zk, path):
    kids = zk.get_children(path)
    kids.sort(key=lambda k: int(k[-10:]))
    return path + "/" + kids[0] if kids else None


class Candidate(threading.Thread):
    """A kazoo Election candidate on its own session; leads until told to
    resign, then stands again."""

    def __init__(self, hosts, path, idx, state):
        super().__init__(daemon=True)
        self.zk = client(hosts)
        self.election = self.zk.Election(path, "kazoo-bench-%d" % idx)
        self.idx = idx
        self.state = state
        self.resign = threading.Event()
        self.quit = False
        self.once = False

    def lead(self):
        with self.state["cv"]:
            self.state["leader"] = self
            self.state["elected_ns"] = now_ns()
            self.state["elections"] += 1
            self.state["cv"].notify_all()
        if not self.once:
            self.resign.wait(60)
            self.resign.clear()

    def run(self):
        while not self.quit:
            try:
                self.election.run(self.lead)
            except Exception as e:
                if not self.quit:
                    ERRORS.append("S6 candidate: %s" % e)
                return
            if self.once:
                return

    def stop(self):
        self.quit = True
        self.election.cancel()
        self.resign.set()
        self.join(WAIT_S)
        close(self.zk)


def wait_elected(state, seen, timeout):
    with state["cv"]:
        return state["cv"].wait_for(lambda: state["elections"] > seen, timeout)


def s6_resign(args, root):
    path = root + "/s6"
    state = {"cv": threading.Condition(), "leader": None, "elected_ns": 0,
             "elections": 0}
    cands = [Candidate(args.hosts, path, i, state) for i in range(3)]
    for c in cands:
        c.start()
    lat = []
    try:
        if not wait_elected(state, 0, WAIT_S):
            ERRORS.append("S6: no kazoo leader")
            return
        for _ in range(args.rounds):
            with state["cv"]:
                leader, seen = state["leader"], state["elections"]
            node = lowest_child(leader.zk, path)
            if node is None or not wait_watched(args.hosts, node,
                                                leader.zk.client_id[0]):
                ERRORS.append("S6: no kazoo candidate watched the leader")
                return
            t0 = now_ns()
            leader.resign.set()
            if not wait_elected(state, seen, WAIT_S):
                ERRORS.append("S6: nobody took over after a resign")
                return
            lat.append((state["elected_ns"] - t0) / 1e3)
    finally:
        for c in cands:
            c.stop()
        add_samples("6", "resign", "takeover", "us", lat)


def child_leader(hosts, path, timeout_ms):
    """The killed leader's process: leads, says so, waits to be killed."""
    signal.alarm(120)  # whatever happens, this process ends
    zk = client(hosts, timeout=timeout_ms / 1000.0)

    def lead():
        sys.stdout.write("elected %d %x\n" % (zk._session_timeout,
                                               zk.client_id[0]))
        sys.stdout.flush()
        sys.stdin.read()  # until the parent goes
        os._exit(0)  # no close: the session is left to expire

    zk.Election(path, "kazoo-child").run(lead)
    return 1


def s6_killed(args, root):
    path = root + "/s6-kill"
    lat = []
    timeout_ms = args.kill_timeout
    for _ in range(args.kill_rounds):
        child = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "child-leader",
             args.hosts, path, str(args.kill_timeout)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        cand = None
        try:
            ready, _, _ = select.select([child.stdout], [], [], 30)
            line = child.stdout.readline().decode() if ready else ""
            if not line.startswith("elected "):
                ERRORS.append("S6: the kazoo child leader was not elected")
                break
            _, tmo, sid = line.split()
            timeout_ms = int(tmo)
            state = {"cv": threading.Condition(), "leader": None,
                     "elected_ns": 0, "elections": 0}
            cand = Candidate(args.hosts, path, 0, state)
            cand.once = True
            cand.start()
            node = lowest_child(cand.zk, path)
            if node is None or not wait_watched(args.hosts, node, int(sid, 16)):
                ERRORS.append("S6: the kazoo candidate never watched the child")
                break
            t0 = now_ns()
            child.kill()
            child.wait()
            if not wait_elected(state, 0, 3 * timeout_ms / 1000.0 + WAIT_S):
                ERRORS.append("S6: nobody took over from the killed leader")
                break
            lat.append((state["elected_ns"] - t0) / 1e6)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
            child.stdin.close()
            child.stdout.close()
            if cand is not None:
                cand.stop()
    if args.kill_rounds > 0:
        add_samples("6", "killed", "takeover", "ms", lat)


# ---- main -------------------------------------------------------------------------

def parse_args(argv):
    quick = "--quick" in argv or "-q" in argv
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-s", "--hosts",
                   default=os.environ.get("ZKL_TEST_HOSTS") or "127.0.0.1:2181")
    p.add_argument("-q", "--quick", action="store_true")
    p.add_argument("--only", default="1,3,6")
    p.add_argument("--iters", type=int, default=100 if quick else 1000)
    p.add_argument("--duration", type=float, default=0.5 if quick else 3.0)
    p.add_argument("--reps", type=int, default=1 if quick else 3)
    p.add_argument("--contenders", default="2,8" if quick else "2,8,32,128")
    p.add_argument("--rounds", type=int, default=5 if quick else 50)
    p.add_argument("--kill-rounds", type=int, default=1 if quick else 3)
    p.add_argument("--kill-timeout", type=int, default=1000 if quick else 2000)
    p.add_argument("--csv")
    return p.parse_args(argv)


def main(argv):
    if len(argv) == 4 and argv[0] == "child-leader":
        return child_leader(argv[1], argv[2], int(argv[3]))
    args = parse_args(argv)
    only = {int(x) for x in args.only.split(",")}
    srv_calibrate(args.hosts)
    root = "/zkl-bench/kazoo-%d-%d" % (os.getpid(), int(time.time()))
    admin = client(args.hosts)
    admin.ensure_path(root)
    print("kazoo_bench: server %s%s" % (args.hosts, ", quick" if args.quick else ""),
          flush=True)
    try:
        if 1 in only:
            s1(args, root)
            print("  S1 done", flush=True)
        if 3 in only:
            for n in (int(x) for x in args.contenders.split(",")):
                s3_run(args, root, n)
                print("  S3 N=%d done" % n, flush=True)
        if 6 in only:
            s6_resign(args, root)
            s6_killed(args, root)
            print("  S6 done", flush=True)
    finally:
        admin.delete(root, recursive=True)
        try:
            admin.delete("/zkl-bench")  # unless another run uses it
        except Exception:
            pass
        close(admin)
    print_table()
    if args.csv:
        write_csv(args.csv)
    for e in ERRORS:
        print("kazoo_bench: error: %s" % e, file=sys.stderr)
    return 1 if ERRORS else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
