/* tests/integration/test-queue-random.c - a bounded, seeded, randomized
 * test of the distributed queue's documented contract (zkl/queue.h).
 *
 * 36 queue objects, 6 on each of 6 paths: p0 and p1 qn-, p2 kazoo entry-
 * with random priorities, p3 both formats side by side, p4 kazoo's
 * LockingQueue layout (entries/ + taken/) with claims, p5 both formats
 * again with consumers that only wait (timed takes of 300 ms and more, as
 * a worker pool does); spread over two sessions, and a third session that
 * plays a foreign consumer.  The test
 * thread runs a poll() + zkl_session_dispatch() loop over both sessions'
 * fds and acts too (async put/put_batch/take/claim/ack/nack with random
 * sizes and timeouts, non-blocking takes and puts, peek/size/remove/list
 * on idle objects, cancel, destroy-and-recreate with async calls pending,
 * raw deletes of items and of claims through the third session, bad
 * arguments); completions start new calls (an ack right after its claim,
 * say), cancel, or destroy their own or another object.  Two more threads
 * make blocking calls (take/take_batch/claim with timeout 0, short, long
 * or none, put/put_batch, ack/nack, peek, size, list, remove of a peeked
 * item) and async ones; a watchdog on the loop cancels calls that wait too
 * long.  One object per path is bounded (max_items or soft_max).  p0, p2,
 * p3 and p4 hold foreign children that must never be taken; p1 is made by
 * the first put.  Payloads are unique (an id, then a pattern with NULs), a
 * few are empty.  One test-side mutex (g) serializes the test's
 * bookkeeping: held around every submission, every dispatch, and the
 * recording of every blocking call's start and end (not during it).
 *
 * Checked on every return code and every completion:
 *   - each payload returned was put, to that path in that format, intact
 *     (length, bytes, the NUL after it), and is consumed at most once
 *     across every consumer: takes, acks, removes, raw deletes and the
 *     drain; an item of a put that failed (not unknown) never appears;
 *   - each item's token is non-zero and unique (a claim's too); its name
 *     is of the object's format, and of the producer's priority;
 *   - the items of one take or list come in queue order ((priority,
 *     sequence) strictly increasing); one object's takes that do not
 *     overlap in time never go back in sequence within a priority (qn-,
 *     kazoo); one producer's puts that do not overlap get increasing
 *     sequences; a batch's items have consecutive sequences;
 *   - claims: an item is claimed by one object at a time (until its ack or
 *     nack begins, its object is destroyed or its claim node is deleted),
 *     with a delivery token larger at every redelivery; ack ELOST only
 *     once the claim node was deleted, ENOENT only once the item was;
 *     claim_health() is 0 for a claim held, ZKL_EPERM for another's; ack
 *     through another object ZKL_EPERM; list() says claimed for an item
 *     claimed throughout the call;
 *   - codes as documented: EBUSY only for a call that met another one of
 *     the object (an async call: exactly when its previous async call has
 *     not completed; never on an idle object), EEMPTY only for timeout 0,
 *     ETIMEDOUT only for a deadline that has passed, ECANCELED only after
 *     a cancel or a destroy, EFULL only from a bounded object, EINVAL for
 *     bad arguments, ENOENT for a name that is gone; a failed take has no
 *     items;
 *   - an EEMPTY take or peek never happened while an item of its format
 *     was in the queue throughout the call, nor did a long uncontended
 *     timed take time out while an item of its format waited 250 ms or
 *     more, unconsumed, before its deadline (starved); a list of
 *     the whole queue left out no item that was there throughout; a
 *     remove's or an ack's ENOENT never came while its item was still
 *     there (qn-, kazoo paths; claims make "there" ambiguous on p4);
 *   - each accepted async call gets exactly one completion, on the
 *     dispatching thread, never from inside a call; refused ones none; a
 *     destroyed object's completions come with ECANCELED;
 *   - at the end (every object destroyed, everything dispatched), a drain
 *     accounts for every item put with rc 0 exactly once; run 0 never
 *     orphans a take, so nothing may be missing there; in run 1 at most as
 *     many as the async takes orphaned by a destroy (their items are lost,
 *     as documented) and the acks orphaned so; zkl_queue_size() agrees with
 *     the raw count and the drain; the foreign children are untouched;
 *     nothing is left under PATH.zkl/wait, PATH.zkl/full, PATH.zkl/puts
 *     nor PATH/taken.
 *
 * The seed is printed first (time-based; ZKL_QUEUE_SEED=N replays the same
 * random choices, though not the same thread interleaving).  ZKL_TEST_SLOW
 * (valgrind) makes the run smaller.  Violations do not stop the run: the
 * first of each kind is printed with the last events, and the test fails
 * at the end with the first one and a count of each kind.
 *
 * When it was written, every run failed on these (each reproduced alone
 * too): a timed take or take_batch whose deadline passes while its reads
 * and deletes are in flight loses the items deleted ("lost", run 0); a
 * try (timeout 0) says ZKL_EEMPTY from a kept listing whose items others
 * took, without listing again, while items are there ("empty-with-item");
 * a consumer of one format waits behind the other format's consumer at
 * the head of the shared line while its items are there ("starved", p5);
 * zkl_queue_list() of an empty queue returns an array, not NULL
 * ("list-items"); a timed claim whose deadline passes while its create is
 * in flight leaves a claim node nobody holds, so the item is stuck until
 * the session ends ("left-behind" in taken/, "list-claimed",
 * "size-drain"); an object that claims an item again after its claim node
 * was deleted acks or nacks through the stale claim record: ZKL_ELOST for
 * the live claim, or 0 for the dead one ("settle-code", "settle-lost"). */
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"

enum {
  NPATH = 6,   /* p0, p1 qn-; p2 kazoo; p3 both; p4 locking; p5 both,
                  consumers making long timed takes only              */
  LPATH = 4,   /* the locking one                                    */
  SPATH = 5,   /* the one with waiting consumers only                */
  NFMT = 3,
  OPP = 6,     /* objects per path                                   */
  NOBJ = NPATH * OPP,
  NSUB = 2,    /* threads making blocking calls                      */
  NPRIO = 4,   /* kazoo priorities used                              */
  MAXFLY = 8,  /* calls of one object in flight at once (4 at most)  */
  MAXHELD = 16, /* claims one object holds at most                   */
  CLAIMS = 8,  /* it claims more only while it holds fewer          */
  MAXKINDS = 24,
  RING = 64
};
static const int prio_of[NPRIO] = {0, 7, 100, 999};
/* Children of other shapes, never to be taken (p1 has none: its path is
 * made by the first put; p4's are in entries/). */
static const char *const foreign[] = {"foo", "entry-1x0-0000000001",
                                      "qn-00000000012", "entry-100-"};
#define NFOREIGN_NAMES 4
static int nforeign(int p) { return p == 1 || p == SPATH ? 0 : NFOREIGN_NAMES; }

/* ---- the model -------------------------------------------------------------- */

enum { K_PUT, K_TAKE, K_PEEK, K_SIZE, K_REMOVE, K_LIST, K_CLAIM, K_ACK,
       K_NACK };
static const char *const kname[] = {"put",  "take",  "peek",
                                    "size", "remove", "list",
                                    "claim", "ack",  "nack"};
enum { CS_SUBMITTING, CS_REFUSED, CS_PENDING, CS_DONE };
enum { IS_PENDING, IS_OK, IS_FAILED, IS_UNKNOWN }; /* a put's outcome */
enum { IC_NONE, IC_TAKE, IC_REMOVE, IC_RAW, IC_DRAIN, IC_ACK }; /* by */
static const char *const icname[] = {"nobody",       "a take",
                                     "a remove",     "a raw delete",
                                     "the drain",    "an ack"};
enum { CL_HELD, CL_SETTLING, CL_DONE, CL_GIVEN_UP }; /* a claim's state */

typedef struct call {
  int kind, obj, gen, thread, async, round, state, n, rc;
  int path, fmt, bounded;
  int64_t timeout, t0, t1, ev0, ev1, patience;
  void *ptr;          /* the object's value at submission            */
  int first, nitems;  /* put: its items' ids (consecutive); list: its
                         entries in A->listed                         */
  size_t max;         /* take, list                                  */
  unsigned cancels;   /* the object's cancels at the start           */
  int orphaned;       /* its object was destroyed before dispatch    */
  int contended;      /* another call of the object overlapped it    */
  int must_busy;      /* the loop's try while its async call pends   */
  int32_t snap[NPRIO];
  uint8_t snap_have[NPRIO];
  int uid;            /* peek: what it saw; remove: what it removes */
  int claim;          /* ack, nack: the claim settled                */
  int where;          /* nack                                        */
} call_t;

typedef struct item {
  int call, path, fmt, prio, obj, gen, bidx;
  uint32_t len;
  uint8_t empty, put, how, have_seq, requeued, maybe_acked;
  int by;             /* the consuming call (-1: raw, drain)          */
  int claim;          /* the claim open on it now, or -1              */
  int32_t seq;
  uint64_t token, ctok; /* its czxid; the last claim's                */
  int64_t ev_consume, ev_consumed; /* its consumer's start and end     */
} item_t;

typedef struct claim {
  int uid, obj, gen, call, settle; /* its claim; its ack or nack, or -1 */
  uint8_t state, lost;
  int64_t ev_grant, ev_release, ev_lost;
  zkl_item_t it;      /* a copy, for ack and nack                     */
} claim_t;

typedef struct obj {
  int path, fmt, prio, sess, gen;
  size_t max_items, soft_max; /* 0: the defaults (never reached here) */
  zkl_queue_t *q;
  int users;        /* threads inside a blocking call of it */
  int async;        /* its pending async call, or -1        */
  int fly[MAXFLY], nfly;
  unsigned cancels; /* never reset: calls compare against it */
  int32_t maxseq[NPRIO];
  uint8_t have[NPRIO];
  int held[MAXHELD], nheld; /* its claims (HELD or SETTLING)  */
} obj_t;

typedef struct counts {
  int pending, ok, failed, unknown, consumed;
} counts_t;

typedef struct qr {
  uint64_t seed;
  int variant, slow;
  zkl_session_t *s[2], *k;
  char root[128], path[NPATH][160], ipath[NPATH][176];
  obj_t o[NOBJ];
  call_t *calls;
  int ncalls, maxcalls;
  item_t *items;
  int nitems, capitems;
  claim_t *claims;
  int nclaims, capclaims;
  int *absent; /* calls whose answer says no item was there: EEMPTY, ... */
  int nabsent, capabsent;
  int *gone;   /* removes and acks answered ZKL_ENOENT for a known item */
  int ngone, capgone;
  int *lists;  /* list calls of the whole queue                         */
  int nlists, caplists;
  int *listed; /* the items they listed                                  */
  int nlisted, caplisted;
  int *claimed_seen; /* (uid, list call) pairs said claimed              */
  int nclaimed_seen, capclaimed_seen;
  uint64_t *rawclaims; /* czxids of claim nodes the foreign consumer
                          deleted                                       */
  int nrawclaims, caprawclaims;
  uint64_t *tok;
  int *tokuid;
  size_t ntok, tokcap;
  counts_t empties[NPATH][NFMT];
  long lost_budget[NPATH][NFMT];
  struct {
    char name[32];
    int uid, fmt, valid;
  } peeked[NPATH];
  int pending;  /* accepted async calls not dispatched yet */
  pthread_mutex_t g;
  pthread_t loop_thread;
  int round, rounds, subs_alive;
  int64_t t0, t_end, ev;
  int stop, end_phase;
  int nviol, nkinds;
  char kinds[MAXKINDS][32];
  int kind_n[MAXKINDS];
  char msg[MAXKINDS][1536];
  uint64_t rng_loop, rng_sub[NSUB];
  int present_ms;
  /* what happened, for the summary */
  int st_put_items, st_taken, st_removed, st_raw, st_drained, st_empty_take,
      st_timeouts, st_canceled, st_busy, st_refused, st_destroys, st_in_cb,
      st_orphans, st_orphan_takes, st_efull, st_watchdog, st_peeks,
      st_sizes, st_lists, st_absent, st_batch_max, st_invalid,
      st_short_canceled, st_kept, st_claims, st_acks, st_nacks,
      st_redelivered, st_rawclaims, st_ack_lost, st_ack_enoent, st_eperm,
      st_given_up;
  char ring[RING][256];
  int nring;
} qr_t;

static qr_t *A;
static _Thread_local int in_call;       /* inside a zkl call of the test */
static _Thread_local int in_completion; /* inside one of our callbacks  */
static _Thread_local int tid;           /* 0 the loop, 1.. submitters   */
static _Thread_local uint64_t *rng;

static int rnd(int n) { return (int)(it_splitmix64(rng) % (uint64_t)n); }

static const char *fmtname(int f) {
  return f == ZKL_QUEUE_QN ? "qn" : f == ZKL_QUEUE_KAZOO ? "kazoo"
                                                         : "locking";
}

static void objdesc(char *buf, size_t len, int oi) {
  const obj_t *o = &A->o[oi];
  snprintf(buf, len, "o%d (p%d %s prio %d%s, session %d, gen %d)", oi,
           o->path, fmtname(o->fmt), prio_of[o->prio],
           o->max_items ? ", bounded" : o->soft_max ? ", soft-bounded" : "",
           o->sess, o->gen);
}

static void calldesc(char *buf, size_t len, int id) {
  const call_t *c = &A->calls[id];
  char extra[64] = "";
  if (c->kind == K_PUT) snprintf(extra, sizeof extra, " of %d item(s)",
                                 c->nitems);
  else if (c->kind == K_TAKE || c->kind == K_LIST)
    snprintf(extra, sizeof extra, " max %zu", c->max);
  else if (c->kind == K_ACK || c->kind == K_NACK)
    snprintf(extra, sizeof extra, "%s of claim %d",
             c->kind == K_ACK ? "" : c->where == ZKL_QUEUE_HEAD ? " head"
                                                                : " tail",
             c->claim);
  snprintf(buf, len, "call #%d %s%s%s (o%d gen %d, timeout %lld, thread %d, "
           "round %d)", id, kname[c->kind], c->async ? "_async" : "", extra,
           c->obj, c->gen, (long long)c->timeout, c->thread, c->round);
}

__attribute__((format(printf, 1, 2))) static void ev(const char *fmt, ...) {
  char *line = A->ring[A->nring++ % RING];
  int n = snprintf(line, sizeof A->ring[0], "%6lld r%-5d %c ",
                   (long long)(it_now_ms() - A->t0), A->round,
                   tid > 0 ? (char)('0' + tid) : in_completion ? 'C' : 'L');
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line + n, sizeof A->ring[0] - (size_t)n, fmt, ap);
  va_end(ap);
}

/* A contract violation: the first of each kind is kept and printed with
 * the last events; the run goes on; the test fails at its end. */
__attribute__((format(printf, 3, 4))) static void viol(const char *kind,
                                                       int oi,
                                                       const char *fmt, ...) {
  A->nviol++;
  for (int i = 0; i < A->nkinds; i++)
    if (strcmp(A->kinds[i], kind) == 0) {
      A->kind_n[i]++;
      return;
    }
  if (A->nkinds == MAXKINDS) return;
  int k = A->nkinds++;
  snprintf(A->kinds[k], sizeof A->kinds[k], "%s", kind);
  A->kind_n[k] = 1;
  char what[1024], who[160] = "-";
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (oi >= 0) objdesc(who, sizeof who, oi);
  snprintf(A->msg[k], sizeof A->msg[k],
           "queue-random seed %" PRIu64 " (replay: ZKL_QUEUE_SEED=%" PRIu64
           "), run %d, round %d, [%s] object %s: %s",
           A->seed, A->seed, A->variant, A->round, kind, who, what);
  fprintf(stderr, "%s\nthe last events (ms, round, L loop/C completion/1,2 "
                  "submitters):\n", A->msg[k]);
  int first = A->nring > RING ? A->nring - RING : 0;
  for (int i = first; i < A->nring; i++)
    fprintf(stderr, "  %s\n", A->ring[i % RING]);
  fflush(stderr);
}

/* ---- names, payloads, tokens -------------------------------------------------- */

/* As the library reads an item's name on path p: 0 and its format,
 * priority and sequence, or -1 (not an item of that path). */
static int parse_name(int p, const char *name, int *fmt, int *prio,
                      int32_t *seq) {
  const char *s;
  if (strncmp(name, "qn-", 3) == 0 && p != LPATH) {
    *fmt = ZKL_QUEUE_QN;
    *prio = 0;
    s = name + 3;
  } else if (strncmp(name, "entry-", 6) == 0) {
    const char *d = name + 6;
    if (strspn(d, "0123456789") != 3 || d[3] != '-') return -1;
    *fmt = p == LPATH ? ZKL_QUEUE_LOCKING : ZKL_QUEUE_KAZOO;
    *prio = (d[0] - '0') * 100 + (d[1] - '0') * 10 + (d[2] - '0');
    s = d + 4;
  } else {
    return -1;
  }
  const char *q = *s == '-' ? s + 1 : s;
  size_t n = strspn(q, "0123456789");
  if (n == 0 || n > 10 || q[n] != '\0') return -1;
  long long v = strtoll(s, NULL, 10);
  if (v > INT32_MAX || v < INT32_MIN) return -1;
  *seq = (int32_t)v;
  return 0;
}

static int prio_index(int prio) {
  for (int i = 0; i < NPRIO; i++)
    if (prio_of[i] == prio) return i;
  return -1;
}

/* A payload: 0xA5, the id (big-endian), then a pattern with NULs. */
#define HDR 5
static uint8_t pat(uint32_t u, size_t i) {
  return i == HDR ? 0 : (uint8_t)(u * 131u + (uint32_t)i * 7u);
}

static void payload_fill(char *buf, uint32_t u, size_t len) {
  buf[0] = (char)0xA5;
  buf[1] = (char)(u >> 24);
  buf[2] = (char)(u >> 16);
  buf[3] = (char)(u >> 8);
  buf[4] = (char)u;
  for (size_t i = HDR; i < len; i++) buf[i] = (char)pat(u, i);
}

/* The id a payload carries: >= 0, -1 empty, -2 not one of ours, -3 ours
 * but corrupt. */
static int decode(const char *d, size_t len) {
  if (len == 0) return -1;
  if (d == NULL || len < HDR || (uint8_t)d[0] != 0xA5) return -2;
  uint32_t u = (uint32_t)(uint8_t)d[1] << 24 | (uint32_t)(uint8_t)d[2] << 16 |
               (uint32_t)(uint8_t)d[3] << 8 | (uint32_t)(uint8_t)d[4];
  if (u >= (uint32_t)A->nitems) return -2;
  if (A->items[u].len != len || A->items[u].empty) return -3;
  for (size_t i = HDR; i < len; i++)
    if ((uint8_t)d[i] != pat(u, i)) return -3;
  return (int)u;
}

static size_t payload_len(void) {
  int r = rnd(100);
  if (r < 60) return HDR + (size_t)rnd(21);
  if (r < 90) return HDR + 21 + (size_t)rnd(280);
  if (r < 99) return HDR + 301 + (size_t)rnd(4000);
  return HDR + 4301 + (size_t)rnd(60000);
}

/* Tokens and whose they are: a put's call id (its items share its
 * transaction's zxid), or -2 - n for claim n.  0 and *was (the owner
 * already known) if t belongs to another owner; else 1. */
static int token_add(uint64_t t, int owner, int *was) {
  if ((A->ntok + 1) * 2 > A->tokcap) {
    size_t cap = A->tokcap ? A->tokcap * 2 : 4096;
    uint64_t *tok = calloc(cap, sizeof *tok);
    int *tu = calloc(cap, sizeof *tu);
    ck_assert(tok != NULL && tu != NULL);
    for (size_t i = 0; i < A->tokcap; i++) {
      if (A->tok[i] == 0) continue;
      size_t j = (size_t)(A->tok[i] * 0x9e3779b97f4a7c15ULL) & (cap - 1);
      while (tok[j] != 0) j = (j + 1) & (cap - 1);
      tok[j] = A->tok[i];
      tu[j] = A->tokuid[i];
    }
    free(A->tok);
    free(A->tokuid);
    A->tok = tok;
    A->tokuid = tu;
    A->tokcap = cap;
  }
  size_t j = (size_t)(t * 0x9e3779b97f4a7c15ULL) & (A->tokcap - 1);
  while (A->tok[j] != 0) {
    if (A->tok[j] == t) {
      *was = A->tokuid[j];
      return *was == owner;
    }
    j = (j + 1) & (A->tokcap - 1);
  }
  A->tok[j] = t;
  A->tokuid[j] = owner;
  A->ntok++;
  return 1;
}

static void push_int(int **v, int *n, int *cap, int x) {
  if (*n == *cap) {
    *cap = *cap ? *cap * 2 : 256;
    *v = realloc(*v, (size_t)*cap * sizeof **v);
    ck_assert_ptr_nonnull(*v);
  }
  (*v)[(*n)++] = x;
}

/* ---- objects and calls ------------------------------------------------------------ */

static void create_obj(int oi) {
  obj_t *o = &A->o[oi];
  o->sess = rnd(2);
  o->prio = o->fmt != ZKL_QUEUE_QN ? rnd(NPRIO) : 0;
  o->max_items = o->soft_max = 0;
  if (oi % OPP == OPP - 1) {
    if (rnd(2)) o->max_items = (size_t)(30 + rnd(200));
    else o->soft_max = (size_t)(20 + rnd(200));
  }
  zkl_queue_opts_t op;
  zkl_queue_opts_init(&op);
  op.format = o->fmt;
  if (o->fmt != ZKL_QUEUE_QN) op.priority = prio_of[o->prio];
  if (o->max_items) op.max_items = o->max_items;
  op.soft_max = o->soft_max;
  o->q = NULL;
  int rc = zkl_queue_create(&o->q, A->s[o->sess], A->path[o->path], &op);
  if (rc != 0 || o->q == NULL)
    viol("create", oi, "zkl_queue_create: %s (%s)", it_code(rc),
         zkl_last_error());
  o->users = 0;
  o->async = -1;
  o->nfly = 0;
  o->nheld = 0;
  memset(o->have, 0, sizeof o->have);
}

/* A new call of object oi (g held), in flight from now on. */
static int call_new(int kind, int oi, int async, int64_t timeout) {
  if (A->ncalls == A->maxcalls) return -1;
  int id = A->ncalls++;
  call_t *c = &A->calls[id];
  obj_t *o = &A->o[oi];
  memset(c, 0, sizeof *c);
  c->kind = kind;
  c->obj = oi;
  c->gen = o->gen;
  c->thread = tid;
  c->async = async;
  c->round = A->round;
  c->state = CS_SUBMITTING;
  c->timeout = timeout;
  c->path = o->path;
  c->fmt = o->fmt;
  c->bounded = o->max_items != 0 || o->soft_max != 0;
  c->t0 = it_now_ms();
  c->ev0 = ++A->ev;
  c->ptr = o->q;
  c->first = -1;
  c->uid = -1;
  c->claim = -1;
  c->cancels = o->cancels;
  c->patience = 30 + rnd(400);
  if (o->path == SPATH && timeout > 0) c->patience = timeout + 2000;
  memcpy(c->snap, o->maxseq, sizeof c->snap);
  memcpy(c->snap_have, o->have, sizeof c->snap_have);
  if (o->nfly > 0) {
    c->contended = 1;
    for (int i = 0; i < o->nfly; i++) A->calls[o->fly[i]].contended = 1;
  }
  ck_assert_int_lt(o->nfly, MAXFLY);
  o->fly[o->nfly++] = id;
  return id;
}

/* The call is over (returned, refused, or dispatched): g held. */
static void call_leave(int id) {
  call_t *c = &A->calls[id];
  obj_t *o = &A->o[c->obj];
  c->t1 = it_now_ms();
  c->ev1 = ++A->ev;
  if (o->gen != c->gen) return;
  for (int i = 0; i < o->nfly; i++)
    if (o->fly[i] == id) {
      o->fly[i] = o->fly[--o->nfly];
      break;
    }
}

static int64_t elapsed(const call_t *c) { return c->t1 - c->t0; }

static int canceled_since(const call_t *c) {
  return A->o[c->obj].cancels != c->cancels;
}

/* Calls without a timeout of their own (peek, size, remove, list, ack,
 * nack) do not list ZKL_ECANCELED among their codes, but one that waits
 * for another thread's call of the object is ended so by a cancel
 * (zkl__owner_claim): accepted when that is what happened. */
static int short_canceled(int id, int rc) {
  const call_t *c = &A->calls[id];
  if (rc != ZKL_ECANCELED || !c->contended || !canceled_since(c)) return 0;
  A->st_short_canceled++;
  return 1;
}

/* ---- claims ------------------------------------------------------------------- */

static void held_drop(obj_t *o, int cl) {
  for (int i = 0; i < o->nheld; i++)
    if (o->held[i] == cl) {
      o->held[i] = o->held[--o->nheld];
      return;
    }
}

/* The claim stops counting as open on its item (g held). */
static void claim_close(int cl) {
  claim_t *k = &A->claims[cl];
  if (k->uid >= 0 && A->items[k->uid].claim == cl) A->items[k->uid].claim = -1;
  if (k->ev_release == 0) k->ev_release = A->ev;
}

/* Every claim of item u so far, for a message. */
static const char *claim_history(int u, char *buf, size_t len) {
  static const char *const st[] = {"held", "settling", "done", "given up"};
  size_t at = 0;
  buf[0] = '\0';
  for (int cl = 0; cl < A->nclaims && at + 120 < len; cl++) {
    const claim_t *k = &A->claims[cl];
    if (k->uid != u) continue;
    at += (size_t)snprintf(buf + at, len - at, "%s claim %d by o%d gen %d "
                           "(token %" PRIu64 ", granted at event %lld, %s%s,"
                           " released at %lld)", at ? ";" : " history:", cl,
                           k->obj, k->gen, k->it.token,
                           (long long)k->ev_grant, st[k->state],
                           k->lost ? ", its node deleted by the foreign "
                                     "consumer" : "",
                           (long long)k->ev_release);
  }
  return buf;
}

static int rawclaim_seen(uint64_t czxid) {
  for (int i = 0; i < A->nrawclaims; i++)
    if (A->rawclaims[i] == czxid) return 1;
  return 0;
}

/* ---- a put's payloads and outcome ------------------------------------------------- */

typedef struct putbuf {
  zkl_buf_t b[50];
  size_t n;
  char *mem;
} putbuf_t;

static void put_prepare(int id, size_t n, putbuf_t *pb) {
  call_t *c = &A->calls[id];
  obj_t *o = &A->o[c->obj];
  size_t lens[50], total = 0;
  for (size_t i = 0; i < n; i++) {
    lens[i] = rnd(100) < 3 ? 0 : payload_len();
    total += lens[i];
  }
  for (size_t i = 0; total > 900000 && i < n; i++)
    if (lens[i] > 2000) {
      total -= lens[i] - 2000;
      lens[i] = 2000;
    }
  if (A->nitems + (int)n > A->capitems) {
    A->capitems = (A->capitems + (int)n) * 2;
    A->items = realloc(A->items, (size_t)A->capitems * sizeof *A->items);
    ck_assert_ptr_nonnull(A->items);
  }
  pb->mem = malloc(total + 1);
  ck_assert_ptr_nonnull(pb->mem);
  pb->n = n;
  c->first = A->nitems;
  c->nitems = (int)n;
  char *at = pb->mem;
  for (size_t i = 0; i < n; i++) {
    int u = A->nitems++;
    item_t *it = &A->items[u];
    memset(it, 0, sizeof *it);
    it->call = id;
    it->path = o->path;
    it->fmt = o->fmt;
    it->prio = o->prio;
    it->obj = c->obj;
    it->gen = o->gen;
    it->bidx = (int)i;
    it->len = (uint32_t)lens[i];
    it->empty = lens[i] == 0;
    it->put = IS_PENDING;
    it->how = IC_NONE;
    it->by = -1;
    it->claim = -1;
    if (it->empty) {
      A->empties[o->path][o->fmt].pending++;
      pb->b[i] = (zkl_buf_t){rnd(2) ? NULL : "x", 0};
    } else {
      payload_fill(at, (uint32_t)u, lens[i]);
      pb->b[i] = (zkl_buf_t){at, lens[i]};
      at += lens[i];
    }
  }
  A->st_put_items += (int)n;
}

static void put_outcome(int id, int outcome) {
  call_t *c = &A->calls[id];
  char cd[200];
  calldesc(cd, sizeof cd, id);
  for (int u = c->first; u < c->first + c->nitems; u++) {
    item_t *it = &A->items[u];
    if (it->put != IS_PENDING) continue;
    it->put = (uint8_t)outcome;
    if (it->empty) {
      counts_t *e = &A->empties[it->path][it->fmt];
      e->pending--;
      if (outcome == IS_OK) e->ok++;
      else if (outcome == IS_FAILED) e->failed++;
      else e->unknown++;
    } else if (outcome == IS_FAILED && it->how != IC_NONE) {
      viol("failed-put-item-seen", c->obj, "%s failed (%s), yet its item "
           "#%d was consumed by %s (call #%d)", cd, it_code(c->rc), u,
           icname[it->how], it->by);
    }
  }
}

/* What is wrong with call c's ZKL_EBUSY (a put, a take or a claim), or
 * NULL: it is only for a try (timeout 0) that met another call of the
 * object, never for an async call once accepted. */
static const char *busy_wrong(const call_t *c) {
  if (c->async) return "an accepted async call completed with ZKL_EBUSY";
  if (c->timeout != 0) return "ZKL_EBUSY from a call with a timeout";
  if (!c->contended)
    return "ZKL_EBUSY while no other call of the object was underway";
  return NULL;
}

/* A put's answer (blocking or async): rc checked against the contract. */
static void put_result(int id, int rc) {
  call_t *c = &A->calls[id];
  char cd[200];
  calldesc(cd, sizeof cd, id);
  c->rc = rc;
  int outcome = IS_FAILED;
  const char *bad = NULL;
  switch (rc) {
  case 0:
    outcome = IS_OK;
    break;
  case ZKL_EFULL:
    A->st_efull++;
    if (!c->bounded) bad = "ZKL_EFULL from an object with the default bound";
    break;
  case ZKL_ETIMEDOUT:
    A->st_timeouts++;
    if (c->timeout <= 0) bad = "ZKL_ETIMEDOUT without a deadline";
    else if (!c->async && elapsed(c) < c->timeout - 1)
      bad = "ZKL_ETIMEDOUT before the deadline";
    break;
  case ZKL_EBUSY:
    A->st_busy++;
    bad = busy_wrong(c);
    break;
  case ZKL_ECANCELED:
    A->st_canceled++;
    if (c->orphaned) outcome = IS_UNKNOWN;
    else if (!canceled_since(c))
      bad = "ZKL_ECANCELED without a cancel or destroy";
    break;
  default:
    outcome = IS_UNKNOWN;
    bad = "a code a put should not end with here (connected, no fault)";
  }
  if (c->must_busy && rc != ZKL_EBUSY && bad == NULL)
    bad = "the loop's try on an object whose async call is pending was not "
          "refused with ZKL_EBUSY";
  if (c->orphaned && rc != ZKL_ECANCELED) outcome = IS_UNKNOWN;
  if (bad != NULL)
    viol(rc == 0 ? "put-busy" : "put-code", c->obj, "%s returned %s after "
         "%lld ms: %s (%s)", cd, it_code(rc), (long long)elapsed(c), bad,
         zkl_last_error());
  put_outcome(id, outcome);
}

/* ---- what comes out of the queue ------------------------------------------------- */

/* An item returned by call id (or seen by a raw delete / the drain, id
 * -1, with path p): name, data and place checked.  Its id, -1 for an
 * empty payload, or -2 (reported).  *f, *prio, *seq from its name. */
static int inspect(int id, int p, int want_fmt, const zkl_item_t *it,
                   const char *cd, int *prio, int32_t *seq) {
  int oi = id >= 0 ? A->calls[id].obj : -1, nf;
  if (parse_name(p, it->name, &nf, prio, seq) != 0 || nf != want_fmt) {
    viol("item-name", oi, "%s got an item named \"%s\", not a %s item", cd,
         it->name, fmtname(want_fmt));
    return -2;
  }
  if (want_fmt != ZKL_QUEUE_QN && prio_index(*prio) < 0) {
    viol("item-name", oi, "%s got %s: a priority nobody puts", cd, it->name);
    return -2;
  }
  if (it->len > 0 && it->data == NULL) {
    viol("item-data", oi, "%s got %s with len %zu and no data", cd, it->name,
         it->len);
    return -2;
  }
  if (it->data != NULL && it->data[it->len] != '\0')
    viol("item-data", oi, "%s got %s: no NUL after its %zu bytes", cd,
         it->name, it->len);
  int u = decode(it->data, it->len);
  if (u == -2 || u == -3) {
    viol("item-data", oi, "%s got %s with a payload of %zu bytes that %s", cd,
         it->name, it->len, u == -2 ? "nobody put" : "is corrupt");
    return -2;
  }
  if (u < 0) return u;
  const item_t *x = &A->items[u];
  if (x->path != p || x->fmt != want_fmt)
    viol("item-place", oi, "%s got item #%d (%s) from p%d %s: it was put to "
         "p%d %s", cd, u, it->name, p, fmtname(want_fmt), x->path,
         fmtname(x->fmt));
  if (want_fmt != ZKL_QUEUE_QN && *prio != prio_of[x->prio])
    viol("item-prio", oi, "%s got item #%d as %s: its producer's priority "
         "is %d", cd, u, it->name, prio_of[x->prio]);
  if (x->put == IS_FAILED) {
    char pd[200];
    calldesc(pd, sizeof pd, x->call);
    viol("failed-put-item-seen", oi, "%s got item #%d (%s) of %s, which "
         "failed with %s", cd, u, it->name, pd, it_code(A->calls[x->call].rc));
  }
  return u;
}

static void owner_desc(char *buf, size_t len, int owner) {
  if (owner >= 0) calldesc(buf, len, owner);
  else if (owner <= -2) snprintf(buf, len, "claim %d", -2 - owner);
  else snprintf(buf, len, "?");
}

/* The token of item it (id u, -1 empty) as returned: its put's zxid,
 * shared by the put's items only (an item put again by a nack to the
 * tail, or of a claim, carries another: not checked). */
static void token_check(int id, const zkl_item_t *it, int u,
                        const char *cd) {
  int oi = id >= 0 ? A->calls[id].obj : -1, was = -1;
  if (it->token == 0) {
    viol("token", oi, "%s got %s with token 0", cd, it->name);
    return;
  }
  if (u < 0 || A->items[u].requeued || A->items[u].ctok != 0) return;
  int owner = A->items[u].call;
  if (!token_add(it->token, owner, &was)) {
    char a[200], b[200];
    owner_desc(a, sizeof a, owner);
    owner_desc(b, sizeof b, was);
    viol("token-unique", oi, "%s got %s (item #%d, put by %s) with token %"
         PRIu64 ", already the token of %s", cd, it->name, u, a, it->token,
         b);
  }
}

/* A claim's token: its own transaction's zxid, nobody else's. */
static void claim_token_check(int id, const zkl_item_t *it, int cl,
                              const char *cd) {
  int was = -1;
  if (it->token == 0)
    viol("token", A->calls[id].obj, "%s claimed %s with token 0", cd,
         it->name);
  else if (!token_add(it->token, -2 - cl, &was)) {
    char b[200];
    owner_desc(b, sizeof b, was);
    viol("token-unique", A->calls[id].obj, "%s claimed %s with token %"
         PRIu64 ", already the token of %s", cd, it->name, it->token, b);
  }
}

/* Item it, consumed by `how` (call id, or -1): at most once. */
static int consume(int id, int p, int f, int how, const zkl_item_t *it,
                   int64_t ev0, int64_t ev1, int *prio, int32_t *seq) {
  const call_t *c = id >= 0 ? &A->calls[id] : NULL;
  int oi = c != NULL ? c->obj : -1;
  char cd[200] = "the foreign consumer";
  if (c != NULL) calldesc(cd, sizeof cd, id);
  else if (how == IC_DRAIN) snprintf(cd, sizeof cd, "the drain");
  int u = inspect(id, p, f, it, cd, prio, seq);
  if (u == -2) return -2;
  if (how != IC_RAW && how != IC_ACK) token_check(id, it, u, cd);
  if (u == -1) {
    counts_t *e = &A->empties[p][f];
    e->consumed++;
    if (e->consumed > e->ok + e->pending + e->unknown)
      viol("empty-twice", oi, "%s got an empty item (%s): %d empty items "
           "consumed from p%d %s, only %d put (+%d pending, %d unknown)", cd,
           it->name, e->consumed, p, fmtname(f), e->ok, e->pending,
           e->unknown);
    return -1;
  }
  item_t *x = &A->items[u];
  if (x->how != IC_NONE) {
    viol("twice", oi, "%s got item #%d (%s), already consumed by %s (call "
         "#%d, seq %d)", cd, u, it->name, icname[x->how], x->by, x->seq);
    return u;
  }
  x->how = (uint8_t)how;
  x->by = id;
  x->seq = *seq;
  x->have_seq = 1;
  if (how != IC_ACK) x->token = it->token;
  x->ev_consume = ev0;
  x->ev_consumed = ev1;
  return u;
}

/* The items a take (or the drain: id -1) got, in the order returned. */
static void took(int id, int p, int f, int how, zkl_item_t *v, size_t n) {
  call_t *c = id >= 0 ? &A->calls[id] : NULL;
  obj_t *o = c != NULL ? &A->o[c->obj] : NULL;
  int oi = c != NULL ? c->obj : -1;
  char cd[200] = "the drain";
  if (c != NULL) calldesc(cd, sizeof cd, id);
  int prev_prio = -1;
  int32_t prev_seq = 0;
  uint64_t prev_tok = 0;
  int64_t ev0 = c != NULL ? c->ev0 : ++A->ev;
  int64_t ev1 = c != NULL ? c->ev1 : A->ev;
  for (size_t i = 0; i < n; i++) {
    int prio = 0;
    int32_t seq = 0;
    int u = consume(id, p, f, how, &v[i], ev0, ev1, &prio, &seq);
    if (u == -2) continue;
    if (how == IC_TAKE) A->st_taken++;
    else A->st_drained++;
    if (u >= 0 && A->items[u].claim >= 0 &&
        !A->claims[A->items[u].claim].lost) {
      const claim_t *k = &A->claims[A->items[u].claim];
      viol("claimed-taken", oi, "%s took item #%d (%s), claimed by o%d "
           "(claim %d, granted at event %lld) and neither settled nor "
           "given up", cd, u, v[i].name, k->obj, A->items[u].claim,
           (long long)k->ev_grant);
    }
    if (prev_prio >= 0 &&
        (prio < prev_prio || (prio == prev_prio && seq <= prev_seq)))
      viol("batch-order", oi, "%s returned %s (item %zu) after prio %d seq "
           "%d: not in queue order", cd, v[i].name, i, prev_prio, prev_seq);
    if (prio == prev_prio && v[i].token < prev_tok &&
        (u < 0 || (!A->items[u].requeued && A->items[u].ctok == 0)))
      viol("token-order", oi, "%s returned %s (item %zu) with token %" PRIu64
           ", below the %" PRIu64 " of the item before it in the queue", cd,
           v[i].name, i, v[i].token, prev_tok);
    prev_prio = prio;
    prev_seq = seq;
    prev_tok = v[i].token;
    /* one consumer's order: not with claims (a claimed item is skipped,
     * and comes back at its place if it is given back) */
    if (c == NULL || f == ZKL_QUEUE_LOCKING) continue;
    int pi = f == ZKL_QUEUE_KAZOO ? prio_index(prio) : 0;
    if (pi < 0) continue;
    /* the object's earlier takes (ended before this one began) */
    if (c->snap_have[pi] && seq <= c->snap[pi])
      viol("consumer-order", oi, "%s took %s (item #%d), but an earlier take "
           "of the object, over before this one began, had taken "
           "sequence %d of priority %d already", cd, v[i].name, u,
           c->snap[pi], prio);
    if (!c->orphaned && o->gen == c->gen &&
        (!o->have[pi] || seq > o->maxseq[pi])) {
      o->maxseq[pi] = seq;
      o->have[pi] = 1;
    }
  }
}

/* A take's or a claim's answer (blocking or async).  v/n: what it
 * returned. */
static void claim_granted(int id, zkl_item_t *it);
static void take_result(int id, int rc, zkl_item_t *v, size_t n) {
  call_t *c = &A->calls[id];
  char cd[200];
  calldesc(cd, sizeof cd, id);
  c->rc = rc;
  const char *bad = NULL;
  switch (rc) {
  case 0:
    if (n < 1 || n > c->max || v == NULL) bad = "success without 1..max items";
    if (c->orphaned) bad = "items delivered after the object's destroy";
    break;
  case ZKL_EEMPTY:
    A->st_empty_take++;
    if (c->timeout != 0) bad = "ZKL_EEMPTY from a call with a timeout";
    else if (c->fmt != ZKL_QUEUE_LOCKING)
      push_int(&A->absent, &A->nabsent, &A->capabsent, id);
    break;
  case ZKL_ETIMEDOUT:
    A->st_timeouts++;
    if (c->timeout <= 0) bad = "ZKL_ETIMEDOUT without a deadline";
    else if (elapsed(c) < c->timeout - 1)
      bad = "ZKL_ETIMEDOUT before the deadline";
    else if (!c->contended && c->timeout >= A->present_ms &&
             c->fmt != ZKL_QUEUE_LOCKING)
      push_int(&A->absent, &A->nabsent, &A->capabsent, id);
    break;
  case ZKL_EBUSY:
    A->st_busy++;
    bad = busy_wrong(c);
    break;
  case ZKL_ECANCELED:
    A->st_canceled++;
    if (c->orphaned) {
      /* an orphaned claim is given up: its item is not lost */
      if (c->kind == K_TAKE) {
        A->lost_budget[c->path][c->fmt] += (long)c->max;
        A->st_orphan_takes++;
      }
    } else if (!canceled_since(c)) {
      bad = "ZKL_ECANCELED without a cancel or destroy";
    }
    break;
  default:
    bad = "a code a take or claim should not end with here (connected, no "
          "fault)";
  }
  if (c->must_busy && rc != ZKL_EBUSY)
    bad = "the loop's try on an object whose async call is pending was not "
          "refused with ZKL_EBUSY";
  if (rc != 0 && (v != NULL || n != 0))
    viol("take-items", c->obj, "%s failed with %s but returned %zu items",
         cd, it_code(rc), n);
  if (bad != NULL)
    viol(rc == 0 ? "take-busy" : "take-code", c->obj, "%s returned %s after "
         "%lld ms: %s (%s)", cd, it_code(rc), (long long)elapsed(c), bad,
         zkl_last_error());
  if (rc != 0 || v == NULL) return;
  if (c->kind == K_CLAIM) {
    if (n == 1) claim_granted(id, &v[0]);
    return;
  }
  took(id, c->path, c->fmt, IC_TAKE, v, n);
  if ((int)n > A->st_batch_max) A->st_batch_max = (int)n;
}

/* A claim came (g held): exclusive, with a larger token every time. */
static void claim_granted(int id, zkl_item_t *it) {
  call_t *c = &A->calls[id];
  obj_t *o = &A->o[c->obj];
  char cd[200];
  calldesc(cd, sizeof cd, id);
  int prio;
  int32_t seq;
  int u = inspect(id, c->path, c->fmt, it, cd, &prio, &seq);
  if (u == -2) return;
  A->st_claims++;
  if (A->nclaims == A->capclaims) {
    A->capclaims = A->capclaims ? A->capclaims * 2 : 256;
    A->claims = realloc(A->claims, (size_t)A->capclaims * sizeof *A->claims);
    ck_assert_ptr_nonnull(A->claims);
  }
  int cl = A->nclaims++;
  claim_t *k = &A->claims[cl];
  memset(k, 0, sizeof *k);
  k->uid = u;
  k->obj = c->obj;
  k->gen = c->gen;
  k->call = id;
  k->settle = -1;
  k->state = CL_HELD;
  k->ev_grant = c->ev1;
  claim_token_check(id, it, cl, cd);
  k->it = *it;
  k->it.data = malloc(it->len + 1);
  ck_assert_ptr_nonnull(k->it.data);
  if (it->len > 0) memcpy(k->it.data, it->data, it->len);
  k->it.data[it->len] = '\0';
  if (rawclaim_seen(it->token)) { /* deleted before we heard of it */
    k->lost = 1;
    k->ev_lost = c->ev1;
  }
  if (u >= 0) {
    item_t *x = &A->items[u];
    if (x->how != IC_NONE && x->ev_consumed < c->ev0)
      viol("claimed-gone", c->obj, "%s claimed item #%d (%s), consumed by "
           "%s (call #%d) before the claim began", cd, u, it->name,
           icname[x->how], x->by);
    if (x->claim >= 0 && !A->claims[x->claim].lost) {
      const claim_t *h = &A->claims[x->claim];
      char hist[900];
      viol("claimed-twice", c->obj, "%s claimed item #%d (%s), which o%d "
           "(gen %d) holds through claim %d (token %" PRIu64 ", call #%d) "
           "and has neither settled nor given up;%s", cd, u, it->name,
           h->obj, h->gen, x->claim, h->it.token, h->call,
           claim_history(u, hist, sizeof hist));
    }
    if (x->ctok != 0) A->st_redelivered++;
    if (it->token <= x->ctok || it->token <= x->token)
      viol("claim-token", c->obj, "%s claimed item #%d (%s) with token %"
           PRIu64 ": not above its earlier claim's %" PRIu64 " (and the "
           "item's czxid %" PRIu64 ")", cd, u, it->name, it->token, x->ctok,
           x->token);
    x->ctok = it->token;
    if (!k->lost) x->claim = cl;
  }
  if (o->gen == c->gen && !c->orphaned) {
    if (o->nheld < MAXHELD) o->held[o->nheld++] = cl;
    else viol("test", c->obj, "more than %d claims held", MAXHELD);
  }
}

/* ---- async calls ------------------------------------------------------------------ */

static void on_take(zkl_queue_t *q, int rc, zkl_item_t *items, size_t n,
                    void *arg);
static void on_put(void *obj, int rc, uint64_t token, void *arg);

/* After an async call returned rc: 0 accepted, else refused. */
static void settle_refused(int id);
static void submitted(int id, int rc, int must_busy, int idle) {
  call_t *c = &A->calls[id];
  obj_t *o = &A->o[c->obj];
  char cd[200];
  calldesc(cd, sizeof cd, id);
  ev("%s -> %s", cd, it_code(rc));
  if (c->n != 0)
    viol("inline", c->obj, "%s: its completion ran before the call returned",
         cd);
  if (rc == 0) {
    c->state = CS_PENDING;
    A->pending++;
    o->async = id;
    if (must_busy)
      viol("async-busy", c->obj, "%s accepted while the object's async call "
           "#%d has not completed yet: expected ZKL_EBUSY", cd, must_busy - 1);
    return;
  }
  c->state = CS_REFUSED;
  c->rc = rc;
  A->st_refused++;
  call_leave(id);
  if (c->kind == K_PUT) put_outcome(id, IS_FAILED);
  if (c->kind == K_ACK || c->kind == K_NACK) settle_refused(id);
  if (rc == ZKL_EBUSY) {
    A->st_busy++;
    if (idle)
      viol("async-busy", c->obj, "%s refused with ZKL_EBUSY, though no call "
           "of the object was underway (%s)", cd, zkl_last_error());
  } else {
    viol("async-refused", c->obj, "%s refused with %s (%s)", cd, it_code(rc),
         zkl_last_error());
  }
}

static void act_take_async(int oi, size_t max, int64_t timeout) {
  obj_t *o = &A->o[oi];
  int must_busy = o->async >= 0 ? o->async + 1 : 0, idle = o->nfly == 0;
  int id = call_new(K_TAKE, oi, 1, timeout);
  if (id < 0) return;
  A->calls[id].max = max;
  in_call++;
  int rc = zkl_queue_take_async(o->q, max, timeout, on_take,
                                (void *)(intptr_t)id);
  in_call--;
  submitted(id, rc, must_busy, idle);
}

static void act_claim_async(int oi, int64_t timeout) {
  obj_t *o = &A->o[oi];
  if (o->fmt != ZKL_QUEUE_LOCKING || o->nheld >= CLAIMS) return;
  int must_busy = o->async >= 0 ? o->async + 1 : 0, idle = o->nfly == 0;
  int id = call_new(K_CLAIM, oi, 1, timeout);
  if (id < 0) return;
  A->calls[id].max = 1;
  in_call++;
  int rc = zkl_queue_claim_async(o->q, timeout, on_take,
                                 (void *)(intptr_t)id);
  in_call--;
  submitted(id, rc, must_busy, idle);
}

static void act_put_async(int oi, size_t n, int64_t timeout) {
  obj_t *o = &A->o[oi];
  int must_busy = o->async >= 0 ? o->async + 1 : 0, idle = o->nfly == 0;
  int id = call_new(K_PUT, oi, 1, timeout);
  if (id < 0) return;
  putbuf_t pb;
  put_prepare(id, n, &pb);
  in_call++;
  int rc = n == 1 && rnd(2)
               ? zkl_queue_put_async(o->q, pb.b[0].data, pb.b[0].len, timeout,
                                     on_put, (void *)(intptr_t)id)
               : zkl_queue_put_batch_async(o->q, pb.b, n, timeout, on_put,
                                           (void *)(intptr_t)id);
  in_call--;
  /* the payloads are copied: ours go at once */
  memset(pb.mem, 0x5a, 1);
  free(pb.mem);
  submitted(id, rc, must_busy, idle);
}

/* A claim of the object to settle: one it holds (not settling). */
static int pick_held(int oi) {
  obj_t *o = &A->o[oi];
  int n = 0, which[MAXHELD];
  for (int i = 0; i < o->nheld; i++)
    if (A->claims[o->held[i]].state == CL_HELD) which[n++] = o->held[i];
  return n == 0 ? -1 : which[rnd(n)];
}

static void settle_begin(int id, int cl) {
  claim_t *k = &A->claims[cl];
  k->state = CL_SETTLING;
  k->settle = id;
  A->calls[id].claim = cl;
  A->calls[id].uid = k->uid;
  claim_close(cl); /* an ack or nack may free the item at any time now */
}

static void on_settle(void *obj, int rc, uint64_t token, void *arg);

static void act_settle_async(int oi, int kind, int where) {
  obj_t *o = &A->o[oi];
  int cl = pick_held(oi);
  if (cl < 0) return;
  int must_busy = o->async >= 0 ? o->async + 1 : 0, idle = o->nfly == 0;
  int id = call_new(kind, oi, 1, -1);
  if (id < 0) return;
  A->calls[id].where = where;
  settle_begin(id, cl);
  in_call++;
  int rc = kind == K_ACK
               ? zkl_queue_ack_async(o->q, &A->claims[cl].it, on_settle,
                                     (void *)(intptr_t)id)
               : zkl_queue_nack_async(o->q, &A->claims[cl].it, where,
                                      on_settle, (void *)(intptr_t)id);
  in_call--;
  submitted(id, rc, must_busy, idle);
}

static void random_action(int oi);
static void slow_action(int oi, int loop);
static void act_destroy(int oi);
static void act_cancel(int oi, const char *why);

/* What a loop program might do next, from inside a completion. */
static void follow_up(int id) {
  const call_t *c = &A->calls[id];
  int oi = c->obj, r = rnd(100);
  if (c->orphaned || A->o[oi].gen != c->gen) {
    if (r < 15) random_action(rnd(NOBJ));
    return;
  }
  if (c->path == SPATH) {
    if (r < 50) slow_action(oi, 1);
    return;
  }
  if (c->kind == K_CLAIM && c->rc == 0 && r < 70) { /* settle it at once */
    int w = rnd(10);
    act_settle_async(oi, w < 6 ? K_ACK : K_NACK,
                     w < 8 ? ZKL_QUEUE_HEAD : ZKL_QUEUE_TAIL);
    return;
  }
  if (r < 5) {
    act_destroy(oi); /* from inside its own completion */
  } else if (r < 10) {
    random_action(rnd(NOBJ));
  } else if (r < 30) {
    if (A->o[oi].fmt == ZKL_QUEUE_LOCKING && rnd(2))
      act_claim_async(oi, rnd(3) == 0 ? 0 : rnd(2) ? -1 : 1 + rnd(300));
    else
      act_take_async(oi, rnd(2) ? 1 : 1 + (size_t)rnd(100),
                     rnd(3) == 0 ? 0 : rnd(2) ? -1 : 1 + rnd(300));
  } else if (r < 42) {
    act_put_async(oi, 1 + (size_t)rnd(rnd(4) == 0 ? 50 : 3), -1);
  } else if (r < 46) {
    act_cancel(oi, "from a completion");
  } else if (r < 50) {
    act_take_async(oi, 1 + (size_t)rnd(20), -1);
    act_cancel(oi, "right after its take, from a completion");
  } else if (r < 53) {
    if (rnd(2) && A->variant != 0) act_take_async(oi, 1 + (size_t)rnd(300), -1);
    else act_put_async(oi, 1 + (size_t)rnd(20), -1);
    act_destroy(oi);
  }
}

/* Common entry of a completion: 1 if it is to be looked at. */
static int completion_enter(int id, void *obj, int rc) {
  if (!pthread_equal(pthread_self(), A->loop_thread)) {
    viol("completion-thread", -1, "call #%d's completion ran on a thread "
         "that does not dispatch", id);
    return 0;
  }
  if (id < 0 || id >= A->ncalls) {
    viol("completion-refused", -1, "a completion for a refused call (arg "
         "%d, %s)", id, it_code(rc));
    return 0;
  }
  call_t *c = &A->calls[id];
  char cd[200];
  calldesc(cd, sizeof cd, id);
  if (in_call)
    viol("inline", c->obj, "%s: its completion ran inside a call of the "
         "test", cd);
  if (c->state != CS_PENDING) {
    viol("completion-twice", c->obj, "%s (%s) got a completion (%s)%s", cd,
         c->state == CS_REFUSED ? "refused" : "done", it_code(rc),
         c->state == CS_DONE ? ": a second one" : "");
    return 0;
  }
  c->state = CS_DONE;
  c->n++;
  A->pending--;
  call_leave(id);
  obj_t *o = &A->o[c->obj];
  if (o->gen == c->gen && o->async == id) o->async = -1;
  ev("completion of %s: %s%s", cd, it_code(rc),
     c->orphaned ? " (destroyed)" : "");
  if (obj != c->ptr)
    viol("completion-obj", c->obj, "%s completed with obj %p, made on %p",
         cd, obj, c->ptr);
  if (c->orphaned && rc != ZKL_ECANCELED)
    viol("orphan-code", c->obj, "%s completed with %s after its object was "
         "destroyed: expected ZKL_ECANCELED (%s)", cd, it_code(rc),
         zkl_last_error());
  return 1;
}

static void on_take(zkl_queue_t *q, int rc, zkl_item_t *items, size_t n,
                    void *arg) {
  int id = (int)(intptr_t)arg;
  if (!completion_enter(id, q, rc)) {
    zkl_items_free(items, n);
    return;
  }
  in_completion++;
  if (A->calls[id].kind != K_TAKE && A->calls[id].kind != K_CLAIM)
    viol("completion-kind", A->calls[id].obj, "call #%d (%s) completed "
         "through the take callback", id, kname[A->calls[id].kind]);
  else take_result(id, rc, items, n);
  zkl_items_free(items, n);
  if (!A->end_phase) follow_up(id);
  in_completion--;
}

static void on_put(void *obj, int rc, uint64_t token, void *arg) {
  int id = (int)(intptr_t)arg;
  if (!completion_enter(id, obj, rc)) return;
  in_completion++;
  if (token != 0)
    viol("put-token", A->calls[id].obj, "call #%d's put completed with "
         "token %" PRIu64 ", not 0", id, token);
  if (A->calls[id].kind != K_PUT)
    viol("completion-kind", A->calls[id].obj, "call #%d (%s) completed "
         "through the put callback", id, kname[A->calls[id].kind]);
  else put_result(id, rc);
  if (!A->end_phase) follow_up(id);
  in_completion--;
}

/* ---- settling claims ------------------------------------------------------------ */

/* An ack or nack that was not made (refused, or canceled while it waited
 * for another call of the object): the object still holds the claim. */
static void settle_refused(int id) {
  call_t *c = &A->calls[id];
  claim_t *k = &A->claims[c->claim];
  if (k->state != CL_SETTLING) return;
  k->state = CL_HELD;
  k->ev_release = 0;
  if (k->uid >= 0 && !k->lost) {
    item_t *x = &A->items[k->uid];
    if (x->claim < 0) x->claim = c->claim;
  }
}

static void settle_result(int id, int rc) {
  call_t *c = &A->calls[id];
  claim_t *k = &A->claims[c->claim];
  obj_t *o = &A->o[c->obj];
  char cd[200];
  calldesc(cd, sizeof cd, id);
  c->rc = rc;
  if (rc == ZKL_ECANCELED && c->orphaned) {
    /* the object is gone: its claims were given up at its destroy; an
     * ack may have been made (its item gone) or not */
    if (c->kind == K_ACK && k->uid >= 0) A->items[k->uid].maybe_acked = 1;
    if (c->kind == K_NACK && c->where == ZKL_QUEUE_TAIL && k->uid >= 0)
      A->items[k->uid].requeued = 1; /* maybe put again: renamed */
    if (c->kind == K_ACK && k->uid < 0)
      A->lost_budget[c->path][c->fmt]++;
    return;
  }
  if (short_canceled(id, rc)) {
    settle_refused(id);
    return;
  }
  if (o->gen == c->gen) held_drop(o, c->claim);
  k->state = CL_DONE;
  int lost_before = k->lost && k->ev_lost < c->ev0;
  switch (rc) {
  case 0:
    if (lost_before)
      viol("settle-lost", c->obj, "%s returned 0, though its claim node had "
           "been deleted by the foreign consumer (event %lld) before it "
           "began", cd, (long long)k->ev_lost);
    if (c->kind == K_ACK) {
      A->st_acks++;
      int prio;
      int32_t seq;
      consume(id, c->path, c->fmt, IC_ACK, &k->it, c->ev0, c->ev1, &prio,
              &seq);
    } else {
      A->st_nacks++;
      if (c->where == ZKL_QUEUE_TAIL && k->uid >= 0)
        A->items[k->uid].requeued = 1;
    }
    break;
  case ZKL_ELOST:
    A->st_ack_lost++;
    if (!k->lost) {
      char h[900];
      viol("settle-code", c->obj, "%s returned ZKL_ELOST, but nobody deleted "
           "its claim (%s; item #%d%s)", cd, zkl_last_error(), k->uid,
           claim_history(k->uid, h, sizeof h));
    }
    break;
  case ZKL_ENOENT:
    A->st_ack_enoent++;
    if (k->uid >= 0) push_int(&A->gone, &A->ngone, &A->capgone, id);
    break;
  default:
    viol("settle-code", c->obj, "%s returned %s (%s)", cd, it_code(rc),
         zkl_last_error());
  }
}

static void on_settle(void *obj, int rc, uint64_t token, void *arg) {
  int id = (int)(intptr_t)arg;
  if (!completion_enter(id, obj, rc)) return;
  in_completion++;
  if (token != 0)
    viol("put-token", A->calls[id].obj, "call #%d completed with token %"
         PRIu64 ", not 0", id, token);
  if (A->calls[id].kind != K_ACK && A->calls[id].kind != K_NACK)
    viol("completion-kind", A->calls[id].obj, "call #%d (%s) completed "
         "through the settle callback", id, kname[A->calls[id].kind]);
  else settle_result(id, rc);
  if (!A->end_phase) follow_up(id);
  in_completion--;
}

/* ---- blocking calls (g held on entry and exit; released during the call
 * unless the loop makes it: the loop's calls are tries, or calls on an
 * idle object) -------------------------------------------------------------- */

static int call_start(int kind, int oi, int64_t timeout) {
  obj_t *o = &A->o[oi];
  int must_busy = tid == 0 && timeout == 0 && o->async >= 0;
  int id = call_new(kind, oi, 0, timeout);
  if (id < 0) return -1;
  A->calls[id].must_busy = must_busy;
  o->users++;
  return id;
}

/* Just before the zkl call: g let go (by a submitter), and the thread
 * marked as inside a call (a completion there would have run inline). */
static void blocking_begin(void) {
  if (tid != 0) pthread_mutex_unlock(&A->g);
  in_call++;
}

/* Just after it: g held again, and the end of call id recorded; the call. */
static call_t *blocking_end(int id, int rc) {
  in_call--;
  if (tid != 0) pthread_mutex_lock(&A->g);
  call_t *c = &A->calls[id];
  A->o[c->obj].users--;
  call_leave(id);
  c->state = CS_DONE;
  c->n = 1;
  c->rc = rc;
  char cd[200];
  calldesc(cd, sizeof cd, id);
  ev("%s -> %s (%lld ms)", cd, it_code(rc), (long long)elapsed(c));
  return c;
}

static void do_take(int oi, size_t max, int64_t timeout, int single) {
  obj_t *o = &A->o[oi];
  int claim = o->fmt == ZKL_QUEUE_LOCKING && rnd(2) && o->nheld < CLAIMS;
  int id = call_start(claim ? K_CLAIM : K_TAKE, oi, timeout);
  if (id < 0) return;
  A->calls[id].max = single || claim ? 1 : max;
  zkl_queue_t *q = o->q;
  zkl_item_t one;
  zkl_item_t *v = NULL;
  size_t n = 0;
  memset(&one, 0x77, sizeof one);
  blocking_begin();
  int rc = claim    ? zkl_queue_claim(q, timeout, &one)
           : single ? zkl_queue_take(q, timeout, &one)
                    : zkl_queue_take_batch(q, max, timeout, &v, &n);
  blocking_end(id, rc);
  if ((single || claim) && rc == 0) {
    v = &one;
    n = 1;
  } else if (single || claim) {
    if (one.data != NULL || one.len != 0 || one.token != 0 ||
        one.name[0] != '\0')
      viol("take-items", oi, "call #%d: %s failed with %s but did not "
           "zero *item", id, claim ? "claim" : "take", it_code(rc));
  }
  take_result(id, rc, v, n);
  if (single || claim) zkl_item_free(&one);
  else zkl_items_free(v, n);
}

static void do_put(int oi, size_t n, int64_t timeout) {
  int id = call_start(K_PUT, oi, timeout);
  if (id < 0) return;
  putbuf_t pb;
  put_prepare(id, n, &pb);
  zkl_queue_t *q = A->o[oi].q;
  int single = n == 1 && rnd(2);
  blocking_begin();
  int rc = single ? zkl_queue_put(q, pb.b[0].data, pb.b[0].len, timeout)
                  : zkl_queue_put_batch(q, pb.b, n, timeout);
  blocking_end(id, rc);
  free(pb.mem);
  put_result(id, rc);
}

static void do_settle(int oi, int kind, int where) {
  int cl = pick_held(oi);
  if (cl < 0) return;
  int id = call_start(kind, oi, -1);
  if (id < 0) return;
  A->calls[id].where = where;
  settle_begin(id, cl);
  zkl_queue_t *q = A->o[oi].q;
  zkl_item_t it = A->claims[cl].it; /* claims may move: a copy */
  blocking_begin();
  int rc = kind == K_ACK ? zkl_queue_ack(q, &it)
                         : zkl_queue_nack(q, &it, where);
  blocking_end(id, rc);
  settle_result(id, rc);
}

/* An item seen by peek or list, or being removed: was it there? */
static void seen_check(int id, int u, const char *name) {
  const call_t *c = &A->calls[id];
  const item_t *x = &A->items[u];
  char cd[200];
  calldesc(cd, sizeof cd, id);
  if (x->path != c->path || x->fmt != c->fmt)
    viol("item-place", c->obj, "%s saw item #%d (%s), put to p%d %s", cd, u,
         name, x->path, fmtname(x->fmt));
  if (x->put == IS_FAILED)
    viol("failed-put-item-seen", c->obj, "%s saw item #%d (%s) of call #%d, "
         "which failed with %s", cd, u, name, x->call,
         it_code(A->calls[x->call].rc));
  if (x->how != IC_NONE && x->ev_consumed < c->ev0)
    viol("seen-gone", c->obj, "%s saw item #%d (%s), consumed by %s (call "
         "#%d) before the call began", cd, u, name, icname[x->how], x->by);
}

static void do_peek(int oi) {
  int id = call_start(K_PEEK, oi, -1);
  if (id < 0) return;
  A->st_peeks++;
  zkl_queue_t *q = A->o[oi].q;
  zkl_item_t it;
  blocking_begin();
  int rc = zkl_queue_peek(q, &it);
  call_t *c = blocking_end(id, rc);
  char cd[200];
  calldesc(cd, sizeof cd, id);
  if (rc == 0) {
    int f, prio;
    int32_t seq;
    if (parse_name(c->path, it.name, &f, &prio, &seq) != 0 || f != c->fmt) {
      viol("item-name", oi, "%s: peek returned \"%s\"", cd, it.name);
    } else {
      int u = decode(it.data, it.len);
      if (u == -2 || u == -3)
        viol("item-data", oi, "%s: peek returned %s with a payload of %zu "
             "bytes that %s", cd, it.name, it.len,
             u == -2 ? "nobody put" : "is corrupt");
      if (u >= 0) seen_check(id, u, it.name);
      if (u >= -1) token_check(id, &it, u, cd);
      if (u >= -1) {
        snprintf(A->peeked[c->path].name, sizeof A->peeked[0].name, "%s",
                 it.name);
        A->peeked[c->path].uid = u;
        A->peeked[c->path].fmt = f;
        A->peeked[c->path].valid = 1;
      }
    }
    zkl_item_free(&it);
  } else if (rc == ZKL_EEMPTY) {
    if (c->fmt != ZKL_QUEUE_LOCKING)
      push_int(&A->absent, &A->nabsent, &A->capabsent, id);
  } else if (!short_canceled(id, rc)) {
    viol("peek-code", oi, "%s returned %s (%s)", cd, it_code(rc),
         zkl_last_error());
  }
}

static void do_list(int oi) {
  size_t max = rnd(3) == 0 ? 1 + (size_t)rnd(50) : 0;
  int id = call_start(K_LIST, oi, -1);
  if (id < 0) return;
  A->st_lists++;
  A->calls[id].max = max;
  zkl_queue_t *q = A->o[oi].q;
  zkl_item_t *v = (zkl_item_t *)1;
  size_t n = 99;
  blocking_begin();
  int rc = zkl_queue_list(q, max, &v, &n);
  call_t *c = blocking_end(id, rc);
  char cd[200];
  calldesc(cd, sizeof cd, id);
  if (rc != 0) {
    if (v != NULL || n != 0)
      viol("list-items", oi, "%s failed with %s but returned %zu items", cd,
           it_code(rc), n);
    if (!short_canceled(id, rc))
      viol("list-code", oi, "%s returned %s (%s)", cd, it_code(rc),
           zkl_last_error());
    return;
  }
  if ((n == 0) != (v == NULL) || (max > 0 && n > max))
    viol("list-items", oi, "%s returned %zu items (array %s)", cd, n,
         v == NULL ? "NULL" : "set");
  c->first = A->nlisted;
  int prev_prio = -1;
  int32_t prev_seq = 0;
  for (size_t i = 0; i < n; i++) {
    int prio;
    int32_t seq;
    int u = inspect(id, c->path, c->fmt, &v[i], cd, &prio, &seq);
    if (u == -2) continue;
    if (prev_prio >= 0 &&
        (prio < prev_prio || (prio == prev_prio && seq <= prev_seq)))
      viol("list-order", oi, "%s listed %s (item %zu) after prio %d seq %d: "
           "not in queue order", cd, v[i].name, i, prev_prio, prev_seq);
    prev_prio = prio;
    prev_seq = seq;
    if (c->fmt != ZKL_QUEUE_LOCKING && v[i].claimed)
      viol("list-claimed", oi, "%s says %s is claimed: no claims in this "
           "format", cd, v[i].name);
    token_check(id, &v[i], u, cd);
    if (u < 0) continue;
    seen_check(id, u, v[i].name);
    const item_t *x = &A->items[u];
    if (x->claim >= 0 && !v[i].claimed) {
      const claim_t *k = &A->claims[x->claim];
      if (k->state == CL_HELD && !k->lost && k->ev_grant < c->ev0)
        viol("list-claimed", oi, "%s says %s (item #%d) is not claimed: o%d "
             "holds it (claim %d, granted at event %lld, before the list)",
             cd, v[i].name, u, k->obj, x->claim, (long long)k->ev_grant);
    }
    if (v[i].claimed) {
      push_int(&A->claimed_seen, &A->nclaimed_seen, &A->capclaimed_seen, u);
      push_int(&A->claimed_seen, &A->nclaimed_seen, &A->capclaimed_seen, id);
    }
    push_int(&A->listed, &A->nlisted, &A->caplisted, u);
  }
  c->nitems = A->nlisted - c->first;
  if (max == 0) push_int(&A->lists, &A->nlists, &A->caplists, id);
  zkl_items_free(v, n);
}

/* How many children p may have at most (each call on its own): the
 * foreign ones and every item not known to be gone before the call. */
static int size_bound(int p, int64_t ev0) {
  int n = nforeign(p);
  for (int u = 0; u < A->nitems; u++) {
    const item_t *x = &A->items[u];
    if (x->path != p || x->put == IS_FAILED) continue;
    if (x->how != IC_NONE && x->ev_consumed < ev0) continue;
    n++;
  }
  return n;
}

static void do_size(int oi) {
  int id = call_start(K_SIZE, oi, -1);
  if (id < 0) return;
  A->st_sizes++;
  zkl_queue_t *q = A->o[oi].q;
  size_t n = 12345;
  blocking_begin();
  int rc = zkl_queue_size(q, &n);
  call_t *c = blocking_end(id, rc);
  char cd[200];
  calldesc(cd, sizeof cd, id);
  if (rc != 0) {
    if (!short_canceled(id, rc))
      viol("size-code", oi, "%s returned %s (%s)", cd, it_code(rc),
           zkl_last_error());
    return;
  }
  int hi = size_bound(c->path, c->ev0);
  if ((int)n < nforeign(c->path) || (int)n > hi)
    viol("size", oi, "%s said %zu; p%d has %d foreign children and at most "
         "%d children in all", cd, n, c->path, nforeign(c->path), hi);
}

static void do_remove(int oi) {
  obj_t *o = &A->o[oi];
  int p = o->path, u = -2, want_inval = 0, want_enoent = 0;
  char name[32];
  if (A->peeked[p].valid && rnd(4) != 0) {
    snprintf(name, sizeof name, "%s", A->peeked[p].name);
    u = A->peeked[p].uid;
    want_inval = A->peeked[p].fmt != o->fmt;
    if (!want_inval && rnd(2)) A->peeked[p].valid = 0;
  } else { /* a name that never was */
    if (o->fmt == ZKL_QUEUE_QN) snprintf(name, sizeof name, "qn-0999999999");
    else snprintf(name, sizeof name, "entry-%03d-0999999999",
                  prio_of[o->prio]);
    want_enoent = 1;
  }
  int id = call_start(K_REMOVE, oi, -1);
  if (id < 0) return;
  A->calls[id].uid = u;
  zkl_queue_t *q = o->q;
  blocking_begin();
  int rc = zkl_queue_remove(q, name);
  call_t *c = blocking_end(id, rc);
  char cd[200];
  calldesc(cd, sizeof cd, id);
  if (want_inval) {
    if (rc != ZKL_EINVAL)
      viol("remove-code", oi, "%s of \"%s\" (another format's name) returned "
           "%s: expected ZKL_EINVAL", cd, name, it_code(rc));
    return;
  }
  if (rc == ZKL_ENOENT && !want_enoent) {
    if (u >= 0) push_int(&A->gone, &A->ngone, &A->capgone, id);
    return;
  }
  if (short_canceled(id, rc)) return;
  if (want_enoent) {
    if (rc != ZKL_ENOENT)
      viol("remove-code", oi, "%s of \"%s\" returned %s: no such item ever "
           "was (%s)", cd, name, it_code(rc), zkl_last_error());
    return;
  }
  if (rc != 0) {
    viol("remove-code", oi, "%s of \"%s\" returned %s (%s)", cd, name,
         it_code(rc), zkl_last_error());
    return;
  }
  A->st_removed++;
  if (u == -1) { /* an empty one */
    counts_t *e = &A->empties[p][o->fmt];
    e->consumed++;
    if (e->consumed > e->ok + e->pending + e->unknown)
      viol("empty-twice", oi, "%s removed an empty item (%s) too many", cd,
           name);
    return;
  }
  item_t *x = &A->items[u];
  seen_check(id, u, name);
  if (x->how != IC_NONE) {
    viol("twice", oi, "%s removed item #%d (%s), already consumed by %s "
         "(call #%d)", cd, u, name, icname[x->how], x->by);
    return;
  }
  int f, prio;
  int32_t seq = 0;
  parse_name(p, name, &f, &prio, &seq);
  x->how = IC_REMOVE;
  x->by = id;
  x->seq = seq;
  x->have_seq = 1;
  x->ev_consume = c->ev0;
  x->ev_consumed = c->ev1;
}

/* claim_health() of a claim held (0), and ack/health through an object
 * that does not hold the claim (ZKL_EPERM). */
static void do_claim_probe(int oi) {
  obj_t *o = &A->o[oi];
  if (o->fmt != ZKL_QUEUE_LOCKING) return;
  int cl = pick_held(oi);
  if (cl >= 0) {
    in_call++;
    int rc = zkl_queue_claim_health(o->q, &A->claims[cl].it);
    in_call--;
    ev("o%d claim_health of claim %d -> %s", oi, cl, it_code(rc));
    /* ZKL_ESUSPENDED is the documented "in doubt" while the session was
     * not heard from lately (a slow, e.g. sanitized, run); ZKL_ELOST is
     * right for a claim whose node the foreign consumer deleted once the
     * object claimed the same item again (the newer claim supersedes it) */
    int again = 0;
    for (int i = cl + 1; A->claims[cl].lost && i < A->nclaims; i++) {
      const claim_t *n = &A->claims[i];
      again |= n->obj == oi && n->gen == A->claims[cl].gen &&
               strcmp(n->it.name, A->claims[cl].it.name) == 0;
    }
    if (rc != 0 && rc != ZKL_ESUSPENDED && !(rc == ZKL_ELOST && again))
      viol("claim-health", oi, "claim_health of claim %d (%s), held, "
           "returned %s (%s)", cl, A->claims[cl].it.name, it_code(rc),
           zkl_last_error());
  }
  /* another object's claim (or a made-up one) through this object */
  int other = LPATH * OPP + rnd(OPP), ocl = pick_held(other);
  zkl_item_t fake;
  memset(&fake, 0, sizeof fake);
  snprintf(fake.name, sizeof fake.name, "entry-%03d-0999999999",
           prio_of[o->prio]);
  const zkl_item_t *it = &fake;
  if (ocl >= 0 && other != oi) {
    it = &A->claims[ocl].it;
    for (int i = 0; i < o->nheld; i++) /* a stale claim of ours by name */
      if (strcmp(A->claims[o->held[i]].it.name, it->name) == 0) return;
  }
  in_call++;
  int h = zkl_queue_claim_health(o->q, it);
  int rc = o->nfly == 0 ? zkl_queue_ack(o->q, it) : ZKL_EPERM;
  in_call--;
  A->st_eperm++;
  ev("o%d ack/claim_health of %s, not its claim -> %s, %s", oi, it->name,
     it_code(rc), it_code(h));
  if (rc != ZKL_EPERM || h != ZKL_EPERM)
    viol("claim-eperm", oi, "ack and claim_health of %s, not claimed through "
         "the object, returned %s and %s: expected ZKL_EPERM", it->name,
         it_code(rc), it_code(h));
}

/* ---- the loop's other actions -------------------------------------------------- */

static void act_cancel(int oi, const char *why) {
  obj_t *o = &A->o[oi];
  o->cancels++;
  in_call++;
  int rc = zkl_queue_cancel(o->q);
  in_call--;
  ev("o%d cancel (%s) -> %s, %d call(s) in flight", oi, why, it_code(rc),
     o->nfly);
  if (rc != 0) viol("cancel-code", oi, "cancel returned %s", it_code(rc));
}

/* Destroys and remakes the object (the loop only, never while another
 * thread is inside a call of it: destroy must be the last call). */
static void act_destroy(int oi) {
  obj_t *o = &A->o[oi];
  if (o->users > 0) return;
  /* run 0 accounts for every item: no take's items may be lost there */
  if (A->variant == 0 && !A->end_phase && o->async >= 0 &&
      (A->calls[o->async].kind == K_TAKE || A->calls[o->async].kind == K_ACK)) {
    A->st_kept++;
    return;
  }
  int orphans = 0;
  if (o->async >= 0) {
    A->calls[o->async].orphaned = 1;
    orphans++;
  }
  for (int i = 0; i < o->nheld; i++) { /* given up: claimable again */
    claim_t *k = &A->claims[o->held[i]];
    if (k->state == CL_HELD) {
      k->state = CL_GIVEN_UP;
      A->st_given_up++;
    }
    claim_close(o->held[i]);
  }
  ev("o%d destroy, %d async call pending, %d claim(s) given up", oi, orphans,
     o->nheld);
  A->st_orphans += orphans;
  A->st_destroys++;
  if (in_completion) A->st_in_cb++;
  in_call++;
  zkl_queue_destroy(o->q);
  in_call--;
  o->q = NULL;
  o->gen++;
  o->async = -1;
  o->nfly = 0; /* its orphan is in flight no more, as far as others go */
  o->nheld = 0;
  if (!A->end_phase) create_obj(oi);
}

/* The foreign consumer: reads and deletes one item with plain ZooKeeper
 * calls through the third session; on p4 sometimes a claim instead. */
static void act_raw_delete(int p) {
  zhandle_t *zh = zkl_session_zhandle(A->k);
  int claims = p == LPATH && rnd(2);
  char dir[200];
  snprintf(dir, sizeof dir, claims ? "%s/taken" : "%s", claims ? A->path[p]
                                                               : A->ipath[p]);
  struct String_vector kids = {0, NULL};
  int zrc = zoo_get_children(zh, dir, 0, &kids);
  if (zrc != ZOK) {
    deallocate_String_vector(&kids);
    return;
  }
  int cand = 0, pick = -1;
  for (int i = 0; i < kids.count; i++) {
    int f, prio;
    int32_t seq;
    if (parse_name(p, kids.data[i], &f, &prio, &seq) == 0 && rnd(++cand) == 0)
      pick = i;
  }
  if (pick >= 0) {
    char node[256];
    snprintf(node, sizeof node, "%s/%s", dir, kids.data[pick]);
    int len = 200000;
    char *buf = malloc((size_t)len + 1);
    struct Stat st;
    ck_assert_ptr_nonnull(buf);
    zrc = zoo_get(zh, node, 0, buf, &len, &st);
    if (zrc == ZOK) zrc = zoo_delete(zh, node, st.version);
    ev("raw delete %s -> %s", node, zerror(zrc));
    if (zrc == ZOK && claims) { /* someone's claim: the item is free */
      A->st_rawclaims++;
      if (A->nrawclaims == A->caprawclaims) {
        A->caprawclaims = A->caprawclaims ? A->caprawclaims * 2 : 64;
        A->rawclaims = realloc(A->rawclaims, (size_t)A->caprawclaims *
                                                 sizeof *A->rawclaims);
        ck_assert_ptr_nonnull(A->rawclaims);
      }
      A->rawclaims[A->nrawclaims++] = (uint64_t)st.czxid;
      int64_t e = ++A->ev;
      for (int cl = 0; cl < A->nclaims; cl++) {
        claim_t *k = &A->claims[cl];
        if (k->it.token != (uint64_t)st.czxid || k->lost) continue;
        k->lost = 1;
        k->ev_lost = e;
        claim_close(cl);
        k->ev_release = e;
      }
    } else if (zrc == ZOK) {
      zkl_item_t it;
      memset(&it, 0, sizeof it);
      if (len < 0) len = 0;
      buf[len] = '\0';
      it.data = buf;
      it.len = (size_t)len;
      it.token = (uint64_t)st.czxid;
      snprintf(it.name, sizeof it.name, "%s", kids.data[pick]);
      int f, prio;
      int32_t seq;
      parse_name(p, it.name, &f, &prio, &seq);
      int64_t e = ++A->ev;
      consume(-1, p, f, IC_RAW, &it, e, e, &prio, &seq);
      A->st_raw++;
    }
    free(buf);
  }
  deallocate_String_vector(&kids);
}

/* Bad arguments: ZKL_EINVAL, and nothing else happens. */
static void act_invalid(int oi) {
  obj_t *o = &A->o[oi];
  zkl_buf_t b = {"abc", 3};
  zkl_item_t it;
  memset(&it, 0, sizeof it);
  int r = rnd(9), rc;
  void *arg = (void *)(intptr_t)-1;
  in_call++;
  switch (r) {
  case 0: rc = zkl_queue_take_async(o->q, 0, 0, on_take, arg); break;
  case 1: rc = zkl_queue_take_async(o->q, 1001, -1, on_take, arg); break;
  case 2: rc = zkl_queue_put_async(o->q, NULL, 3, 0, on_put, arg); break;
  case 3: rc = zkl_queue_put_batch_async(o->q, &b, 0, 0, on_put, arg); break;
  case 4: rc = zkl_queue_take_async(o->q, 1, 0, NULL, arg); break;
  case 5: rc = zkl_queue_put_async(o->q, "a", 1, 0, NULL, arg); break;
  case 6: /* claims need the locking layout */
    rc = o->fmt == ZKL_QUEUE_LOCKING
             ? zkl_queue_claim_async(o->q, 0, NULL, arg)
             : zkl_queue_claim(o->q, 0, &it);
    break;
  case 7:
    rc = zkl_queue_nack(o->q, &it, 7);
    if (rc == ZKL_EPERM) rc = ZKL_EINVAL; /* not its claim: EPERM first */
    break;
  default:
    rc = zkl_queue_remove(o->q, o->fmt == ZKL_QUEUE_QN ? "entry-100-0000000001"
                                                       : "qn-0000000001");
  }
  in_call--;
  A->st_invalid++;
  ev("o%d bad arguments (%d) -> %s", oi, r, it_code(rc));
  if (rc != ZKL_EINVAL)
    viol("einval", oi, "bad arguments (case %d) returned %s: expected "
         "ZKL_EINVAL (%s)", r, it_code(rc), zkl_last_error());
}

/* ---- random choices ------------------------------------------------------------- */

static int64_t take_timeout(void) {
  int r = rnd(100);
  if (r < 30) return 0;
  if (r < 55) return 1 + rnd(20);
  if (r < 78) return 30 + rnd(300);
  if (r < 90) return -1;
  return 500 + rnd(1500);
}

static int64_t put_timeout(void) {
  int r = rnd(100);
  if (r < 20) return 0;
  if (r < 35) return 1 + rnd(10);
  if (r < 80) return 100 + rnd(2000);
  return -1;
}

static size_t take_max(void) {
  int r = rnd(100);
  if (r < 45) return 1;
  if (r < 80) return 2 + (size_t)rnd(19);
  return 21 + (size_t)rnd(280);
}

static size_t put_n(void) {
  int r = rnd(100);
  if (r < 50) return 1;
  if (r < 80) return 2 + (size_t)rnd(9);
  return 11 + (size_t)rnd(40);
}

/* The claims' own actions, on a locking object (g held). */
static void claim_action(int oi, int loop) {
  int r = rnd(100), w = rnd(10);
  int kind = w < 6 ? K_ACK : K_NACK;
  int where = w < 8 ? ZKL_QUEUE_HEAD : ZKL_QUEUE_TAIL;
  if (r < 35) act_claim_async(oi, take_timeout());
  else if (r < 60) act_settle_async(oi, kind, where);
  else if (r < 80 && (!loop || A->o[oi].nfly == 0)) do_settle(oi, kind, where);
  else if (r < 90 && !loop) do_take(oi, 1, take_timeout(), 1);
  else do_claim_probe(oi);
}

/* p5: consumers that wait (timed takes of 300 ms and more, no tries),
 * producers of a few items; a consumer of one format must get its items
 * whatever the other format's consumers wait for. */
static void slow_action(int oi, int loop) {
  int r = rnd(100);
  int64_t t = 300 + rnd(1200);
  if (r < 40) {
    if (loop || rnd(2)) act_put_async(oi, 1 + (size_t)rnd(3), -1);
    else do_put(oi, 1 + (size_t)rnd(3), -1);
  } else if (r < 92) {
    if (loop) act_take_async(oi, 1 + (size_t)rnd(5), t);
    else do_take(oi, 1 + (size_t)rnd(5), t, rnd(2));
  } else if (!loop || A->o[oi].nfly == 0) {
    do_peek(oi);
  }
}

/* One action of the loop (g held), on object oi mostly. */
static void random_action(int oi) {
  obj_t *o = &A->o[oi];
  int r = rnd(100);
  if (o->path == SPATH && r < 85) {
    slow_action(oi, 1);
  } else if (o->fmt == ZKL_QUEUE_LOCKING && rnd(5) < 2) {
    claim_action(oi, 1);
  } else if (r < 22) {
    act_take_async(oi, take_max(), take_timeout());
  } else if (r < 40) {
    act_put_async(oi, put_n(), put_timeout());
  } else if (r < 50) {
    do_take(oi, take_max(), 0, rnd(2)); /* a try: never waits */
  } else if (r < 56) {
    do_put(oi, put_n(), 0);
  } else if (r < 63) {
    if (o->nfly == 0) { /* idle: answered at once */
      int w = rnd(10);
      if (w < 4) do_peek(oi);
      else if (w < 6) do_size(oi);
      else if (w < 8) do_list(oi);
      else do_remove(oi);
    }
  } else if (r < 72) {
    /* cancel, mostly an object with a call in flight */
    int pick = oi;
    for (int tries = 0; tries < 4 && A->o[pick].nfly == 0; tries++)
      pick = rnd(NOBJ);
    act_cancel(pick, "random");
  } else if (r < 77) {
    act_raw_delete(rnd(NPATH));
  } else if (r < 79) {
    act_invalid(oi);
  } else if (r < 85) {
    act_destroy(oi);
  } else if (r < 88) {
    act_take_async(oi, take_max(), -1);
    act_cancel(oi, "right after its take");
  } else if (r < 90) {
    if (A->variant != 0) act_take_async(oi, take_max(), take_timeout());
    else act_put_async(oi, put_n(), put_timeout());
    act_destroy(oi);
  } else {
    act_take_async(oi, take_max(), take_timeout());
  }
}

/* One action of a submitting thread (g held on entry and exit). */
static void sub_action(int oi) {
  int r = rnd(100);
  if (A->o[oi].path == SPATH) slow_action(oi, 0);
  else if (A->o[oi].fmt == ZKL_QUEUE_LOCKING && rnd(5) < 2) claim_action(oi, 0);
  else if (r < 30) do_take(oi, take_max(), take_timeout(), rnd(3) == 0);
  else if (r < 55) do_put(oi, put_n(), put_timeout());
  else if (r < 62) do_peek(oi);
  else if (r < 65) do_size(oi);
  else if (r < 69) do_list(oi);
  else if (r < 74) do_remove(oi);
  else if (r < 82) act_take_async(oi, take_max(), take_timeout());
  else if (r < 91) act_put_async(oi, put_n(), put_timeout());
  else act_cancel(oi, "from a submitter");
}

static int running(void) {
  return !A->stop && A->round < A->rounds && it_now_ms() < A->t_end;
}

static void *submitter(void *arg) {
  int me = (int)(intptr_t)arg;
  tid = me + 1;
  rng = &A->rng_sub[me];
  for (;;) {
    pthread_mutex_lock(&A->g);
    int go = running();
    if (go) {
      A->round++;
      sub_action(rnd(NOBJ));
    }
    pthread_mutex_unlock(&A->g);
    if (!go) break;
    int pause = rnd(4);
    if (pause > 0) usleep((useconds_t)pause * 500);
  }
  pthread_mutex_lock(&A->g);
  A->subs_alive--;
  pthread_mutex_unlock(&A->g);
  return NULL;
}

/* Cancels the objects of calls that wait longer than their patience (a
 * take with no deadline waits for ever on an empty queue). */
static void watchdog(void) {
  int64_t now = it_now_ms();
  for (int oi = 0; oi < NOBJ; oi++) {
    obj_t *o = &A->o[oi];
    for (int i = 0; i < o->nfly; i++) {
      call_t *c = &A->calls[o->fly[i]];
      if ((c->timeout < 0 || c->timeout > c->patience) &&
          now - c->t0 >= c->patience) {
        c->patience += 50 + rnd(300);
        A->st_watchdog++;
        act_cancel(oi, "watchdog");
        break;
      }
    }
  }
}

/* One turn of the loop: poll both fds up to wait_ms, dispatch the ready
 * ones (g held), watch, maybe act; whether the rounds go on.  Some turns
 * are slow and dispatch nothing, so that calls meet completions that wait
 * in the queue. */
static int loop_turn(int wait_ms, int act) {
  struct pollfd p[2] = {{zkl_session_fd(A->s[0]), POLLIN, 0},
                        {zkl_session_fd(A->s[1]), POLLIN, 0}};
  if (act && rnd(8) == 0) {
    usleep((useconds_t)(1 + rnd(8)) * 1000);
    p[0].fd = p[1].fd = -1;
  }
  int n = poll(p, 2, p[0].fd < 0 ? 0 : wait_ms);
  ck_assert_int_ge(n, 0);
  pthread_mutex_lock(&A->g);
  for (int i = 0; i < 2; i++) {
    if (p[i].revents & ~POLLIN)
      viol("fd", -1, "session %d's fd polls %#x", i, (unsigned)p[i].revents);
    if (!(p[i].revents & POLLIN)) continue;
    int d = zkl_session_dispatch(A->s[i]);
    if (d < 0)
      viol("dispatch", -1, "dispatch of session %d: %s", i, it_code(d));
  }
  watchdog();
  int go = running();
  if (act && go && rnd(2)) {
    A->round++;
    random_action(rnd(NOBJ));
  }
  pthread_mutex_unlock(&A->g);
  return go;
}

/* ---- the end -------------------------------------------------------------------- */

static void names_of(zkl_session_t *s, const char *path, char *out,
                     size_t len) {
  struct String_vector v = {0, NULL};
  out[0] = '\0';
  it_children(s, path, &v);
  for (int i = 0; i < v.count && strlen(out) + 40 < len; i++) {
    strcat(out, " ");
    strncat(out, v.data[i], 32);
  }
  deallocate_String_vector(&v);
}

static void none_left(const char *path, int ms, const char *why) {
  char names[600];
  if (it_wait_children(A->k, path, 0, ms)) return;
  names_of(A->k, path, names, sizeof names);
  viol("left-behind", -1, "%d node(s) left under %s %s:%s",
       it_children(A->k, path, NULL), path, why, names);
}

/* Nothing of zkl's left beside the paths (a few seconds for the
 * janitor). */
static void no_side_nodes_left(int ms) {
  for (int p = 0; p < NPATH; p++) {
    const char *sub[] = {"wait", "wait-kazoo", "wait-locking", "full",
                         "puts"};
    for (int i = 0; i < 5; i++) {
      char path[256];
      snprintf(path, sizeof path, "%s.zkl/%s", A->path[p], sub[i]);
      none_left(path, ms, "once every object is gone");
    }
  }
}

/* Drains every path with fresh objects; checks size against the raw count
 * and the drain. */
static void drain(void) {
  for (int p = 0; p < NPATH; p++) {
    int raw = it_children(A->k, A->ipath[p], NULL), drained = 0;
    size_t size = 0;
    zkl_queue_t *q[2] = {NULL, NULL};
    int fmts[2] = {ZKL_QUEUE_QN, ZKL_QUEUE_KAZOO};
    if (p == LPATH) fmts[0] = fmts[1] = ZKL_QUEUE_LOCKING;
    for (int f = 0; f < 2; f++) {
      zkl_queue_opts_t op;
      zkl_queue_opts_init(&op);
      op.format = fmts[f];
      ck_assert_int_eq(zkl_queue_create(&q[f], A->k, A->path[p], &op), 0);
    }
    int rc = zkl_queue_size(q[0], &size);
    if (rc != 0 || (int)size != raw)
      viol("size-quiet", -1, "p%d quiet: size %s %zu, %d children listed", p,
           it_code(rc), size, raw);
    for (int f = 0; f < (p == LPATH ? 1 : 2); f++) {
      for (int rounds = 0; rounds < 1000; rounds++) {
        zkl_item_t *v = NULL;
        size_t n = 0;
        rc = zkl_queue_take_batch(q[f], 1000, 0, &v, &n);
        if (rc == ZKL_EEMPTY) break;
        if (rc != 0) {
          viol("drain", -1, "draining p%d %s: %s (%s)", p, fmtname(fmts[f]),
               it_code(rc), zkl_last_error());
          break;
        }
        took(-1, p, fmts[f], IC_DRAIN, v, n);
        drained += (int)n;
        zkl_items_free(v, n);
      }
    }
    if ((int)size != drained + nforeign(p))
      viol("size-drain", -1, "p%d quiet: size said %zu, the drain took %d "
           "and %d children are foreign", p, size, drained, nforeign(p));
    rc = zkl_queue_size(q[1], &size);
    char names[600];
    names_of(A->k, A->ipath[p], names, sizeof names);
    if (rc != 0 || (int)size != nforeign(p))
      viol("size-drained", -1, "p%d drained: size %s %zu, expected the %d "
           "foreign children:%s", p, it_code(rc), size, nforeign(p), names);
    for (int i = 0; i < nforeign(p); i++) {
      char path[256];
      snprintf(path, sizeof path, "%s/%s", A->ipath[p], foreign[i]);
      int zrc = zoo_exists(zkl_session_zhandle(A->k), path, 0, NULL);
      if (zrc != ZOK)
        viol("foreign", -1, "the foreign child %s is gone (%s)", path,
             zerror(zrc));
    }
    zkl_queue_destroy(q[0]);
    zkl_queue_destroy(q[1]);
  }
}

/* Every item put accounted for once; the absent answers checked. */
static void account(void) {
  long missing[NPATH][NFMT] = {{0}}, excused[NPATH][NFMT] = {{0}};
  int first_missing[NPATH][NFMT];
  memset(first_missing, -1, sizeof first_missing);
  for (int u = 0; u < A->nitems; u++) {
    const item_t *x = &A->items[u];
    if (x->put == IS_PENDING) {
      viol("put-pending", x->obj, "item #%d: its put (call #%d) never ended",
           u, x->call);
      continue;
    }
    if (x->empty || x->put != IS_OK || x->how != IC_NONE) continue;
    if (x->maybe_acked) { /* an ack orphaned by a destroy */
      excused[x->path][x->fmt]++;
      continue;
    }
    if (missing[x->path][x->fmt]++ == 0) first_missing[x->path][x->fmt] = u;
  }
  for (int p = 0; p < NPATH; p++)
    for (int f = 0; f < NFMT; f++) {
      const counts_t *e = &A->empties[p][f];
      long lost = missing[p][f] + (e->ok > e->consumed ? e->ok - e->consumed
                                                       : 0);
      if (e->consumed > e->ok + e->unknown)
        viol("empty-twice", -1, "p%d %s: %d empty items consumed, %d put "
             "(+%d unknown)", p, fmtname(f), e->consumed, e->ok, e->unknown);
      if (lost <= A->lost_budget[p][f]) continue;
      char detail[400] = "";
      int u = first_missing[p][f];
      if (u >= 0) {
        const item_t *x = &A->items[u];
        char pd[200];
        calldesc(pd, sizeof pd, x->call);
        snprintf(detail, sizeof detail, "; the first: item #%d (%u bytes, "
                 "%d of its batch), put by %s -> 0 (ended at event %lld)", u,
                 x->len, x->bidx, pd, (long long)A->calls[x->call].ev1);
      }
      viol("lost", -1, "p%d %s: %ld item(s) put with rc 0 were never taken, "
           "acked, removed, deleted or drained (%ld of them empty; %ld more "
           "maybe acked by an orphaned ack); only %ld can be explained by "
           "async takes orphaned by a destroy%s", p, fmtname(f), lost,
           lost - missing[p][f], excused[p][f], A->lost_budget[p][f],
           detail);
    }
  /* answers that said "nothing there": was an item there throughout? */
  for (int i = 0; i < A->nabsent; i++) {
    const call_t *c = &A->calls[A->absent[i]];
    for (int u = 0; u < A->nitems; u++) {
      const item_t *x = &A->items[u];
      if (x->empty || x->path != c->path || x->fmt != c->fmt ||
          x->put != IS_OK || x->how == IC_NONE)
        continue;
      const call_t *put = &A->calls[x->call];
      if (x->how != IC_DRAIN && x->ev_consume <= c->ev1) continue;
      int before = put->ev1 < c->ev0; /* there when the call began */
      if (c->rc == ZKL_EEMPTY && !before) continue;
      /* a timed take: the item waited present_ms or more, unconsumed,
       * while the take waited (in the line, or at its head) */
      if (c->rc == ZKL_ETIMEDOUT &&
          (put->ev1 >= c->ev1 || put->t1 + A->present_ms > c->t1))
        continue;
      char cd[200], pd[200];
      calldesc(cd, sizeof cd, A->absent[i]);
      calldesc(pd, sizeof pd, x->call);
      viol(c->rc == ZKL_EEMPTY ? "empty-with-item"
           : before            ? "timedout-with-item"
                               : "starved",
           c->obj, "%s returned %s after %lld ms, though item #%d (%s %d, "
           "put by %s, which ended %s) was in the queue %s: consumed only "
           "after it by %s (call #%d)", cd, it_code(c->rc),
           (long long)(c->t1 - c->t0), u,
           x->fmt == ZKL_QUEUE_KAZOO ? "prio/seq" : "seq", x->seq, pd,
           before ? "before it began" : "during it",
           before ? "all along" : "for the last 250+ ms of the wait",
           icname[x->how], x->by);
      A->st_absent++;
      break;
    }
  }
  /* a list of the whole queue: every item there throughout is in it */
  for (int i = 0; i < A->nlists; i++) {
    const call_t *c = &A->calls[A->lists[i]];
    for (int u = 0; u < A->nitems; u++) {
      const item_t *x = &A->items[u];
      if (x->empty || x->path != c->path || x->fmt != c->fmt ||
          x->put != IS_OK || x->how == IC_NONE || x->requeued ||
          A->calls[x->call].ev1 >= c->ev0 ||
          (x->how != IC_DRAIN && x->ev_consume <= c->ev1))
        continue;
      int found = 0;
      for (int j = c->first; j < c->first + c->nitems && !found; j++)
        found = A->listed[j] == u;
      if (found) continue;
      char cd[200];
      calldesc(cd, sizeof cd, A->lists[i]);
      viol("list-missing", c->obj, "%s (%d items) left out item #%d (seq "
           "%d), there from before it began until %s (call #%d) after it",
           cd, c->nitems, u, x->seq, icname[x->how], x->by);
      break;
    }
  }
  /* list said claimed: a claim node of the item may have been there
   * during the list: made before the list ended, and deleted (by its ack
   * or nack, or the foreign consumer) after it began; a claim given up by
   * a destroy goes with the janitor, one orphaned too (never reported) */
  for (int i = 0; i + 1 < A->nclaimed_seen; i += 2) {
    int u = A->claimed_seen[i];
    const call_t *c = &A->calls[A->claimed_seen[i + 1]];
    int ok = 0;
    for (int cl = 0; cl < A->nclaims && !ok; cl++) {
      const claim_t *k = &A->claims[cl];
      if (k->uid != u || A->calls[k->call].ev0 >= c->ev1) continue;
      int64_t gone = INT64_MAX;
      if (k->lost) gone = k->ev_lost;
      else if (k->state == CL_DONE && k->settle >= 0)
        gone = A->calls[k->settle].ev1;
      ok = gone > c->ev0;
    }
    for (int id = 0; id < A->ncalls && !ok; id++) {
      const call_t *d = &A->calls[id];
      ok = d->kind == K_CLAIM && d->orphaned && d->path == c->path &&
           d->ev0 < c->ev1;
    }
    int timed = -1; /* a claim that ended without one: its node? */
    for (int id = 0; id < A->ncalls && !ok && timed < 0; id++) {
      const call_t *d = &A->calls[id];
      if (d->kind == K_CLAIM && d->path == c->path && d->ev0 < c->ev1 &&
          (d->rc == ZKL_ETIMEDOUT || d->rc == ZKL_ECANCELED))
        timed = id;
    }
    if (!ok)
      viol("list-claimed", c->obj, "call #%d (list) said item #%d is "
           "claimed, but no claim of it can have been there then (a claim "
           "call that ended without a claim came before: #%d, %s)",
           A->claimed_seen[i + 1], u, timed,
           timed >= 0 ? it_code(A->calls[timed].rc) : "-");
  }
  /* a remove's or an ack's ENOENT: its item was consumed before it ended
   * (by a remove or a raw delete for an ack) */
  for (int i = 0; i < A->ngone; i++) {
    const call_t *c = &A->calls[A->gone[i]];
    const item_t *x = &A->items[c->uid];
    char cd[200];
    calldesc(cd, sizeof cd, A->gone[i]);
    if (x->how == IC_NONE || x->requeued) continue; /* lost; renamed */
    if (c->kind != K_REMOVE && x->how != IC_REMOVE && x->how != IC_RAW)
      viol("ack-enoent", c->obj, "%s returned ZKL_ENOENT for item #%d, "
           "which nobody removed: consumed by %s (call #%d)", cd, c->uid,
           icname[x->how], x->by);
    else if (x->how == IC_DRAIN || x->ev_consume > c->ev1)
      viol("remove-enoent", c->obj, "%s returned ZKL_ENOENT for item #%d, "
           "which was still there: consumed later by %s (call #%d)", cd,
           c->uid, icname[x->how], x->by);
  }
  /* one producer's puts that do not overlap: increasing sequences; one
   * batch: consecutive sequences (not for an item put again by a nack) */
  for (int id = 0; id < A->ncalls; id++) {
    const call_t *c = &A->calls[id];
    if (c->kind != K_PUT || c->rc != 0 || c->nitems == 0) continue;
    const item_t *b0 = NULL;
    for (int u = c->first; u < c->first + c->nitems; u++) {
      const item_t *x = &A->items[u];
      if (!x->have_seq || x->requeued) continue;
      if (b0 == NULL) b0 = x;
      else if (x->seq - b0->seq != x->bidx - b0->bidx)
        viol("batch-seq", c->obj, "call #%d's batch: item %d has sequence "
             "%d, item %d has %d: not consecutive", id, b0->bidx, b0->seq,
             x->bidx, x->seq);
    }
  }
  for (int id = 0; id < A->ncalls; id++) {
    const call_t *c = &A->calls[id];
    if (c->kind != K_PUT || c->rc != 0) continue;
    int32_t hi = INT32_MIN;
    int have = 0, from = -1;
    /* the highest sequence of the producer's earlier puts */
    for (int j = 0; j < id; j++) {
      const call_t *d = &A->calls[j];
      if (d->kind != K_PUT || d->rc != 0 || d->obj != c->obj ||
          d->gen != c->gen || d->ev1 >= c->ev0)
        continue;
      for (int u = d->first; u < d->first + d->nitems; u++)
        if (A->items[u].have_seq && !A->items[u].requeued &&
            (!have || A->items[u].seq > hi)) {
          hi = A->items[u].seq;
          have = 1;
          from = j;
        }
    }
    if (!have) continue;
    for (int u = c->first; u < c->first + c->nitems; u++)
      if (A->items[u].have_seq && !A->items[u].requeued &&
          A->items[u].seq <= hi)
        viol("producer-order", c->obj, "call #%d put item #%d at sequence "
             "%d, below the %d of the object's earlier put #%d", id, u,
             A->items[u].seq, hi, from);
  }
}

static void run(int variant) {
  A = calloc(1, sizeof *A);
  ck_assert_ptr_nonnull(A);
  A->seed = it_seed("ZKL_QUEUE_SEED");
  A->variant = variant;
  A->slow = getenv("ZKL_TEST_SLOW") != NULL;
  A->rounds = A->slow ? 1500 : 5000;
  A->present_ms = A->slow ? 2000 : 250;
  int budget_ms = A->slow ? 30000 : 12000;
  printf("queue-random[%d]: seed %" PRIu64 " (replay with ZKL_QUEUE_SEED=%"
         PRIu64 "), %d rounds at most\n",
         variant, A->seed, A->seed, A->rounds);
  fflush(stdout);
  A->rng_loop = A->seed ^ (0x5151515151515151ULL * (uint64_t)(variant + 1));
  for (int i = 0; i < NSUB; i++)
    A->rng_sub[i] = A->rng_loop ^ (0xa5a5a5a5deadbeefULL * (uint64_t)(i + 1));
  tid = 0;
  rng = &A->rng_loop;
  A->maxcalls = A->rounds * 8 + 4000;
  A->calls = calloc((size_t)A->maxcalls, sizeof *A->calls);
  ck_assert_ptr_nonnull(A->calls);
  ck_assert_int_eq(pthread_mutex_init(&A->g, NULL), 0);
  A->loop_thread = pthread_self();
  it_root(A->root, sizeof A->root, "queue-random");
  A->s[0] = it_session();
  A->s[1] = it_session();
  A->k = it_session();
  zhandle_t *zh = zkl_session_zhandle(A->k);
  int zrc = zoo_create(zh, "/zkl-test", NULL, -1, &ZOO_OPEN_ACL_UNSAFE,
                       ZOO_CONTAINER, NULL, 0);
  ck_assert_msg(zrc == ZOK || zrc == ZNODEEXISTS, "create /zkl-test: %s",
                zerror(zrc));
  ck_assert_int_eq(zoo_create(zh, A->root, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0,
                              NULL, 0), ZOK);
  for (int p = 0; p < NPATH; p++) {
    snprintf(A->path[p], sizeof A->path[p], "%s/p%d", A->root, p);
    snprintf(A->ipath[p], sizeof A->ipath[p], "%s/p%d%s", A->root, p,
             p == LPATH ? "/entries" : "");
    if (nforeign(p) == 0) continue;
    ck_assert_int_eq(zoo_create(zh, A->path[p], NULL, -1,
                                &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
    if (p == LPATH)
      ck_assert_int_eq(zoo_create(zh, A->ipath[p], NULL, -1,
                                  &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
    for (int i = 0; i < nforeign(p); i++) {
      char path[256];
      snprintf(path, sizeof path, "%s/%s", A->ipath[p], foreign[i]);
      ck_assert_int_eq(zoo_create(zh, path, "f", 1, &ZOO_OPEN_ACL_UNSAFE, 0,
                                  NULL, 0), ZOK);
    }
  }
  for (int i = 0; i < NOBJ; i++) {
    obj_t *o = &A->o[i];
    o->path = i / OPP;
    o->fmt = o->path < 2        ? ZKL_QUEUE_QN
             : o->path == 2     ? ZKL_QUEUE_KAZOO
             : o->path == LPATH ? ZKL_QUEUE_LOCKING
                                : (i % 2 ? ZKL_QUEUE_KAZOO : ZKL_QUEUE_QN);
    create_obj(i);
  }
  A->t0 = it_now_ms();
  A->t_end = A->t0 + budget_ms;
  A->subs_alive = NSUB;

  pthread_t sub[NSUB];
  for (int i = 0; i < NSUB; i++)
    ck_assert_int_eq(pthread_create(&sub[i], NULL, submitter,
                                    (void *)(intptr_t)i), 0);
  while (loop_turn(rnd(4), 1)) {
  }
  pthread_mutex_lock(&A->g);
  A->stop = 1;
  pthread_mutex_unlock(&A->g);
  /* the submitters' last calls may wait for completions or the watchdog */
  for (;;) {
    pthread_mutex_lock(&A->g);
    int alive = A->subs_alive;
    pthread_mutex_unlock(&A->g);
    if (alive == 0) break;
    loop_turn(5, 0);
  }
  for (int i = 0; i < NSUB; i++) ck_assert_int_eq(pthread_join(sub[i], NULL), 0);
  int64_t t_rounds = it_now_ms() - A->t0;

  /* The end: let every call end and see it all settle (0), or destroy
   * everything as it is (1). */
  pthread_mutex_lock(&A->g);
  A->end_phase = 1;
  pthread_mutex_unlock(&A->g);
  int64_t deadline = it_now_ms() + (A->slow ? 60000 : 20000);
  if (variant == 0) {
    while (A->pending > 0 && it_now_ms() < deadline) loop_turn(10, 0);
    pthread_mutex_lock(&A->g);
    if (A->pending > 0)
      viol("settle", -1, "%d async calls still pending after the watchdog's "
           "cancels", A->pending);
    pthread_mutex_unlock(&A->g);
    /* the calls themselves left no waiter in any line */
    for (int p = 0; p < NPATH; p++) {
      char path[256];
      static const char *lines[] = {"wait", "wait-kazoo", "wait-locking"};
      for (int l = 0; l < 3; l++) { /* a line per format */
        snprintf(path, sizeof path, "%s.zkl/%s", A->path[p], lines[l]);
        none_left(path, 3000, "with every call over");
      }
      snprintf(path, sizeof path, "%s.zkl/full", A->path[p]);
      none_left(path, 3000, "with every call over");
    }
  }
  pthread_mutex_lock(&A->g);
  for (int i = 0; i < NOBJ; i++) act_destroy(i);
  pthread_mutex_unlock(&A->g);
  while (A->pending > 0 && it_now_ms() < deadline) loop_turn(10, 0);
  loop_turn(0, 0); /* nothing more may come */
  /* destroy gave the claims up: the janitor deletes them */
  {
    char taken[200], why[160];
    int timed = 0;
    for (int id = 0; id < A->ncalls; id++)
      timed += A->calls[id].kind == K_CLAIM &&
               A->calls[id].rc == ZKL_ETIMEDOUT;
    snprintf(why, sizeof why, "once every claimer is destroyed (%d claims "
             "ended with ZKL_ETIMEDOUT)", timed);
    snprintf(taken, sizeof taken, "%s/taken", A->path[LPATH]);
    none_left(taken, 5000, why);
  }
  pthread_mutex_lock(&A->g);
  int done = 0;
  for (int i = 0; i < A->ncalls; i++) {
    const call_t *c = &A->calls[i];
    char cd[200];
    calldesc(cd, sizeof cd, i);
    if (c->state == CS_PENDING || c->state == CS_SUBMITTING)
      viol("never-completed", c->obj, "%s never completed (%d pending)", cd,
           A->pending);
    else if (c->state == CS_DONE && c->n != 1)
      viol("completion-twice", c->obj, "%s completed %d times", cd, c->n);
    else if (c->state == CS_REFUSED && c->n != 0)
      viol("completion-refused", c->obj, "refused %s completed", cd);
    done += c->state == CS_DONE;
  }
  ck_assert_int_eq(done + A->st_refused, A->ncalls);
  drain();
  account();
  pthread_mutex_unlock(&A->g);
  no_side_nodes_left(5000);
  int lost = 0;
  long budget = 0;
  for (int p = 0; p < NPATH; p++)
    for (int f = 0; f < NFMT; f++) budget += A->lost_budget[p][f];
  for (int u = 0; u < A->nitems; u++)
    lost += A->items[u].put == IS_OK && !A->items[u].empty &&
            A->items[u].how == IC_NONE;
  printf("queue-random[%d]: seed %" PRIu64 ": %d rounds in %lld ms, %d calls "
         "(%d refused, %d EBUSY), %d items put, %d taken, %d acked, %d "
         "removed, %d raw-deleted, %d drained, %d lost to %d orphaned takes "
         "(budget %ld); %d claims (%d redeliveries, %d given up by destroy, "
         "%d claim nodes deleted: %d acks ELOST, %d ENOENT), %d nacks, %d "
         "EPERM probes; %d EEMPTY, %d timeouts, %d canceled (%d by the "
         "watchdog), %d EFULL; %d destroys (%d in completions, %d calls "
         "orphaned); %d peeks, %d sizes, %d lists, %d bad-argument probes; "
         "largest take %d; %d canceled while waiting for another call; %d "
         "destroys skipped (run 0: a take pending); %d violation(s); %lld ms "
         "in all\n",
         variant, A->seed, A->round, (long long)t_rounds, A->ncalls,
         A->st_refused, A->st_busy, A->st_put_items, A->st_taken, A->st_acks,
         A->st_removed, A->st_raw, A->st_drained, lost, A->st_orphan_takes,
         budget, A->st_claims, A->st_redelivered, A->st_given_up,
         A->st_rawclaims, A->st_ack_lost, A->st_ack_enoent, A->st_nacks,
         A->st_eperm, A->st_empty_take, A->st_timeouts, A->st_canceled,
         A->st_watchdog, A->st_efull, A->st_destroys, A->st_in_cb,
         A->st_orphans, A->st_peeks, A->st_sizes, A->st_lists,
         A->st_invalid, A->st_batch_max, A->st_short_canceled, A->st_kept,
         A->nviol, (long long)(it_now_ms() - A->t0));
  char summary[1024] = "";
  for (int i = 0; i < A->nkinds; i++) {
    char one[64];
    snprintf(one, sizeof one, "%s%s x%d", i ? ", " : "", A->kinds[i],
             A->kind_n[i]);
    if (strlen(summary) + strlen(one) < sizeof summary) strcat(summary, one);
  }
  if (A->nviol > 0) printf("queue-random[%d]: violations: %s\n", variant,
                           summary);
  fflush(stdout);
  char first[1536 + 1100];
  snprintf(first, sizeof first, "%s [%d violation(s): %s]", A->msg[0],
           A->nviol, summary);
  int nviol = A->nviol;
  zkl_session_close(A->s[0]);
  zkl_session_close(A->s[1]);
  zkl_session_close(A->k);
  pthread_mutex_destroy(&A->g);
  for (int i = 0; i < A->nclaims; i++) free(A->claims[i].it.data);
  free(A->claims);
  free(A->calls);
  free(A->items);
  free(A->absent);
  free(A->gone);
  free(A->lists);
  free(A->listed);
  free(A->claimed_seen);
  free(A->rawclaims);
  free(A->tok);
  free(A->tokuid);
  free(A);
  A = NULL;
  ck_assert_msg(nviol == 0, "%s", first);
}

/* _i 0: the run ends by letting every call end, then destroying, and no
 * take is ever orphaned (every item is accounted for); 1: destroys orphan
 * takes too, and the run ends by destroying every object with its async
 * call pending. */
START_TEST(random_rounds) { run(_i); }
END_TEST

Suite *queue_random_suite(void) {
  Suite *s = suite_create("queue-random");
  TCase *tc = it_tcase("queue-random");
  tcase_add_loop_test(tc, random_rounds, 0, 2);
  suite_add_tcase(s, tc);
  return s;
}
