# cli/local.mk - included by the top Makefile.am: the zkl command-line tool,
# its man page and its tests.
#
# The tool links only the public library, like any user's program: `zkl
# status` reads a path through zkl_contenders(), which decides queue order
# and holders with the recipes' own rules, and a queue's items through
# zkl_queue_list(); `zkl queue` uses zkl_queue_*(), `zkl counter` (and
# `zkl status --counter`) zkl_counter_*(), `zkl barrier` (and `zkl status
# --barrier`) zkl_barrier_*() and zkl_dbarrier_*(), `zkl sem` (and `zkl
# status --sem`) zkl_sem_*(), `zkl lock --all` zkl_multilock_*() (and
# ZooKeeper's own exists watches on its nodes, through
# zkl_session_zhandle(): hence $(ZOOKEEPER_LIBS)).

bin_PROGRAMS += cli/zkl
cli_zkl_SOURCES = cli/zkl.c cli/cli.h cli/connect.c cli/lock.c cli/elect.c \
	cli/status.c cli/queue.c cli/counter.c cli/barrier.c cli/sem.c \
	cli/loop.c cli/loop.h \
	cli/child.c cli/child.h \
	$(cli_pure_sources)
cli_zkl_LDADD = lib/libzkl.la $(ZOOKEEPER_LIBS) $(PTHREAD_LIBS)

# Pure logic, also compiled into the unit tests (no server).
cli_pure_sources = cli/opts.c cli/opts.h cli/text.c cli/text.h \
	cli/statsfile.c cli/statsfile.h

dist_man1_MANS += cli/zkl.1

# ---- tests -----------------------------------------------------------------
check_PROGRAMS += tests/cli/unit-tests
tests_cli_unit_tests_SOURCES = tests/cli/unit.c $(cli_pure_sources)
tests_cli_unit_tests_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/cli
tests_cli_unit_tests_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_cli_unit_tests_LDADD = lib/libzkl.la $(CHECK_LIBS)

TESTS += tests/cli/unit-tests tests/cli/usage.sh tests/cli/man.sh \
	tests/cli/lock.zksh tests/cli/elect.zksh tests/cli/status.zksh \
	tests/cli/queue.zksh tests/cli/counter.zksh tests/cli/barrier.zksh \
	tests/cli/sem.zksh tests/cli/multilock.zksh
EXTRA_DIST += tests/cli/lib.sh tests/cli/usage.sh tests/cli/man.sh \
	tests/cli/lock.zksh tests/cli/elect.zksh tests/cli/status.zksh \
	tests/cli/queue.zksh tests/cli/counter.zksh \
	tests/cli/barrier.zksh tests/cli/sem.zksh tests/cli/multilock.zksh
