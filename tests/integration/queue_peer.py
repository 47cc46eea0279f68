#!/usr/bin/python3
"""A kazoo peer for the queue interop tests (python3-kazoo's Queue and
LockingQueue on the same path as zkl).  Usage:
  queue_peer.py HOSTS PATH put PRIO HEX...    Queue.put of each payload
  queue_peer.py HOSTS PATH get N              Queue.get N times
  queue_peer.py HOSTS PATH lput PRIO HEX...   LockingQueue.put_all
  queue_peer.py HOSTS PATH lget N SECS        LockingQueue get + consume,
                                              N times, waiting SECS each
Prints "ready" once connected, one line per item got (hex payload, "-"
for empty, "none" when there was none), then "done"; on any failure
"error <what>" and exit status 1.
"""
import logging
import sys

from kazoo.client import KazooClient

logging.basicConfig(level=logging.CRITICAL)


def show(b):
    if b is None:
        return "none"
    return b.hex() if b else "-"


def unhex(h):
    return b"" if h == "-" else bytes.fromhex(h)


hosts, path, mode = sys.argv[1], sys.argv[2], sys.argv[3]
args = sys.argv[4:]
zk = KazooClient(hosts=hosts, timeout=10)
status = 0
try:
    zk.start(timeout=15)
    print("ready", flush=True)
    if mode == "put":
        q = zk.Queue(path)
        for h in args[1:]:
            q.put(unhex(h), priority=int(args[0]))
    elif mode == "get":
        q = zk.Queue(path)
        for _ in range(int(args[0])):
            print(show(q.get()), flush=True)
    elif mode == "lput":
        q = zk.LockingQueue(path)
        q.put_all([unhex(h) for h in args[1:]], priority=int(args[0]))
    elif mode == "lget":
        q = zk.LockingQueue(path)
        for _ in range(int(args[0])):
            b = q.get(timeout=float(args[1]))
            print(show(b), flush=True)
            if b is not None and not q.consume():
                raise RuntimeError("consume failed")
    else:
        raise RuntimeError("unknown mode " + mode)
    print("done", flush=True)
except Exception as e:  # report, never hang
    print("error", type(e).__name__, e, flush=True)
    status = 1
finally:
    zk.stop()
    zk.close()
sys.exit(status)
