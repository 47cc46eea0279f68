/* tests/faults/faults.h - shared by the fault suites that run on a real
 * 3-node ensemble (tests/with-zookeeper with ZKL_TEST_ENSEMBLE=1): a log in
 * shared memory that worker processes append to, the checker that judges
 * it, one face for the three recipes, and the harness's verbs. */
#ifndef ZKL_FAULTS_H
#define ZKL_FAULTS_H

#include <pthread.h>
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
  int type;  /* the transaction's type (1 create, 15 create2, 19
                createContainer, 21 createTTL, 2 delete, 20
                deleteContainer, 5 setData, -11 closeSession); a multi's
                change: its own */
  int multi; /* a change of a multi (sub is its index there) */
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

/* ---- the worker fleet's faults (counter.c, semaphore.c, multilock.c) ------ */

/* Each worker process reaches the three servers through three proxies of
 * its own (tests/integration/proxy.c); the test process injects faults by
 * the slot's controls in shared memory, obeyed by fc_cut_control(). */
#define FC_SERVERS 3
#define FC_MAXSLOTS 8
#define FC_MAXTRACE 1024

/* A slot's state (written by its incarnation): idle, in a call, holding. */
enum { FC_W_IDLE, FC_W_CALL, FC_W_HOLD };

/* A slot's fault controls, in the fleet's shared memory (atomic). */
struct fc_slot {
  int state;            /* FC_W_*, written by the incarnation            */
  int64_t cut_until_ms; /* set by the schedule, obeyed by the worker     */
  int cut_op, cut_gen;  /* cut after the next request of cut_op          */
  int op_cuts;          /* such cuts that happened                       */
};

/* A spare process: waits until released into a slot (go, after slot). */
struct fc_spare {
  pid_t pid;
  int who, slot;
  int go; /* atomic */
};

/* A worker process: its slot, its proxies and their control thread. */
struct fc_worker {
  int slot, who;
  pid_t parent;
  const int *stop; /* the fleet's stop flag */
  struct fc_slot *sl;
  it_proxy_t *px[FC_SERVERS];
  char hosts[128]; /* the proxies, for zookeeper_init() */
  pthread_t ctl;
  int ctl_stop; /* atomic */
};

/* The fleet stops, or the test process is gone. */
int fc_stopping(const struct fc_worker *w);
/* The cuts the worker's proxies made, all three together. */
int fc_total_cuts(struct fc_worker *w);
/* The control thread: blackholes the worker's three proxies while the
 * slot's cut_until_ms lies ahead, and arms a cut after the next request
 * of cut_op on all three when cut_gen changes (disarmed once one cut, or
 * after 5 s), adding the cuts made to op_cuts. */
void *fc_cut_control(void *arg);
/* Starts the proxies to servers 1..3 (w->hosts) and the control thread
 * on slot sl (_exit(4) if it cannot start); fc_proxies_stop() undoes. */
void fc_proxies_start(struct fc_worker *w, struct fc_slot *sl);
void fc_proxies_stop(struct fc_worker *w);
/* A spare waits (no session, no thread) until released: 1 with w->slot
 * set, 0 if the fleet stops first. */
int fc_spare_wait(struct fc_worker *w, struct fc_spare *sp);

typedef enum {
  FC_PAUSE,
  FC_KILL,
  FC_CUT,
  FC_CUT_OP,
  FC_KILL_SERVER,
  FC_PAUSE_SERVER,
  FC_RESTART_SERVER,
  FC_KINDS
} fc_fault_t;
extern const char *fc_fault_names[FC_KINDS];

struct fc_trace {
  int64_t t_us;
  fc_fault_t kind;
  int who, dur_ms, arg; /* server faults: who = the server's id */
};

enum { FC_SV_UP, FC_SV_DOWN, FC_SV_PAUSED, FC_SV_RESTARTING };

/* The fault schedule (the test process): a fault armed (drawn by the
 * suite's arm()), fired at its first chance before a_until on a target
 * picked by a_pick, undone when due.  fc_sched_init() zeroes it; the
 * suite then sets rng, nslots, ctl[], the spares and the hooks. */
struct fc_sched {
  /* set by the suite */
  const char *name; /* its messages' prefix ("counter-faults") */
  int nslots, session_ms, max_paused, maxtrace;
  int cut_state; /* a cut's trace arg: the slot's state (1) or 0 (0) */
  struct fc_slot *ctl[FC_MAXSLOTS];
  struct fc_spare *spare;
  int *nspares, *used;
  int64_t (*clock_us)(void); /* the trace's stamps */
  /* the workers' log: FC_PAUSE (stopped now), FC_KILL (reaped), and -1
   * for a resume (before the SIGCONT) */
  void (*mark)(int what, int who, int state, int dur);
  void (*takeover)(int s); /* optional: a spare is about to take slot s */
  int (*fits)(int s);      /* optional: the armed fault may hit slot s */
  /* the schedule's state */
  uint64_t rng;
  struct {
    pid_t pid; /* 0: exited on its own (a failure) */
    int who;
    int64_t resume_at, lift_at; /* 0: not paused / not cut */
  } slot[FC_MAXSLOTS];
  int srv_state, srv_id;
  int64_t srv_undo_at;
  pid_t srv_helper;
  /* the armed fault; a_state: the target's state, or -1 */
  int armed, a_dur, a_state, a_op;
  fc_fault_t a_kind;
  uint64_t a_pick;
  int64_t a_until, next;
  int forced_i;
  int faults[FC_KINDS], skipped[FC_KINDS];
  int long_pauses, long_in[3]; /* past the session timeout (by state) */
  int harness_failures, died, stuck, tick;
  int ntrace;
  struct fc_trace trace[FC_MAXTRACE];
};

void fc_sched_init(struct fc_sched *sc, const char *name);
/* The fleet the schedule works on: nslots slots (the suite sets ctl[]),
 * the spares (*used of *nspares released), the session timeout, at most
 * max_paused workers paused at once, at most maxtrace faults traced. */
void fc_sched_fleet(struct fc_sched *sc, int nslots, struct fc_spare *spare,
                    int *nspares, int *used, int session_ms, int max_paused,
                    int maxtrace);
uint64_t fc_rnd(struct fc_sched *sc);
int fc_between(uint64_t r, int lo, int hi);
/* Arms kind: its duration from the draw d (a pause 0.3..5 s, else
 * 0.5..5 s; a forced pause 2.25..2.5 session timeouts), waiting for a
 * target 5 s if forced, else 300 ms; a_state -1, the rest the suite's. */
void fc_arm(struct fc_sched *sc, int64_t now, fc_fault_t kind, int forced,
            uint64_t d);
/* One step of the schedule (every few ms): undoes what is due, reaps
 * workers that died on their own (every 20 ticks), fires the armed fault
 * or gives it up, and arms the next (arm(now), then the next in
 * 0.5..2.5 s). */
void fc_tick(struct fc_sched *sc, void (*arm)(int64_t now));
void fc_reap_unexpected(struct fc_sched *sc);
/* Every fault ends now; returns once the ensemble is whole again. */
void fc_undo_all(struct fc_sched *sc);
/* Stops the fleet (*stop) and reaps every process within stop_ms (a
 * stuck one SIGKILLed, then stuck(who) if not NULL). */
void fc_stop_fleet(struct fc_sched *sc, int *stop, int stop_ms,
                   void (*stuck)(int who));
int fc_op_cuts(const struct fc_sched *sc);
/* "fault trace[ of what] (seed N; ...)", a line a fault from t0 on; a
 * worker's fault by line() if not NULL, else with its arg as "(%d)". */
void fc_print_trace(const struct fc_sched *sc, const char *what,
                    uint64_t seed, int64_t t0,
                    void (*line)(const struct fc_trace *t, double at));

Suite *checker_suite(void);
Suite *paused_suite(void);
Suite *nemesis_suite(void);
Suite *queue_suite(void); /* queue.c */
Suite *counter_faults_suite(void); /* counter.c: counter, double barrier */
Suite *semaphore_faults_suite(void); /* semaphore.c */
Suite *multilock_faults_suite(void); /* multilock.c */

#endif
