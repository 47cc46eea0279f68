#!/usr/bin/python3
"""A kazoo peer for the barrier interop tests (python3-kazoo's Barrier and
DoubleBarrier on the same nodes as zkl).  Usage:
  barrier_peer.py HOSTS SECS
Prints "ready" once connected, then reads commands from stdin, one a line.
A plain command is answered with one line; a command that blocks (b-wait,
enter, leave) answers nothing at once and runs on a thread of its own: its
result comes later as one line
  @TAG RESULT T0 T1
RESULT being "true"/"false" (what the call returned, or for the double
barrier whether the member is in after enter) or "error:<what>", T0 and T1
the wall clock (microseconds since the epoch) just before the call and just
after it returned, comparable with the test's and the other peer's.
  ping                  "pong" (every result finished before it came first)
  b-set PATH            Barrier(PATH).create(): "ok"
  b-remove PATH         Barrier(PATH).remove(): "ok True" or "ok False"
  b-wait TAG PATH MS    Barrier(PATH).wait(MS / 1000.0): @TAG
  member TAG PATH N     a DoubleBarrier(PATH, N) member TAG whose node holds
                        "kazoo-TAG" (the peer's one session): "ok"
  enter TAG             the member's enter() (it has no timeout): @TAG, true
                        if it is in
  leave TAG             the member's leave(): @TAG, true; but if kazoo's
                        leave gave up on an error (which it swallows)
                        "error:<what>"
  count PATH            PATH's children but "ready", and whether "ready" is
                        one: "ok MEMBERS READY" (no PATH: "ok 0 0")
  quit                  "done", exit status 0 (so does the end of stdin)
On any failure of a plain command "error <what>" and exit status 1; after
SECS seconds the peer exits by itself whatever it is doing ("error
watchdog", status 2).
"""
import logging
import os
import signal
import sys
import threading
import time

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

logging.basicConfig(level=logging.CRITICAL)

out = threading.Lock()


def say(*words):
    with out:
        print(*words, flush=True)


def watchdog(signum, frame):
    say("error watchdog")
    os._exit(2)


def micros():
    return time.time_ns() // 1000


def background(tag, call):
    def run():
        t0 = micros()
        try:
            result = "true" if call() else "false"
        except Exception as e:  # report, never hang
            result = "error:" + type(e).__name__
            print("kazoo %s: %r" % (tag, e), file=sys.stderr, flush=True)
        say("@" + tag, result, t0, micros())

    threading.Thread(target=run, daemon=True).start()


hosts, secs = sys.argv[1], int(sys.argv[2])
signal.signal(signal.SIGALRM, watchdog)
signal.alarm(secs)

zk = KazooClient(hosts=hosts, timeout=10)
members = {}


def enter(b):
    b.enter()
    return b.participating


def leave(b):
    # kazoo's leave() swallows any KazooException of its loop (and then
    # returns, done or not): note it to report it
    inner, failed = b._inner_leave, []

    def noted():
        try:
            result = inner()
        except Exception as e:
            failed.append(e)
            raise
        del failed[:]  # a retried try that failed first is no failure
        return result

    b._inner_leave = noted
    b.leave()
    if failed:
        raise failed[0]
    return True


status = 0
try:
    zk.start(timeout=15)
    say("ready")
    for line in sys.stdin:
        w = line.split()
        if not w:
            continue
        if w[0] == "quit":
            break
        if w[0] == "ping":
            say("pong")
        elif w[0] == "b-set":
            zk.Barrier(w[1]).create()
            say("ok")
        elif w[0] == "b-remove":
            say("ok", zk.Barrier(w[1]).remove())
        elif w[0] == "b-wait":
            b, timeout = zk.Barrier(w[2]), int(w[3]) / 1000.0
            background(w[1], lambda b=b, t=timeout: b.wait(t))
        elif w[0] == "member":
            members[w[1]] = zk.DoubleBarrier(w[2], int(w[3]),
                                             identifier="kazoo-" + w[1])
            say("ok")
        elif w[0] == "enter":
            background(w[1], lambda b=members[w[1]]: enter(b))
        elif w[0] == "leave":
            background(w[1], lambda b=members[w[1]]: leave(b))
        elif w[0] == "count":
            try:
                kids = zk.get_children(w[1])
            except NoNodeError:
                kids = []
            say("ok", len([k for k in kids if k != "ready"]),
                1 if "ready" in kids else 0)
        else:
            raise RuntimeError("unknown command " + line.strip())
    say("done")
except Exception as e:  # report, never hang
    say("error", type(e).__name__, e)
    status = 1
finally:
    zk.stop()
    zk.close()
sys.exit(status)
