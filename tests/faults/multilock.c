/* tests/faults/multilock.c - the multi-lock (zkl/multilock.h) under a
 * seeded randomized fault schedule on the harness's 3-node ensemble
 * (ZKL_TEST_ENSEMBLE=1 tests/with-zookeeper; ZKL_FAULTS=multilock).
 *
 * Five lock paths <root>/p0..p4.  Five multi-lock workers and one or two
 * plain-mutex workers (the seed says how many, and which path each mutex
 * worker takes), every one a process with its own 2 s session reaching the
 * ensemble through three proxies of its own (tests/integration/proxy.c).
 * A multi-lock worker loops: 2..4 of the 5 paths in a random order, a new
 * zkl_multilock_t on them whose node data names the call ("w<who>.<call>"),
 * zkl_multilock_timedlock() with 0.2..3 s -> on 0 record the grant (the
 * session id, per path the token and the node) -> hold 10..60 ms, asking
 * zkl_multilock_holding() every 2 ms and once more after the last nap
 * (recording when the last "1" was asked) -> zkl_multilock_unlock().  A
 * mutex worker does the same with a zkl_mutex_t on its path.  Spare
 * processes take a killed worker's slot as a new incarnation (a new
 * `who`).  Every 0.5..2.5 s the schedule draws one fault: pause a worker
 * (SIGSTOP 0.3..5 s, both sides of the session timeout), SIGKILL one, cut
 * one's connection (its proxies blackholed 0.5..5 s), cut it right after
 * its next request of one kind (the lock multi, the token's exists, a
 * delete, a create, a listing: the server applies it, the answer is lost),
 * or kill, pause or restart one ZooKeeper server (one at a time).  The
 * first faults are fixed: a pause of 2.25..2.5 session timeouts of a
 * multi-lock worker inside a call, and the same of a multi-lock holder; a
 * cut after the `exists` of a multi-lock holder, twice (its next call's
 * token read, unless the session's heartbeat comes first); a cut after a
 * multi of anyone, and after a holder's multi (its release); a kill, a
 * cut, a server restart.  Then the faults are undone and a quiet phase
 * follows (calls with a 30 s timeout), then the workers idle with their
 * sessions open while the paths are checked empty.
 *
 * The judge is the servers' own history (their transaction logs merged by
 * zxid, fc_history_read(): committed transactions only) and the workers'
 * log.  From the history every contender node under a path is known with
 * its creating zxid and leader stamp (ms), its ephemeral owner, its data
 * (so its worker and call), and its removal: a delete, or the closeSession
 * of its owner (an expiry is one too).  On one path the nodes alive at any
 * zxid queue in creation order (sequence order within one incarnation of
 * the container parent; the harness reaps empty containers every second,
 * and a parent is only reaped with no child, so creation order is the
 * queue order); the head is the oldest alive.  What the history can prove
 * about a client's moment is bounded by the stamps: a transaction is
 * stamped by the leader as it is prepared, before it commits and before
 * any client can hear of it, on this machine's wall clock.  So "stamped
 * after the client's moment" proves "not committed before it", and that
 * is the direction every check below uses.  Violations:
 *
 * (1) Never two valid holders of one path at once.
 *  (a) A grant (a call that returned 0, at client time T) is one the
 *      history backs: on each of its paths the node it names exists, its
 *      ephemeral owner is the worker's session at the return, its czxid is
 *      the token, it was created (stamp) no later than T, it was not
 *      removed (stamp) before T (else a phantom grant, the semaphore's old
 *      bug), and every older node on that path had been removed by T (a
 *      removal stamped after T was not committed at the grant: the node
 *      was not the head).  Heads never overlap in the history, so with (a)
 *      the grants' history intervals [head, removal) on one path are
 *      disjoint.
 *  (b) A holder is valid while holding() says 1.  Every holding() == 1 of
 *      a hold was asked at V no later than the removal of each of its
 *      nodes (stamp dt): the library's rule (the server heard within the
 *      session timeout, counted from a request's send) puts the server's
 *      expiry, hence its stamp, after any such V, and nobody else deletes
 *      a held node.  (5 ms of slack: V is read on the wall clock, the
 *      library measures on the monotonic one.)
 *  (c) Client side, no clock but ours: on one path, in the order of the
 *      grants' returns, no grant returned before the previous holder's
 *      last holding() == 1 was asked.
 * (2) Never a partial hold.  A multi-lock grant's nodes were all made by
 *     one transaction (one czxid = the one token of all paths), which made
 *     exactly those nodes of that call; (1a) says all existed at the grant.
 *     unlock() == 0 means each node was deleted (not gone with a session),
 *     stamped no later than the return.  Every other node of a call (a
 *     failed call, an attempt given up before a grant, a hold whose unlock
 *     failed) is removed within 20 s of the call's return (its janitor, or
 *     its session's end), and no node is left under any path at the end
 *     while every worker's session is still open.
 * (3) Liveness, no deadlock: once the faults are over, every slot's
 *     incarnation completes a lock and an unlock (both 0) within 20 s,
 *     with a 30 s timeout per call (a deadlock would hold longer); and the
 *     run made enough grants.
 * (4) Tokens per path strictly increase from holder to holder, in the
 *     order of the grants' returns.
 * (5) Only documented codes: timedlock 0, ZKL_ETIMEDOUT, ZKL_ELOST
 *     (EPROTO "nodes kept vanishing", ESUSPENDED and ZooKeeper's own codes
 *     have no cause here); unlock 0, ZKL_ELOST, ZKL_ESUSPENDED; holding()
 *     1, ZKL_ESUSPENDED, ZKL_ELOST while held.
 * A zxid missing in the history's span fails the run as incomplete (the
 * harness, not the recipe).  Allowed and counted: calls that failed with a
 * node still there at their return (left to the janitor: the connection
 * was down), calls that were partly granted and gave everything up,
 * holds that ended told (holding() != 1).
 *
 * Where a window remains: (1a)'s phantom check and (4) take the client's
 * return as the grant's moment; a SIGSTOP landing between the library's
 * last check and the return (microseconds) and lasting past the session
 * timeout would read as a phantom grant.  The semaphore and nemesis suites
 * accept the same window.
 *
 * ZKL_MULTILOCK_FAULT_SEED replays a run (it fixes the faults' kinds,
 * delays and durations and the workers' draws; which worker a fault hits
 * also depends on what they are doing then); ZKL_MULTILOCK_FAULT_SECONDS
 * sets the faulted span (default 28).  A failed run writes its log and
 * node table to multilock-SEED.log. */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "faults.h"

#define SESSION_MS 2000
#define SERVERS 3
#define NPATHS 5
#define ML_SLOTS 5
#define MAXSLOTS (ML_SLOTS + 2)
#define MAXN 4
#define MAXSPARES 24
#define EV_MAX 60000
#define MAXTRACE 512
#define MAX_PAUSED 2
#define QUIET_MS 20000         /* (3) the bound                          */
#define QUIET_TIMEOUT_MS 30000 /* each call's timeout meanwhile          */
#define IDLE_MS 10000
#define LEFT_MS 15000
#define STOP_MS 40000
#define LINGER_MS 20000
#define VALID_SLACK_MS 5
#define MIN_GRANTS 60
#define OP_DELETE 2
#define OP_EXISTS 3
#define OP_CHILDREN2 12
#define OP_MULTI 14
#define OP_CREATE2 15

static uint64_t ml_seed;
static int ml_seconds;

/* ==== the workers' log (shared memory) ====================================*/

enum { E_CALL = 1, E_RET, E_EXIT, E_UNLOCK, E_PAUSE, E_RESUME, E_KILLED,
       E_TYPES };
static const char *ev_names[E_TYPES] = {"?",      "CALL",  "RET",
                                        "EXIT",   "UNLOCK", "PAUSE",
                                        "RESUME", "KILLED"};

struct ev {
  int type; /* 0 while being written */
  int who, call, rc, n, mutex, state, timeout, nok;
  int8_t k[MAXN];
  int64_t t_us, v_us; /* wall clock; EXIT: the last holding() == 1 asked */
  uint64_t sid, tok[MAXN];
  char name[MAXN][64]; /* RET 0: the nodes (last component) */
};

struct evlog {
  int n;
  struct ev e[EV_MAX];
};

static struct evlog *elog;

static int64_t wall_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static struct ev *ev_begin(int who) {
  int k = __atomic_fetch_add(&elog->n, 1, __ATOMIC_SEQ_CST);
  if (k >= EV_MAX) return NULL;
  struct ev *e = &elog->e[k];
  e->who = who;
  e->t_us = wall_us();
  return e;
}

static void ev_end(struct ev *e, int type) {
  if (e != NULL) __atomic_store_n(&e->type, type, __ATOMIC_SEQ_CST);
}

static int ev_count(void) {
  int n = fc_load(&elog->n);
  return n < EV_MAX ? n : EV_MAX;
}

/* ==== the fleet (shared with the workers) =================================*/

enum { W_IDLE = FC_W_IDLE, W_CALL = FC_W_CALL, W_HOLD = FC_W_HOLD };
static const char *state_names[] = {"idle", "in a call", "holding"};

struct mslot {
  int mutex_path;    /* -1: multi-lock worker; else its mutex's path */
  struct fc_slot fc; /* its state and fault controls */
  int cycles;        /* atomic: a lock and an unlock, both 0 */
};

struct fleet {
  int stop, quiet, idle; /* atomic */
  uint64_t seed;
  int nslots;
  char root[128];
  char path[NPATHS][160];
  struct mslot slot[MAXSLOTS];
  int nspares, used;
  struct fc_spare spare[MAXSPARES];
};

static struct fleet *fl;

/* ---- the worker processes ------------------------------------------------*/

/* What one call works on: a multi-lock, or a plain mutex. */
struct lk {
  zkl_multilock_t *ml;
  zkl_mutex_t *mx;
};

static int lk_make(struct lk *l, zkl_session_t *s, const int *k, int n,
                   int mutex, const char *data) {
  memset(l, 0, sizeof *l);
  if (mutex) {
    zkl_mutex_opts_t o;
    zkl_mutex_opts_init(&o);
    o.data = data;
    o.data_len = strlen(data);
    return zkl_mutex_create(&l->mx, s, fl->path[k[0]], &o);
  }
  const char *paths[MAXN];
  for (int i = 0; i < n; i++) paths[i] = fl->path[k[i]];
  zkl_multilock_opts_t o;
  zkl_multilock_opts_init(&o);
  o.data = data;
  o.data_len = strlen(data);
  return zkl_multilock_create(&l->ml, s, paths, (size_t)n, &o);
}

static int lk_take(struct lk *l, int64_t t) {
  return l->mx != NULL ? zkl_mutex_timedlock(l->mx, t)
                       : zkl_multilock_timedlock(l->ml, t);
}
static int lk_holding(struct lk *l) {
  return l->mx != NULL ? zkl_mutex_holding(l->mx)
                       : zkl_multilock_holding(l->ml);
}
static int lk_token(struct lk *l, int i, uint64_t *t) {
  return l->mx != NULL ? zkl_mutex_token(l->mx, t)
                       : zkl_multilock_token(l->ml, (size_t)i, t);
}
static int lk_node(struct lk *l, int i, char *buf, size_t len) {
  return l->mx != NULL ? zkl_mutex_node(l->mx, buf, len)
                       : zkl_multilock_node(l->ml, (size_t)i, buf, len);
}
static int lk_unlock(struct lk *l) {
  return l->mx != NULL ? zkl_mutex_unlock(l->mx)
                       : zkl_multilock_unlock(l->ml);
}
static void lk_free(struct lk *l) {
  zkl_mutex_destroy(l->mx);
  zkl_multilock_destroy(l->ml);
  memset(l, 0, sizeof *l);
}

/* One call: lock, hold while holding() says 1, unlock; all logged.  Its
 * code (ZKL_ELOST: the caller opens a new session). */
static int one_call(struct fc_worker *w, zkl_session_t *s, uint64_t *r,
                    int call) {
  struct mslot *me = &fl->slot[w->slot];
  uint64_t d = fc_xorshift(r);
  int quiet = fc_load(&fl->quiet), mutex = me->mutex_path >= 0;
  int64_t timeout = quiet ? QUIET_TIMEOUT_MS : 200 + (int64_t)(d % 2801);
  int hold = 10 + (int)((d >> 16) % 51);
  int n = 1, k[MAXN];
  if (mutex) {
    k[0] = me->mutex_path;
  } else { /* 2..4 of the paths, in a random order */
    int perm[NPATHS];
    for (int i = 0; i < NPATHS; i++) perm[i] = i;
    n = 2 + (int)((d >> 32) % 3);
    for (int i = 0; i < n; i++) {
      int j = i + (int)(fc_xorshift(r) % (uint64_t)(NPATHS - i));
      int t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
      k[i] = perm[i];
    }
  }
  char data[32];
  snprintf(data, sizeof data, "w%d.%d", w->who, call);
  struct lk l;
  if (lk_make(&l, s, k, n, mutex, data) != 0) {
    fprintf(stderr, "multilock: w%d: create: %s\n", w->who,
            zkl_last_error());
    _exit(5);
  }
  fc_store(&me->fc.state, W_CALL);
  struct ev *e = ev_begin(w->who);
  if (e != NULL) {
    e->call = call;
    e->n = n;
    e->mutex = mutex;
    e->timeout = (int)timeout;
    e->sid = (uint64_t)zkl_session_id(s);
    for (int i = 0; i < n; i++) e->k[i] = (int8_t)k[i];
  }
  ev_end(e, E_CALL);
  int rc = lk_take(&l, timeout);
  e = ev_begin(w->who);
  if (e != NULL) {
    e->call = call;
    e->rc = rc;
    e->n = n;
    e->mutex = mutex;
    e->sid = (uint64_t)zkl_session_id(s);
    for (int i = 0; i < n; i++) {
      e->k[i] = (int8_t)k[i];
      char node[1024] = "";
      if (rc == 0 && lk_token(&l, i, &e->tok[i]) != 0) e->tok[i] = 0;
      if (rc == 0 && lk_node(&l, i, node, sizeof node) == 0) {
        const char *slash = strrchr(node, '/');
        snprintf(e->name[i], sizeof e->name[i], "%s",
                 slash != NULL ? slash + 1 : node);
      }
    }
  }
  ev_end(e, E_RET);
  if (rc != 0 && rc != ZKL_ETIMEDOUT)
    fprintf(stderr, "multilock: w%d: %s: %s (%s)\n", w->who,
            mutex ? "mutex timedlock" : "timedlock", zkl_err_name(rc),
            zkl_last_error());
  if (rc == 0) {
    fc_store(&me->fc.state, W_HOLD);
    /* asked before every nap and once more after the last one */
    int64_t end = it_now_ms() + hold, v = 0;
    int h, nok = 0;
    for (;;) {
      int64_t t = wall_us();
      h = lk_holding(&l);
      if (h != 1) break;
      v = t;
      nok++;
      if (it_now_ms() >= end || fc_stopping(w)) break;
      it_sleep_ms(2);
    }
    e = ev_begin(w->who);
    if (e != NULL) {
      e->call = call;
      e->rc = h;
      e->v_us = v;
      e->nok = nok;
    }
    ev_end(e, E_EXIT);
    fc_store(&me->fc.state, W_CALL);
    int ur = lk_unlock(&l);
    e = ev_begin(w->who);
    if (e != NULL) {
      e->call = call;
      e->rc = ur;
    }
    ev_end(e, E_UNLOCK);
    if (ur != 0)
      fprintf(stderr, "multilock: w%d: unlock: %s (%s)\n", w->who,
              zkl_err_name(ur), zkl_last_error());
    else
      __atomic_add_fetch(&me->cycles, 1, __ATOMIC_SEQ_CST);
  }
  lk_free(&l);
  fc_store(&me->fc.state, W_IDLE);
  return rc;
}

static int worker_body(struct fc_worker *w) {
  uint64_t r = it_mix64(fl->seed ^ ((uint64_t)w->who << 20) ^ 0x3a7c) | 1;
  zkl_session_t *s = NULL;
  int call = 0;
  while (!fc_stopping(w)) {
    if (fc_load(&fl->idle)) { /* the session stays open */
      it_sleep_ms(5);
      continue;
    }
    if (s == NULL && (s = fc_session(w->hosts, SESSION_MS)) == NULL) {
      it_sleep_ms(100);
      continue;
    }
    int rc = one_call(w, s, &r, ++call);
    if (rc == ZKL_ELOST) { /* a new session, as an application would */
      zkl_session_close(s);
      s = NULL;
    } else if (rc != 0 && rc != ZKL_ETIMEDOUT) {
      it_sleep_ms(20);
    }
  }
  zkl_session_close(s);
  return 0;
}

static int worker_run(struct fc_worker *w) {
  fc_proxies_start(w, &fl->slot[w->slot].fc);
  int rc = worker_body(w);
  fc_proxies_stop(w);
  return rc;
}

/* A worker now (spare < 0), or a spare that waits for a slot. */
static pid_t spawn(int slot, int who, int spare) {
  pid_t pid = fc_fork();
  if (pid > 0) return pid;
  static struct fc_worker w;
  w = (struct fc_worker){
      .slot = slot, .who = who, .parent = getppid(), .stop = &fl->stop};
  if (spare >= 0 && !fc_spare_wait(&w, &fl->spare[spare])) _exit(0);
  _exit(worker_run(&w));
}

/* ==== the fault schedule (this process) ===================================*/

/* The fixed start: what the verdicts are about happens in every run.  A
 * cut after `exists` aimed at a multi-lock holder hits the token read of
 * its next call (right after its unlock) more often than the session's
 * heartbeat (an exists every 400 ms); one after a multi, its release. */
static const struct {
  fc_fault_t kind;
  int state, op, ml; /* the target's state (-1 any), a cut's opcode, a
                        multi-lock worker only */
} forced[] = {{FC_PAUSE, W_CALL, 0, 1},
              {FC_CUT_OP, W_HOLD, OP_EXISTS, 1},
              {FC_PAUSE, W_HOLD, 0, 1},
              {FC_CUT_OP, -1, OP_MULTI, 0},
              {FC_KILL, -1, 0, 0},
              {FC_CUT_OP, W_HOLD, OP_EXISTS, 1},
              {FC_CUT, -1, 0, 0},
              {FC_CUT_OP, W_HOLD, OP_MULTI, 1},
              {FC_RESTART_SERVER, -1, 0, 0}};
static const int drawn_ops[] = {OP_MULTI, OP_MULTI, OP_EXISTS, OP_DELETE,
                                OP_CREATE2, OP_CHILDREN2};

static struct fc_sched nz;
static int a_ml; /* the armed fault is for a multi-lock worker only */

static uint64_t rnd(void) { return fc_rnd(&nz); }

static void mark(int type, int who, int state) {
  struct ev *e = ev_begin(who);
  if (e != NULL) e->state = state;
  ev_end(e, type);
}

static void mark_fault(int what, int who, int state, int dur) {
  (void)dur;
  if (what == FC_PAUSE) mark(E_PAUSE, who, state);
  else if (what == FC_KILL) mark(E_KILLED, who, state);
  else mark(E_RESUME, who, 0);
}

static int fits(int s) { return !(a_ml && fl->slot[s].mutex_path >= 0); }

/* Four draws per fault whatever it is, so that the stream does not depend
 * on the workers; the forced ones first. */
static void arm(int64_t now) {
  uint64_t k = rnd(), pick = rnd(), d = rnd(), o = rnd();
  int nf = (int)(sizeof forced / sizeof forced[0]);
  int isforced = nz.forced_i < nf;
  fc_arm(&nz, now, isforced ? forced[nz.forced_i].kind : (fc_fault_t)(k % FC_KINDS),
         isforced, d);
  nz.a_state = isforced ? forced[nz.forced_i].state : -1;
  a_ml = isforced ? forced[nz.forced_i].ml : 0;
  nz.a_op = isforced ? forced[nz.forced_i].op
                     : drawn_ops[o % (sizeof drawn_ops / sizeof *drawn_ops)];
  nz.a_pick = pick;
  nz.forced_i += isforced;
}

static void schedule_tick(void) { fc_tick(&nz, arm); }

static void undo_all(void) { fc_undo_all(&nz); }

static void stop_fleet(void) { fc_stop_fleet(&nz, &fl->stop, STOP_MS, NULL); }

static const char *op_name(int op) {
  switch (op) {
    case OP_DELETE: return "delete";
    case OP_EXISTS: return "exists";
    case OP_CHILDREN2: return "getChildren2";
    case OP_MULTI: return "multi";
    case OP_CREATE2: return "create2";
  }
  return "?";
}

static void trace_line(const struct fc_trace *t, double at) {
  if (t->kind == FC_CUT_OP)
    printf("  +%8.3f s  %-14s w%-3d after its next %s\n", at,
           fc_fault_names[t->kind], t->who, op_name(t->arg));
  else
    printf("  +%8.3f s  %-14s w%-3d %5d ms  (%s)\n", at,
           fc_fault_names[t->kind], t->who, t->dur_ms, state_names[t->arg]);
}

static void print_trace(int64_t t0) {
  fc_print_trace(&nz, NULL, ml_seed, t0, trace_line);
}

/* ==== the servers' history of the contender nodes =========================*/

struct hnode {
  int k;          /* the path */
  char name[64];
  int who, call;  /* from the data "w<who>.<call>"; -1: not ours */
  int64_t sid;    /* ephemeral owner */
  uint64_t cz, dz; /* made, removed (0: never) */
  int64_t ct, dt; /* the leader's stamps, ms */
  int closed;     /* removed with its session */
  int sibs;       /* our nodes made by its transaction */
  int64_t before; /* the latest removal (ms; INT64_MAX: one never
                     removed) of the older nodes on its path */
  int held;       /* named by a grant */
};

static struct hnode *nodes;
static size_t nn, ncap;
static size_t *by_name; /* indexes sorted by (k, name) */

static int name_cmp(const void *a, const void *b) {
  const struct hnode *x = &nodes[*(const size_t *)a],
                     *y = &nodes[*(const size_t *)b];
  if (x->k != y->k) return x->k - y->k;
  return strcmp(x->name, y->name);
}

static struct hnode *node_named(int k, const char *name) {
  struct hnode key;
  key.k = k;
  snprintf(key.name, sizeof key.name, "%s", name);
  size_t lo = 0, hi = nn;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    const struct hnode *x = &nodes[by_name[mid]];
    int c = x->k != key.k ? x->k - key.k : strcmp(x->name, key.name);
    if (c == 0) return &nodes[by_name[mid]];
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return NULL;
}

/* "<root>/p<k>/<name>": k and the name, or -1. */
static int child_of(const char *path, const char **name) {
  size_t rl = strlen(fl->root);
  if (path == NULL || strncmp(path, fl->root, rl) != 0 ||
      strncmp(path + rl, "/p", 2) != 0)
    return -1;
  const char *p = path + rl + 2;
  if (*p < '0' || *p >= '0' + NPATHS || p[1] != '/') return -1;
  if (p[2] == '\0' || strchr(p + 2, '/') != NULL) return -1;
  *name = p + 2;
  return *p - '0';
}

static void removed(struct hnode *b, const struct fc_txop *x, int closed) {
  b->dz = x->zxid;
  b->dt = x->time_ms;
  b->closed = closed;
}

/* The node table from the merged history; *odd counts what did not fit
 * (a delete of a node never made, a child of ours not ephemeral). */
static void replay(const struct fc_txhist *h, int *odd) {
  size_t *live = calloc(h->n + 1, sizeof *live), nlive = 0;
  ck_assert_ptr_nonnull(live);
  for (size_t i = 0; i < h->n; i++) {
    const struct fc_txop *x = &h->op[i];
    const char *name = NULL;
    if (x->kind == FC_T_CLOSE) {
      for (size_t j = 0; j < nlive;)
        if (nodes[live[j]].sid == x->sid && x->sid != 0) {
          removed(&nodes[live[j]], x, 1);
          live[j] = live[--nlive];
        } else {
          j++;
        }
      continue;
    }
    int k = child_of(x->path, &name);
    if (k < 0) continue;
    if (x->kind == FC_T_CREATE) {
      if (nn == ncap) {
        ncap = ncap ? ncap * 2 : 4096;
        nodes = realloc(nodes, ncap * sizeof *nodes);
        ck_assert_ptr_nonnull(nodes);
      }
      struct hnode *b = &nodes[nn];
      memset(b, 0, sizeof *b);
      b->k = k;
      snprintf(b->name, sizeof b->name, "%s", name);
      b->who = b->call = -1;
      char d[32] = "";
      if (x->data != NULL)
        snprintf(d, sizeof d, "%.*s", x->dlen < 31 ? x->dlen : 31, x->data);
      if (sscanf(d, "w%d.%d", &b->who, &b->call) != 2) b->who = b->call = -1;
      b->sid = x->eph ? x->sid : 0;
      *odd += !x->eph;
      b->cz = x->zxid;
      b->ct = x->time_ms;
      live[nlive++] = nn++;
    } else if (x->kind == FC_T_DELETE) {
      size_t j = 0;
      while (j < nlive && (nodes[live[j]].k != k ||
                           strcmp(nodes[live[j]].name, name) != 0))
        j++;
      if (j == nlive) {
        (*odd)++;
        continue;
      }
      removed(&nodes[live[j]], x, 0);
      live[j] = live[--nlive];
    }
  }
  free(live);
  /* siblings (one transaction), and per path the older nodes' removals */
  for (size_t i = 0, j; i < nn; i = j) {
    for (j = i; j < nn && nodes[j].cz == nodes[i].cz; j++) {}
    for (size_t t = i; t < j; t++) nodes[t].sibs = (int)(j - i);
  }
  int64_t latest[NPATHS];
  for (int k = 0; k < NPATHS; k++) latest[k] = INT64_MIN;
  for (size_t i = 0; i < nn; i++) { /* in creation order */
    struct hnode *b = &nodes[i];
    b->before = latest[b->k];
    int64_t gone = b->dz != 0 ? b->dt : INT64_MAX;
    if (gone > latest[b->k]) latest[b->k] = gone;
  }
  by_name = calloc(nn + 1, sizeof *by_name);
  ck_assert_ptr_nonnull(by_name);
  for (size_t i = 0; i < nn; i++) by_name[i] = i;
  if (nn > 1) qsort(by_name, nn, sizeof *by_name, name_cmp);
}

/* ==== the verdicts =========================================================*/

struct grant {
  const struct ev *ret, *exit, *unlock; /* exit, unlock: NULL if none */
  struct hnode *node[MAXN];
  int paused; /* the worker was stopped inside the call */
};

static const char *verdict_tags[] = {"(1a)", "(1b)", "(1c)", "(2)",
                                     "(3)",  "(4)",  "(5)"};
#define NTAGS (int)(sizeof verdict_tags / sizeof *verdict_tags)

struct mverdict {
  int bad, shown, by[NTAGS]; /* by: per verdict, from the message's tag */
  char why[4096];
  int calls[2], grants[2];
  int lock_codes[2][6];   /* 0, ETIMEDOUT, ELOST, ESUSPENDED, EPROTO, other */
  int unlock_codes[2][4]; /* 0, ELOST, ESUSPENDED, other */
  int hold_codes[5];      /* last holding(): 1, ESUSPENDED, ELOST, 0, other */
  int ours, alive_at_ret, partial, told, paused_grants;
};

static int64_t t0_us;

static void mbad(struct mverdict *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void mbad(struct mverdict *v, const char *fmt, ...) {
  char b[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(b, sizeof b, fmt, ap);
  va_end(ap);
  for (int t = 0; t < NTAGS; t++)
    if (strncmp(b, verdict_tags[t], strlen(verdict_tags[t])) == 0) v->by[t]++;
  if (v->bad++ < 4) fc_appendf(v->why, sizeof v->why, " %s;", b);
  if (v->shown++ < 30) printf("VIOLATION %s\n", b);
}

static double at_s(int64_t us) { return (us - t0_us) / 1e6; }

static const char *gone_how(const struct hnode *b, char *buf, size_t len) {
  if (b->dz == 0) snprintf(buf, len, "never removed");
  else
    snprintf(buf, len, "%s at %" PRId64 " ms (zxid 0x%" PRIx64 ")",
             b->closed ? "gone with its session" : "deleted", b->dt, b->dz);
  return buf;
}

static int lock_class(int rc) {
  return rc == 0 ? 0 : rc == ZKL_ETIMEDOUT ? 1 : rc == ZKL_ELOST ? 2
         : rc == ZKL_ESUSPENDED ? 3 : rc == ZKL_EPROTO ? 4 : 5;
}
static int unlock_class(int rc) {
  return rc == 0 ? 0 : rc == ZKL_ELOST ? 1 : rc == ZKL_ESUSPENDED ? 2 : 3;
}
static int hold_class(int rc) {
  return rc == 1 ? 0 : rc == ZKL_ESUSPENDED ? 1 : rc == ZKL_ELOST ? 2
         : rc == 0 ? 3 : 4;
}

/* (1a), (2) for one grant. */
static void judge_grant(struct mverdict *v, struct grant *g, int complete) {
  const struct ev *e = g->ret;
  int64_t ms = e->t_us / 1000;
  const char *what = e->mutex ? "mutex" : "multi-lock";
  char how[128];
  for (int i = 0; i < e->n; i++) {
    struct hnode *b = node_named(e->k[i], e->name[i]);
    g->node[i] = b;
    if (b == NULL) {
      if (complete)
        mbad(v, "(1a) w%d's %s grant (call %d) at +%.3f s names p%d/%s "
             "(token 0x%" PRIx64 "): no such node in the servers' history",
             e->who, what, e->call, at_s(e->t_us), e->k[i], e->name[i],
             e->tok[i]);
      continue;
    }
    b->held = 1;
    if ((uint64_t)b->sid != e->sid || b->who != e->who || b->call != e->call)
      mbad(v, "(1a) w%d's grant (call %d, session 0x%" PRIx64 ") names "
           "p%d/%s, whose owner is session 0x%" PRIx64 " and data w%d.%d",
           e->who, e->call, e->sid, e->k[i], b->name, (uint64_t)b->sid,
           b->who, b->call);
    if (b->cz != e->tok[i] || e->tok[i] == 0)
      mbad(v, "(1a) w%d's token on p%d is 0x%" PRIx64 ", its node's czxid "
           "is 0x%" PRIx64, e->who, e->k[i], e->tok[i], b->cz);
    if (b->ct > ms)
      mbad(v, "(1a) w%d granted p%d at %" PRId64 " ms, its node was made "
           "later (%" PRId64 ")", e->who, e->k[i], ms, b->ct);
    if (b->dz != 0 && b->dt < ms)
      mbad(v, "(1a) phantom grant: w%d's %s returned 0 (call %d) at +%.3f s "
           "(%" PRId64 " ms) holding p%d/%s, %s, %" PRId64 " ms before%s",
           e->who, what, e->call, at_s(e->t_us), ms, e->k[i], b->name,
           gone_how(b, how, sizeof how), ms - b->dt,
           g->paused ? " (the worker was paused inside the call)" : "");
    if (b->before > ms) {
      /* the oldest node still there at the grant */
      const struct hnode *o = NULL;
      for (size_t j = 0; j < nn && &nodes[j] != b; j++)
        if (nodes[j].k == b->k && (nodes[j].dz == 0 || nodes[j].dt > ms)) {
          o = &nodes[j];
          break;
        }
      mbad(v, "(1a) not the head: w%d's %s returned 0 (call %d) at +%.3f s "
           "(%" PRId64 " ms) on p%d/%s while the older node %s (w%d.%d, "
           "session 0x%" PRIx64 ") was there: %s", e->who, what, e->call,
           at_s(e->t_us), ms, e->k[i], b->name, o != NULL ? o->name : "?",
           o != NULL ? o->who : -1, o != NULL ? o->call : -1,
           o != NULL ? (uint64_t)o->sid : 0,
           o != NULL ? gone_how(o, how, sizeof how) : "?");
    }
  }
  if (e->mutex) return;
  /* (2) one transaction made all of them, and only them */
  for (int i = 1; i < e->n; i++)
    if (e->tok[i] != e->tok[0])
      mbad(v, "(2) w%d's multi-lock grant (call %d) has token 0x%" PRIx64
           " on p%d but 0x%" PRIx64 " on p%d", e->who, e->call, e->tok[0],
           e->k[0], e->tok[i], e->k[i]);
  for (int i = 0; i < e->n; i++) {
    const struct hnode *b = g->node[i];
    if (b == NULL) continue;
    if (b->cz != (g->node[0] != NULL ? g->node[0]->cz : b->cz) ||
        b->sibs != e->n)
      mbad(v, "(2) w%d's multi-lock grant (call %d) on %d paths: its node "
           "p%d/%s came from zxid 0x%" PRIx64 ", which made %d nodes of "
           "ours", e->who, e->call, e->n, e->k[i], b->name, b->cz, b->sibs);
  }
}

/* (1b), (2)'s unlock, for one grant's hold. */
static void judge_hold(struct mverdict *v, const struct grant *g) {
  const struct ev *e = g->ret;
  char how[128];
  if (g->exit != NULL) {
    v->hold_codes[hold_class(g->exit->rc)]++;
    v->told += g->exit->rc != 1;
    if (g->exit->rc != 1 && g->exit->rc != ZKL_ESUSPENDED &&
        g->exit->rc != ZKL_ELOST)
      mbad(v, "(5) w%d's holding() said %s during its hold (call %d)",
           e->who, g->exit->rc == 0 ? "0" : zkl_err_name(g->exit->rc),
           e->call);
  }
  for (int i = 0; i < e->n; i++) {
    const struct hnode *b = g->node[i];
    if (b == NULL) continue;
    if (g->exit != NULL && g->exit->v_us != 0 && b->dz != 0 &&
        g->exit->v_us / 1000 > b->dt + VALID_SLACK_MS)
      mbad(v, "(1b) w%d asked holding() at +%.3f s (%" PRId64 " ms) and was "
           "told 1 (call %d), but its node p%d/%s was %s, %" PRId64 " ms "
           "before", e->who, at_s(g->exit->v_us), g->exit->v_us / 1000,
           e->call, e->k[i], b->name, gone_how(b, how, sizeof how),
           g->exit->v_us / 1000 - b->dt);
    if (g->unlock != NULL && g->unlock->rc == 0 &&
        (b->dz == 0 || b->closed || b->dt > g->unlock->t_us / 1000))
      mbad(v, "(2) w%d's unlock returned 0 at +%.3f s (%" PRId64 " ms, call "
           "%d), but its node p%d/%s was %s", e->who, at_s(g->unlock->t_us),
           g->unlock->t_us / 1000, e->call, e->k[i], b->name,
           gone_how(b, how, sizeof how));
  }
}

static int by_return(const void *a, const void *b) {
  const struct grant *x = *(struct grant *const *)a,
                     *y = *(struct grant *const *)b;
  return x->ret->t_us < y->ret->t_us ? -1 : x->ret->t_us > y->ret->t_us;
}

/* (1c) and (4) on one path, its grants in the order of their returns. */
static void judge_path(struct mverdict *v, int k, struct grant **gs, int n) {
  if (n > 1) qsort(gs, (size_t)n, sizeof *gs, by_return);
  for (int j = 1; j < n; j++) {
    const struct grant *a = gs[j - 1], *b = gs[j];
    int ia = 0, ib = 0;
    while (a->ret->k[ia] != k) ia++;
    while (b->ret->k[ib] != k) ib++;
    if (a->exit != NULL && a->exit->v_us > b->ret->t_us)
      mbad(v, "(1c) two valid holders of p%d: w%d (call %d, granted at "
           "+%.3f s, token 0x%" PRIx64 ") was told 1 by holding() at +%.3f "
           "s, after w%d's grant (call %d, token 0x%" PRIx64 ") returned at "
           "+%.3f s", k, a->ret->who, a->ret->call, at_s(a->ret->t_us),
           a->ret->tok[ia], at_s(a->exit->v_us), b->ret->who, b->ret->call,
           b->ret->tok[ib], at_s(b->ret->t_us));
    if (b->ret->tok[ib] <= a->ret->tok[ia])
      mbad(v, "(4) tokens on p%d: w%d's grant at +%.3f s has 0x%" PRIx64
           ", not above the 0x%" PRIx64 " of w%d's grant at +%.3f s", k,
           b->ret->who, at_s(b->ret->t_us), b->ret->tok[ib], a->ret->tok[ia],
           a->ret->who, at_s(a->ret->t_us));
  }
}

/* The calls (by who, call) -> their RET and (if granted) the grant. */
struct callref {
  int who, call;
  const struct ev *ret;
  const struct grant *g;
};

static int callref_cmp(const void *a, const void *b) {
  const struct callref *x = a, *y = b;
  if (x->who != y->who) return x->who - y->who;
  return x->call - y->call;
}

static void judge(struct mverdict *v, int complete) {
  int n = ev_count();
  struct grant *gs = calloc((size_t)n + 1, sizeof *gs);
  struct callref *cr = calloc((size_t)n + 1, sizeof *cr);
  ck_assert_ptr_nonnull(gs);
  ck_assert_ptr_nonnull(cr);
  int ng = 0, nc = 0;
  static int open_g[MAXSLOTS + MAXSPARES], paused[MAXSLOTS + MAXSPARES],
      in_call[MAXSLOTS + MAXSPARES];
  for (int w = 0; w < MAXSLOTS + MAXSPARES; w++) {
    open_g[w] = -1;
    paused[w] = in_call[w] = 0;
  }
  for (int i = 0; i < n; i++) {
    const struct ev *e = &elog->e[i];
    if (e->type == 0 || e->who < 0 || e->who >= MAXSLOTS + MAXSPARES)
      continue;
    switch (e->type) {
      case E_CALL:
        in_call[e->who] = 1;
        paused[e->who] = 0;
        break;
      case E_PAUSE:
        if (in_call[e->who]) paused[e->who] = 1;
        break;
      case E_RET: {
        in_call[e->who] = 0;
        int m = e->mutex != 0;
        v->calls[m]++;
        v->lock_codes[m][lock_class(e->rc)]++;
        if (e->rc != 0 && e->rc != ZKL_ETIMEDOUT && e->rc != ZKL_ELOST)
          mbad(v, "(5) w%d's %s timedlock returned %s at +%.3f s (call %d)",
               e->who, m ? "mutex" : "multi-lock", zkl_err_name(e->rc),
               at_s(e->t_us), e->call);
        cr[nc++] = (struct callref){e->who, e->call, e, NULL};
        if (e->rc != 0) break;
        v->grants[m]++;
        gs[ng].ret = e;
        gs[ng].paused = paused[e->who];
        v->paused_grants += paused[e->who];
        open_g[e->who] = ng++;
        break;
      }
      case E_EXIT:
        if (open_g[e->who] >= 0) gs[open_g[e->who]].exit = e;
        break;
      case E_UNLOCK:
        if (open_g[e->who] >= 0) {
          struct grant *g = &gs[open_g[e->who]];
          g->unlock = e;
          v->unlock_codes[g->ret->mutex != 0][unlock_class(e->rc)]++;
          if (e->rc != 0 && e->rc != ZKL_ELOST && e->rc != ZKL_ESUSPENDED)
            mbad(v, "(5) w%d's unlock returned %s at +%.3f s (call %d)",
                 e->who, zkl_err_name(e->rc), at_s(e->t_us), e->call);
        }
        open_g[e->who] = -1;
        break;
      case E_KILLED:
        open_g[e->who] = -1;
        in_call[e->who] = 0;
        break;
    }
  }
  for (int i = 0; i < ng; i++) judge_grant(v, &gs[i], complete);
  for (int i = 0; i < ng; i++) judge_hold(v, &gs[i]);
  struct grant **per = calloc((size_t)ng + 1, sizeof *per);
  ck_assert_ptr_nonnull(per);
  for (int k = 0; k < NPATHS; k++) {
    int m = 0;
    for (int i = 0; i < ng; i++)
      for (int j = 0; j < gs[i].ret->n; j++)
        if (gs[i].ret->k[j] == k) per[m++] = &gs[i];
    judge_path(v, k, per, m);
  }
  free(per);
  /* (2) every node of ours not held by a grant goes within LINGER_MS of
   * its call's return; a held one, of its unlock's (unless that was 0:
   * judge_hold); counted: nodes still there at a failed call's return,
   * failed calls that had been granted a path */
  for (int i = 0; i < ng; i++)
    for (int j = 0; j < nc; j++)
      if (cr[j].ret == gs[i].ret) cr[j].g = &gs[i];
  if (nc > 1) qsort(cr, (size_t)nc, sizeof *cr, callref_cmp);
  int last_partial_who = -1, last_partial_call = -1;
  char how[128];
  for (size_t i = 0; i < nn; i++) {
    struct hnode *b = &nodes[i];
    if (b->who < 0) continue;
    v->ours++;
    struct callref key = {b->who, b->call, NULL, NULL};
    const struct callref *c =
        bsearch(&key, cr, (size_t)nc, sizeof *cr, callref_cmp);
    if (c == NULL) continue; /* killed inside the call */
    const struct ev *e = c->ret;
    int64_t limit;
    if (b->held && c->g != NULL) {
      if (c->g->unlock == NULL || c->g->unlock->rc == 0) continue;
      limit = c->g->unlock->t_us / 1000 + LINGER_MS;
    } else {
      limit = e->t_us / 1000 + LINGER_MS;
      if (e->rc != 0 && (b->dz == 0 || b->dt > e->t_us / 1000))
        v->alive_at_ret++;
      int was_head = b->before < (b->dz != 0 ? b->dt : INT64_MAX);
      if (e->rc != 0 && was_head &&
          (b->who != last_partial_who || b->call != last_partial_call)) {
        v->partial++;
        last_partial_who = b->who;
        last_partial_call = b->call;
      }
    }
    if (b->dz == 0 || b->dt > limit)
      mbad(v, "(2) w%d's node p%d/%s (call %d, which returned %s at +%.3f "
           "s%s) outlived it by more than %d s: %s", b->who, b->k, b->name,
           b->call, zkl_err_name(e->rc), at_s(e->t_us),
           b->held ? ", unlocked with an error" : "", LINGER_MS / 1000,
           gone_how(b, how, sizeof how));
  }
  free(cr);
  free(gs);
}

/* ==== the log, for a failed run ============================================*/

static void dump_log(void) {
  char file[64];
  snprintf(file, sizeof file, "multilock-%" PRIu64 ".log", ml_seed);
  FILE *f = fopen(file, "w");
  if (f == NULL) return;
  int n = ev_count();
  for (int k = 0; k < n; k++) {
    const struct ev *e = &elog->e[k];
    int t = e->type > 0 && e->type < E_TYPES ? e->type : 0;
    fprintf(f, "%6d %9.3f %" PRId64 ".%06" PRId64 " w%-3d %-7s", k,
            at_s(e->t_us), e->t_us / 1000000, e->t_us % 1000000, e->who,
            ev_names[t]);
    if (t == E_CALL || t == E_RET) {
      fprintf(f, " call %d %s sid 0x%" PRIx64 " paths", e->call,
              e->mutex ? "mutex" : "multi", e->sid);
      for (int i = 0; i < e->n && i < MAXN; i++) fprintf(f, " p%d", e->k[i]);
    }
    if (t == E_CALL) fprintf(f, " timeout %d", e->timeout);
    if (t == E_RET) {
      fprintf(f, " -> %s", zkl_err_name(e->rc));
      for (int i = 0; e->rc == 0 && i < e->n && i < MAXN; i++)
        fprintf(f, " %s/0x%" PRIx64, e->name[i], e->tok[i]);
    }
    if (t == E_EXIT)
      fprintf(f, " call %d holding() 1 x%d, last asked at %.3f, then %d",
              e->call, e->nok, e->v_us ? at_s(e->v_us) : 0.0, e->rc);
    if (t == E_UNLOCK)
      fprintf(f, " call %d -> %s", e->call, zkl_err_name(e->rc));
    if (t == E_PAUSE || t == E_KILLED)
      fprintf(f, " (%s)", state_names[e->state]);
    fputc('\n', f);
  }
  fprintf(f, "\nthe contender nodes in the servers' history (leader ms):\n");
  for (size_t i = 0; i < nn; i++) {
    const struct hnode *b = &nodes[i];
    char how[128];
    fprintf(f, "p%d/%-58s w%d.%d session 0x%" PRIx64 " made 0x%" PRIx64
            " at %" PRId64 " (%d in its txn), %s\n", b->k, b->name, b->who,
            b->call, (uint64_t)b->sid, b->cz, b->ct, b->sibs,
            gone_how(b, how, sizeof how));
  }
  fclose(f);
  printf("the log: %s\n", file);
}

/* ==== the scenario =========================================================*/

START_TEST(multilock_under_faults) {
  printf("\nMulti-lock under faults: %d paths, %d multi-lock workers taking "
         "2..4 of them, plain mutex workers on one, %d s of faults, session "
         "timeout %d ms\n", NPATHS, ML_SLOTS, ml_seconds, SESSION_MS);
  printf("multilock seed %" PRIu64 " (replay: ZKL_MULTILOCK_FAULT_SEED=%"
         PRIu64 " ZKL_MULTILOCK_FAULT_SECONDS=%d)\n", ml_seed, ml_seed,
         ml_seconds);
  fflush(stdout);
  int64_t t_start = it_now_ms();
  fl = mmap(NULL, sizeof *fl, PROT_READ | PROT_WRITE,
            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ck_assert(fl != MAP_FAILED);
  memset(fl, 0, sizeof *fl);
  elog = mmap(NULL, sizeof *elog, PROT_READ | PROT_WRITE,
              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ck_assert(elog != MAP_FAILED);
  elog->n = 0;
  fc_sched_init(&nz, "multilock-faults");
  nz.rng = it_mix64(ml_seed ^ 0x6d6c) | 1;
  fl->seed = ml_seed;
  fl->nslots = ML_SLOTS + 1 + (int)(rnd() % 2);
  fl->nspares = 6 + ml_seconds / 5;
  if (fl->nspares > MAXSPARES) fl->nspares = MAXSPARES;
  it_root(fl->root, sizeof fl->root, "ml-faults");
  for (int k = 0; k < NPATHS; k++)
    snprintf(fl->path[k], sizeof fl->path[k], "%s/p%d", fl->root, k);
  for (int s = 0; s < fl->nslots; s++)
    fl->slot[s].mutex_path = s < ML_SLOTS ? -1 : (int)(rnd() % NPATHS);
  printf("mutex workers: %d, on", fl->nslots - ML_SLOTS);
  for (int s = ML_SLOTS; s < fl->nslots; s++)
    printf(" p%d", fl->slot[s].mutex_path);
  printf("\n");
  fflush(stdout);
  fc_sched_fleet(&nz, fl->nslots, fl->spare, &fl->nspares, &fl->used,
                 SESSION_MS, MAX_PAUSED, MAXTRACE);
  for (int s = 0; s < fl->nslots; s++) nz.ctl[s] = &fl->slot[s].fc;
  nz.cut_state = 1; /* a cut's trace says the state it hit */
  nz.clock_us = wall_us;
  nz.mark = mark_fault;
  nz.fits = fits;
  nz.next = it_now_ms() + 1000 + fc_between(rnd(), 0, 1000);
  for (int s = 0; s < fl->nslots; s++) {
    nz.slot[s].who = s;
    nz.slot[s].pid = spawn(s, s, -1);
  }
  for (int k = 0; k < fl->nspares; k++) {
    fl->spare[k].who = fl->nslots + k;
    fl->spare[k].pid = spawn(-1, fl->spare[k].who, k);
  }

  int64_t end = it_now_ms() + (int64_t)ml_seconds * 1000;
  while (it_now_ms() < end) {
    schedule_tick();
    if (ev_count() > EV_MAX / 4 * 3) {
      printf("multilock: the log is 3/4 full: the schedule ends early\n");
      break;
    }
    it_sleep_ms(5);
  }
  undo_all();
  /* (3) every slot's incarnation locks and unlocks again */
  fc_store(&fl->quiet, 1);
  int base[MAXSLOTS], progressed = 0;
  for (int s = 0; s < fl->nslots; s++) base[s] = fc_load(&fl->slot[s].cycles);
  int64_t quiet0 = it_now_ms();
  while (it_now_ms() < quiet0 + QUIET_MS) {
    progressed = 0;
    for (int s = 0; s < fl->nslots; s++)
      progressed += fc_load(&fl->slot[s].cycles) > base[s];
    if (progressed == fl->nslots) break;
    it_sleep_ms(50);
  }
  int64_t quiet_ms = it_now_ms() - quiet0;
  char late[256] = "";
  for (int s = 0; s < fl->nslots; s++)
    if (fc_load(&fl->slot[s].cycles) <= base[s])
      fc_appendf(late, sizeof late, " w%d(%s)", nz.slot[s].who,
                 state_names[fc_load(&fl->slot[s].fc.state)]);
  /* (2) nothing left, the workers idle with their sessions open */
  fc_store(&fl->idle, 1);
  int64_t idle_until = it_now_ms() + IDLE_MS;
  for (int busy = 1; busy && it_now_ms() < idle_until;) {
    busy = 0;
    for (int s = 0; s < fl->nslots; s++)
      busy |= nz.slot[s].pid > 0 && fc_load(&fl->slot[s].fc.state) != W_IDLE;
    if (busy) it_sleep_ms(10);
  }
  zkl_session_t *s = it_session(); /* every fork is done */
  int left = 0;
  char leftover[512] = "";
  int64_t left_until = it_now_ms() + LEFT_MS;
  for (int k = 0; k < NPATHS; k++) {
    int64_t rest = left_until - it_now_ms();
    int l = fc_orphans(s, fl->path[k], rest > 100 ? (int)rest : 100);
    if (l > 0) {
      struct String_vector kids = {0, NULL};
      it_children(s, fl->path[k], &kids);
      for (int i = 0; i < kids.count && i < 3; i++)
        fc_appendf(leftover, sizeof leftover, " p%d/%s", k, kids.data[i]);
      deallocate_String_vector(&kids);
    }
    left += l;
  }
  zkl_session_close(s);
  stop_fleet();
  fc_store(&fl->quiet, 0);

  struct mverdict v;
  memset(&v, 0, sizeof v);
  snprintf(v.why, sizeof v.why, "seed %" PRIu64 " (replay: "
           "ZKL_MULTILOCK_FAULT_SEED=%" PRIu64 " ZKL_MULTILOCK_FAULT_SECONDS="
           "%d):", ml_seed, ml_seed, ml_seconds);
  t0_us = ev_count() > 0 ? elog->e[0].t_us : 0;
  struct fc_txhist h;
  int gaps = 0, odd = 0;
  char prefix[160];
  snprintf(prefix, sizeof prefix, "%s/", fl->root);
  fc_history_read(&h, prefix, &gaps);
  nodes = NULL;
  nn = ncap = 0;
  replay(&h, &odd);
  int files = h.files;
  size_t uncommitted = h.uncommitted;
  fc_history_free(&h);
  judge(&v, gaps == 0);
  if (left > 0)
    mbad(&v, "(2) %d nodes left under the paths at the end:%s", left,
         leftover);
  if (odd > 0)
    mbad(&v, "(2) %d changes under the paths that fit no contender node "
         "(a delete of a node never made, or a node not ephemeral)", odd);

  printf("| %-10s | %5s | %6s | %28s | %18s | %22s | %5s | %4s |\n", "",
         "calls", "grants", "timedlock 0/ETIM/ELOST/other",
         "unlock 0/ELOST/ESUSP", "holding() last 1/ESUSP/ELOST",
         "left", "bad");
  printf("|------------|-------|--------|------------------------------|"
         "--------------------|------------------------|-------|------|\n");
  for (int m = 0; m < 2; m++) {
    char lc[64], uc[64], hc[64] = "";
    snprintf(lc, sizeof lc, "%d/%d/%d/%d", v.lock_codes[m][0],
             v.lock_codes[m][1], v.lock_codes[m][2],
             v.lock_codes[m][3] + v.lock_codes[m][4] + v.lock_codes[m][5]);
    snprintf(uc, sizeof uc, "%d/%d/%d", v.unlock_codes[m][0],
             v.unlock_codes[m][1], v.unlock_codes[m][2]);
    if (m == 0)
      snprintf(hc, sizeof hc, "%d/%d/%d", v.hold_codes[0], v.hold_codes[1],
               v.hold_codes[2]);
    printf("| %-10s | %5d | %6d | %28s | %18s | %22s | %5s | %4s |\n",
           m ? "mutex" : "multi-lock", v.calls[m], v.grants[m], lc, uc,
           m ? "(both kinds above)" : hc, m ? "" : (left ? "yes" : "0"),
           m ? "" : (v.bad ? "YES" : "0"));
  }
  printf("nodes of ours in the history %d; failed calls' nodes still there "
         "at the return (left to the janitor) %d; failed calls partly "
         "granted first %d; holds that ended told %d; grants from a call "
         "paused inside %d\n", v.ours, v.alive_at_ret, v.partial, v.told,
         v.paused_grants);
  printf("history: %d log files, %d zxids missing, %zu uncommitted "
         "proposals left out; liveness: %d of %d slots locked and unlocked "
         "again in %.1f s%s%s; wall %.1f s; seed %" PRIu64 "\n", files, gaps,
         uncommitted, progressed, fl->nslots, quiet_ms / 1e3,
         late[0] ? ", not:" : "", late, (it_now_ms() - t_start) / 1e3,
         ml_seed);
  int op_cuts = fc_op_cuts(&nz);
  printf("faults: paused %d (past the session timeout: %d in a call, %d "
         "holding), killed %d, cut %d, cut after a request %d (%d cuts); "
         "servers killed %d, paused %d, restarted %d; skipped %d\n",
         nz.faults[FC_PAUSE], nz.long_in[W_CALL], nz.long_in[W_HOLD],
         nz.faults[FC_KILL], nz.faults[FC_CUT], nz.faults[FC_CUT_OP], op_cuts,
         nz.faults[FC_KILL_SERVER], nz.faults[FC_PAUSE_SERVER],
         nz.faults[FC_RESTART_SERVER],
         nz.skipped[FC_PAUSE] + nz.skipped[FC_KILL] + nz.skipped[FC_CUT] +
             nz.skipped[FC_CUT_OP] + nz.skipped[FC_KILL_SERVER] +
             nz.skipped[FC_PAUSE_SERVER] + nz.skipped[FC_RESTART_SERVER]);
  if (v.bad > 0) {
    printf("violations by verdict (%d in all, the first 30 shown above):",
           v.bad);
    for (int t = 0; t < NTAGS; t++)
      if (v.by[t] > 0) printf(" %s %d", verdict_tags[t], v.by[t]);
    printf("\n");
  }
  print_trace(t0_us);

  int fail = v.bad;
  if (gaps > 0 && ++fail)
    fc_appendf(v.why, sizeof v.why, " the servers' history has %d zxids "
               "missing (the harness, not the multi-lock);", gaps);
  if (progressed < fl->nslots && ++fail)
    fc_appendf(v.why, sizeof v.why, " (3) %d of %d workers did not lock and "
               "unlock again within %d s after the faults:%s;",
               fl->nslots - progressed, fl->nslots, QUIET_MS / 1000, late);
  if (v.grants[0] + v.grants[1] < MIN_GRANTS && ++fail)
    fc_appendf(v.why, sizeof v.why, " (3) only %d grants;",
               v.grants[0] + v.grants[1]);
  if (nz.faults[FC_KILL] == 0 && ++fail)
    fc_appendf(v.why, sizeof v.why, " no worker was killed;");
  if (nz.long_in[W_CALL] == 0 && ++fail)
    fc_appendf(v.why, sizeof v.why, " no worker was paused past its session "
               "timeout inside a call;");
  if (nz.long_in[W_HOLD] == 0 && ++fail)
    fc_appendf(v.why, sizeof v.why, " no holder was paused past its session "
               "timeout;");
  if (nz.died > 0 && ++fail)
    fc_appendf(v.why, sizeof v.why, " %d workers failed;", nz.died);
  if (nz.stuck > 0 && ++fail)
    fc_appendf(v.why, sizeof v.why, " %d workers stuck after the stop;",
               nz.stuck);
  if (nz.harness_failures > 0 && ++fail)
    fc_appendf(v.why, sizeof v.why, " %d harness verbs failed;",
               nz.harness_failures);
  if (fc_load(&elog->n) >= EV_MAX && ++fail)
    fc_appendf(v.why, sizeof v.why, " the log overflowed;");
  if (fail) dump_log();
  fflush(stdout);
  free(nodes);
  free(by_name);
  nodes = NULL;
  by_name = NULL;
  munmap(elog, sizeof *elog);
  munmap(fl, sizeof *fl);
  ck_assert_msg(!fail, "%s", v.why);
}
END_TEST

Suite *multilock_faults_suite(void) {
  ml_seconds = fc_env_int("ZKL_MULTILOCK_FAULT_SECONDS", 28);
  ml_seed = fc_seed("ZKL_MULTILOCK_FAULT_SEED");
  Suite *su = suite_create("multilock-faults");
  TCase *tc = tcase_create("multilock-all-or-none");
  tcase_set_timeout(tc, ml_seconds + 180);
  tcase_add_test(tc, multilock_under_faults);
  suite_add_tcase(su, tc);
  return su;
}
