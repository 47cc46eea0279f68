#!/usr/bin/python3
"""A kazoo peer for the semaphore interop tests (python3-kazoo's Semaphore
on the same nodes as zkl's ZKL_SEM_KAZOO format: the leases children of
PATH, the gate PATH-__lock__, the maximum in PATH's data).  Usage:
  sem_peer.py HOSTS SECS
Prints "ready", then reads commands from stdin, one a line, and answers
each with one line.  It holds named clients (ID), each a KazooClient of its
own (its own session) with one Semaphore whose identifier, and so the data
of its lease node, is the ID (its gate node's data is "b'ID'": kazoo 2.8's
Semaphore gives its Lock the identifier encoded, and Lock str()s it):
  open ID PATH MAX SESSMS   a client with a session timeout of SESSMS and
                            Semaphore(PATH, ID, max_leases=MAX):
                            "ok SESSIONID" (hex, as "0x1a2b")
  acquire ID MS             starts acquire() (MS < 0), acquire(blocking=
                            False) (MS 0) or acquire(timeout=MS / 1000) in
                            the background: "ok"
  await ID MS               waits up to MS ms for ID's background job:
                            "got NAME" (the lease node's name, now held),
                            "none" (acquire gave False or LockTimeout), a
                            loop's line (below), "raised EXC: WHAT" (any
                            other exception, e.g. ValueError for a max
                            that disagrees), or "waiting" (still)
  release ID                release() of ID's lease (it must have one): "ok"
  loop ID ROUNDS HOLDMS MS  in the background, ROUNDS times: acquire as
                            above (MS < 0: no timeout), hold HOLDMS ms,
                            release().  Its await line:
                            "loop FAILS OVER PEAK T0 T1 T0 T1 ..." - the
                            acquires that gave nothing, the times this
                            process's leases on PATH (all its clients)
                            were over MAX and their peak, and for each lease
                            held time.monotonic_ns() (CLOCK_MONOTONIC) just
                            after acquire() returned and just before
                            release()
  holders ID                the semaphore's lease_holders(), sorted (it is
                            unordered): "ok DATA..."
  contenders ID             Lock(PATH-__lock__).contenders(), in its order
                            (the gate's nodes by sequence): "ok DATA..."
  ping                      "pong"
  quit                      "done", exit status 0 (so does the end of stdin)
Any failure of a command: "error <what>", exit status 1.  The peer exits
by itself after SECS seconds whatever it is doing ("error watchdog",
status 2).
"""
import logging
import os
import signal
import sys
import threading
import time

from kazoo.client import KazooClient
from kazoo.exceptions import LockTimeout

logging.basicConfig(level=logging.CRITICAL)

out = threading.Lock()


def say(*words):
    with out:
        print(*words, flush=True)


def watchdog(signum, frame):
    say("error watchdog")
    os._exit(2)


hosts, secs = sys.argv[1], int(sys.argv[2])
signal.signal(signal.SIGALRM, watchdog)
signal.alarm(secs)

clients = {}  # ID -> Client
in_use = {}  # PATH -> this process's leases on it now
in_use_lock = threading.Lock()


class Client(object):
    def __init__(self, ident, path, max_leases, sess_ms):
        self.path, self.max = path, max_leases
        self.zk = KazooClient(hosts=hosts, timeout=sess_ms / 1000.0)
        self.zk.start(timeout=15)
        self.sem = self.zk.Semaphore(path, ident, max_leases=max_leases)
        self.job = None  # the background thread
        self.result = None  # its answer line, once done

    def acquire(self, ms):
        """True if the lease is held, False if not (gave False or timed
        out); other exceptions go up."""
        try:
            if ms < 0:
                return self.sem.acquire()
            if ms == 0:
                return self.sem.acquire(blocking=False)
            return self.sem.acquire(timeout=ms / 1000.0)
        except LockTimeout:
            return False

    def lease_name(self):
        return self.sem.create_path.rsplit("/", 1)[1]

    def background(self, work):
        if self.job is not None and self.job.is_alive():
            raise RuntimeError("a job is underway already")

        def run():
            try:
                self.result = work()
            except Exception as e:  # report, never hang
                self.result = "raised %s: %s" % (type(e).__name__, e)
                print("kazoo: %r" % e, file=sys.stderr, flush=True)

        self.result = None
        self.job = threading.Thread(target=run, daemon=True)
        self.job.start()

    def one(self, ms):
        return "got " + self.lease_name() if self.acquire(ms) else "none"

    def loop(self, rounds, hold_ms, ms):
        fails = over = peak = 0
        spans = []
        for _ in range(rounds):
            if not self.acquire(ms):
                fails += 1
                continue
            t0 = time.monotonic_ns()
            with in_use_lock:
                n = in_use.get(self.path, 0) + 1
                in_use[self.path] = n
                peak = max(peak, n)
                over += n > self.max
            time.sleep(hold_ms / 1000.0)
            with in_use_lock:
                in_use[self.path] -= 1
            t1 = time.monotonic_ns()
            if not self.sem.release():
                raise RuntimeError("release() gave False")
            spans += [str(t0), str(t1)]
        return " ".join(["loop", str(fails), str(over), str(peak)] + spans)

    def await_job(self, ms):
        if self.job is None:
            raise RuntimeError("no job")
        self.job.join(ms / 1000.0)
        if self.job.is_alive():
            return "waiting"
        self.job = None
        return self.result

    def close(self):
        try:
            self.zk.stop()
            self.zk.close()
        except Exception:
            pass


status = 0
try:
    say("ready")
    for line in sys.stdin:
        w = line.split()
        if not w:
            continue
        if w[0] == "quit":
            break
        if w[0] == "ping":
            say("pong")
        elif w[0] == "open":
            if w[1] in clients:
                raise RuntimeError("client %s exists" % w[1])
            c = Client(w[1], w[2], int(w[3]), int(w[4]))
            clients[w[1]] = c
            say("ok", hex(c.zk.client_id[0]))
        elif w[0] == "acquire":
            c, ms = clients[w[1]], int(w[2])
            c.background(lambda c=c, ms=ms: c.one(ms))
            say("ok")
        elif w[0] == "await":
            say(clients[w[1]].await_job(int(w[2])))
        elif w[0] == "release":
            if not clients[w[1]].sem.release():
                raise RuntimeError("%s holds no lease" % w[1])
            say("ok")
        elif w[0] == "loop":
            c = clients[w[1]]
            r, h, ms = int(w[2]), int(w[3]), int(w[4])
            c.background(lambda c=c, r=r, h=h, ms=ms: c.loop(r, h, ms))
            say("ok")
        elif w[0] == "holders":
            say("ok", *sorted(clients[w[1]].sem.lease_holders()))
        elif w[0] == "contenders":
            c = clients[w[1]]
            say("ok", *c.zk.Lock(c.sem.lock_path).contenders())
        else:
            raise RuntimeError("unknown command " + line.strip())
    say("done")
except Exception as e:  # report, never hang
    say("error", type(e).__name__, e)
    status = 1
finally:
    for c in clients.values():
        c.close()
sys.exit(status)
