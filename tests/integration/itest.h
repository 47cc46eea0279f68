/* tests/integration/itest.h - shared helpers of the integration suites,
 * which run against a real ZooKeeper named by $ZKL_TEST_HOSTS. */
#ifndef ZKL_ITEST_H
#define ZKL_ITEST_H

#include <check.h>
#include <stdint.h>
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
void it_proxy_stop(it_proxy_t *x);
Suite *proxy_suite(void);
Suite *inspect_suite(void); /* test-inspect.c */
Suite *async_suite(void);   /* test-async.c */
Suite *async_random_suite(void); /* test-async-random.c */
Suite *queue_suite(void);   /* test-queue.c */
Suite *queue_interop_suite(void); /* test-queue-interop.c */
Suite *queue_random_suite(void); /* test-queue-random.c */

/* Adds an ephemeral non-contender child to root, so that the server does
 * not reap the (container) root while the test still reads its data. */
void it_keep_root(zkl_session_t *s, const char *root);

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

#endif
