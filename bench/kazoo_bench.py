#!/usr/bin/python3
"""kazoo_bench.py - scenarios 1, 3, 6 and 9 to 14 of zkl-bench for kazoo
(Debian's python3-kazoo), on the same server in the same run, so that the
report shows zkl/kazoo ratios measured side by side.

  /usr/bin/python3 bench/kazoo_bench.py --hosts HOST:PORT [--quick]
        [--iters N] [--duration SEC] [--reps N] [--contenders 2,8,32,128] [--rounds N]
        [--kill-rounds N] [--kill-timeout MS] [--items N] [--batch N]
        [--consumers 1,10,100] [--puts N] [--cas-contenders N]
        [--increments N] [--ml-contenders N] [--ml-paths 2,8]
        [--ml-acquisitions N] [--sem-contenders N] [--sem-max 1,5,20]
        [--sem-grants N] [--sem-hold MS] [--agg-threads 1,8,32,64]
        [--agg-duration SEC] [--only 1,3,6,9,10,11,12,13,14]
        [--csv FILE] [--no-table]

Rows are written in zkl-bench's CSV format (impl "kazoo"); zkl-bench runs
this script itself for each of its own scenarios (--only N) and merges the
rows, or takes them from an earlier run with --merge FILE; either way it
judges the zkl/kazoo targets.

With ZKL_BENCH_TURNS=B in the environment (zkl-bench sets it for S1, S3 and
S14, see bench/peers.c) the script takes turns with zkl-bench's own runs:
before each unit of its work (a case's setup, one run, S1's warm-up, each
block of B cycles and the counted window) it prints "@zkl-turn" on stdout
and waits for a line on stdin.

S1  kazoo Lock acquire+release, one client alone.
S3  N contenders, each a process of its own with its own session (a Python
    process per contender: threads would share one GIL), looping
    acquire/release for a fixed time; handoffs/s, handoff latency, fairness.
S6  kazoo Election: three candidates (threads, own sessions); the leader's
    function returns (resign) and the next one is called; and a leader
    process killed with SIGKILL, its session left to expire.
S9  queue throughput, one client alone, --items per run (100-byte payloads),
    --reps runs, the median run's items/s: Queue.put; LockingQueue.put_all
    of --batch items (kazoo's Queue has no batch put); Queue.get from a
    queue holding the run's items; the same Queue.get loop again as the
    batch take (kazoo has no batch take); LockingQueue.get + consume.
S10 the herd: C consumers (threads, each its own session) blocked in
    LockingQueue.get (kazoo's Queue has no blocking get); a producer puts
    --puts items one by one, the next once the server is quiet again (the
    item consumed, the watch count back, no request and no notification for
    two samples); the server's requests, bytes and watch notifications per
    put.
S11 N contenders (--cas-contenders), threads each with its own KazooClient
    (one process: they share the GIL), increment ONE
    Counter(path, support_curator=True) (4-byte big-endian int) with
    `counter += 1` until N x --increments increments are done (a shared
    count of slots) or S11_CAP_S passed, --reps runs; kazoo retries a
    BadVersion itself (get, then set at that version, again).  "kazoo":
    the client's default command retry, which sleeps 0.1 s (+-40 %
    jitter, doubling each time) before each retry; "kazoo-0wait":
    command_retry={"max_tries": -1, "delay": 0}, retrying at once, as
    Curator's RetryNTimes(1000, 0) and zkl do.  The node must then hold
    the number of increments done (else a lost update: an error).
S12 kazoo has no multi-lock: N contenders (--ml-contenders), threads each
    with its own KazooClient (one process: they share the GIL), take the
    SAME K paths (--ml-paths, each K in turn) with a Lock per path,
    acquired one by one in sorted order (the same for all: in any other
    order they could deadlock) and released in reverse, holding ~0, until
    N x --ml-acquisitions acquisitions are done (a shared count of slots)
    or S12_CAP_S passed, --reps runs on fresh paths.  A per-path counter
    checks that no two hold a path at once, and after each run no node may
    be left under the paths.
S13 N contenders (--sem-contenders), threads each with its own KazooClient
    (one process: they share the GIL) and a Semaphore(max_leases=MAX) on
    the same path, for each MAX of --sem-max in turn: acquire, hold
    (--sem-hold MS, default ~0), release, until N x --sem-grants grants are
    done (a shared count of slots) or S13_CAP_S passed, --reps runs on
    fresh paths.  kazoo's layout is its own (a gate Lock at the sibling
    <path>-__lock__, the leases right under <path>, MAX in <path>'s data),
    so it cannot share a path with zkl's and Curator's.  A shared counter
    checks that never more than MAX hold at once, and after each run no
    node may be left under <path> or <path>-__lock__.
S14 aggregate throughput on distinct keys: T threads (--agg-threads, each
    T in turn) on ONE KazooClient, each a Lock on a path of its own (nobody
    contends), acquire/release for --agg-duration seconds, --reps runs;
    the median run's cycles/s over all T threads, the cycle latency,
    fairness (fewest / most cycles of a thread), the server's work and
    this process's CPU per cycle.

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
import struct
import subprocess
import sys
import threading
import time

from kazoo.client import KazooClient

logging.basicConfig(level=logging.CRITICAL)

WAIT_S = 10.0
LOCK_TIMEOUT_S = 60.0

# taking turns with zkl-bench: S1's cycles per turn, 0 when not
TURN_BLOCK = int(os.environ.get("ZKL_BENCH_TURNS") or 0)


def turn():
    """Waits for zkl-bench to give us our turn (ZKL_BENCH_TURNS)."""
    if not TURN_BLOCK:
        return
    sys.stdout.write("@zkl-turn\n")
    sys.stdout.flush()
    if not sys.stdin.readline():
        raise Exception("zkl-bench ended the turns")


def now_ns():
    return time.monotonic_ns()


# ---- the server's counters (as bench/server.c) ---------------------------

def four_letters(hosts, word):
    # ZKL_BENCH_SERVERS: the servers, when the clients connect to only some
    # of them (run-bench.sh's ensemble: the followers)
    hosts = os.environ.get("ZKL_BENCH_SERVERS") or hosts
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
    out = {n: float(vals.get(k, "nan")) for n, k in MNTR_KEYS.items()}
    # watch notifications: the watchers each kind of event triggered (not
    # zk_packets_sent, which counts a 4lw answer in a varying number of chunks)
    out["notifications"] = sum(float(vals.get(k, "nan")) for k in NOTIFY_KEYS)
    return out


NOTIFY_KEYS = ("zk_sum_node_created_watch_count",
               "zk_sum_node_deleted_watch_count",
               "zk_sum_node_changed_watch_count",
               "zk_sum_node_children_watch_count")

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
    best["notifications"] = 0
    OVERHEAD = best


def srv_delta(a, b, samples=1):
    """b - a minus what `samples` samplings (b the last of them) cost."""
    return {k: b[k] - a[k] - samples * OVERHEAD[k] for k in a}


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


def add(scenario, case, metric, unit, median, p99=float("nan"), n=0,
        impl="kazoo"):
    ROWS.append((scenario, case, impl, metric, unit, median, p99, n))


def add_samples(scenario, case, metric, unit, v, impl="kazoo"):
    add(scenario, case, metric, unit, quantile(v, 0.5), quantile(v, 0.99),
        len(v), impl)


def add_server(scenario, case, per, d, ops, impl="kazoo"):
    if ops <= 0:
        return
    add(scenario, case, "requests/" + per, "", d["requests"] / ops, n=ops,
        impl=impl)
    add(scenario, case, "reads/" + per, "", d["reads"] / ops, n=ops,
        impl=impl)
    add(scenario, case, "writes/" + per, "", d["writes"] / ops, n=ops,
        impl=impl)
    add(scenario, case, "bytes/" + per, "B",
        (d["bytes_in"] + d["bytes_out"]) / ops, n=ops, impl=impl)


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
    print("  %-3s %-8s %-11s %-16s %-4s %10s %10s %7s"
          % ("S", "case", "impl", "metric", "unit", "median", "p99", "n"))
    for s, c, i, m, u, med, p99, n in ROWS:
        print("  %-3s %-8s %-11s %-16s %-4s %10s %10s %7d"
              % (s, c, i, m, u, fmt(med), fmt(p99), n))


def client(hosts, timeout=10.0, command_retry=None):
    zk = KazooClient(hosts=hosts, timeout=timeout, command_retry=command_retry)
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
        turn()
        for _ in range(min(20, args.iters)):
            lock.acquire(timeout=LOCK_TIMEOUT_S)
            lock.release()
        lat = []
        block = TURN_BLOCK or max(args.iters, 1)
        for done in range(0, args.iters, block):
            turn()
            for _ in range(min(block, args.iters - done)):
                t0 = now_ns()
                lock.acquire(timeout=LOCK_TIMEOUT_S)
                lock.release()
                lat.append((now_ns() - t0) / 1e3)
        add_samples("1", "cycle", "latency", "us", lat)
        k = min(args.iters, 200)
        turn()
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
    turn()  # the case's setup: none (each run starts its processes)
    for _ in range(args.reps):
        turn()
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


# ---- S9 ---------------------------------------------------------------------

PAYLOAD = bytes(ord("a") + i % 26 for i in range(100))
RUN_CAP_S = 20.0      # a run stops after this long (zkl-bench's RUN_CAP_S)
FILL_CHUNK = 500


def dir_clear(zk, path):
    """Deletes every child of path, FILL_CHUNK per transaction."""
    kids = zk.get_children(path)
    for i in range(0, len(kids), FILL_CHUNK):
        t = zk.transaction()
        for k in kids[i:i + FILL_CHUNK]:
            t.delete(path + "/" + k)
        t.commit()


def dir_fill(zk, path, n):
    """Makes path hold exactly n items entry-100-<seq>."""
    have = zk.exists(path).children_count
    if have > n:
        dir_clear(zk, path)
        have = 0
    while have < n:
        k = min(FILL_CHUNK, n - have)
        t = zk.transaction()
        for _ in range(k):
            t.create(path + "/entry-100-", PAYLOAD, sequence=True)
        t.commit()
        have += k


def s9_once(args, zk, case, q, lq):
    """One run of a case with the Queue q and the LockingQueue lq (their
    paths made); (items/s, latencies, items, server delta)."""
    batch = args.batch
    if case == "put":
        dir_clear(zk, q.path)

        def op(left):
            q.put(PAYLOAD)
            return 1
    elif case.startswith("put-"):
        dir_clear(zk, lq.path + "/entries")

        def op(left):
            k = min(batch, left)
            lq.put_all([PAYLOAD] * k)
            return k
    elif case.startswith("take"):  # take-B: the same loop (no batch take)
        dir_fill(zk, q.path, args.items)

        def op(left):
            if q.get() != PAYLOAD:
                raise RuntimeError("Queue.get: not the item put")
            return 1
    else:
        dir_fill(zk, lq.path + "/entries", args.items)

        def op(left):
            if lq.get(timeout=10) != PAYLOAD or not lq.consume():
                raise RuntimeError("LockingQueue.get/consume failed")
            return 1
    lat = []
    done = 0
    a = srv_sample(args.hosts)
    t0 = time.monotonic()
    while done < args.items and time.monotonic() - t0 < RUN_CAP_S:
        t1 = now_ns()
        done += op(args.items - done)
        lat.append((now_ns() - t1) / 1e3)
    elapsed = time.monotonic() - t0
    d = srv_delta(a, srv_sample(args.hosts))
    return done / elapsed, lat, done, d


def s9(args, root):
    zk = client(args.hosts)
    qpath, lqpath = root + "/s9-queue", root + "/s9-locking"
    try:
        zk.ensure_path(qpath)
        zk.ensure_path(lqpath + "/entries")
        zk.ensure_path(lqpath + "/taken")
        # warm: the connection, the objects' paths
        q, lq = zk.Queue(qpath), zk.LockingQueue(lqpath)
        for _ in range(10):
            q.put(PAYLOAD)
            q.get()
            lq.put(PAYLOAD)
            lq.get(timeout=10)
            lq.consume()
        cases = ["put", "put-%d" % args.batch, "take", "take-%d" % args.batch,
                 "claim+ack"]
        for case in cases:
            rates, lat, items, srv = [], [], 0, None
            for _ in range(args.reps):
                rate, l, n, d = s9_once(args, zk, case, q, lq)
                rates.append(rate)
                lat += l
                items += n
                srv = d if srv is None else {k: srv[k] + d[k] for k in d}
                if n < args.items:
                    print("kazoo_bench: S9 %s: a run stopped after %d s with "
                          "%d of %d items" % (case, RUN_CAP_S, n, args.items),
                          file=sys.stderr)
            add("9", case, "items/s", "1/s", quantile(rates, 0.5), n=items)
            add_samples("9", case, "latency", "us", lat)
            add_server("9", case, "item", srv, items)
            print("  S9 %s done" % case, flush=True)
    finally:
        close(zk)


# ---- S10 --------------------------------------------------------------------

HERD_SESSION_S = 30.0  # consumers' sessions, as zkl-bench's
HERD_WAIT_S = 120.0
HERD_CAP_S = 60.0
SETTLE_CAP_S = 10.0
BLOCKED_HOLD_S = 0.3
SETTLE_HOLD_S = 0.05
STOP_ITEM = b"stop"


class Herd(object):
    def __init__(self):
        self.cv = threading.Condition()
        self.entered = 0
        self.consumed = 0
        self.exited = 0
        self.t_last = 0


class HerdConsumer(threading.Thread):
    """A LockingQueue consumer on its own session: get (blocking), consume,
    until a stop item."""

    def __init__(self, hosts, path, herd):
        super().__init__(daemon=True)
        self.zk = client(hosts, timeout=HERD_SESSION_S)
        self.q = self.zk.LockingQueue(path)
        self.herd = herd

    def run(self):
        h = self.herd
        with h.cv:
            h.entered += 1
        try:
            while True:
                v = self.q.get(timeout=HERD_WAIT_S)
                if v is None:
                    continue
                t = now_ns()
                if not self.q.consume():
                    ERRORS.append("S10: LockingQueue.consume failed")
                if v == STOP_ITEM:
                    break
                with h.cv:
                    h.t_last = t
                    h.consumed += 1
                    h.cv.notify_all()
        except Exception as e:  # reported, the run goes on
            ERRORS.append("S10 consumer: %s: %s" % (type(e).__name__, e))
        finally:
            with h.cv:
                h.exited += 1


def herd_quiet(args, herd, consumed, watches, intervals, hold_s, pause_s,
               cap_s, last, samples):
    """As zkl-bench's herd_quiet(): waits (without sampling) until consumed
    items are consumed, then samples until the watch count is unchanged and
    no packet came in or went out for `intervals` samples, and either the
    watch count is `watches` or all that held for hold_s.  (ok, last
    sample, samples taken)."""
    start = time.monotonic()
    with herd.cv:
        if not herd.cv.wait_for(lambda: herd.consumed >= consumed, cap_s):
            return False, last, samples
    quiet, since = 0, 0.0
    while True:
        now = time.monotonic()
        s = srv_sample(args.hosts)
        samples += 1
        d = srv_delta(last, s)
        ok = (s["watches"] == last["watches"] and d["requests"] < 0.5
              and not d["notifications"] > 0.5)
        if not ok:
            quiet = 0
        else:
            if quiet == 0:
                since = now
            quiet += 1
        last = s
        if quiet >= intervals and (s["watches"] == watches
                                   or now - since >= hold_s):
            return True, last, samples
        if time.monotonic() - start > cap_s:
            return False, last, samples
        time.sleep(pause_s)


def s10_run(args, root, c):
    path = "%s/s10-%d" % (root, c)
    case = "C=%d" % c
    herd = Herd()
    prod = client(args.hosts)
    consumers = []
    try:
        q = prod.LockingQueue(path)
        q.put(b"warm")  # the paths made, unmeasured
        q.get(timeout=10)
        q.consume()
        before = srv_sample(args.hosts)
        consumers = [HerdConsumer(args.hosts, path, herd) for _ in range(c)]
        for k in consumers:
            k.start()
        deadline = time.monotonic() + 60
        while herd.entered < c and time.monotonic() < deadline:
            time.sleep(0.005)
        # every consumer blocked, then one put, unmeasured
        cap = 30 + 0.03 * c
        last = srv_sample(args.hosts)
        while last["watches"] < before["watches"] + c and \
                time.monotonic() < deadline:
            time.sleep(0.02)
            last = srv_sample(args.hosts)
        ok, last, _ = herd_quiet(args, herd, 0, -1, 3, BLOCKED_HOLD_S, 0.02,
                                 cap, last, 0)
        if ok and last["watches"] >= before["watches"] + c:
            q.put(PAYLOAD)
            ok, last, _ = herd_quiet(args, herd, 1, -1, 3, BLOCKED_HOLD_S,
                                     0.02, cap, last, 0)
        if not ok:
            ERRORS.append("S10 C=%d: the consumers did not all block" % c)
            return
        b0, samples, lat, unsettled, done = last, 0, [], 0, 0
        t_cap = time.monotonic() + HERD_CAP_S
        while done < args.puts and time.monotonic() < t_cap:
            t = now_ns()
            q.put(PAYLOAD)
            ok, last, samples = herd_quiet(args, herd, done + 2, b0["watches"],
                                           2, SETTLE_HOLD_S, 0.002,
                                           SETTLE_CAP_S, last, samples)
            if not ok:
                unsettled += 1
                if herd.consumed < done + 2:
                    ERRORS.append("S10 C=%d: put %d not consumed" % (c, done + 1))
                    break
            lat.append((herd.t_last - t) / 1e3)
            done += 1
        if done < args.puts:
            print("kazoo_bench: S10 C=%d: %d of %d puts in %d s"
                  % (c, done, args.puts, HERD_CAP_S), file=sys.stderr)
        if unsettled:
            print("kazoo_bench: S10 C=%d: %d puts not followed by a quiet "
                  "server within %d s" % (c, unsettled, SETTLE_CAP_S),
                  file=sys.stderr)
        if done:
            d = srv_delta(b0, last, samples)
            add_samples("10", case, "delivery", "us", lat)
            add_server("10", case, "put", d, done)
            add("10", case, "notified/put", "",
                d["notifications"] / done, n=done)
            add("10", case, "watches/waiter", "",
                (b0["watches"] - before["watches"]) / c, n=c)
        print("  S10 %s: %d puts" % (case, done), flush=True)
    finally:
        if consumers:
            try:
                q.put_all([STOP_ITEM] * len(consumers))
            except Exception as e:
                ERRORS.append("S10: the stop items: %s" % e)
            deadline = time.monotonic() + 30 + 0.1 * c
            for k in consumers:
                k.join(max(0.1, deadline - time.monotonic()))
            if herd.exited < len(consumers):
                ERRORS.append("S10 C=%d: %d consumers did not stop"
                              % (c, len(consumers) - herd.exited))
            for k in consumers:
                close(k.zk)
        close(prod)


def s10(args, root):
    for c in (int(x) for x in args.consumers.split(",")):
        s10_run(args, root, c)


# ---- S11 --------------------------------------------------------------------

S11_CAP_S = 20.0  # a run stops after this long (zkl-bench's BENCH_S11_CAP_S)
S11_IMPLS = (("kazoo", None),
             ("kazoo-0wait", {"max_tries": -1, "delay": 0, "max_jitter": 0}))


def host_sample():
    """The whole machine's busy CPU time (us, every process: the server's
    too when it is local) and context switches so far, from /proc/stat;
    None when unknown (as sc-counter.c's host_sample())."""
    busy = ctxt = None
    try:
        with open("/proc/stat") as f:
            for line in f:
                v = line.split()
                if v[0] == "cpu" and len(v) >= 9:
                    busy = sum(int(v[i]) for i in (1, 2, 3, 6, 7)) * 1e6 / \
                        os.sysconf("SC_CLK_TCK")
                elif v[0] == "ctxt":
                    ctxt = float(v[1])
    except OSError:
        return None
    return None if busy is None or ctxt is None else (busy, ctxt)


class Crew(object):
    """What the contenders of one S11-S13 run share: `total` operations
    over all of them (slots, so that all contend to the end), a barrier
    that lets them go together, and the stop at the cap."""

    def __init__(self, n, total):
        self.lock = threading.Lock()
        self.claimed = 0
        self.total = total
        self.stop = False
        self.start = threading.Barrier(n + 1)

    def claim(self):
        with self.lock:
            if self.stop or self.claimed >= self.total:
                return False
            self.claimed += 1
            return True


class CrewThread(threading.Thread):
    """A contender: once() per slot while slots last; an exception is
    reported (the run goes on without it) and cleanup() runs."""
    tag = "S?"

    def __init__(self, run):
        super().__init__(daemon=True)
        self.run_ = run
        self.done = 0
        self.t_end = 0

    def once(self):
        raise NotImplementedError

    def cleanup(self):
        pass

    def run(self):
        r = self.run_
        try:
            r.start.wait(60)
            while r.claim():
                self.once()
                self.done += 1
        except Exception as e:  # reported, the run goes on
            ERRORS.append("%s contender: %s: %s" % (self.tag, type(e).__name__,
                                                    e))
            try:
                self.cleanup()
            except Exception:
                pass
        self.t_end = now_ns()


def crew_window(args, run, cons, cap_s):
    """Starts cons, lets them go together and joins them (past cap_s
    each stops after its operation): (t0, cpu s, the server's delta with
    the machine's "host_us" and "ctxt" over the window)."""
    for c in cons:
        c.start()
    a = srv_sample(args.hosts)
    h0 = host_sample()
    cpu0 = time.process_time()
    run.start.wait(60)
    t0 = now_ns()
    deadline = time.monotonic() + cap_s
    for c in cons:
        c.join(max(0.001, deadline - time.monotonic()))
        if c.is_alive():
            with run.lock:
                run.stop = True  # each stops after its operation
            break
    for c in cons:
        c.join()
    cpu = time.process_time() - cpu0
    h1 = host_sample()
    d = srv_delta(a, srv_sample(args.hosts))
    d["host_us"] = h1[0] - h0[0] if h0 and h1 else float("nan")
    d["ctxt"] = h1[1] - h0[1] if h0 and h1 else float("nan")
    return t0, cpu, d


def crew_rate(run, cons, t0, what, noun, cap_s):
    """(operations done, their rate) of a run; a run cut at the cap is
    said on stderr."""
    done = sum(c.done for c in cons)
    t_end = max([c.t_end for c in cons] + [t0])
    if done < run.total:
        print("kazoo_bench: %s: a run stopped after %d s with %d of %d %s"
              % (what, cap_s, done, run.total, noun), file=sys.stderr)
    return done, done * 1e9 / (t_end - t0) if t_end > t0 else float("nan")


class Incrementer(CrewThread):
    """A contender on its own session: counter += 1 while slots last."""
    tag = "S11"

    def __init__(self, hosts, path, run, retry):
        super().__init__(run)
        self.zk = client(hosts, command_retry=retry)
        self.counter = self.zk.Counter(path, default=0, support_curator=True)
        self.counter.value  # warm: the path ensured, one read
        self.lat = []

    def once(self):
        t0 = now_ns()
        self.counter += 1
        self.lat.append((now_ns() - t0) / 1e3)


def s11_once(args, admin, path, retry):
    """One run on a fresh node: (increments/s, per-contender counts,
    latencies, server delta, cpu s)."""
    n, total = args.cas_contenders, args.cas_contenders * args.increments
    admin.create(path, b"\0\0\0\0", makepath=True)
    run = Crew(n, total)
    incs = []
    try:
        incs = [Incrementer(args.hosts, path, run, retry) for _ in range(n)]
        t0, cpu, d = crew_window(args, run, incs, S11_CAP_S)
    finally:
        for k in incs:
            close(k.zk)
    done, rate = crew_rate(run, incs, t0, "S11", "increments", S11_CAP_S)
    data, _ = admin.get(path)
    value = struct.unpack(">i", data)[0] if len(data) == 4 else None
    if value != done:
        ERRORS.append("S11: %s holds %s after %d increments: a lost update"
                      % (path, value, done))
    return (rate, [k.done for k in incs], [x for k in incs for x in k.lat], d,
            cpu)


def s11(args, root):
    admin = client(args.hosts)
    case = "N=%d" % args.cas_contenders
    try:
        for impl, retry in S11_IMPLS:
            rates, per, lat, srv, cpu = [], [0] * args.cas_contenders, [], None, 0.0
            for rep in range(args.reps):
                rate, counts, l, d, c = s11_once(
                    args, admin, "%s/s11-%s-%d" % (root, impl, rep), retry)
                rates.append(rate)
                per = [p + c for p, c in zip(per, counts)]
                lat += l
                cpu += c
                srv = d if srv is None else {k: srv[k] + d[k] for k in d}
            done = sum(per)
            if done:
                add("11", case, "increments/s", "1/s", quantile(rates, 0.5),
                    n=done, impl=impl)
                add_samples("11", case, "increment", "us", lat, impl=impl)
                if max(per) > 0:
                    add("11", case, "fairness", "", min(per) / max(per),
                        n=len(per), impl=impl)
                add_server("11", case, "inc", srv, done, impl=impl)
                add("11", case, "cpu/inc", "us", cpu * 1e6 / done, n=done,
                    impl=impl)
                if not math.isnan(srv["host_us"]):
                    add("11", case, "host-cpu/inc", "us",
                        srv["host_us"] / done, n=done, impl=impl)
                    add("11", case, "ctxsw/inc", "", srv["ctxt"] / done,
                        n=done, impl=impl)
            print("  S11 %s done" % impl, flush=True)
    finally:
        close(admin)


# ---- S12 --------------------------------------------------------------------

S12_CAP_S = 20.0  # a run stops after this long (zkl-bench's BENCH_S12_CAP_S)


class MlRun(Crew):
    def __init__(self, n, k, total):
        super().__init__(n, total)
        self.holders = [0] * k
        self.violations = 0
        self.last_release = None


class MlContender(CrewThread):
    """A contender on its own session: the K Locks, in sorted order."""
    tag = "S12"

    def __init__(self, hosts, paths, run):
        super().__init__(run)
        self.zk = client(hosts)
        self.locks = [self.zk.Lock(p, "kazoo-bench") for p in sorted(paths)]
        self.acq = []
        self.hand = []
        self.held = []
        # warm, unmeasured (the others are not started yet): the paths
        # ensured, as each Lock does at its first acquire
        self.lock_all()
        self.unlock_all()

    def lock_all(self):
        for lk in self.locks:
            if not lk.acquire(timeout=LOCK_TIMEOUT_S):
                raise Exception("Lock.acquire timed out")
            self.held.append(lk)

    def unlock_all(self):
        while self.held:
            self.held.pop().release()

    def once(self):
        r = self.run_
        t0 = now_ns()
        self.lock_all()
        t1 = now_ns()
        with r.lock:
            for i in range(len(r.holders)):
                if r.holders[i]:
                    r.violations += 1
                r.holders[i] += 1
            prev = r.last_release
        self.acq.append((t1 - t0) / 1e3)
        if prev is not None:
            self.hand.append((t1 - max(prev, t0)) / 1e3)
        with r.lock:
            for i in range(len(r.holders)):
                r.holders[i] -= 1
            r.last_release = now_ns()
        self.unlock_all()

    def cleanup(self):
        self.unlock_all()


def s12_once(args, admin, dirpath, k):
    """One run on fresh paths: (acquisitions/s, per-contender counts,
    acquire latencies, handoff latencies, server delta, cpu s)."""
    n, total = args.ml_contenders, args.ml_contenders * args.ml_acquisitions
    paths = ["%s/p%d" % (dirpath, i) for i in range(k)]
    for p in paths:
        admin.ensure_path(p)
    run = MlRun(n, k, total)
    cons = []
    try:
        cons = [MlContender(args.hosts, paths, run) for _ in range(n)]
        t0, cpu, d = crew_window(args, run, cons, S12_CAP_S)
        # nothing left (the sessions still open: an ephemeral node left
        # behind would still be there)
        for p in paths:
            left = admin.get_children(p)
            if left:
                ERRORS.append("S12 K=%d: %d node(s) left under %s"
                              % (k, len(left), p))
    finally:
        for c in cons:
            close(c.zk)
    done, rate = crew_rate(run, cons, t0, "S12 K=%d" % k, "acquisitions",
                           S12_CAP_S)
    if run.violations:
        ERRORS.append("S12 K=%d: two holders of one path at once %d times"
                      % (k, run.violations))
    return (rate, [c.done for c in cons], [x for c in cons for x in c.acq],
            [x for c in cons for x in c.hand], d, cpu)


def s12(args, root):
    admin = client(args.hosts)
    n = args.ml_contenders
    try:
        for k in (int(x) for x in args.ml_paths.split(",")):
            case = "K=%d N=%d" % (k, n)
            rates, per, acq, hand, srv, cpu = [], [0] * n, [], [], None, 0.0
            for rep in range(args.reps):
                rate, counts, a, h, d, c = s12_once(
                    args, admin, "%s/s12-kazoo-k%d-%d" % (root, k, rep), k)
                rates.append(rate)
                per = [p + x for p, x in zip(per, counts)]
                acq += a
                hand += h
                cpu += c
                srv = d if srv is None else {x: srv[x] + d[x] for x in d}
            done = sum(per)
            if done:
                add("12", case, "acquisitions/s", "1/s", quantile(rates, 0.5),
                    n=done)
                add_samples("12", case, "acquire", "us", acq)
                add_samples("12", case, "handoff", "us", hand)
                if max(per) > 0:
                    add("12", case, "fairness", "", min(per) / max(per),
                        n=len(per))
                add_server("12", case, "acq", srv, done)
                add("12", case, "cpu/acq", "us", cpu * 1e6 / done, n=done)
            print("  S12 %s done" % case, flush=True)
    finally:
        close(admin)


# ---- S13 --------------------------------------------------------------------

S13_CAP_S = 20.0  # a run stops after this long (zkl-bench's BENCH_S13_CAP_S)


class SemRun(Crew):
    def __init__(self, n, maxl, hold_s, total):
        super().__init__(n, total)
        self.max = maxl
        self.hold_s = hold_s
        self.holders = 0
        self.peak = 0
        self.violations = 0


class SemContender(CrewThread):
    """A contender on its own session: one lease at a time."""
    tag = "S13"

    def __init__(self, hosts, path, run):
        super().__init__(run)
        self.zk = client(hosts)
        self.sem = self.zk.Semaphore(path, "kazoo-bench", max_leases=run.max)
        self.acq = []
        # warm, unmeasured (the others are not started yet): the path
        # ensured and its max checked, as at each Semaphore's first acquire
        if not self.sem.acquire(timeout=LOCK_TIMEOUT_S):
            raise Exception("Semaphore.acquire failed")
        self.sem.release()

    def once(self):
        r = self.run_
        t0 = now_ns()
        if not self.sem.acquire(timeout=LOCK_TIMEOUT_S):
            raise Exception("Semaphore.acquire failed")
        t1 = now_ns()
        with r.lock:
            r.holders += 1
            if r.holders > r.max:
                r.violations += 1
            r.peak = max(r.peak, r.holders)
        self.acq.append((t1 - t0) / 1e3)
        if r.hold_s > 0:
            time.sleep(r.hold_s)
        with r.lock:
            r.holders -= 1
        self.sem.release()

    def cleanup(self):
        self.sem.release()


def s13_once(args, admin, path, maxl):
    """One run on a fresh path: (grants/s, per-contender counts, acquire
    latencies, peak holders, server delta, cpu s)."""
    n, total = args.sem_contenders, args.sem_contenders * args.sem_grants
    run = SemRun(n, maxl, args.sem_hold / 1e3, total)
    cons = []
    try:
        cons = [SemContender(args.hosts, path, run) for _ in range(n)]
        t0, cpu, d = crew_window(args, run, cons, S13_CAP_S)
        # nothing left (the sessions still open: an ephemeral node left
        # behind would still be there)
        for p in (path, path + "-__lock__"):
            left = admin.get_children(p) if admin.exists(p) else []
            if left:
                ERRORS.append("S13 MAX=%d: %d node(s) left under %s"
                              % (maxl, len(left), p))
    finally:
        for c in cons:
            close(c.zk)
    done, rate = crew_rate(run, cons, t0, "S13 MAX=%d" % maxl, "grants",
                           S13_CAP_S)
    if run.violations:
        ERRORS.append("S13 MAX=%d: more than MAX holders at once %d times "
                      "(peak %d)" % (maxl, run.violations, run.peak))
    return (rate, [c.done for c in cons], [x for c in cons for x in c.acq],
            run.peak, d, cpu)


def s13(args, root):
    admin = client(args.hosts)
    n = args.sem_contenders
    try:
        for maxl in (int(x) for x in args.sem_max.split(",")):
            case = "MAX=%d N=%d" % (maxl, n)
            rates, per, acq, peak, srv, cpu = [], [0] * n, [], 0, None, 0.0
            for rep in range(args.reps):
                rate, counts, a, pk, d, c = s13_once(
                    args, admin, "%s/s13-kazoo-m%d-%d" % (root, maxl, rep),
                    maxl)
                rates.append(rate)
                per = [p + x for p, x in zip(per, counts)]
                acq += a
                peak = max(peak, pk)
                cpu += c
                srv = d if srv is None else {x: srv[x] + d[x] for x in d}
            done = sum(per)
            if done:
                add("13", case, "grants/s", "1/s", quantile(rates, 0.5),
                    n=done)
                add_samples("13", case, "acquire", "us", acq)
                add("13", case, "peak holders", "", peak, n=args.reps)
                if max(per) > 0:
                    add("13", case, "fairness", "", min(per) / max(per),
                        n=len(per))
                add_server("13", case, "grant", srv, done)
                add("13", case, "cpu/grant", "us", cpu * 1e6 / done, n=done)
            print("  S13 %s done" % case, flush=True)
    finally:
        close(admin)


# ---- S14: aggregate throughput on distinct keys -------------------------------------

S14_CAP_S = 20.0  # past the duration, a run is stopped (BENCH_S14_CAP_S)


class AggRun(Crew):
    """T threads on ONE client, each cycling a lock of its own path for
    `duration` seconds from the moment they are let go."""

    def __init__(self, n, duration):
        super().__init__(n, total=0)
        self.duration = duration
        self.deadline = None

    def claim(self):
        with self.lock:
            now = time.monotonic()
            if self.deadline is None:  # the first thread let go
                self.deadline = now + self.duration
            return not self.stop and now < self.deadline


class AggWorker(CrewThread):
    """A thread on the run's shared client: a Lock of its own path."""
    tag = "S14"

    def __init__(self, zk, path, run):
        super().__init__(run)
        self.lock = zk.Lock(path, "kazoo-bench")
        self.lat = []
        self.cycle()  # warm, unmeasured: the path made

    def cycle(self):
        if not self.lock.acquire(timeout=LOCK_TIMEOUT_S):
            raise Exception("Lock.acquire timed out")
        self.lock.release()

    def once(self):
        t0 = now_ns()
        self.cycle()
        self.lat.append((now_ns() - t0) / 1e3)


def s14(args, root):
    for t in (int(x) for x in args.agg_threads.split(",")):
        case = "T=%d" % t
        rates, per, lat, srv, cpu = [], [0] * t, [], None, 0.0
        turn()  # the case's setup: none (each run has its client)
        for _ in range(args.reps):
            turn()
            zk = client(args.hosts)
            run = AggRun(t, args.agg_duration)
            try:
                ws = [AggWorker(zk, "%s/s14-kazoo/%d" % (root, i), run)
                      for i in range(t)]
                t0, c, d = crew_window(args, run, ws,
                                       args.agg_duration + S14_CAP_S)
            finally:
                close(zk)
            t_end = max([w.t_end for w in ws] + [t0])
            done = sum(w.done for w in ws)
            if t_end > t0:
                rates.append(done * 1e9 / (t_end - t0))
            per = [p + w.done for p, w in zip(per, ws)]
            lat += [x for w in ws for x in w.lat]
            cpu += c
            srv = d if srv is None else {x: srv[x] + d[x] for x in d}
        done = sum(per)
        if done:
            add("14", case, "cycles/s", "1/s", quantile(rates, 0.5), n=done)
            add_samples("14", case, "cycle", "us", lat)
            if max(per) > 0:
                add("14", case, "fairness", "", min(per) / max(per), n=t)
            add_server("14", case, "cycle", srv, done)
            add("14", case, "cpu/cycle", "us", cpu * 1e6 / done, n=done)
        print("  S14 %s done" % case, flush=True)


# ---- main -------------------------------------------------------------------------

def parse_args(argv):
    quick = "--quick" in argv or "-q" in argv
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-s", "--hosts",
                   default=os.environ.get("ZKL_TEST_HOSTS") or "127.0.0.1:2181")
    p.add_argument("-q", "--quick", action="store_true")
    p.add_argument("--only", default="1,3,6,9,10,11,12,13,14")
    p.add_argument("--iters", type=int, default=100 if quick else 1000)
    p.add_argument("--duration", type=float, default=0.5 if quick else 3.0)
    p.add_argument("--reps", type=int, default=1 if quick else 3)
    p.add_argument("--contenders", default="2,8" if quick else "2,8,32,128")
    p.add_argument("--rounds", type=int, default=5 if quick else 50)
    p.add_argument("--kill-rounds", type=int, default=1 if quick else 3)
    p.add_argument("--kill-timeout", type=int, default=1000 if quick else 2000)
    p.add_argument("--items", type=int, default=200 if quick else 2000)
    p.add_argument("--batch", type=int, default=100)
    p.add_argument("--consumers", default="1,4" if quick else "1,10,100")
    p.add_argument("--puts", type=int, default=5 if quick else 100)
    p.add_argument("--cas-contenders", type=int, default=8)
    p.add_argument("--increments", type=int, default=10 if quick else 250)
    p.add_argument("--ml-contenders", type=int, default=8)
    p.add_argument("--ml-paths", default="2,8")
    p.add_argument("--ml-acquisitions", type=int, default=5 if quick else 50)
    p.add_argument("--sem-contenders", type=int, default=8 if quick else 32)
    p.add_argument("--sem-max", default="1,5" if quick else "1,5,20")
    p.add_argument("--sem-grants", type=int, default=5 if quick else 20)
    p.add_argument("--sem-hold", type=int, default=0)
    p.add_argument("--agg-threads", default="1,8" if quick else "1,8,32,64")
    p.add_argument("--agg-duration", type=float,
                   default=0.2 if quick else 3.0)
    p.add_argument("--csv")
    p.add_argument("--no-table", action="store_true",
                   help="no table on stdout (zkl-bench prints the rows)")
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
        if 9 in only:
            s9(args, root)
        if 10 in only:
            s10(args, root)
        if 11 in only:
            s11(args, root)
        if 12 in only:
            s12(args, root)
        if 13 in only:
            s13(args, root)
        if 14 in only:
            s14(args, root)
    finally:
        admin.delete(root, recursive=True)
        try:
            admin.delete("/zkl-bench")  # unless another run uses it
        except Exception:
            pass
        close(admin)
    if not args.no_table:
        print_table()
    if args.csv:
        write_csv(args.csv)
    for e in ERRORS:
        print("kazoo_bench: error: %s" % e, file=sys.stderr)
    return 1 if ERRORS else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
