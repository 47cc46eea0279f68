/* tests/faults/faults.h - shared by the fault suites that run on a real
 * 3-node ensemble (tests/with-zookeeper with ZKL_TEST_ENSEMBLE=1): a log in
 * shared memory that worker processes append to, the checker that judges
 * it, one face for the three recipes, and the harness's verbs. */
#ifndef ZKL_FAULTS_H
#define ZKL_FAULTS_H

#include <stdint.h>
#include <sys/types.h>

#include "../integration/itest.h"

#define FC_MAXREC 200000
#define FC_MAXWHO 512 /* worker incarnations in one log */

/* What a record says.  Workers write ENTER (a grant, with its token),
 * TOLD (SUSPENDED or LOST reached them: they stop acting) and EXIT (before
 * the release).  The fault injector writes PAUSE/RESUME around a SIGSTOP
 * and KILLED when it SIGKILLs a worker (it acts no more). */
typedef enum {
  R_ENTER = 1,
  R_EXIT,
  R_TOLD,
  R_PAUSE,
  R_RESUME,
  R_KILLED
} fc_rec_type_t;

struct fc_rec {
  int type; /* 0 while being written */
  int lane, who, shared;
  uint64_t token;
  int64_t t_us; /* monotonic */
};

struct fc_log {
  int n; /* atomic: records appended, in this order */
  struct fc_rec r[FC_MAXREC];
};

/* A log in shared memory (visible to workers forked afterwards). */
struct fc_log *fc_log_new(void);
void fc_log_free(struct fc_log *l);
void fc_add(struct fc_log *l, int type, int lane, int who, int shared,
            uint64_t token);
int64_t fc_now_us(void);

/* The checker, over one lane's records in the order they were appended:
 *  - an ENTER while another holder of the lane is inside (readers may share)
 *    is a violation unless that holder had been told (TOLD, KILLED) before,
 *    or was paused then and was told first thing after its RESUME (a
 *    stopped process cannot act; it must learn before it acts again);
 *  - tokens: an exclusive grant's token is above every earlier grant's, a
 *    shared grant's above the last exclusive one's, and never 0: a token
 *    lower than one already granted is a violation whatever the overlap
 *    (but for the same hold announced again: an election leader whose
 *    session came back after SUSPENDED, with nobody granted since).
 * v->first explains the first violation. */
typedef struct fc_verdict {
  int entries, violations;
  char first[512];
} fc_verdict_t;
void fc_check(const struct fc_log *l, int lane, fc_verdict_t *v);
/* Whether `who` entered after record index `after` (it made progress). */
int fc_entered_after(const struct fc_log *l, int lane, int who, int after);

/* ---- one face for the recipes --------------------------------------------- */

/* K_ASYNC: a mutex taken and released with the async calls, the worker
 * polling the session's fd and dispatching until the completion comes; its
 * hold is watched, and a watch saying ZKL_ELOST ends its acting */
typedef enum { K_MUTEX, K_RWLOCK, K_ELECTION, K_ASYNC } fc_kind_t;
extern const char *fc_kind_names[];

typedef struct fc_held {
  fc_kind_t kind;
  zkl_mutex_t *m;
  zkl_rwlock_t *l;
  zkl_election_t *e;
  struct fc_log *log;
  int lane, who;
  zkl_session_t *s;        /* K_ASYNC: whose completions to dispatch */
  int async_done, async_rc;
  /* K_ASYNC: the hold's watch (zkl_mutex_watch_async), armed at every
   * grant: how many times it completed, and its last code */
  int watch_armed, watch_n, watch_rc;
} fc_held_t;

/* The worker process's identity, for the session's state callback. */
void fc_worker_is(struct fc_log *l, int lane, int who);
/* A session whose SUSPENDED/LOST are logged as TOLD of this worker. */
zkl_session_t *fc_session(const char *hosts, int timeout_ms);
int fc_held_make(fc_held_t *h, zkl_session_t *s, const char *path);
void fc_held_free(fc_held_t *h);
/* Takes it: timeout_ms < 0 blocks (lock, rdlock, wrlock, a campaign), else
 * the timed form.  A mutex, a reader and a writer log ENTER here on
 * success; an election candidate logs it from on_elected, with the token
 * the callback got. */
int fc_held_take(fc_held_t *h, int shared, int64_t timeout_ms);
int fc_held_ok(fc_held_t *h);
/* The critical section: acts every 2 ms while holding, for up to `ms` or
 * until *stop (if not NULL) is set.  1 when it ran its course; 0 when
 * holding() stopped saying yes (logged as TOLD). */
int fc_held_act(fc_held_t *h, int ms, const int *stop);
/* Logs EXIT, then releases (an election candidate resigns and waits until
 * it no longer leads). */
void fc_held_release(fc_held_t *h, int shared);
/* fc_held_act() for `ms`, then fc_held_release(). */
void fc_held_work(fc_held_t *h, int shared, int ms);

/* ---- the harness's verbs on the ensemble ----------------------------------- */

/* The shell command for a harness verb (id 0: none), its output dropped. */
void fc_harness_cmd(char *cmd, size_t len, const char *env, const char *verb,
                    int id);
/* Runs a harness verb (id 0: none), with an optional environment
 * assignment in front; fails the test if it fails. */
void fc_harness_env(const char *env, const char *verb, int id);
void fc_harness(const char *verb, int id);
int fc_leader_id(void);
/* The client port of server id (1..3), from the ensemble's host list. */
int fc_server_port(int id);
/* Waits until path has no children left (the dead sessions expired);
 * returns how many are left after timeout_ms. */
int fc_orphans(zkl_session_t *s, const char *path, int timeout_ms);

/* Flags in shared memory, read and written across processes. */
static inline int fc_load(const int *p) {
  return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}
static inline void fc_store(int *p, int v) {
  __atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

/* A positive integer from the environment, else dflt. */
int fc_env_int(const char *name, int dflt);
/* A run's seed: $var (strtoull, any base) to replay a run, else a fresh
 * one of at most 9 digits from the clock and the pid. */
uint64_t fc_seed(const char *var);
/* The fault suites' stream: xorshift64*, one step (advances *state, never
 * 0: each starts at it_mix64(its seed) | 1). */
uint64_t fc_xorshift(uint64_t *state);

/* Appends printf-style to the string in buf (len bytes in all), cutting
 * what does not fit: a verdict's failures, one after the other. */
void fc_appendf(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* fork(), asserting it worked; the child (0) dies with this process
 * (PR_SET_PDEATHSIG), so that no worker outlives an aborted test. */
pid_t fc_fork(void);
/* Reaps pid by `until` (it_now_ms()); 0 if it is still running then. */
int fc_reap_by(pid_t pid, int64_t until, int *status);

/* ---- the servers' history -------------------------------------------------- */

/* The transaction logs of the three servers (DIR/N/data/version-2/log.*,
 * ZooKeeper's on-disk format), merged by zxid: a committed transaction was
 * logged by a quorum and logs are never purged here, so the union holds
 * every one.  Only the changes of nodes whose path begins with the prefix
 * are kept, and every closeSession (its ephemerals go). */
/* One change of a node under the test's prefix (or a closed session). */
enum { FC_T_CREATE, FC_T_DELETE, FC_T_SET, FC_T_CLOSE };
struct fc_txop {
  uint64_t zxid;
  int sub; /* the index in a multi */
  int kind;
  int64_t time_ms, sid; /* the leader's clock; the session (header) */
  int eph;
  char *path, *data;
  int dlen;
};

struct fc_txhist {
  struct fc_txop *op;
  size_t n, cap;
  uint64_t *zx; /* every committed transaction's zxid, to find gaps */
  size_t nzx, capzx;
  int files, torn;
  int server;         /* while reading: the server whose log it is */
  size_t uncommitted; /* proposals left out: logged by a minority only */
};

/* The merged history, by zxid (a multi's changes by their index), without
 * repeats; *gaps: the zxids missing between the first and the last change
 * kept (an incomplete history). */
void fc_history_read(struct fc_txhist *h, const char *prefix, int *gaps);
void fc_history_free(struct fc_txhist *h);

Suite *checker_suite(void);
Suite *paused_suite(void);
Suite *nemesis_suite(void);
Suite *queue_suite(void); /* queue.c */
Suite *counter_faults_suite(void); /* counter.c: counter, double barrier */
Suite *semaphore_faults_suite(void); /* semaphore.c */
Suite *multilock_faults_suite(void); /* multilock.c */

#endif
