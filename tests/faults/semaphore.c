/* tests/faults/semaphore.c - the counting semaphore (zkl/semaphore.h) under
 * a seeded randomized fault schedule on the harness's 3-node ensemble
 * (ZKL_TEST_ENSEMBLE=1 tests/with-zookeeper; ZKL_FAULTS=semaphore).
 *
 * The layout (zkl_sem_opts_t.format) is drawn from the seed: an even seed
 * runs Curator's (the gate <path>/locks, the leases under <path>/leases),
 * an odd one kazoo's (the gate <path>-__lock__, the leases the children of
 * <path>, whose data is MAX in ASCII); ZKL_SEM_FAULT_FORMAT=curator|kazoo
 * forces one.  Below, LEASES is the leases' parent and GATE the gate of
 * the run's layout.
 *
 * MAX = 3 leases.  5 worker processes, each with its own 2 s session
 * reaching the ensemble through three proxies of its own
 * (tests/integration/proxy.c), loop: zkl_sem_acquire(qty 1 or 2, drawn
 * from the seed, with a deadline of 0.2..3 s) -> hold 20..150 ms ->
 * zkl_sem_lease_health() on every lease -> zkl_sem_release().  Each lease
 * node's data names its worker ("w<who>").  Spare processes take a killed
 * worker's slot as a new incarnation (a new `who`).  Every 0.5..2.5 s the
 * schedule (seeded from fc_seed()) draws one fault, as in counter.c: pause
 * a worker (SIGSTOP 0.3..5 s, both sides of the session timeout), SIGKILL
 * a worker (a spare takes over), cut a worker's connection (its proxies
 * blackholed 0.5..5 s), cut it right after its next request of one kind is
 * forwarded (the lease multi most often, else a delete or a create: the
 * server applies it, the answer is lost), or kill, pause or restart one
 * ZooKeeper server (one at a time: the quorum stays).  The first faults
 * are fixed: a pause of 2.25..2.5 session timeouts of a worker inside
 * zkl_sem_acquire() (queued at the gate, or waiting for room: the earlier
 * bug's case, a waiter paused past its session timeout that then got
 * lock() == 0 on a lost session), a cut right after a lease multi, a kill,
 * a cut, a server restart.
 *
 * The judge is the servers' own history (their transaction logs merged
 * by zxid, fc_history_read(); a zxid missing in the span is reported as an
 * incomplete history and fails the run, but is not called a violation),
 * plus the workers' log.  What is a violation, and what is allowed:
 *
 * (1) At most MAX leases at once.  Replaying the history, a lease node
 *     (a child of LEASES) is alive from its create until its
 *     delete or the closeSession of its ephemeral owner (an expiry is a
 *     closeSession too).  After every transaction (a multi as a whole) at
 *     most MAX are alive.  A lease whose holder was killed, paused or cut
 *     off still counts while its session lives: from the ensemble's view
 *     it is held, and it is the ensemble that grants.  More than MAX alive
 *     at one zxid is a violation whatever the clients said.
 * (2) No phantom grant.  Every lease of an acquire that returned 0 is a
 *     node in the history that (a) its worker's session at the return
 *     owns (ephemeralOwner == zkl_session_id() then), (b) carries its
 *     worker's data, (c) has the czxid the lease's token says, (d) was
 *     created before the return (the leader's stamp, same machine's
 *     clock, ms) and (e) was not deleted nor its session closed before
 *     the return (stamp strictly earlier in ms).  A 0 on a lease whose
 *     session the ensemble had already closed is the earlier bug.
 *     Allowed: the node going away after the return (a pause or a cut
 *     while holding: zkl_sem_lease_health() is how the holder learns,
 *     and the ensemble no longer counts it, so (1) holds).
 * (3) Nothing left: once the faults are undone and the liveness phase is
 *     over, the workers stop acquiring but keep their sessions open (so
 *     that a close does not hide a leftover); within 15 s (dead sessions
 *     expire, janitors delete the nodes of lost answers) LEASES and GATE
 *     have no children (in kazoo's layout <path> itself stays: it is
 *     PERSISTENT, with MAX in its data, as kazoo makes it).
 * (4) Liveness: after the last fault every slot's incarnation acquires
 *     again (within 20 s), and all grants together number at least 100.
 * (5) Only documented codes: acquire 0, ZKL_ETIMEDOUT, ZKL_ESUSPENDED,
 *     ZKL_ELOST (ZKL_EBUSY needs timeout 0, ZKL_ECANCELED a cancel,
 *     ZKL_EINVAL a bad call: none here); release 0, ZKL_ELOST,
 *     ZKL_ESUSPENDED; lease_health 0, ZKL_ESUSPENDED, ZKL_ELOST.
 *     Allowed and counted: every one of these; lease_health() 0 while the
 *     node was already gone on the server is counted, not failed (it is
 *     documented as the session's state as the client knows it, no
 *     request).
 * (6) The gate write.  Every transaction that makes leases is a multi
 *     whose op 0 is a setData of a gate node (a child of GATE) made by
 *     the multi's own session (an ephemeral, so the leases' owner), of the
 *     same worker (data "w<who>", the lease's), not deleted nor its session
 *     closed before that transaction, and written with its own data again;
 *     the other ops are the leases' creates.  The token every lease of a
 *     grant carries is that transaction's zxid (the gate node's mzxid
 *     after the write).  Gate nodes are EPHEMERAL with the layout's name
 *     (`_c_<uuid>-lock-<seq>`, or `_c_<uuid>-__lock__<seq>`, which kazoo's
 *     Lock counts).  A gate node is written nowhere else but in a release
 *     mark (a multi writing it and deleting it: Curator's layout only;
 *     kazoo's gate nodes carry no mark).  Not checkable from the history:
 *     that the token came from the write's answer rather than from a read
 *     of the lease (the same number either way); lease multis that failed
 *     (say on a gate node gone): a failed multi is logged as error
 *     records only, with no path, and fc_history_read() drops it.
 * (7) kazoo's layout: <path> is made once, PERSISTENT (not a container,
 *     not ephemeral), with data "3" (MAX in ASCII), never written nor
 *     deleted, and it is still there at the end with that data.
 *
 * ZKL_SEM_FAULT_SEED replays a run (it fixes the layout, the faults' kinds,
 * delays and durations and the workers' draws; which worker a fault hits
 * also depends on what they are doing then; the replay line printed names
 * the layout too); ZKL_SEM_FAULT_SECONDS sets the faulted span (default
 * 30).  A failed run writes its log (the workers' events, then the lease
 * and gate nodes of the servers' history) to semaphore-SEED.log and
 * prints the fault trace (both always with ZKL_SEM_FAULT_TRACE set).
 *
 * The fault schedule and the worker's proxies follow counter.c's (they
 * are tied to each file's fleet and log). */
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
#define NSLOTS 5
#define MAX 3
#define MAXSPARES 32
#define EV_MAX 200000
#define MAXTRACE 1024
#define STOP_MS 30000
#define MAX_PAUSED 2
#define MAXNODES 100000
#define OP_DELETE 2
#define OP_MULTI 14
#define OP_CREATE2 15

static uint64_t sf_seed;
static int sf_seconds;
static int sf_format;        /* ZKL_SEM_CURATOR, ZKL_SEM_KAZOO; -1: bad */
static const char *sf_fmt_env; /* ZKL_SEM_FAULT_FORMAT, if set */

static const char *fmt_name(void) {
  return sf_format == ZKL_SEM_KAZOO ? "kazoo" : "curator";
}

static const char *fmt_long(void) {
  return sf_format == ZKL_SEM_KAZOO ? "kazoo's layout" : "Curator's layout";
}

/* ==== the workers' log (shared memory) ====================================*/

enum {
  E_ACQ = 1, /* an acquire is called: qty, value = deadline, sid          */
  E_ACQ_RET, /* its answer: rc, sid then, the leases (names, tokens)      */
  E_HEALTH,  /* lease_health of lease `qty` (index): rc                   */
  E_REL_RET, /* release: rc                                               */
  E_PAUSE,
  E_RESUME,
  E_KILLED,
  E_TYPES
};
static const char *ev_names[E_TYPES] = {"?",      "ACQ",    "ACQ_RET",
                                        "HEALTH", "REL",    "PAUSE",
                                        "RESUME", "KILLED"};

struct ev {
  int type; /* 0 while being written */
  int who, rc, qty;
  int64_t value;
  uint64_t sid, token[2];
  char name[2][64];
  int64_t t_us, t_real_us;
};

struct evlog {
  int n;
  struct ev e[EV_MAX];
};

static struct evlog *elog;

static int64_t real_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static struct ev *ev_begin(void) {
  int k = __atomic_fetch_add(&elog->n, 1, __ATOMIC_SEQ_CST);
  if (k >= EV_MAX) return NULL;
  struct ev *e = &elog->e[k];
  e->t_us = fc_now_us();
  e->t_real_us = real_us();
  return e;
}

static void ev_add(int type, int who, int rc, int qty, int64_t value,
                   uint64_t sid) {
  struct ev *e = ev_begin();
  if (e == NULL) return;
  e->who = who;
  e->rc = rc;
  e->qty = qty;
  e->value = value;
  e->sid = sid;
  __atomic_store_n(&e->type, type, __ATOMIC_SEQ_CST);
}

static int ev_count(void) {
  int n = fc_load(&elog->n);
  return n < EV_MAX ? n : EV_MAX;
}

/* ==== the fleet (shared with the workers) =================================*/

enum { W_IDLE = FC_W_IDLE, W_CALL = FC_W_CALL, W_HOLD = FC_W_HOLD };

struct fslot {
  struct fc_slot fc; /* its state and fault controls */
  int grants;        /* atomic: acquires that returned 0 */
};

struct fleet {
  int stop, idle; /* atomic: idle: acquire no more, keep the session */
  uint64_t seed;
  char path[160];
  struct fslot slot[NSLOTS];
  int nspares, used;
  struct fc_spare spare[MAXSPARES];
};

static struct fleet *fl;

/* ---- the worker processes ------------------------------------------------*/

static zkl_sem_t *sem_of(zkl_session_t *s, const char *data) {
  zkl_sem_opts_t o;
  zkl_sem_opts_init(&o);
  o.max = MAX;
  o.format = sf_format;
  o.data = data;
  o.data_len = strlen(data);
  zkl_sem_t *m = NULL;
  return zkl_sem_create(&m, s, fl->path, &o) == 0 ? m : NULL;
}

static int sem_body(struct fc_worker *w) {
  struct fslot *me = &fl->slot[w->slot];
  uint64_t r = it_mix64(fl->seed ^ ((uint64_t)w->who << 24) ^ 0x5e4a) | 1;
  zkl_session_t *s = NULL;
  zkl_sem_t *m = NULL;
  char data[16];
  snprintf(data, sizeof data, "w%d", w->who);
  while (!fc_stopping(w)) {
    if (fc_load(&fl->idle)) { /* the session stays open */
      it_sleep_ms(5);
      continue;
    }
    if (s == NULL) {
      s = fc_session(w->hosts, SESSION_MS);
      if (s == NULL || (m = sem_of(s, data)) == NULL) {
        zkl_session_close(s);
        s = NULL;
        it_sleep_ms(100);
        continue;
      }
    }
    uint64_t d = fc_xorshift(&r);
    unsigned qty = d % 3 == 0 ? 2 : 1;
    int64_t timeout = 200 + (int64_t)((d >> 8) % 2801);
    int hold = 20 + (int)((d >> 24) % 131);
    zkl_lease_t leases[2];
    memset(leases, 0, sizeof leases);
    fc_store(&me->fc.state, W_CALL);
    ev_add(E_ACQ, w->who, 0, (int)qty, timeout, (uint64_t)zkl_session_id(s));
    int rc = zkl_sem_acquire(m, qty, timeout, leases);
    struct ev *e = ev_begin();
    if (e != NULL) {
      e->who = w->who;
      e->rc = rc;
      e->qty = (int)qty;
      e->value = timeout;
      e->sid = (uint64_t)zkl_session_id(s);
      for (unsigned i = 0; rc == 0 && i < qty; i++) {
        e->token[i] = leases[i].token;
        snprintf(e->name[i], sizeof e->name[i], "%s", leases[i].name);
      }
      __atomic_store_n(&e->type, E_ACQ_RET, __ATOMIC_SEQ_CST);
    }
    if (rc != 0 && rc != ZKL_ETIMEDOUT && rc != ZKL_ESUSPENDED)
      fprintf(stderr, "semaphore: w%d: acquire: %s (%s)\n", w->who,
              zkl_err_name(rc), zkl_last_error());
    if (rc == 0) {
      __atomic_add_fetch(&me->grants, 1, __ATOMIC_SEQ_CST);
      fc_store(&me->fc.state, W_HOLD);
      it_sleep_ms(hold);
      for (unsigned i = 0; i < qty; i++)
        ev_add(E_HEALTH, w->who, zkl_sem_lease_health(m, &leases[i]), (int)i,
               0, (uint64_t)zkl_session_id(s));
      fc_store(&me->fc.state, W_CALL);
      int rr = zkl_sem_release(m, leases, qty);
      ev_add(E_REL_RET, w->who, rr, (int)qty, 0, (uint64_t)zkl_session_id(s));
      if (rr != 0)
        fprintf(stderr, "semaphore: w%d: release: %s (%s)\n", w->who,
                zkl_err_name(rr), zkl_last_error());
    }
    fc_store(&me->fc.state, W_IDLE);
    if (rc == ZKL_ELOST) { /* a new session, as an application would */
      zkl_sem_destroy(m);
      zkl_session_close(s);
      m = NULL;
      s = NULL;
    } else if (rc != 0 && rc != ZKL_ETIMEDOUT && rc != ZKL_ESUSPENDED) {
      it_sleep_ms(20);
    }
  }
  zkl_sem_destroy(m);
  zkl_session_close(s);
  return 0;
}

static int worker_run(struct fc_worker *w) {
  fc_proxies_start(w, &fl->slot[w->slot].fc);
  int rc = sem_body(w);
  fc_proxies_stop(w);
  return rc;
}

static int spare_run(struct fc_worker *w, int k) {
  if (!fc_spare_wait(w, &fl->spare[k])) return 0;
  return worker_run(w);
}

static pid_t spawn(int slot, int who, int spare) {
  pid_t pid = fc_fork();
  if (pid > 0) return pid;
  static struct fc_worker w;
  w = (struct fc_worker){
      .slot = slot, .who = who, .parent = getppid(), .stop = &fl->stop};
  _exit(spare < 0 ? worker_run(&w) : spare_run(&w, spare));
}

/* ==== the fault schedule (the test process; fc_tick()) ===================*/

static const fc_fault_t forced[] = {FC_PAUSE, FC_CUT_OP, FC_KILL, FC_CUT,
                                    FC_RESTART_SERVER};
static const int cut_ops[] = {OP_MULTI, OP_MULTI, OP_DELETE, OP_CREATE2};

static struct fc_sched nm;

static uint64_t rnd(void) { return fc_rnd(&nm); }

static void mark(int what, int who, int state, int dur) {
  if (what == FC_PAUSE) ev_add(E_PAUSE, who, 0, state, dur, 0);
  else if (what == FC_KILL) ev_add(E_KILLED, who, 0, state, 0, 0);
  else ev_add(E_RESUME, who, 0, 0, 0, 0);
}

/* Always the same four draws, so the stream does not depend on the
 * workers; the forced faults first. */
static void arm(int64_t now) {
  uint64_t k = rnd(), pick = rnd(), d = rnd(), o = rnd();
  int isforced = nm.forced_i < (int)(sizeof forced / sizeof forced[0]);
  fc_arm(&nm, now, isforced ? forced[nm.forced_i++] : (fc_fault_t)(k % FC_KINDS),
         isforced, d);
  nm.a_pick = pick;
  nm.a_op = isforced ? OP_MULTI
                     : cut_ops[o % (sizeof cut_ops / sizeof cut_ops[0])];
  if (isforced && nm.a_kind == FC_PAUSE) /* a waiter, past its session */
    nm.a_state = W_CALL;
}

static void schedule_tick(void) { fc_tick(&nm, arm); }

static void undo_all(void) {
  fc_undo_all(&nm);
  it_sleep_ms(50); /* the workers' control threads disarm their cuts */
}

static void stop_fleet(void) { fc_stop_fleet(&nm, &fl->stop, STOP_MS, NULL); }

static void print_trace(void) {
  char what[96];
  snprintf(what, sizeof what, "the semaphore in %s (ZKL_SEM_FAULT_FORMAT=%s)",
           fmt_long(), fmt_name());
  fc_print_trace(&nm, what, sf_seed, ev_count() > 0 ? elog->e[0].t_us : 0,
                 NULL);
}

/* The run's layout: the leases' parent and the gate (no slash after). */
static void leases_dir(char *b, size_t len) {
  snprintf(b, len, sf_format == ZKL_SEM_KAZOO ? "%s" : "%s/leases", fl->path);
}

static void gate_dir(char *b, size_t len) {
  snprintf(b, len, sf_format == ZKL_SEM_KAZOO ? "%s-__lock__" : "%s/locks",
           fl->path);
}

/* ==== the servers' history of the lease nodes =============================*/

struct lnode {
  char name[64];
  int who;
  int64_t sid, ct, dt; /* leader ms; dt 0: alive at the end */
  uint64_t cz, dz;
  int closed;
  uint64_t wz;  /* the zxid of the gate write in the multi that made it
                   (0: none that checks out) */
  char gate[64]; /* the gate node that multi wrote */
};

static struct lnode *nodes;
static size_t nn;

static struct lnode *node_named(const char *name) {
  for (size_t i = nn; i-- > 0;)
    if (strcmp(nodes[i].name, name) == 0) return &nodes[i];
  return NULL;
}

/* The gate nodes in the servers' history. */
struct gnode {
  char name[64];
  int who, eph;
  int64_t sid; /* its ephemeral owner (the creating session), 0: none */
  int64_t ct, dt; /* leader ms */
  uint64_t cz, dz;
  int closed, writes;
  char data[32]; /* as made */
  int dlen;
};

static struct gnode *gnodes;
static size_t ng;

static struct gnode *gnode_named(const char *name) {
  for (size_t i = ng; i-- > 0;)
    if (strcmp(gnodes[i].name, name) == 0) return &gnodes[i];
  return NULL;
}

/* "w<who>" in a node's data: who, else -1. */
static int data_who(const char *data, int dlen) {
  if (data == NULL || dlen < 2 || dlen > 15 || data[0] != 'w') return -1;
  char d[16];
  snprintf(d, sizeof d, "%.*s", dlen, data);
  return atoi(d + 1);
}

/* The layout's gate node name: `_c_<36>-` then `lock-` (Curator's) or
 * `__lock__` (kazoo's: its Lock counts `__lock__` and 10 digits at the
 * end), then 10 digits. */
static int gate_name_ok(const char *name) {
  const char *mk = sf_format == ZKL_SEM_KAZOO ? "__lock__" : "lock-";
  size_t ml = strlen(mk), n = strlen(name);
  if (n != 40 + ml + 10 || strncmp(name, "_c_", 3) != 0 || name[39] != '-' ||
      strncmp(name + 40, mk, ml) != 0)
    return 0;
  for (size_t i = 40 + ml; i < n; i++)
    if (name[i] < '0' || name[i] > '9') return 0;
  return 1;
}

static void dump_log(void) {
  char file[64];
  snprintf(file, sizeof file, "semaphore-%" PRIu64 ".log", sf_seed);
  FILE *f = fopen(file, "w");
  if (f == NULL) return;
  int n = ev_count();
  int64_t t0 = n > 0 ? elog->e[0].t_us : 0;
  for (int k = 0; k < n; k++) {
    const struct ev *e = &elog->e[k];
    fprintf(f, "%6d %9.3f real %" PRId64 ".%06" PRId64 " w%-3d %-8s %-14s "
            "q%d %" PRId64 " sid 0x%" PRIx64, k, (e->t_us - t0) / 1e6,
            e->t_real_us / 1000000, e->t_real_us % 1000000, e->who,
            e->type > 0 && e->type < E_TYPES ? ev_names[e->type] : "?",
            e->type == E_ACQ_RET || e->type == E_HEALTH ||
                    e->type == E_REL_RET
                ? zkl_err_name(e->rc) : "",
            e->qty, e->value, e->sid);
    if (e->type == E_ACQ_RET && e->rc == 0)
      for (int i = 0; i < e->qty && i < 2; i++)
        fprintf(f, " %s/0x%" PRIx64, e->name[i], e->token[i]);
    fputc('\n', f);
  }
  fprintf(f, "\nthe lease nodes in the servers' history (leader ms):\n");
  for (size_t i = 0; i < nn; i++) {
    const struct lnode *b = &nodes[i];
    fprintf(f, "%-40s w%-3d session 0x%" PRIx64 " made 0x%" PRIx64 " at %"
            PRId64 ".%03d, %s 0x%" PRIx64 " at %" PRId64 ".%03d\n", b->name,
            b->who, (uint64_t)b->sid, b->cz, b->ct / 1000, (int)(b->ct % 1000),
            b->dz == 0 ? "never deleted" : b->closed ? "closed" : "deleted",
            b->dz, b->dt / 1000, (int)(b->dt % 1000));
    fprintf(f, "    gate write 0x%" PRIx64 " of %s\n", b->wz,
            b->gate[0] != '\0' ? b->gate : "(none)");
  }
  fprintf(f, "\nthe gate nodes in the servers' history:\n");
  for (size_t i = 0; i < ng; i++) {
    const struct gnode *g = &gnodes[i];
    fprintf(f, "%-60s w%-3d session 0x%" PRIx64 " made 0x%" PRIx64 " at %"
            PRId64 ".%03d, %s 0x%" PRIx64 " at %" PRId64 ".%03d, written %d\n",
            g->name, g->who, (uint64_t)g->sid, g->cz, g->ct / 1000,
            (int)(g->ct % 1000),
            g->dz == 0 ? "never deleted" : g->closed ? "closed" : "deleted",
            g->dz, g->dt / 1000, (int)(g->dt % 1000), g->writes);
  }
  fclose(f);
  printf("the log: %s\n", file);
}

struct sverdict {
  int bad, acquires, acq_codes[5], releases, rel_codes[5], healths,
      health_codes[5];
  int grants, leases, max_alive, health0_gone, gate_nodes;
  int lease_multis, gate_writes, marks, path_made; /* (6), (7) */
  char why[4096];
};

static void sbad(struct sverdict *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void sbad(struct sverdict *v, const char *fmt, ...) {
  if (v->bad++ < 4) {
    char b[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    fc_appendf(v->why, sizeof v->why, " %s;", b);
  }
}

/* 0 ok, 1 ETIMEDOUT, 2 ESUSPENDED, 3 ELOST, 4 other */
static int code_class(int rc) {
  return rc == 0 ? 0 : rc == ZKL_ETIMEDOUT ? 1 : rc == ZKL_ESUSPENDED ? 2
         : rc == ZKL_ELOST ? 3 : 4;
}

/* One transaction's changes of gate nodes and leases, judged at its end
 * (6). */
struct txn {
  uint64_t zxid;
  int64_t sid;
  int leases, lease_multi, lease_eph, lease_who, bad_lease_who;
  size_t first_lease; /* its first in nodes[] */
  int sets, set_sub, set_ok, set_who, dels;
  char set_name[64], del_name[64], why[256];
};

static void txn_begin(struct txn *t, const struct fc_txop *x) {
  memset(t, 0, sizeof *t);
  t->zxid = x->zxid;
  t->sid = x->sid;
  t->lease_who = -2;
}

/* A setData of gate node `name` (in transaction t): whether the node the
 * write hits was made by this session, is still there, and gets its own
 * data again. */
static void gate_write(struct txn *t, const struct fc_txop *x,
                       const char *name, int complete) {
  struct gnode *g = gnode_named(name);
  t->sets++;
  t->set_sub = x->sub;
  snprintf(t->set_name, sizeof t->set_name, "%s", name);
  t->set_ok = 0;
  t->set_who = -1;
  if (g == NULL) {
    snprintf(t->why, sizeof t->why, complete ? "a gate node never made"
             : "a gate node not in the history (it has gaps)");
    return;
  }
  g->writes++;
  t->set_who = g->who;
  if (g->dz != 0 && g->dz < x->zxid)
    snprintf(t->why, sizeof t->why, "a gate node %s at 0x%" PRIx64,
             g->closed ? "gone with its session" : "deleted", g->dz);
  else if (!g->eph || g->sid != x->sid)
    snprintf(t->why, sizeof t->why, "a gate node of session 0x%" PRIx64
             " (%s), not of the multi's", (uint64_t)g->sid,
             g->eph ? "ephemeral" : "not ephemeral");
  else if (x->dlen != g->dlen ||
           (x->dlen > 0 && memcmp(x->data, g->data, (size_t)x->dlen) != 0))
    snprintf(t->why, sizeof t->why, "new data (%d bytes) on a gate node made "
             "with %d", x->dlen, g->dlen);
  else
    t->set_ok = 1;
}

/* The end of transaction t: (6). */
static void txn_end(struct sverdict *v, struct txn *t) {
  if (t->leases > 0) {
    v->lease_multis++;
    const char *why = NULL;
    char b[400];
    if (!t->lease_multi)
      why = "not a multi";
    else if (t->sets == 0)
      why = "no setData of a gate node in it";
    else if (t->sets > 1)
      why = "more than one gate node written";
    else if (t->set_sub != 0)
      why = "the gate write is not its op 0";
    else if (!t->set_ok) {
      snprintf(b, sizeof b, "it writes %s: %s", t->set_name, t->why);
      why = b;
    } else if (!t->lease_eph)
      why = "a lease in it is not an ephemeral";
    else if (t->bad_lease_who || t->set_who != t->lease_who) {
      snprintf(b, sizeof b, "it writes %s, w%d's gate node, and makes "
               "leases of w%d", t->set_name, t->set_who, t->lease_who);
      why = b;
    } else if (t->dels > 0)
      why = "it deletes a gate node too";
    if (why != NULL) {
      char list[400] = "";
      for (size_t j = t->first_lease; j < nn; j++)
        fc_appendf(list, sizeof list, " %s", nodes[j].name);
      sbad(v, "(6) the lease multi 0x%" PRIx64 " (session 0x%" PRIx64
           ", %d leases:%s): %s", t->zxid, (uint64_t)t->sid, t->leases,
           list, why);
      return;
    }
    v->gate_writes++;
    for (size_t j = t->first_lease; j < nn; j++) {
      nodes[j].wz = t->zxid;
      snprintf(nodes[j].gate, sizeof nodes[j].gate, "%s", t->set_name);
    }
  } else if (t->sets > 0) {
    /* a release mark: a multi writing a gate node and deleting it */
    int mark = t->sets == 1 && t->dels == 1 &&
               strcmp(t->set_name, t->del_name) == 0;
    if (mark && sf_format != ZKL_SEM_KAZOO) {
      v->marks++;
      return;
    }
    sbad(v, "(6) transaction 0x%" PRIx64 " (session 0x%" PRIx64 ") writes "
         "gate node %s and makes no lease%s", t->zxid, (uint64_t)t->sid,
         t->set_name, mark ? ": a release mark, in kazoo's layout" : "");
  }
}

/* Invariants (1), (6) and (7), and the node tables, from the merged
 * history. */
static void replay(struct sverdict *v, const struct fc_txhist *h,
                   int complete) {
  char leases[200], locks[200];
  leases_dir(leases, sizeof leases - 1);
  gate_dir(locks, sizeof locks - 1);
  strcat(leases, "/");
  strcat(locks, "/");
  size_t ll = strlen(leases), lk = strlen(locks);
  int kazoo = sf_format == ZKL_SEM_KAZOO;
  int alive = 0, overs = 0;
  struct txn t;
  memset(&t, 0, sizeof t);
  for (size_t i = 0; i < h->n; i++) {
    const struct fc_txop *x = &h->op[i];
    if (i == 0 || h->op[i - 1].zxid != x->zxid) txn_begin(&t, x);
    if (x->kind == FC_T_CLOSE) {
      for (size_t j = 0; j < nn; j++)
        if (nodes[j].dz == 0 && nodes[j].sid == x->sid && x->sid != 0) {
          nodes[j].dz = x->zxid;
          nodes[j].dt = x->time_ms;
          nodes[j].closed = 1;
          alive--;
        }
      for (size_t j = 0; j < ng; j++)
        if (gnodes[j].dz == 0 && gnodes[j].sid == x->sid && x->sid != 0) {
          gnodes[j].dz = x->zxid;
          gnodes[j].dt = x->time_ms;
          gnodes[j].closed = 1;
        }
    } else if (x->path != NULL && strncmp(x->path, locks, lk) == 0 &&
               strchr(x->path + lk, '/') == NULL) {
      const char *name = x->path + lk;
      if (x->kind == FC_T_CREATE) {
        v->gate_nodes++;
        ck_assert_uint_lt(ng, MAXNODES);
        struct gnode *g = &gnodes[ng++];
        memset(g, 0, sizeof *g);
        snprintf(g->name, sizeof g->name, "%s", name);
        g->eph = x->eph;
        g->sid = x->eph ? x->sid : 0;
        g->cz = x->zxid;
        g->ct = x->time_ms;
        g->who = data_who(x->data, x->dlen);
        g->dlen = x->dlen < (int)sizeof g->data ? x->dlen : -1;
        if (g->dlen > 0) memcpy(g->data, x->data, (size_t)g->dlen);
        if (!gate_name_ok(name) || !x->eph)
          sbad(v, "(6) gate node %s (zxid 0x%" PRIx64 ", session 0x%" PRIx64
               "): %s", x->path, x->zxid, (uint64_t)x->sid,
               x->eph ? "not a gate node name of this layout"
                      : "not an ephemeral");
      } else if (x->kind == FC_T_DELETE) {
        struct gnode *g = gnode_named(name);
        if (g != NULL && g->dz == 0) {
          g->dz = x->zxid;
          g->dt = x->time_ms;
        }
        t.dels++;
        snprintf(t.del_name, sizeof t.del_name, "%s", name);
      } else if (x->kind == FC_T_SET) {
        gate_write(&t, x, name, complete);
      }
    } else if (x->path != NULL && strncmp(x->path, leases, ll) == 0 &&
               strchr(x->path + ll, '/') == NULL) {
      const char *name = x->path + ll;
      if (x->kind == FC_T_CREATE) {
        ck_assert_uint_lt(nn, MAXNODES);
        struct lnode *b = &nodes[nn++];
        memset(b, 0, sizeof *b);
        snprintf(b->name, sizeof b->name, "%s", name);
        b->who = data_who(x->data, x->dlen);
        b->sid = x->eph ? x->sid : 0;
        b->cz = x->zxid;
        b->ct = x->time_ms;
        alive++;
        v->leases++;
        if (t.leases++ == 0) {
          t.first_lease = nn - 1;
          t.lease_multi = x->multi;
          t.lease_eph = x->eph;
          t.lease_who = b->who;
        }
        t.lease_multi &= x->multi;
        t.lease_eph &= x->eph;
        if (b->who != t.lease_who) t.bad_lease_who = 1;
      } else if (x->kind == FC_T_DELETE) {
        struct lnode *b = node_named(name);
        if (b != NULL && b->dz == 0) {
          b->dz = x->zxid;
          b->dt = x->time_ms;
          alive--;
        }
      }
    } else if (kazoo && x->path != NULL && strcmp(x->path, fl->path) == 0) {
      /* (7) <path> itself: made once, PERSISTENT, data MAX in ASCII */
      char want[16];
      int wl = snprintf(want, sizeof want, "%d", MAX);
      if (x->kind == FC_T_CREATE) {
        if (v->path_made++ > 0)
          sbad(v, "(7) %s made again (zxid 0x%" PRIx64 ", session 0x%" PRIx64
               ")", x->path, x->zxid, (uint64_t)x->sid);
        if (x->eph || (x->type != 1 && x->type != 15))
          sbad(v, "(7) %s made at 0x%" PRIx64 " as %s, not PERSISTENT",
               x->path, x->zxid,
               x->eph ? "an ephemeral" : x->type == 19 ? "a container"
               : x->type == 21 ? "a TTL node" : "something else");
        if (x->dlen != wl || memcmp(x->data, want, (size_t)wl) != 0)
          sbad(v, "(7) %s made at 0x%" PRIx64 " with data \"%.*s\", not "
               "\"%s\"", x->path, x->zxid, x->dlen > 32 ? 32 : x->dlen,
               x->data != NULL ? x->data : "", want);
      } else {
        sbad(v, "(7) %s %s at 0x%" PRIx64 " (session 0x%" PRIx64 ")",
             x->path, x->kind == FC_T_DELETE ? "deleted" : "written",
             x->zxid, (uint64_t)x->sid);
      }
    }
    /* after the whole transaction (a multi's last change) */
    if (i + 1 < h->n && h->op[i + 1].zxid == x->zxid) continue;
    txn_end(v, &t);
    if (alive > v->max_alive) v->max_alive = alive;
    if (alive > MAX && overs++ == 0) {
      char list[1024] = "";
      for (size_t j = 0; j < nn; j++)
        if (nodes[j].dz == 0)
          fc_appendf(list, sizeof list, " %s(w%d, session 0x%" PRIx64 ")",
                     nodes[j].name, nodes[j].who, (uint64_t)nodes[j].sid);
      sbad(v, "(1) %d leases alive after zxid 0x%" PRIx64 ", more than %d:%s",
           alive, x->zxid, MAX, list);
    }
  }
  if (overs > 1) sbad(v, "(1) %d transactions in all left more than %d "
                      "leases alive", overs, MAX);
  if (kazoo && v->path_made == 0 && v->leases > 0 && complete)
    sbad(v, "(7) %s never made, yet %d leases under it", fl->path, v->leases);
}

/* Invariants (2) and (5) from the workers' log. */
static void judge_log(struct sverdict *v, int complete) {
  int n = ev_count();
  int64_t t0 = n > 0 ? elog->e[0].t_us : 0;
  static struct {
    int grant_k;
  } last[FC_MAXWHO];
  for (int w = 0; w < FC_MAXWHO; w++) last[w].grant_k = -1;
  for (int k = 0; k < n; k++) {
    const struct ev *e = &elog->e[k];
    if (e->who < 0 || e->who >= FC_MAXWHO) continue;
    double at = (e->t_us - t0) / 1e6;
    int64_t ms = e->t_real_us / 1000;
    switch (e->type) {
      case E_ACQ_RET:
        v->acquires++;
        v->acq_codes[code_class(e->rc)]++;
        if (code_class(e->rc) == 4)
          sbad(v, "(5) w%d's acquire returned %s at +%.3f s", e->who,
               zkl_err_name(e->rc), at);
        if (e->rc != 0) break;
        v->grants++;
        last[e->who].grant_k = k;
        for (int i = 0; i < e->qty && i < 2; i++) {
          const struct lnode *b = node_named(e->name[i]);
          if (b == NULL) {
            if (complete)
              sbad(v, "(2) w%d got lease %s (token 0x%" PRIx64 ") at +%.3f "
                   "s: no such node in the servers' history", e->who,
                   e->name[i], e->token[i], at);
            continue;
          }
          if ((uint64_t)b->sid != e->sid || b->who != e->who)
            sbad(v, "(2) w%d got lease %s at +%.3f s with session 0x%" PRIx64
                 ", but the node is w%d's of session 0x%" PRIx64, e->who,
                 e->name[i], at, e->sid, b->who, (uint64_t)b->sid);
          if (b->cz != e->token[i])
            sbad(v, "(2) w%d's lease %s has token 0x%" PRIx64 ", its node's "
                 "czxid is 0x%" PRIx64, e->who, e->name[i], e->token[i],
                 b->cz);
          /* (6) the token is the zxid of the multi's gate write (a multi
           * without one is told by the replay) */
          if (b->wz != 0 && b->wz != e->token[i])
            sbad(v, "(6) w%d's lease %s has token 0x%" PRIx64 ", the gate "
                 "write (of %s) in the multi that made it is zxid 0x%" PRIx64,
                 e->who, e->name[i], e->token[i], b->gate, b->wz);
          if (i == 1 && e->token[1] != e->token[0])
            sbad(v, "(6) w%d's grant at +%.3f s: its two leases have tokens "
                 "0x%" PRIx64 " and 0x%" PRIx64, e->who, at, e->token[0],
                 e->token[1]);
          if (b->ct > ms)
            sbad(v, "(2) w%d got lease %s at %" PRId64 " ms, its node was "
                 "made later (%" PRId64 ")", e->who, e->name[i], ms, b->ct);
          if (b->dz != 0 && b->dt < ms)
            sbad(v, "(2) phantom grant: w%d got lease %s (session 0x%" PRIx64
                 ") at +%.3f s (%" PRId64 " ms), but the node was %s at %"
                 PRId64 " ms (zxid 0x%" PRIx64 ", %" PRId64 " ms before)",
                 e->who, e->name[i], e->sid, at, ms,
                 b->closed ? "gone with its session" : "deleted", b->dt,
                 b->dz, ms - b->dt);
        }
        break;
      case E_HEALTH:
        v->healths++;
        v->health_codes[code_class(e->rc)]++;
        if (e->rc != 0 && e->rc != ZKL_ESUSPENDED && e->rc != ZKL_ELOST)
          sbad(v, "(5) w%d's lease_health returned %s at +%.3f s", e->who,
               zkl_err_name(e->rc), at);
        if (e->rc == 0 && last[e->who].grant_k >= 0) {
          const struct ev *g = &elog->e[last[e->who].grant_k];
          const struct lnode *b =
              e->qty < 2 ? node_named(g->name[e->qty]) : NULL;
          if (b != NULL && b->dz != 0 && b->dt < ms) v->health0_gone++;
        }
        break;
      case E_REL_RET:
        v->releases++;
        v->rel_codes[code_class(e->rc)]++;
        if (e->rc != 0 && e->rc != ZKL_ESUSPENDED && e->rc != ZKL_ELOST)
          sbad(v, "(5) w%d's release returned %s at +%.3f s", e->who,
               zkl_err_name(e->rc), at);
        break;
    }
  }
}

START_TEST(semaphore_under_faults) {
  ck_assert_msg(sf_format >= 0, "ZKL_SEM_FAULT_FORMAT=%s: curator or kazoo",
                sf_fmt_env);
  printf("\nSemaphore under faults, %s%s: max %d, %d workers taking 1 or 2 "
         "leases in a loop, %d s of faults, session timeout %d ms\n",
         fmt_long(), sf_fmt_env != NULL ? " (forced)" : " (from the seed)",
         MAX, NSLOTS, sf_seconds, SESSION_MS);
  printf("semaphore seed %" PRIu64 ", %s (replay: ZKL_SEM_FAULT_SEED=%" PRIu64
         " ZKL_SEM_FAULT_FORMAT=%s)\n", sf_seed, fmt_long(), sf_seed,
         fmt_name());
  fflush(stdout);
  int64_t t_start = it_now_ms();
  fl = mmap(NULL, sizeof *fl, PROT_READ | PROT_WRITE,
            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ck_assert(fl != MAP_FAILED);
  memset(fl, 0, sizeof *fl);
  fl->seed = sf_seed;
  fl->nspares = 6 + sf_seconds / 5;
  if (fl->nspares > MAXSPARES) fl->nspares = MAXSPARES;
  elog = mmap(NULL, sizeof *elog, PROT_READ | PROT_WRITE,
              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ck_assert(elog != MAP_FAILED);
  elog->n = 0;
  char root[128];
  it_root(root, sizeof root, "sem-faults");
  snprintf(fl->path, sizeof fl->path, "%s/sem", root);
  fc_sched_init(&nm, "semaphore-faults");
  nm.rng = it_mix64(sf_seed ^ 0x5e5a) | 1;
  fc_sched_fleet(&nm, NSLOTS, fl->spare, &fl->nspares, &fl->used, SESSION_MS,
                 MAX_PAUSED, MAXTRACE);
  for (int s = 0; s < NSLOTS; s++) nm.ctl[s] = &fl->slot[s].fc;
  nm.mark = mark;
  nm.next = it_now_ms() + 1000 + fc_between(rnd(), 0, 1000);
  for (int s = 0; s < NSLOTS; s++) {
    nm.slot[s].who = s;
    nm.slot[s].pid = spawn(s, s, -1);
  }
  for (int k = 0; k < fl->nspares; k++) {
    fl->spare[k].who = NSLOTS + k;
    fl->spare[k].pid = spawn(-1, fl->spare[k].who, k);
  }

  int64_t end = it_now_ms() + (int64_t)sf_seconds * 1000;
  while (it_now_ms() < end) {
    schedule_tick();
    if (ev_count() > EV_MAX / 4 * 3) {
      printf("semaphore: the log is 3/4 full: the schedule ends early\n");
      break;
    }
    it_sleep_ms(5);
  }
  undo_all();
  /* (4) every slot's incarnation acquires again */
  int base[NSLOTS], progressed = 0;
  for (int s = 0; s < NSLOTS; s++) base[s] = fc_load(&fl->slot[s].grants);
  int64_t quiet0 = it_now_ms();
  while (it_now_ms() < quiet0 + 20000) {
    fc_reap_unexpected(&nm);
    progressed = 0;
    for (int s = 0; s < NSLOTS; s++)
      progressed += fc_load(&fl->slot[s].grants) > base[s];
    if (progressed == NSLOTS) break;
    it_sleep_ms(50);
  }
  int64_t quiet_ms = it_now_ms() - quiet0;
  /* (3) nothing left, the workers idle with their sessions open */
  fc_store(&fl->idle, 1);
  int64_t idle_until = it_now_ms() + 10000;
  for (int busy = 1; busy && it_now_ms() < idle_until;) {
    busy = 0;
    for (int s = 0; s < NSLOTS; s++)
      busy |= nm.slot[s].pid > 0 && fc_load(&fl->slot[s].fc.state) != W_IDLE;
    if (busy) it_sleep_ms(10);
  }
  zkl_session_t *s = it_session(); /* every fork is done */
  char p[200];
  leases_dir(p, sizeof p);
  int left_leases = fc_orphans(s, p, 15000);
  gate_dir(p, sizeof p);
  int left_gate = fc_orphans(s, p, 5000);
  /* (7) kazoo's <path> stays, with MAX in its data */
  char path_data[64] = "";
  int path_len = sizeof path_data - 1, path_rc = ZOK;
  if (sf_format == ZKL_SEM_KAZOO)
    path_rc = zoo_get(zkl_session_zhandle(s), fl->path, 0, path_data,
                      &path_len, NULL);
  if (path_len < 0) path_len = 0;
  path_data[path_len] = '\0';
  zkl_session_close(s);
  stop_fleet();

  struct sverdict v;
  memset(&v, 0, sizeof v);
  snprintf(v.why, sizeof v.why, "seed %" PRIu64 ", %s (replay: "
           "ZKL_SEM_FAULT_SEED=%" PRIu64 " ZKL_SEM_FAULT_FORMAT=%s "
           "ZKL_SEM_FAULT_SECONDS=%d):", sf_seed, fmt_long(), sf_seed,
           fmt_name(), sf_seconds);
  struct fc_txhist h;
  int gaps = 0;
  fc_history_read(&h, fl->path, &gaps);
  nodes = calloc(MAXNODES, sizeof *nodes);
  ck_assert_ptr_nonnull(nodes);
  nn = 0;
  gnodes = calloc(MAXNODES, sizeof *gnodes);
  ck_assert_ptr_nonnull(gnodes);
  ng = 0;
  replay(&v, &h, gaps == 0);
  judge_log(&v, gaps == 0);
  int files = h.files;
  fc_history_free(&h);
  if (left_leases > 0)
    sbad(&v, "(3) %d lease nodes left at the end", left_leases);
  if (left_gate > 0)
    sbad(&v, "(3) %d gate nodes left at the end", left_gate);
  if (sf_format == ZKL_SEM_KAZOO &&
      (path_rc != ZOK || strcmp(path_data, "3") != 0))
    sbad(&v, "(7) %s at the end: %s, data \"%s\" (want \"%d\")", fl->path,
         zerror(path_rc), path_data, MAX);

  printf("| %6s | %21s | %6s | %18s | %18s | %9s | %5s | %4s |\n", "grants",
         "acquire 0/ETIM/ESUSP/ELOST", "leases", "release 0/ESUSP/ELOST",
         "health 0/ESUSP/ELOST", "max alive", "left", "bad");
  printf("|--------|-----------------------|--------|--------------------|"
         "--------------------|-----------|-------|------|\n");
  char ac[64], rc[64], hc[64];
  snprintf(ac, sizeof ac, "%d/%d/%d/%d", v.acq_codes[0], v.acq_codes[1],
           v.acq_codes[2], v.acq_codes[3]);
  snprintf(rc, sizeof rc, "%d/%d/%d", v.rel_codes[0], v.rel_codes[2],
           v.rel_codes[3]);
  snprintf(hc, sizeof hc, "%d/%d/%d", v.health_codes[0], v.health_codes[2],
           v.health_codes[3]);
  printf("| %6d | %21s | %6d | %18s | %18s | %9d | %2d+%-2d | %4d |\n",
         v.grants, ac, v.leases, rc, hc, v.max_alive, left_leases, left_gate,
         v.bad);
  printf("gate nodes made %d; lease_health 0 on a node already gone %d; "
         "history: %d log files, %d zxids missing; liveness: %d of %d slots "
         "acquired again in %.1f s; wall %.1f s; seed %" PRIu64 "\n",
         v.gate_nodes, v.health0_gone, files, gaps, progressed, NSLOTS,
         quiet_ms / 1e3, (it_now_ms() - t_start) / 1e3, sf_seed);
  printf("gate writes: %d of %d lease multis write the acquirer's own gate "
         "node (op 0), %d release marks; %s\n", v.gate_writes, v.lease_multis,
         v.marks, sf_format == ZKL_SEM_KAZOO
                      ? (v.path_made == 1 ? "<path> made once, PERSISTENT, "
                                            "data \"3\", kept"
                                          : "<path> NOT made once")
                      : "Curator's layout");
  printf("faults: paused %d (%d past the session timeout, %d of them inside "
         "an acquire), killed %d, cut %d, cut after a request %d (%d cuts); "
         "servers killed %d, paused %d, restarted %d\n", nm.faults[FC_PAUSE],
         nm.long_pauses, nm.long_in[W_CALL], nm.faults[FC_KILL],
         nm.faults[FC_CUT], nm.faults[FC_CUT_OP], fc_op_cuts(&nm),
         nm.faults[FC_KILL_SERVER], nm.faults[FC_PAUSE_SERVER],
         nm.faults[FC_RESTART_SERVER]);

  int fail = v.bad;
  if (gaps > 0 && ++fail)
    fc_appendf(v.why, sizeof v.why, " the servers' history has %d zxids "
               "missing (the harness, not the semaphore);", gaps);
  if (progressed < NSLOTS && ++fail)
    fc_appendf(v.why, sizeof v.why, " (4) %d of %d workers never acquired "
               "again after the faults;", NSLOTS - progressed, NSLOTS);
  if (v.grants < 100 && ++fail)
    fc_appendf(v.why, sizeof v.why, " (4) only %d grants;", v.grants);
  if (nm.faults[FC_KILL] == 0 && ++fail)
    fc_appendf(v.why, sizeof v.why, " no worker was killed;");
  if (nm.long_in[W_CALL] == 0 && ++fail)
    fc_appendf(v.why, sizeof v.why, " no worker was paused past its session "
               "timeout inside an acquire;");
  if (nm.died > 0 && ++fail)
    fc_appendf(v.why, sizeof v.why, " %d workers failed;", nm.died);
  if (nm.stuck > 0 && ++fail)
    fc_appendf(v.why, sizeof v.why, " %d workers stuck after the stop;",
               nm.stuck);
  if (nm.harness_failures > 0 && ++fail)
    fc_appendf(v.why, sizeof v.why, " %d harness verbs failed;",
               nm.harness_failures);
  if (fc_load(&elog->n) >= EV_MAX && ++fail)
    fc_appendf(v.why, sizeof v.why, " the log overflowed;");
  if (fail || getenv("ZKL_SEM_FAULT_TRACE") != NULL) print_trace();
  if (fail || getenv("ZKL_SEM_FAULT_TRACE") != NULL) dump_log();
  fflush(stdout);
  free(nodes);
  nodes = NULL;
  free(gnodes);
  gnodes = NULL;
  munmap(elog, sizeof *elog);
  munmap(fl, sizeof *fl);
  ck_assert_msg(!fail, "%s", v.why);
}
END_TEST

Suite *semaphore_faults_suite(void) {
  sf_seconds = fc_env_int("ZKL_SEM_FAULT_SECONDS", 30);
  sf_seed = fc_seed("ZKL_SEM_FAULT_SEED");
  /* the layout: from the seed's parity, unless forced */
  sf_fmt_env = getenv("ZKL_SEM_FAULT_FORMAT");
  if (sf_fmt_env != NULL && sf_fmt_env[0] == '\0') sf_fmt_env = NULL;
  if (sf_fmt_env == NULL)
    sf_format = sf_seed % 2 == 1 ? ZKL_SEM_KAZOO : ZKL_SEM_CURATOR;
  else if (strcmp(sf_fmt_env, "curator") == 0)
    sf_format = ZKL_SEM_CURATOR;
  else if (strcmp(sf_fmt_env, "kazoo") == 0)
    sf_format = ZKL_SEM_KAZOO;
  else
    sf_format = -1; /* the test says so */
  Suite *su = suite_create("semaphore-faults");
  TCase *tc = tcase_create("semaphore-leases");
  tcase_set_timeout(tc, sf_seconds + 150);
  tcase_add_test(tc, semaphore_under_faults);
  suite_add_tcase(su, tc);
  return su;
}
