/* tests/integration/itest.h - shared helpers of the integration suites,
 * which run against a real ZooKeeper named by $ZKL_TEST_HOSTS. */
#ifndef ZKL_ITEST_H
#define ZKL_ITEST_H

#include <check.h>
#include <stdint.h>
#include <sys/types.h>
#include <zkl.h>
#include <zookeeper/zookeeper.h>

Suite *session_suite(void);
Suite *mutex_suite(void);
Suite *exclusion_suite(void);
Suite *kazoo_suite(void);
Suite *faults_suite(void);
Suite *rwlock_suite(void);
Suite *election_suite(void);

/* Every TCase gets this timeout (seconds), scaled under valgrind. */
#define IT_TIMEOUT 60
TCase *it_tcase(const char *name);

const char *it_hosts(void);
/* A unique root znode for one test: /zkl-test/<tag>-<pid>-<n>-<ns>. */
void it_root(char *buf, size_t len, const char *tag);
zkl_session_t *it_session(void);
zkl_session_t *it_session_timeout(int session_timeout_ms);
/* A session opened with reestablish = 0: LOST is final. */
zkl_session_t *it_session_final(int session_timeout_ms);
/* Children of path (0 if it does not exist); names copied if v != NULL. */
int it_children(zkl_session_t *s, const char *path, struct String_vector *v);
/* Runs a harness verb (kill, restart, pause, resume) on server 1 of the
 * standalone server the wrapper started; fails the test if it fails. */
void it_harness(const char *verb);

/* A session to the given hosts (e.g. through the proxy). */
zkl_session_t *it_session_at(const char *hosts, int session_timeout_ms);

/* The fault-injecting TCP proxy (proxy.c), in front of the single server
 * of $ZKL_TEST_HOSTS. */
typedef struct it_proxy it_proxy_t;
it_proxy_t *it_proxy_start(void);
/* The same in front of the server listening on 127.0.0.1:target_port. */
it_proxy_t *it_proxy_start_to(int target_port);
int it_proxy_port(it_proxy_t *x);
void it_proxy_blackhole(it_proxy_t *x, int on);
/* Cut the connection right after forwarding the next request of this
 * ZooKeeper opcode (create2 = 15, multi = 14, delete = 2). */
void it_proxy_cut_after(it_proxy_t *x, int opcode);
int it_proxy_cuts(it_proxy_t *x);
/* Keep the next client request of this opcode (getData = 4, exists = 3,
 * getChildren = 8) and every later one of its connection from the server
 * until it_proxy_release(); it_proxy_holding() is 1 once one is kept. */
void it_proxy_hold_at(it_proxy_t *x, int opcode);
int it_proxy_holding(it_proxy_t *x);
void it_proxy_release(it_proxy_t *x);
void it_proxy_stop(it_proxy_t *x);
Suite *proxy_suite(void);
Suite *inspect_suite(void); /* test-inspect.c */
Suite *async_suite(void);   /* test-async.c */
Suite *async_random_suite(void); /* test-async-random.c */
Suite *queue_suite(void);   /* test-queue.c */
Suite *queue_interop_suite(void); /* test-queue-interop.c */
Suite *queue_random_suite(void); /* test-queue-random.c */
Suite *counter_suite(void); /* test-counter.c */
Suite *counter_interop_suite(void); /* test-counter-interop.c */
Suite *barrier_suite(void); /* test-barrier.c */
Suite *barrier_interop_suite(void); /* test-barrier-interop.c */
Suite *semaphore_suite(void); /* test-semaphore.c */
Suite *semaphore_interop_suite(void); /* test-semaphore-interop.c */
Suite *multilock_suite(void); /* test-multilock.c */
Suite *multilock_interop_suite(void); /* test-multilock-interop.c */
Suite *curator_interop_suite(void); /* test-curator-interop.c */
Suite *observe_suite(void); /* test-observe.c */

/* Adds an ephemeral non-contender child to root (made first, as a
 * container, if missing), so that the server does not reap the root while
 * the test still reads its data. */
void it_keep_root(zkl_session_t *s, const char *root);
/* The next zoo_aget_children() of path (from zkl or anyone in this
 * process) fails with zrc as it is sent, the way the client fails one on
 * a handle that has expired; the others go to the client (interpose.c).
 * it_listings_failed(): how many failed since, and forgets one not yet
 * taken. */
void it_fail_next_listing(const char *path, int zrc);
int it_listings_failed(void);
/* The session's counters (zkl_session_stats), asserted to be read. */
zkl_session_stats_t it_stats(zkl_session_t *s);

/* A mutex object on path, asserting success. */
zkl_mutex_t *it_mutex(zkl_session_t *s, const char *path);
/* A queue object on path in `format` (zkl_queue_format_t) whose puts carry
 * priority prio, asserting success. */
zkl_queue_t *it_queue(zkl_session_t *s, const char *path, int format,
                      int prio);
/* Waits until path has exactly `want` children; 1 if it did in time. */
int it_wait_children(zkl_session_t *s, const char *path, int want,
                     int timeout_ms);
/* Polls pred every 5 ms until it returns non-zero or timeout_ms passes;
 * returns pred's last answer. */
int it_wait_until(int (*pred)(void *), void *arg, int timeout_ms);
/* The answers of every server to a four-letter word, concatenated
 * (malloc'ed): in an ensemble each session's watches sit on its server. */
char *it_4lw(const char *word);
/* NULL once no server's `wchc` lists a watch on a path containing root,
 * asked every 20 ms for up to within_ms (zkl withdraws watches without
 * waiting for the answer); else the last answer (malloc'ed), to show. */
char *it_watches_left(const char *root, int within_ms);
/* How many sessions `wchp` (the four-letter word's text) lists as watching
 * path, not counting session `except` (e.g. the node's owner, which
 * watches its own node while it waits). */
int it_watchers_of(const char *wchp, const char *path, int64_t except);
/* The session that owns ephemeral node path (0 if none or gone). */
int64_t it_owner_of(zkl_session_t *s, const char *path);
/* A one-shot data watch of our own on node, through session s's handle
 * (zoo_wget): it_heard() waits up to timeout_ms for its event and returns
 * its type (ZOO_CHANGED_EVENT, ZOO_DELETED_EVENT, ...), or 0 if none came.
 * The record must outlive the session's handle or the event. */
typedef struct it_watch {
  int type, count;
} it_watch_t;
void it_watch_node(zkl_session_t *s, const char *node, it_watch_t *w);
int it_heard(it_watch_t *w, int timeout_ms);
int64_t it_now_ms(void);
void it_sleep_ms(int ms);
/* The randomized suites' stream: splitmix64, one step (advances *state).
 * Kept exact: a seed printed by an old run must replay the same run. */
uint64_t it_splitmix64(uint64_t *state);
/* One splitmix64 step from z, without a state: a seed's mixed form. */
uint64_t it_mix64(uint64_t z);
/* A randomized run's seed: $var (decimal) if set, to replay a run; else
 * one from the clock and the pid. */
uint64_t it_seed(const char *var);
/* rc for a message: "3", or zkl_strerror(rc) and the code, "...(-7)".  The
 * text lasts for the thread's next three calls (a message may hold four). */
const char *it_code(int rc);
/* Forces the session to expire on the server (the classic trick: a second
 * handle with the same id and password closes it) and waits until s says
 * ZKL_SESSION_LOST, or has a new session id already (re-established). */
void it_expire_session(zkl_session_t *s);

/* ---- the live peers of the interop suites (peer.c) ----------------------
 * A peer is a Curator (Java) or kazoo (python3) program started with its
 * stdin and stdout on pipes to us: it prints "ready", then answers one line
 * a command line (or, given its work on the command line, prints what it
 * did and "done").  A blocking call it runs on a thread of its own reports
 * later on a line "@TAG RESULT T0 T1"; such lines are kept aside until
 * it_peer_result() asks for them.  A command-driven peer exits by itself
 * (a watchdog) after it_peer_secs(), a little before the test's timeout,
 * and at the end of its stdin.  Every failure fails the test. */
#define IT_PEER_STASH 32
typedef struct it_peer {
  const char *name;           /* in messages: "curator", "kazoo" */
  pid_t pid;
  int to, from;               /* its stdin, its stdout */
  int answer_ms;              /* how long an answer may take: its life */
  char buf[1 << 16];          /* read, not yet taken as lines */
  size_t len;
  char *stash[IT_PEER_STASH]; /* "@TAG ..." results not asked for yet */
  int nstash;
} it_peer_t;
/* it_peer_spawn() flags: the peer's stderr to /dev/null (the JVM's
 * logging notices, for a peer that reports on stdout only). */
#define IT_PEER_QUIET 1
/* How long a peer lives at most (seconds), its watchdog's argument: a
 * little less than the test (IT_TIMEOUT, scaled by CK_TIMEOUT_MULTIPLIER). */
int it_peer_secs(void);
/* Starts argv (looked up in PATH) as the peer `name`.  It inherits none of
 * our descriptors but its stdin and stdout (nor the test's sockets: a
 * connection the proxy cuts must end), and SIGPIPE's default; in the test
 * SIGPIPE is ignored (a write to a peer gone fails, and says so). */
void it_peer_spawn(it_peer_t *p, const char *name, char *const argv[],
                   int flags);
/* The Java peer `cls` (compiled by it_peer_setup()) on the classpath of
 * Debian's libcurator-recipes-java and slf4j-nop (quiet logging), with
 * args (NULL-terminated); waits for its "ready". */
void it_peer_java(it_peer_t *p, const char *cls, char *const args[],
                  int flags);
/* python3 $top_srcdir/tests/integration/<script> args...; waits for its
 * "ready". */
void it_peer_python(it_peer_t *p, const char *script, char *const args[],
                    int flags);
/* The same for a command-driven peer: its args are the hosts and its
 * lifetime, it_peer_secs(). */
void it_peer_curator(it_peer_t *p, const char *cls);
void it_peer_kazoo(it_peer_t *p, const char *script);
/* The peer's next line, without the newline, within timeout_ms: 1, or 0
 * (and a note in line) at the end of its output or when none came in time. */
int it_peer_read(it_peer_t *p, char *line, size_t len, int timeout_ms);
/* The next line that is no "@" result (those are kept), within answer_ms. */
void it_peer_line(it_peer_t *p, char *line, size_t len);
/* The next line is `want`. */
void it_peer_expect(it_peer_t *p, const char *want);
/* Sends one command line. */
__attribute__((format(printf, 2, 3))) void it_peer_say(it_peer_t *p,
                                                       const char *fmt, ...);
/* Sends one command and checks its one-line answer. */
__attribute__((format(printf, 3, 4))) void it_peer_ask(it_peer_t *p,
                                                       const char *want,
                                                       const char *fmt, ...);
/* Sends one command and returns its one-line answer in `got`: no "error". */
__attribute__((format(printf, 4, 5))) void it_peer_query(it_peer_t *p,
                                                         char *got, size_t len,
                                                         const char *fmt, ...);
/* A blocking call's result: "@TAG WHAT T0 T1". */
typedef struct it_peer_result {
  char what[64];  /* "true", "false", "error:..." */
  int64_t t0, t1; /* the wall clock (us) around the call */
} it_peer_result_t;
/* The result of the peer's call TAG, within timeout_ms. */
it_peer_result_t it_peer_result(it_peer_t *p, const char *tag, int timeout_ms);
/* Whether the peer's call TAG is still underway: it has not reported by
 * the time the peer answers a "ping" ("pong"). */
int it_peer_pending(it_peer_t *p, const char *tag);
/* The peer says "done" and exits 0 (a peer given its work on the command
 * line); it_peer_quit() first sends "quit" (a command-driven peer). */
void it_peer_done(it_peer_t *p);
void it_peer_quit(it_peer_t *p);
/* Kills the peer (SIGKILL) and reaps it. */
void it_peer_kill(it_peer_t *p);
/* An interop tcase's fixture.  it_peer_setup(): this run's nodes are named
 * <prefix>-<runner pid>-... (it_peer_node(); prefix NULL: none), and the
 * Java peer tests/integration/java/<cls>.java is compiled (once, into a
 * temporary directory; cls NULL: a tcase of kazoo peers only, nothing to
 * compile).  it_peer_teardown(): deletes every node of this
 * run a failed test left behind (saying so, as `suite`), and the classes. */
void it_peer_setup(const char *suite, const char *prefix, const char *cls);
void it_peer_teardown(void);
/* Curator runs here only with a JDK and Debian's libcurator-recipes-java:
 * without them 0 (the test passes empty), unless CI is set and not
 * "false" or "0" (then the test fails). */
int it_peer_curator_here(void);
/* The same for the kazoo peers: python3 and python3-kazoo (asked once per
 * tcase, by it_peer_setup(), or at the first call). */
int it_peer_kazoo_here(void);
/* A unique node for one test, under this run's prefix (it_root()). */
void it_peer_node(char *buf, size_t len, const char *tag);
/* Deletes path and everything below it, whatever is there. */
void it_peer_delete_tree(zhandle_t *zh, const char *path);

#endif
