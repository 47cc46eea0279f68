#!/usr/bin/python3
"""A kazoo peer for the interop tests: holds or tries a kazoo Lock on the
same path as zkl.  Usage:
  kazoo_peer.py HOSTS PATH hold   -> prints "held <node>", holds until stdin
                                     closes, releases, prints "released"
  kazoo_peer.py HOSTS PATH try    -> prints "acquired" or "busy"
  kazoo_peer.py HOSTS PATH wait S -> blocks up to S seconds; "acquired" or
                                     "timeout"
  kazoo_peer.py HOSTS SECS serve -> the command-driven peer of the
                                     multi-lock interop tests (serve() below)
kazoo must be told about Curator-style names: extra_lock_patterns=["-lock-"].
"""
import logging
import sys

from kazoo.client import KazooClient

logging.basicConfig(level=logging.CRITICAL)


def serve(hosts, secs):
    """kazoo_peer.py HOSTS SECS serve: kazoo Locks (extra_lock_patterns=
    ["-lock-"]) driven through stdin, with the commands of
    java/CuratorLockPeer.java (test-multilock-interop.c drives both with one
    script).  Prints "ready", then reads commands, one a line.  It holds
    named clients (ID), each a KazooClient of its own (its own session)
    whose Locks' identifier, and so the data of their nodes, is the ID, and
    each with ONE thread of its own that runs its acquires and releases in
    the order given.  Paths are named by short labels.  A plain command is
    answered with one line; a command that blocks (acquire, loop) answers
    nothing at once: its result comes later as one line
      @TAG RESULT T0 T1
    RESULT "true"/"false" (acquired or not) or "error:<what>", T0 and T1 the
    CLOCK_MONOTONIC (time.monotonic_ns()) in microseconds just before the
    call and just after it returned.
      path L P               L names path P from now on: "ok"
      open ID SESSMS         a client, session timeout SESSMS: "ok 0xSESSION"
      mutex ID NAME L        Lock(path L, ID, extra_lock_patterns=["-lock-"])
                             as NAME: "ok"
      acquire TAG ID NAME MS on ID's thread: acquire() (MS < 0) or
                             acquire(timeout=MS / 1000.0), LockTimeout being
                             false: @TAG
      release ID NAME        on ID's thread (after what is queued there):
                             release(): "ok"
      loop TAG ID ROUNDS HOLDMS MS NAME...
                             on ID's thread, ROUNDS times: acquire the NAMEs
                             in order, each with MS; if one fails, release
                             those held (in reverse), count a retry, sleep
                             1-10 ms and start the round again (at most 200
                             times a round); all held: hold HOLDMS ms,
                             release in reverse.  @TAG true (every round
                             done) or false
      log ID                 "ok RETRIES L T0 T1 L T0 T1 ...": ID's holds
                             ended since the last log, per path label, T0
                             the time.monotonic_ns() just after the acquire
                             returned and T1 just before the release was
                             called; RETRIES the loops' retries since then
      queue ID L             kazoo's own view of the queue on path L
                             (Lock.contenders(): the nodes' data in its
                             order): "ok DATA..."
      ping                   "pong" (every result before it came first)
      quit                   "done", exit status 0 (so does the end of stdin)
    Any failure of a plain command: "error <what>", exit status 1.  After
    SECS seconds the peer exits by itself whatever it is doing ("error
    watchdog", status 2)."""
    import os
    import queue
    import random
    import signal
    import threading
    import time

    from kazoo.exceptions import LockTimeout

    out = threading.Lock()

    def say(*words):
        with out:
            print(*words, flush=True)

    def watchdog(signum, frame):
        say("error watchdog")
        os._exit(2)

    signal.signal(signal.SIGALRM, watchdog)
    signal.alarm(secs)
    paths, clients = {}, {}

    class Held:
        def __init__(self, lock, label):
            self.lock, self.label, self.since = lock, label, None

    class Client:
        def __init__(self, ident, sess_ms):
            self.id = ident
            self.zk = KazooClient(hosts=hosts, timeout=sess_ms / 1000.0)
            self.zk.start(timeout=15)
            self.locks, self.log, self.retries = {}, [], 0
            self.mu = threading.Lock()
            self.jobs = queue.Queue()
            threading.Thread(target=self.run, daemon=True).start()

        def run(self):
            while True:
                self.jobs.get()()

        def acquire(self, h, ms):
            if h.since is not None:
                raise RuntimeError(self.id + " holds it already")
            try:
                got = h.lock.acquire(timeout=None if ms < 0 else ms / 1000.0)
            except LockTimeout:
                got = False
            if got:
                h.since = time.monotonic_ns()
            return got

        def release(self, h):
            if h.since is None:
                raise RuntimeError(self.id + " does not hold it")
            t1 = time.monotonic_ns()
            with self.mu:
                self.log.append("%s %d %d" % (h.label, h.since, t1))
            h.since = None
            h.lock.release()

        def loop(self, rounds, hold_ms, ms, hs):
            for _ in range(rounds):
                tries = 0
                while True:
                    if tries >= 200:
                        return False
                    tries += 1
                    got = 0
                    while got < len(hs) and self.acquire(hs[got], ms):
                        got += 1
                    if got == len(hs):
                        break
                    while got > 0:
                        got -= 1
                        self.release(hs[got])
                    with self.mu:
                        self.retries += 1
                    time.sleep(random.randint(1, 10) / 1000.0)
                if hold_ms > 0:
                    time.sleep(hold_ms / 1000.0)
                for h in reversed(hs):
                    self.release(h)
            return True

    def micros():
        return time.monotonic_ns() // 1000

    def background(k, tag, call):
        def job():
            t0 = micros()
            try:
                result = "true" if call() else "false"
            except Exception as e:  # report, never hang
                result = "error:" + type(e).__name__
                print("kazoo %s: %r" % (tag, e), file=sys.stderr, flush=True)
            say("@" + tag, result, t0, micros())

        k.jobs.put(job)

    def on_thread(k, call):
        done, failed = threading.Event(), []

        def job():
            try:
                call()
            except Exception as e:
                failed.append(e)
            done.set()

        k.jobs.put(job)
        if not done.wait(secs):
            raise RuntimeError(k.id + "'s thread is stuck")
        if failed:
            raise failed[0]

    status = 0
    try:
        say("ready")
        for line in sys.stdin:
            w = line.split()
            if not w:
                continue
            if w[0] == "quit":
                break
            k = clients.get(w[1]) if len(w) > 1 and w[0] in (
                "mutex", "release", "log", "queue") else None
            if w[0] in ("acquire", "loop"):
                k = clients.get(w[2])
            if k is None and w[0] not in ("ping", "path", "open"):
                raise RuntimeError("no client in " + line.strip())
            if w[0] == "ping":
                say("pong")
            elif w[0] == "path":
                paths[w[1]] = w[2]
                say("ok")
            elif w[0] == "open":
                clients[w[1]] = Client(w[1], int(w[2]))
                say("ok", hex(clients[w[1]].zk.client_id[0]))
            elif w[0] == "mutex":
                k.locks[w[2]] = Held(k.zk.Lock(paths[w[3]], w[1],
                                               extra_lock_patterns=["-lock-"]),
                                     w[3])
                say("ok")
            elif w[0] == "acquire":
                h, ms = k.locks[w[3]], int(w[4])
                background(k, w[1], lambda k=k, h=h, ms=ms: k.acquire(h, ms))
            elif w[0] == "release":
                h = k.locks[w[2]]
                on_thread(k, lambda k=k, h=h: k.release(h))
                say("ok")
            elif w[0] == "loop":
                rounds, hold, ms = int(w[3]), int(w[4]), int(w[5])
                hs = [k.locks[n] for n in w[6:]]
                background(k, w[1], lambda k=k, a=(rounds, hold, ms, hs):
                           k.loop(*a))
            elif w[0] == "log":
                with k.mu:
                    say("ok", k.retries, *k.log)
                    k.log, k.retries = [], 0
            elif w[0] == "queue":
                lock = k.zk.Lock(paths[w[2]], extra_lock_patterns=["-lock-"])
                say("ok", *lock.contenders())
            else:
                raise RuntimeError("unknown command " + line.strip())
        say("done")
    except Exception as e:  # report, never hang
        say("error", type(e).__name__, e)
        status = 1
    finally:
        for k in clients.values():
            k.zk.stop()
            k.zk.close()
    return status


if len(sys.argv) == 4 and sys.argv[3] == "serve":
    sys.exit(serve(sys.argv[1], int(sys.argv[2])))
hosts, path, mode = sys.argv[1], sys.argv[2], sys.argv[3]
zk = KazooClient(hosts=hosts, timeout=10)
zk.start(timeout=10)
lock = zk.Lock(path, "kazoo-peer", extra_lock_patterns=["-lock-"])
try:
    if mode == "hold":
        lock.acquire()
        print("held", lock.node, flush=True)
        sys.stdin.read()
        lock.release()
        print("released", flush=True)
    elif mode == "try":
        got = lock.acquire(blocking=False)
        print("acquired" if got else "busy", flush=True)
        if got:
            lock.release()
    elif mode == "wait":
        got = lock.acquire(timeout=float(sys.argv[4]))
        print("acquired" if got else "timeout", flush=True)
        if got:
            lock.release()
except Exception as e:  # report, never hang
    if type(e).__name__ == "LockTimeout":
        print("timeout", flush=True)
    else:
        print("error", type(e).__name__, e, flush=True)
finally:
    zk.stop()
    zk.close()
