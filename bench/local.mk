# bench/local.mk - included by the top Makefile.am: zkl-bench (issue 6).
#
#   make bench          the standard set against throwaway servers (fsync on,
#                       then forceSync=no), kazoo beside it; table, CSV and
#                       PNG plots in bench-out/ (see docs/performance.md)
#   make bench-quick    the same, in a few seconds
# The smoke test bench/bench-smoke.zksh runs `zkl-bench --quick` under
# `make check` so that the program never rots; it asserts no timing.
noinst_PROGRAMS += bench/zkl-bench
bench_zkl_bench_SOURCES = bench/bench.h bench/zkl-bench.c bench/stats.c \
	bench/server.c bench/floor.c bench/targets.c bench/sc-cycle.c \
	bench/sc-handoff.c bench/sc-queue.c bench/sc-election.c bench/sc-async.c \
	bench/sc-dqueue.c bench/sc-counter.c bench/sc-multilock.c \
	bench/sc-semaphore.c bench/sc-aggregate.c bench/peers.c
# where zkl-bench finds kazoo_bench.py and CuratorBench.java (--kazoo-script,
# --curator-src override them)
bench_zkl_bench_CFLAGS = $(AM_CFLAGS) $(UUID_CFLAGS) \
	-DBENCH_SRCDIR='"$(abs_top_srcdir)/bench"'
bench_zkl_bench_LDADD = lib/libzkl.la $(ZOOKEEPER_LIBS) $(UUID_LIBS) \
	$(PTHREAD_LIBS) -lm

TESTS += bench/bench-smoke.zksh
EXTRA_DIST += bench/bench-smoke.zksh bench/run-bench.sh bench/kazoo_bench.py \
	bench/CuratorBench.java bench/plot.gp docs/performance.md

BENCH_OUT = bench-out
bench: bench/zkl-bench$(EXEEXT)
	$(SHELL) $(abs_top_srcdir)/bench/run-bench.sh --out $(BENCH_OUT) \
	  --bench $(abs_top_builddir)/bench/zkl-bench$(EXEEXT) $(BENCH_ARGS)
bench-quick: bench/zkl-bench$(EXEEXT)
	$(SHELL) $(abs_top_srcdir)/bench/run-bench.sh --quick --out $(BENCH_OUT) \
	  --bench $(abs_top_builddir)/bench/zkl-bench$(EXEEXT) $(BENCH_ARGS)
.PHONY: bench bench-quick
