/* tests/integration/test-async-random.c - a bounded, seeded, randomized
 * test of the asynchronous calls' documented contract.
 *
 * 24 mutexes (8 on each of 3 paths) and 8 read/write locks (one path),
 * spread over two sessions, take random actions: lock/rdlock/wrlock_async
 * with a random timeout, unlock_async, watch_async, cancel, holding() and
 * token() probes, destroy-and-recreate (also from inside completions), and
 * a third session deleting held nodes behind their owners' backs.  The
 * test thread runs a poll() + zkl_session_dispatch() loop over both
 * sessions' fds and acts too; a second thread submits concurrently.  One
 * test-side mutex (g) serializes the test's own bookkeeping: it is held
 * around each submission and around each dispatch, so the model of every
 * object is exact up to what the engine did and has not reported yet.
 *
 * Checked on every return code and every completion:
 *   - each accepted call gets exactly one completion, on the dispatching
 *     thread, never from inside a submitting call; refused calls get none;
 *   - refusals as documented (EBUSY while an object's async call or hold
 *     lasts, EPERM for unlock/watch without an async hold, EBUSY for a
 *     second watch, ...); acquisitions end only with the codes their
 *     timeout allows (ECANCELED only after a cancel or a destroy);
 *   - mutual exclusion per path from the completions (a hold counts from
 *     its grant's completion to its unlock's submission, its deletion by
 *     the third session, or its object's destroy), and fencing tokens that
 *     increase from one exclusive grant to the next;
 *   - a watch ends with 0 before its unlock's completion, with ZKL_ELOST
 *     (and the hold's token) once its node is deleted, with ZKL_ECANCELED
 *     on destroy, and not otherwise;
 *   - completions of a destroyed object come with ZKL_ECANCELED and the
 *     object's value only;
 *   - at the end every call has completed once and no node is left.
 *
 * The seed is printed first (time-based; ZKL_ASYNC_SEED=N replays the same
 * random choices, though not the same thread interleaving).  ZKL_TEST_SLOW
 * (valgrind) makes the run smaller.  (This test found that a new call was
 * accepted before the object's previous call had completed, and that a
 * destroyed object's undispatched failure kept its code: both fixed.) */
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"

enum { NMUTEX = 24, NRW = 8, NOBJ = NMUTEX + NRW, NPATH = 4, RWPATH = 3 };

/* ---- the model ------------------------------------------------------------ */

enum { C_LOCK, C_RDLOCK, C_WRLOCK, C_UNLOCK, C_WATCH };
static const char *const cname[] = {"lock_async", "rdlock_async",
                                    "wrlock_async", "unlock_async",
                                    "watch_async"};

enum { CS_SUBMITTING, CS_REFUSED, CS_PENDING, CS_DONE };

/* One asynchronous call, accepted or not (records are never reused). */
typedef struct call {
  int obj, gen, kind, round, state, n, rc;
  int64_t timeout, t_submit;
  uint64_t token, token_expect; /* watch: the token of the hold it watches */
  void *ptr;                    /* the object's value at submission       */
  int orphaned;    /* its object was destroyed before it was dispatched   */
  int canceled;    /* acquisition: cancel() came after it was accepted    */
  int must_fail;   /* acquisition: a later one was accepted meanwhile     */
  int must_grant;  /* acquisition: an unlock, a watch or holding() took it
                      as held before its completion came                  */
  int released;    /* watch: its object let go of the hold                */
  int killed;      /* watch, unlock: the hold's node was deleted          */
  int early_watch; /* acquisition: a watch accepted before its grant came */
  int watch_first; /* unlock: the watch that must complete before it      */
} call_t;

enum { P_IDLE, P_ACQ, P_HELD, P_REL };
static const char *const pname[] = {"idle", "acquiring", "holding",
                                    "releasing"};

typedef struct obj {
  int rw, path, sess, gen, phase;
  void *p;
  int acq, rel, watch; /* latest acquisition, latest release, its watch */
  int mode;            /* kind of the latest acquisition               */
  uint64_t token;      /* of the hold (P_HELD)                         */
  int killed;          /* the hold's node was deleted by the killer    */
  int watch_lost;      /* a watch of the hold said ZKL_ELOST           */
  int holder;          /* counted among its path's holders             */
  int last_done;       /* last acquisition/release call dispatched     */
  int watches;         /* its watch calls not dispatched yet           */
} obj_t;

typedef struct ar {
  uint64_t seed;
  int variant, slow;
  zkl_session_t *s[2], *k; /* the objects' sessions; the killer's */
  char root[128], path[NPATH][160];
  obj_t o[NOBJ];
  call_t *calls;
  int ncalls, maxcalls;
  int pending; /* accepted calls not dispatched yet */
  pthread_mutex_t g;
  pthread_t loop_thread;
  int round, rounds;
  int64_t t0, t_end;
  int stop, end_phase;
  int failed;
  char msg[2048];
  uint64_t max_token[NPATH], max_wtoken[NPATH];
  uint64_t rng_loop, rng_sub;
  /* what happened, for the summary */
  int st_refused, st_grants, st_kills, st_destroys, st_orphans, st_lost,
      st_timeouts, st_canceled, st_busy, st_early_unlock, st_early_watch,
      st_reacquire, st_in_cb, st_max_holders_rw, st_orphan_rc;
  char ring[48][240];
  int nring;
} ar_t;

static ar_t *A;
static _Thread_local int in_call;       /* inside a zkl call of the test */
static _Thread_local int in_completion; /* inside one of our callbacks  */
static _Thread_local uint64_t *rng;

static int rnd(int n) { return (int)(it_splitmix64(rng) % (uint64_t)n); }

static void objdesc(char *buf, size_t len, int oi) {
  const obj_t *o = &A->o[oi];
  snprintf(buf, len, "%s%d (gen %d, path p%d, session %d, %s)",
           o->rw ? "rw" : "m", oi, o->gen, o->path, o->sess,
           pname[o->phase]);
}

__attribute__((format(printf, 1, 2))) static void ev(const char *fmt, ...) {
  char *line = A->ring[A->nring++ % 48];
  int n = snprintf(line, sizeof A->ring[0], "%6lld r%-5d %c ",
                   (long long)(it_now_ms() - A->t0), A->round,
                   in_completion ? 'C'
                   : pthread_equal(pthread_self(), A->loop_thread) ? 'L'
                                                                   : 'S');
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line + n, sizeof A->ring[0] - (size_t)n, fmt, ap);
  va_end(ap);
}

/* A contract violation: the first one is kept (and the last events
 * printed); the test thread fails with it. */
__attribute__((format(printf, 2, 3))) static void viol(int oi,
                                                       const char *fmt, ...) {
  if (A->failed) return;
  A->failed = 1;
  char what[1024], who[160] = "-";
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (oi >= 0) objdesc(who, sizeof who, oi);
  snprintf(A->msg, sizeof A->msg,
           "async-random seed %" PRIu64 " (replay: ZKL_ASYNC_SEED=%" PRIu64
           "), test %d, round %d, object %s: %s",
           A->seed, A->seed, A->variant, A->round, who, what);
  fprintf(stderr, "%s\nthe last events (ms, round, L loop/S submitter/C "
                  "completion):\n", A->msg);
  int first = A->nring > 48 ? A->nring - 48 : 0;
  for (int i = first; i < A->nring; i++)
    fprintf(stderr, "  %s\n", A->ring[i % 48]);
  fflush(stderr);
}

static void calldesc(char *buf, size_t len, int id) {
  const call_t *c = &A->calls[id];
  if (c->kind <= C_WRLOCK)
    snprintf(buf, len, "call #%d %s(timeout %lld) of round %d", id,
             cname[c->kind], (long long)c->timeout, c->round);
  else
    snprintf(buf, len, "call #%d %s of round %d", id, cname[c->kind],
             c->round);
}

static int holds_bits(const obj_t *o) {
  return !o->rw ? 1 : o->mode == C_RDLOCK ? ZKL_RWLOCK_READ
                                          : ZKL_RWLOCK_WRITE;
}

/* ---- holds: mutual exclusion and tokens ------------------------------------ */

static void hold_begin(int oi) {
  obj_t *o = &A->o[oi];
  int excl = !o->rw || o->mode == C_WRLOCK, readers = 1;
  for (int j = 0; j < NOBJ; j++) {
    obj_t *h = &A->o[j];
    if (j == oi || !h->holder || h->path != o->path) continue;
    int hexcl = !h->rw || h->mode == C_WRLOCK;
    if (excl || hexcl)
      viol(oi, "granted %s (token %" PRIu64 ") while %s%d holds it%s "
               "(token %" PRIu64 ")",
           o->rw ? (excl ? "the write lock" : "the read lock") : "the mutex",
           o->token, h->rw ? "rw" : "m", j,
           h->rw ? (hexcl ? " for writing" : " for reading") : "", h->token);
    readers++;
  }
  if (!excl && readers > A->st_max_holders_rw)
    A->st_max_holders_rw = readers;
  int p = o->path;
  if (excl && o->token <= A->max_token[p])
    viol(oi, "exclusive grant with token %" PRIu64 ", not above the %" PRIu64
             " of an earlier grant on the path",
         o->token, A->max_token[p]);
  if (!excl && o->token <= A->max_wtoken[p])
    viol(oi, "read grant with token %" PRIu64 ", not above the %" PRIu64
             " of an earlier write grant on the path",
         o->token, A->max_wtoken[p]);
  if (o->token > A->max_token[p]) A->max_token[p] = o->token;
  if (excl) A->max_wtoken[p] = o->token;
  o->holder = 1;
  A->st_grants++;
}

/* ---- the calls ---------------------------------------------------------------- */

static void on_done(void *obj, int rc, uint64_t token, void *arg);

static int new_call(int oi, int kind, int64_t timeout) {
  if (A->ncalls == A->maxcalls) return -1;
  int id = A->ncalls++;
  call_t *c = &A->calls[id];
  memset(c, 0, sizeof *c);
  c->obj = oi;
  c->gen = A->o[oi].gen;
  c->kind = kind;
  c->timeout = timeout;
  c->round = A->round;
  c->state = CS_SUBMITTING;
  c->early_watch = -1;
  c->watch_first = -1;
  c->ptr = A->o[oi].p;
  c->t_submit = it_now_ms();
  return id;
}

/* After the call returned rc: 0 accepted, else refused. */
static void submitted(int id, int rc) {
  call_t *c = &A->calls[id];
  if (c->n != 0)
    viol(c->obj, "call #%d's completion ran before the call returned", id);
  if (rc == 0) {
    c->state = CS_PENDING;
    A->pending++;
    if (c->kind == C_WATCH) A->o[c->obj].watches++;
  } else {
    c->state = CS_REFUSED;
    c->rc = rc;
    A->st_refused++;
  }
}

/* A call without a callback: ZKL_EINVAL, nothing else happens. */
static void act_null_cb(int oi, int kind) {
  obj_t *o = &A->o[oi];
  in_call++;
  int rc = kind == C_UNLOCK ? (o->rw ? zkl_rwlock_unlock_async(o->p, NULL, A)
                                     : zkl_mutex_unlock_async(o->p, NULL, A))
           : kind == C_WATCH ? (o->rw ? zkl_rwlock_watch_async(o->p, NULL, A)
                                      : zkl_mutex_watch_async(o->p, NULL, A))
           : o->rw ? zkl_rwlock_wrlock_async(o->p, -1, NULL, A)
                   : zkl_mutex_lock_async(o->p, -1, NULL, A);
  in_call--;
  ev("%s%d %s without a callback -> %s (%s)", o->rw ? "rw" : "m", oi,
     cname[kind], it_code(rc), pname[o->phase]);
  if (rc != ZKL_EINVAL)
    viol(oi, "%s with a NULL callback returned %s: expected ZKL_EINVAL",
         cname[kind], it_code(rc));
}

static void act_acquire(int oi, int kind, int64_t timeout) {
  obj_t *o = &A->o[oi];
  int id = new_call(oi, kind, timeout);
  if (id < 0) return;
  void *arg = &A->calls[id];
  in_call++;
  int rc = kind == C_LOCK     ? zkl_mutex_lock_async(o->p, timeout, on_done, arg)
           : kind == C_RDLOCK ? zkl_rwlock_rdlock_async(o->p, timeout,
                                                        on_done, arg)
                              : zkl_rwlock_wrlock_async(o->p, timeout,
                                                        on_done, arg);
  in_call--;
  submitted(id, rc);
  char cd[128];
  calldesc(cd, sizeof cd, id);
  ev("%s%d %s -> %s (%s)", o->rw ? "rw" : "m", oi, cd, it_code(rc),
     pname[o->phase]);
  if (rc == ZKL_EBUSY) A->st_busy++;
  switch (o->phase) {
  case P_IDLE:
    if (rc != 0)
      viol(oi, "%s refused with %s; the object had no async call or hold "
               "(every earlier completion came)", cd, it_code(rc));
    break;
  case P_HELD:
    if (rc != ZKL_EBUSY)
      viol(oi, "%s returned %s while the object holds (grant #%d "
               "came): expected ZKL_EBUSY", cd, it_code(rc), o->acq);
    break;
  case P_ACQ:
  case P_REL:
    if (rc == 0) {
      int prev = o->phase == P_ACQ ? o->acq : o->rel;
      viol(oi, "%s accepted while the object's %s #%d has not completed "
                 "yet: expected ZKL_EBUSY (one async call or hold per "
                 "object; an unlock's object \"may acquire again once the "
                 "completion has come (ZKL_EBUSY before)\")",
             cd, o->phase == P_ACQ ? "acquisition" : "release", prev);
      A->st_reacquire++;
      /* the engine ended the earlier call: an acquisition failed */
      if (o->phase == P_ACQ) A->calls[prev].must_fail = 1;
    } else if (rc != ZKL_EBUSY) {
      viol(oi, "%s returned %s while the object is %s: expected ZKL_EBUSY",
           cd, it_code(rc), pname[o->phase]);
    }
    break;
  }
  if (rc != 0) return;
  o->phase = P_ACQ;
  o->acq = id;
  o->mode = kind;
  o->killed = 0;
  o->watch_lost = 0;
  o->watch = -1;
}

static void act_unlock(int oi) {
  obj_t *o = &A->o[oi];
  int id = new_call(oi, C_UNLOCK, 0);
  if (id < 0) return;
  void *arg = &A->calls[id];
  in_call++;
  int rc = o->rw ? zkl_rwlock_unlock_async(o->p, on_done, arg)
                 : zkl_mutex_unlock_async(o->p, on_done, arg);
  in_call--;
  submitted(id, rc);
  char cd[128];
  calldesc(cd, sizeof cd, id);
  ev("%s%d %s -> %s (%s)", o->rw ? "rw" : "m", oi, cd, it_code(rc),
     pname[o->phase]);
  switch (o->phase) {
  case P_HELD:
    if (rc != 0)
      viol(oi, "%s refused with %s while the object holds (grant #%d came)",
           cd, it_code(rc), o->acq);
    break;
  case P_ACQ: /* its grant may be waiting to be dispatched */
    if (rc != ZKL_EPERM)
      viol(oi, "%s returned %s while acquiring: expected ZKL_EPERM (the "
               "call lasts until its completion is dispatched)", cd,
           it_code(rc));
    if (rc == 0) {
      A->calls[o->acq].must_grant = 1;
      A->st_early_unlock++;
    }
    break;
  default:
    if (rc != ZKL_EPERM)
      viol(oi, "%s returned %s while the object is %s: expected ZKL_EPERM",
           cd, it_code(rc), pname[o->phase]);
  }
  if (rc != 0) return;
  A->calls[id].killed = o->phase == P_HELD && o->killed;
  if (o->watch >= 0) {
    A->calls[id].watch_first = o->watch;
    A->calls[o->watch].released = 1;
    o->watch = -1;
  }
  o->phase = P_REL;
  o->rel = id;
  o->holder = 0;
}

static void act_watch(int oi) {
  obj_t *o = &A->o[oi];
  int id = new_call(oi, C_WATCH, 0);
  if (id < 0) return;
  void *arg = &A->calls[id];
  in_call++;
  int rc = o->rw ? zkl_rwlock_watch_async(o->p, on_done, arg)
                 : zkl_mutex_watch_async(o->p, on_done, arg);
  in_call--;
  submitted(id, rc);
  char cd[128];
  calldesc(cd, sizeof cd, id);
  ev("%s%d %s -> %s (%s, watch #%d)", o->rw ? "rw" : "m", oi, cd, it_code(rc),
     pname[o->phase], o->watch);
  call_t *c = &A->calls[id];
  switch (o->phase) {
  case P_HELD:
    if (o->watch < 0 && rc != 0)
      viol(oi, "%s refused with %s on a hold without a watch", cd, it_code(rc));
    if (o->watch >= 0 && rc != ZKL_EBUSY &&
        !(rc == 0 && A->calls[o->watch].killed))
      viol(oi, "%s returned %s while watch #%d of the hold is pending: "
               "expected ZKL_EBUSY", cd, it_code(rc), o->watch);
    if (rc == 0) {
      c->token_expect = o->token;
      c->killed = o->killed;
    }
    break;
  case P_ACQ: /* its grant may be waiting to be dispatched */
    if (rc != ZKL_EPERM && !(rc == ZKL_EBUSY && o->watches > 0))
      viol(oi, "%s returned %s while acquiring: expected ZKL_EPERM (the "
               "call lasts until its completion is dispatched)", cd,
           it_code(rc));
    if (rc == 0) {
      A->calls[o->acq].must_grant = 1;
      A->calls[o->acq].early_watch = id;
      A->st_early_watch++;
    }
    break;
  default:
    if (rc != ZKL_EPERM)
      viol(oi, "%s returned %s while the object is %s: expected ZKL_EPERM",
           cd, it_code(rc), pname[o->phase]);
  }
  if (rc == 0) o->watch = id;
}

static void act_cancel(int oi) {
  obj_t *o = &A->o[oi];
  in_call++;
  int rc = o->rw ? zkl_rwlock_cancel(o->p) : zkl_mutex_cancel(o->p);
  in_call--;
  ev("%s%d cancel -> %s (%s, acquisition #%d)", o->rw ? "rw" : "m", oi,
     it_code(rc), pname[o->phase], o->acq);
  if (rc != 0) viol(oi, "cancel returned %s", it_code(rc));
  if (o->phase == P_ACQ) A->calls[o->acq].canceled = 1;
}

/* holding() and token(), which answer for the object's async hold. */
static void act_probe(int oi) {
  obj_t *o = &A->o[oi];
  uint64_t token = 0;
  in_call++;
  int h = o->rw ? zkl_rwlock_holding(o->p) : zkl_mutex_holding(o->p);
  int t = o->rw ? zkl_rwlock_token(o->p, &token)
                : zkl_mutex_token(o->p, &token);
  in_call--;
  ev("%s%d holding -> %s, token -> %s %" PRIu64 " (%s)", o->rw ? "rw" : "m",
     oi, it_code(h), it_code(t), token, pname[o->phase]);
  int bits = holds_bits(o);
  switch (o->phase) {
  case P_IDLE:
  case P_REL:
    if (h != 0 || t != ZKL_EPERM)
      viol(oi, "holding() %s and token() %s while %s: expected 0 and "
               "ZKL_EPERM", it_code(h), it_code(t), pname[o->phase]);
    break;
  case P_ACQ:
    /* the engine may grant it between the two calls, not take it back */
    if (h != 0 && h != bits)
      viol(oi, "holding() %s while acquiring", it_code(h));
    if ((t != 0 && t != ZKL_EPERM) || (h != 0 && t != 0) ||
        (t == 0 && token == 0))
      viol(oi, "holding() %s then token() %s %" PRIu64 " while acquiring",
           it_code(h), it_code(t), token);
    if (h != 0 || t == 0) A->calls[o->acq].must_grant = 1;
    break;
  case P_HELD:
    if (o->watch_lost ? h != ZKL_ELOST
                      : !(h == bits || (o->killed && h == ZKL_ELOST)))
      viol(oi, "holding() %s while the object holds (expected %d%s)",
           it_code(h), o->watch_lost ? ZKL_ELOST : bits,
           o->killed ? ", its node deleted" : "");
    if (t != 0 || token != o->token)
      viol(oi, "token() %s %" PRIu64 " while holding with token %" PRIu64,
           it_code(t), token, o->token);
    break;
  }
}

/* Deletes a held node from the killer's session: an operator's cleanup. */
static void act_kill(int oi) {
  obj_t *o = &A->o[oi];
  if (o->phase != P_HELD || o->killed) return;
  char node[1024];
  in_call++;
  int rc = o->rw ? zkl_rwlock_node(o->p, node, sizeof node)
                 : zkl_mutex_node(o->p, node, sizeof node);
  in_call--;
  if (rc != 0) {
    viol(oi, "node() returned %s while the object holds", it_code(rc));
    return;
  }
  int zrc = zoo_delete(zkl_session_zhandle(A->k), node, -1);
  ev("%s%d kill %s -> %s", o->rw ? "rw" : "m", oi, node, zerror(zrc));
  if (zrc != ZOK) {
    viol(oi, "deleting its held node %s: %s", node, zerror(zrc));
    return;
  }
  o->killed = 1;
  o->holder = 0; /* the next contender may get in */
  if (o->watch >= 0) A->calls[o->watch].killed = 1;
  A->st_kills++;
}

static void create_obj(int oi) {
  obj_t *o = &A->o[oi];
  o->sess = rnd(2);
  int rc = o->rw ? zkl_rwlock_create((zkl_rwlock_t **)&o->p, A->s[o->sess],
                                     A->path[o->path], NULL)
                 : zkl_mutex_create((zkl_mutex_t **)&o->p, A->s[o->sess],
                                    A->path[o->path], NULL);
  if (rc != 0) viol(oi, "create: %s", it_code(rc));
  o->phase = P_IDLE;
  o->acq = o->rel = o->watch = -1;
  o->killed = o->watch_lost = o->holder = 0;
  o->last_done = -1;
  o->watches = 0;
}

/* Destroys the object (the loop thread only: completions run there) and,
 * unless final, makes a new one in its place. */
static void act_destroy(int oi, int final) {
  obj_t *o = &A->o[oi];
  char node[1024] = "";
  if (o->phase == P_HELD && !o->killed &&
      (o->rw ? zkl_rwlock_node(o->p, node, sizeof node)
             : zkl_mutex_node(o->p, node, sizeof node)) != 0)
    viol(oi, "node() failed while the object holds");
  int orphans = 0;
  for (int i = 0; i < A->ncalls; i++) {
    call_t *c = &A->calls[i];
    if (c->obj == oi && c->gen == o->gen && c->state == CS_PENDING &&
        !c->orphaned) {
      c->orphaned = 1;
      orphans++;
    }
  }
  ev("%s%d destroy (%s, %d calls pending)%s", o->rw ? "rw" : "m", oi,
     pname[o->phase], orphans, final ? " final" : "");
  A->st_orphans += orphans;
  A->st_destroys++;
  if (in_completion) A->st_in_cb++;
  o->holder = 0;
  in_call++;
  if (o->rw) zkl_rwlock_destroy(o->p);
  else zkl_mutex_destroy(o->p);
  in_call--;
  o->p = NULL;
  if (node[0] != '\0') { /* the hold is released by the time destroy returns */
    int zrc = zoo_exists(zkl_session_zhandle(A->s[o->sess]), node, 0, NULL);
    if (zrc != ZNONODE)
      viol(oi, "its held node %s is still there after destroy (%s)", node,
           zerror(zrc));
  }
  o->gen++;
  o->phase = P_IDLE;
  if (!final) create_obj(oi);
}

/* ---- completions -------------------------------------------------------------- */

static void order_check(int oi, int id) {
  obj_t *o = &A->o[oi];
  if (id < o->last_done)
    viol(oi, "completion of call #%d came after that of the later call #%d",
         id, o->last_done);
  o->last_done = id;
}

static void done_acquire(int id, int rc, uint64_t token) {
  call_t *c = &A->calls[id];
  obj_t *o = &A->o[c->obj];
  char cd[128];
  calldesc(cd, sizeof cd, id);
  int ok;
  const char *why = "";
  switch (rc) {
  case 0:
    ok = !c->must_fail && token != 0;
    why = c->must_fail ? ": a later acquisition was accepted before this "
                         "completion, so this one had ended"
                       : ": granted without a token";
    break;
  case ZKL_ECANCELED:
    ok = c->canceled;
    why = ": neither canceled nor destroyed";
    break;
  case ZKL_EBUSY:
    ok = c->timeout == 0;
    why = ": only a try ends with ZKL_EBUSY";
    break;
  case ZKL_ETIMEDOUT: {
    int64_t took = it_now_ms() - c->t_submit;
    ok = c->timeout > 0 && took >= c->timeout - 1;
    why = c->timeout > 0 ? ": before its deadline"
                         : ": without a deadline, or a try";
    A->st_timeouts++;
    break;
  }
  default:
    ok = 0;
    why = ": nothing here should end an acquisition so";
  }
  if (rc == ZKL_ECANCELED) A->st_canceled++;
  if (!ok)
    viol(c->obj, "%s completed with %s%s (%s)", cd, it_code(rc), why,
         zkl_last_error());
  if (c->must_grant && rc != 0)
    viol(c->obj, "%s completed with %s, but an unlock, a watch or holding() "
                 "had already taken it as granted", cd, it_code(rc));
  if (rc != 0 && token != 0)
    viol(c->obj, "%s failed (%s) with token %" PRIu64, cd, it_code(rc), token);
  order_check(c->obj, id);
  if (id != o->acq) return; /* an earlier one (a violation, reported) */
  if (rc == 0 && c->early_watch >= 0)
    A->calls[c->early_watch].token_expect = token;
  if (o->phase != P_ACQ) return; /* released before its grant came */
  if (rc == 0) {
    o->phase = P_HELD;
    o->token = token;
    hold_begin(c->obj);
  } else {
    o->phase = P_IDLE;
  }
}

static void done_release(int id, int rc) {
  call_t *c = &A->calls[id];
  obj_t *o = &A->o[c->obj];
  char cd[128];
  calldesc(cd, sizeof cd, id);
  int want = c->killed ? ZKL_ELOST : 0;
  if (rc != want)
    viol(c->obj, "%s completed with %s, expected %s%s (%s)", cd, it_code(rc),
         it_code(want), c->killed ? " (its node was deleted)" : "",
         zkl_last_error());
  if (c->watch_first >= 0 && A->calls[c->watch_first].state != CS_DONE)
    viol(c->obj, "%s completed before watch #%d of the hold it released",
         cd, c->watch_first);
  order_check(c->obj, id);
  if (id == o->rel && o->phase == P_REL) o->phase = P_IDLE;
}

static void done_watch(int id, int rc, uint64_t token) {
  call_t *c = &A->calls[id];
  obj_t *o = &A->o[c->obj];
  char cd[128];
  calldesc(cd, sizeof cd, id);
  o->watches--;
  int ok = (rc == 0 && c->released) || (rc == ZKL_ELOST && c->killed);
  if (!ok)
    viol(c->obj, "%s completed with %s, but the object %s and its node %s "
                 "(%s)", cd, it_code(rc),
         c->released ? "let go of the hold" : "still holds",
         c->killed ? "was deleted" : "is there", zkl_last_error());
  if (c->token_expect == 0)
    viol(c->obj, "%s completed before the grant of the hold it watches",
         cd);
  else if (token != c->token_expect)
    viol(c->obj, "%s completed with token %" PRIu64 ", the hold's is %" PRIu64,
         cd, token, c->token_expect);
  if (rc == ZKL_ELOST) A->st_lost++;
  if (o->watch == id) o->watch = -1;
  if (rc == ZKL_ELOST && o->phase == P_HELD && o->token == c->token_expect)
    o->watch_lost = 1;
}

static void random_action(int loop, int oi);

/* What a loop program might do next, from the completion itself. */
static void follow_up(int id, int rc) {
  const call_t *c = &A->calls[id];
  int oi = c->obj, r = rnd(100);
  const obj_t *o = &A->o[oi];
  if (r < 4) {
    act_destroy(oi, 0);
  } else if (r < 8) {
    random_action(1, rnd(NOBJ)); /* another object, whatever */
  } else if (c->kind <= C_WRLOCK && rc == 0 && o->phase == P_HELD) {
    if (r < 35) act_unlock(oi);
    else if (r < 55) act_watch(oi);
    else if (r < 60) act_cancel(oi);
  } else if (c->kind == C_WATCH && rc == ZKL_ELOST) {
    if (r < 60) act_unlock(oi);
  } else if (r < 30 && o->phase == P_IDLE) {
    int kind = !o->rw ? C_LOCK : rnd(2) ? C_RDLOCK : C_WRLOCK;
    act_acquire(oi, kind, rnd(3) == 0 ? -1 : rnd(40));
  }
}

static void on_done(void *obj, int rc, uint64_t token, void *arg) {
  call_t *c = arg;
  int id = (int)(c - A->calls);
  if (!pthread_equal(pthread_self(), A->loop_thread)) {
    viol(c->obj, "call #%d's completion ran on a thread that does not "
                 "dispatch", id);
    return;
  }
  if (in_call)
    viol(c->obj, "call #%d's completion ran inside a call of the test", id);
  if (c->state != CS_PENDING) {
    viol(c->obj, "call #%d (%s, %s) got a completion (%s)%s", id,
         cname[c->kind], c->state == CS_REFUSED ? "refused" : "done",
         it_code(rc), c->state == CS_DONE ? ": a second one" : "");
    return;
  }
  c->state = CS_DONE;
  c->n++;
  c->rc = rc;
  c->token = token;
  A->pending--;
  in_completion++;
  char cd[128];
  calldesc(cd, sizeof cd, id);
  ev("%s%d completion of %s: %s token %" PRIu64 "%s",
     A->o[c->obj].rw ? "rw" : "m", c->obj, cd, it_code(rc), token,
     c->orphaned ? " (destroyed)" : "");
  if (obj != c->ptr)
    viol(c->obj, "%s completed with obj %p, made on %p", cd, obj, c->ptr);
  if (c->orphaned) { /* obj is not ours to use any more */
    if (rc != ZKL_ECANCELED)
      viol(c->obj, "%s completed with %s after its object was destroyed: "
                   "expected ZKL_ECANCELED (\"completions of m not yet "
                   "dispatched come with ZKL_ECANCELED\") (%s)",
           cd, it_code(rc), zkl_last_error());
    in_completion--;
    return;
  }
  if (c->gen != A->o[c->obj].gen)
    viol(c->obj, "%s of a destroyed object was not marked", cd);
  if (c->kind <= C_WRLOCK) done_acquire(id, rc, token);
  else if (c->kind == C_UNLOCK) done_release(id, rc);
  else done_watch(id, rc, token);
  if (!A->end_phase && !A->failed) follow_up(id, rc);
  in_completion--;
}

/* ---- the random actions ----------------------------------------------------------- */

static int pick(int phase) {
  int n = 0, which[NOBJ];
  for (int i = 0; i < NOBJ; i++)
    if (A->o[i].phase == phase && (phase != P_HELD || !A->o[i].killed))
      which[n++] = i;
  return n == 0 ? -1 : which[rnd(n)];
}

static int64_t random_timeout(void) {
  int r = rnd(100);
  if (r < 25) return -1;
  if (r < 45) return 0;
  if (r < 90) return 1 + rnd(50);
  return 100 + rnd(900);
}

/* One action on object oi (or one picked by phase); destroy and kill only
 * from the loop thread. */
static void random_action(int loop, int oi) {
  int r = rnd(100), h;
  if (r < 40) {
    const obj_t *o = &A->o[oi];
    int kind = !o->rw ? C_LOCK : rnd(2) ? C_RDLOCK : C_WRLOCK;
    act_acquire(oi, kind, random_timeout());
  } else if (r < 62) {
    act_unlock(rnd(10) < 7 && (h = pick(P_HELD)) >= 0 ? h : oi);
  } else if (r < 74) {
    act_watch(rnd(10) < 7 && (h = pick(P_HELD)) >= 0 ? h : oi);
  } else if (r < 82) {
    act_cancel(rnd(10) < 7 && (h = pick(P_ACQ)) >= 0 ? h : oi);
  } else if (r < 91) {
    act_probe(oi);
  } else if (r < 92) {
    act_null_cb(oi, rnd(2) ? C_UNLOCK : rnd(2) ? C_WATCH : C_LOCK);
  } else if (r < 96) {
    if ((h = pick(P_HELD)) >= 0) act_kill(h);
  } else if (loop) {
    act_destroy(oi, 0);
  } else {
    act_probe(oi);
  }
}

static int running(void) {
  return !A->stop && !A->failed && A->round < A->rounds &&
         it_now_ms() < A->t_end;
}

static void *submitter(void *arg) {
  (void)arg;
  rng = &A->rng_sub;
  for (;;) {
    pthread_mutex_lock(&A->g);
    int go = running();
    if (go) {
      A->round++;
      random_action(0, rnd(NOBJ));
    }
    pthread_mutex_unlock(&A->g);
    if (!go) break;
    int pause = rnd(4);
    if (pause > 0) usleep((useconds_t)pause * 700);
  }
  return NULL;
}

/* One turn of the loop: poll both fds up to wait_ms, dispatch the ready
 * ones (g held), maybe act; whether the rounds go on.  Some turns (when
 * acting) are slow and dispatch nothing, so that calls meet completions
 * that wait in the queue. */
static int loop_turn(int wait_ms, int act) {
  struct pollfd p[2] = {{zkl_session_fd(A->s[0]), POLLIN, 0},
                        {zkl_session_fd(A->s[1]), POLLIN, 0}};
  if (act && rnd(8) == 0) { /* a slow loop: completions wait meanwhile */
    usleep((useconds_t)(1 + rnd(10)) * 1000);
    p[0].fd = p[1].fd = -1;
  }
  int n = poll(p, 2, p[0].fd < 0 ? 0 : wait_ms);
  ck_assert_int_ge(n, 0);
  pthread_mutex_lock(&A->g);
  for (int i = 0; i < 2; i++) {
    if (p[i].revents & ~POLLIN) viol(-1, "session %d's fd polls %#x", i,
                                     (unsigned)p[i].revents);
    if (!(p[i].revents & POLLIN)) continue;
    int d = zkl_session_dispatch(A->s[i]);
    if (d < 0) viol(-1, "dispatch of session %d: %s", i, it_code(d));
  }
  int go = running();
  if (act && go && rnd(2)) {
    A->round++;
    random_action(1, rnd(NOBJ));
  }
  pthread_mutex_unlock(&A->g);
  return go;
}

/* Waits until every path has no child (2 s at most), then asserts it. */
static void no_node_left(void) {
  for (int p = 0; p < NPATH; p++) {
    it_wait_children(A->k, A->path[p], 0, 2000);
    struct String_vector v = {0, NULL};
    int n = it_children(A->k, A->path[p], &v);
    if (n != 0 && !A->failed) {
      char names[512] = "";
      for (int i = 0; i < v.count && strlen(names) < 400; i++) {
        strcat(names, " ");
        strncat(names, v.data[i], 100);
      }
      viol(-1, "%d node(s) left under %s:%s", n, A->path[p], names);
    }
    deallocate_String_vector(&v); /* its data even when empty */
  }
}

static void run(int variant) {
  A = calloc(1, sizeof *A);
  ck_assert_ptr_nonnull(A);
  A->seed = it_seed("ZKL_ASYNC_SEED");
  A->variant = variant;
  A->slow = getenv("ZKL_TEST_SLOW") != NULL;
  A->rounds = A->slow ? 3000 : 15000;
  int budget_ms = 12000;
  printf("async-random[%d]: seed %" PRIu64 " (replay with ZKL_ASYNC_SEED=%"
         PRIu64 "), %d rounds at most\n",
         variant, A->seed, A->seed, A->rounds);
  fflush(stdout);
  A->rng_loop = A->seed ^ (0x5151515151515151ULL * (uint64_t)(variant + 1));
  A->rng_sub = A->rng_loop ^ 0xa5a5a5a5deadbeefULL;
  rng = &A->rng_loop;
  A->maxcalls = A->rounds * 4 + 2000;
  A->calls = calloc((size_t)A->maxcalls, sizeof *A->calls);
  ck_assert_ptr_nonnull(A->calls);
  ck_assert_int_eq(pthread_mutex_init(&A->g, NULL), 0);
  A->loop_thread = pthread_self();
  it_root(A->root, sizeof A->root, "async-random");
  for (int p = 0; p < NPATH; p++)
    snprintf(A->path[p], sizeof A->path[p], "%s/p%d", A->root, p);
  A->s[0] = it_session();
  A->s[1] = it_session();
  A->k = it_session();
  for (int i = 0; i < NOBJ; i++) {
    A->o[i].rw = i >= NMUTEX;
    A->o[i].path = i >= NMUTEX ? RWPATH : i % 3;
    create_obj(i);
  }
  A->t0 = it_now_ms();
  A->t_end = A->t0 + budget_ms;

  pthread_t sub;
  ck_assert_int_eq(pthread_create(&sub, NULL, submitter, NULL), 0);
  while (loop_turn(rnd(4), 1)) {
  }
  pthread_mutex_lock(&A->g);
  A->stop = 1;
  pthread_mutex_unlock(&A->g);
  ck_assert_int_eq(pthread_join(sub, NULL), 0);
  int64_t t_rounds = it_now_ms() - A->t0;
  ck_assert_msg(!A->failed, "%s", A->msg);

  /* The end: let go of everything and see it all settle (0), or destroy
   * everything as it is (1). */
  A->end_phase = 1;
  int64_t deadline = it_now_ms() + (A->slow ? 30000 : 20000);
  int busy = 0;
  if (variant == 0) {
    for (;;) {
      pthread_mutex_lock(&A->g);
      busy = A->pending;
      for (int i = 0; i < NOBJ; i++) {
        obj_t *o = &A->o[i];
        if (o->phase == P_HELD) act_unlock(i);
        else if (o->phase == P_ACQ && !A->calls[o->acq].canceled)
          act_cancel(i);
        busy += o->phase != P_IDLE;
      }
      pthread_mutex_unlock(&A->g);
      if (busy == 0 || A->failed || it_now_ms() > deadline) break;
      loop_turn(10, 0);
    }
    ck_assert_msg(!A->failed, "%s", A->msg);
    ck_assert_msg(busy == 0, "seed %" PRIu64 ": not settled after unlocking "
                  "and canceling everything: %d calls pending",
                  A->seed, A->pending);
    no_node_left(); /* before destroy: the calls themselves left none */
    ck_assert_msg(!A->failed, "%s", A->msg);
  }
  pthread_mutex_lock(&A->g);
  for (int i = 0; i < NOBJ; i++) act_destroy(i, 1);
  pthread_mutex_unlock(&A->g);
  while (A->pending > 0 && !A->failed && it_now_ms() < deadline)
    loop_turn(10, 0);
  loop_turn(0, 0); /* nothing more may come */
  ck_assert_msg(!A->failed, "%s", A->msg);
  int never = 0, done = 0;
  for (int i = 0; i < A->ncalls; i++) {
    const call_t *c = &A->calls[i];
    if (c->state == CS_PENDING) {
      if (never++ == 0) {
        char cd[128];
        calldesc(cd, sizeof cd, i);
        viol(c->obj, "%s never completed (%d such)", cd, A->pending);
      }
    } else if (c->state == CS_DONE) {
      done++;
      if (c->n != 1) viol(c->obj, "call #%d completed %d times", i, c->n);
    } else if (c->n != 0) {
      viol(c->obj, "refused call #%d completed", i);
    }
  }
  ck_assert_msg(!A->failed, "%s", A->msg);
  ck_assert_int_eq(done + A->st_refused, A->ncalls);
  no_node_left();
  ck_assert_msg(!A->failed, "%s", A->msg);
  printf("async-random[%d]: seed %" PRIu64 ": %d rounds in %lld ms, %d calls "
         "(%d refused, %d EBUSY), %d grants, %d timeouts, %d canceled, "
         "%d nodes deleted, %d watches lost, %d destroys (%d in "
         "completions, %d calls orphaned), up to %d readers at once; "
         "accepted on a grant not dispatched yet: %d unlocks, %d watches; "
         "%d acquisitions accepted before the previous call's completion; "
         "%d orphans not ZKL_ECANCELED; %lld ms in all\n",
         variant, A->seed, A->round, (long long)t_rounds, A->ncalls,
         A->st_refused, A->st_busy, A->st_grants, A->st_timeouts,
         A->st_canceled, A->st_kills, A->st_lost, A->st_destroys,
         A->st_in_cb, A->st_orphans, A->st_max_holders_rw,
         A->st_early_unlock, A->st_early_watch, A->st_reacquire,
         A->st_orphan_rc, (long long)(it_now_ms() - A->t0));
  fflush(stdout);
  zkl_session_close(A->s[0]);
  zkl_session_close(A->s[1]);
  zkl_session_close(A->k);
  pthread_mutex_destroy(&A->g);
  free(A->calls);
  free(A);
  A = NULL;
}

/* _i 0: the run ends by letting go of everything, then destroying; 1: by
 * destroying everything in the middle of it. */
START_TEST(random_rounds) { run(_i); }
END_TEST

Suite *async_random_suite(void) {
  Suite *s = suite_create("async-random");
  TCase *tc = it_tcase("async-random");
  tcase_add_loop_test(tc, random_rounds, 0, 2);
  suite_add_tcase(s, tc);
  return s;
}
