#!/usr/bin/python3
"""A kazoo peer for the counter interop tests (python3-kazoo's Counter on
the same node as zkl).  Usage:
  counter_peer.py HOSTS SECS
Prints "ready" once connected, then reads commands from stdin, one a line,
and answers each with one line.  FMT is "curator" (Counter(path,
support_curator=True): 4 bytes big-endian), "text" (Counter(path): ASCII
decimal) or "float" (Counter(path, default=0.0): repr of a float).
  inc PATH FMT N           counter += 1, N times: "ok POST..." (each
                           change's post_value)
  add PATH FMT DELTA       counter += DELTA (or -= for a negative one):
                           "ok PRE POST"
  value PATH FMT DEFAULT   counter.value with that default (kazoo makes a
                           missing node, empty): "ok VALUE"
  quit                     "done", exit status 0 (so does the end of stdin)
On any failure "error <what>" and exit status 1; after SECS seconds the
peer exits by itself whatever it is doing ("error watchdog", status 2).
"""
import logging
import os
import signal
import sys

from kazoo.client import KazooClient

logging.basicConfig(level=logging.CRITICAL)


def watchdog(signum, frame):
    print("error watchdog", flush=True)
    os._exit(2)


hosts, secs = sys.argv[1], int(sys.argv[2])
signal.signal(signal.SIGALRM, watchdog)
signal.alarm(secs)

# Every Counter change is an optimistic get + set(version); the client's
# command retry repeats it (ForceRetryError) while other writers come
# first: without end here, bounded by a deadline.
zk = KazooClient(hosts=hosts, timeout=10,
                 command_retry=dict(max_tries=-1, delay=0.001, backoff=1.3,
                                    max_jitter=0.5, max_delay=0.02,
                                    deadline=25))


def counter(path, fmt, default=None):
    if fmt == "curator":
        return zk.Counter(path, default=int(default or 0),
                          support_curator=True)
    if fmt == "text":
        return zk.Counter(path, default=int(default or 0))
    if fmt == "float":
        return zk.Counter(path, default=float(default or 0))
    raise RuntimeError("unknown format " + fmt)


def number(fmt, s):
    return float(s) if fmt == "float" else int(s)


status = 0
try:
    zk.start(timeout=15)
    print("ready", flush=True)
    for line in sys.stdin:
        w = line.split()
        if not w:
            continue
        if w[0] == "quit":
            break
        if w[0] == "inc":
            c = counter(w[1], w[2])
            tries = [0]
            change = c._inner_change

            def counted(value):  # the optimistic tries, for the log
                tries[0] += 1
                return change(value)

            c._inner_change = counted
            posts = []
            for _ in range(int(w[3])):
                c += number(w[2], "1")
                posts.append(str(c.post_value))
            print("kazoo inc: %s increments, %d optimistic tries"
                  % (w[3], tries[0]), file=sys.stderr, flush=True)
            print("ok", *posts, flush=True)
        elif w[0] == "add":
            c = counter(w[1], w[2])
            delta = number(w[2], w[3])
            if delta < 0:
                c -= -delta
            else:
                c += delta
            print("ok", c.pre_value, c.post_value, flush=True)
        elif w[0] == "value":
            print("ok", counter(w[1], w[2], w[3]).value, flush=True)
        else:
            raise RuntimeError("unknown command " + line.strip())
    print("done", flush=True)
except Exception as e:  # report, never hang
    print("error", type(e).__name__, e, flush=True)
    status = 1
finally:
    zk.stop()
    zk.close()
sys.exit(status)
