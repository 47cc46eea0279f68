#!/usr/bin/env bash
# scripts/segments-act.sh BIN [HOSTS [BUYERS [ITEMS [SEGMENTS]]]] - act 4 of
# scripts/demo (and tests/segments-demo.zksh): act 1's stock split into
# segments, each with its own zkl_mutex, and a zkl semaphore with one lease
# per segment admitting the buyers (examples/segments-demo.c).  Prints the
# table of three runs -- one mutex, segments + semaphore, segments alone --
# and exits 1 unless each sold exactly the stock, never below 0.  HOSTS
# defaults to $ZKL_TEST_HOSTS (tests/with-zookeeper bash scripts/segments-act.sh BIN).
set -euo pipefail
bin=$1 hosts=${2:-${ZKL_TEST_HOSTS:?HOSTS or ZKL_TEST_HOSTS}}
buyers=${3:-${ZKL_DEMO_BUYERS:-20}} items=${4:-${ZKL_DEMO_ITEMS:-100}}
segs=${5:-${ZKL_DEMO_SEGMENTS:-5}}

printf '\n==== act 4: the segmented lock -- %s items in %s segments, %s leases, %s buyers ====\n' \
  "$items" "$segs" "$segs" "$buyers"
cat <<TXT
    Act 1's stock, split into $segs znodes of $((items / segs)) items, each sold with the
    same read-modify-write under its OWN zkl_mutex.  A buyer takes one
    lease of a $segs-lease zkl semaphore, trylocks the segments in turn and
    sells one item from the first free one; segment unlocked, then lease
    released.  Three runs, $buyers buyer processes each, fresh stock each:
     - correctness (exactly the stock, no segment below 0) comes from the
       segment mutexes alone: each read-modify-write is exclusive.
     - the semaphore is admission control: never more buyers inside than
       segments, so a lease holder finds a free segment with trylock
       instead of queueing on one (near the end, when the free ones are
       those it already knows empty, it gives the lease back and tries
       again: "lease but no free segment").
     - its cost: every sale also passes the semaphore's gate -- a lock
       queue of its own, one acquirer at a time -- and makes and deletes a
       lease node: roughly 7 ZooKeeper writes a sale instead of 3.  With
       sales this short the gate, not the segments, sets the pace (see
       "most buyers selling at once").  The third run, the same segments
       without the semaphore (buyer i queues on segment i % $segs, moves on
       when it is empty), shows what the segments alone give.

TXT
# every lock and lease wait in the program is bounded (30 s; 120 s a buyer)
rc=0
timeout -k 5 300 "$bin" "$hosts" "$buyers" "$items" "$segs" | sed -u 's/^/    /' || rc=$?
[ "$rc" -eq 0 ] || { echo "    act 4 FAILED (exit $rc)"; exit 1; }
printf '    every run sold exactly the stock, never below 0, one buyer per segment at a time.\n'
