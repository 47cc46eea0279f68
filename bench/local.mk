# bench/local.mk - included by the top Makefile.am: zkl-bench (issue 6).
#
# The smoke test bench/bench-smoke.zksh runs `zkl-bench --quick` under
# `make check` so that the program never rots; it asserts no timing.
noinst_PROGRAMS += bench/zkl-bench
bench_zkl_bench_SOURCES = bench/bench.h bench/zkl-bench.c bench/stats.c \
	bench/server.c bench/floor.c bench/targets.c bench/sc-cycle.c \
	bench/sc-handoff.c bench/sc-queue.c bench/sc-election.c
bench_zkl_bench_CFLAGS = $(AM_CFLAGS) $(UUID_CFLAGS)
bench_zkl_bench_LDADD = lib/libzkl.la $(ZOOKEEPER_LIBS) $(UUID_LIBS) \
	$(PTHREAD_LIBS) -lm

TESTS += bench/bench-smoke.zksh
EXTRA_DIST += bench/bench-smoke.zksh bench/kazoo_bench.py
