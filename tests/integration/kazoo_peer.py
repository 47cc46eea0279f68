#!/usr/bin/python3
"""A kazoo peer for the interop tests: holds or tries a kazoo Lock on the
same path as zkl.  Usage:
  kazoo_peer.py HOSTS PATH hold   -> prints "held <node>", holds until stdin
                                     closes, releases, prints "released"
  kazoo_peer.py HOSTS PATH try    -> prints "acquired" or "busy"
  kazoo_peer.py HOSTS PATH wait S -> blocks up to S seconds; "acquired" or
                                     "timeout"
kazoo must be told about Curator-style names: extra_lock_patterns=["-lock-"].
"""
import logging
import sys

from kazoo.client import KazooClient

logging.basicConfig(level=logging.CRITICAL)
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
