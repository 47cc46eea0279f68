/* tests/faults/queue.c - the distributed queue (zkl/queue.h) under faults
 * on the harness's 3-node ensemble (ZKL_TEST_ENSEMBLE=1 tests/with-zookeeper).
 *
 * claims_survive_kills_and_pauses: 300 items (payload "item-<i>") are put
 * in the ZKL_QUEUE_LOCKING layout, 20 at first and then 3 every 150 ms,
 * while 4 consumer processes, each with its own 2 s session, loop claim ->
 * act (40..160 ms, while claim_health() says 0) -> ack, logging every
 * delivery (with its token), every ack and its answer to a shared log
 * (common.c's).  While items come, this process injects a fault every
 * 0.4..1 s: it SIGKILLs a consumer that holds a claim (a spare process
 * takes the slot as a new incarnation; some kills wait for a consumer
 * inside its ack), or SIGSTOPs one that acts on a claim until its session
 * is gone: a long pause lasts 2.5 times the session timeout; a race pause
 * ends as soon as the item is delivered to another consumer, which then
 * holds it for 1.5 s, so that the victim's ack meets another consumer's
 * claim of the same name.  The run ends when every item is put and
 * entries/ is empty (at most 40 s).  The log is then judged: every item
 * delivered at least once; acked exactly once (or its last ack cut short
 * by a SIGKILL, and the item gone); an ack that said 0 was for the item's
 * last delivery (an ack that succeeds on a lost claim is followed by
 * another delivery); per item the delivery tokens strictly increase; a
 * consumer resumed after its session expired under a claim gets
 * ZKL_ELOST from the claim's ack, never 0 (and that happened, at least
 * once while another consumer held the item); some items were delivered
 * again; nothing is left in entries/, taken/ or the side nodes once the
 * dead sessions are gone.
 *
 * put_batch_cut_no_duplicates: a producer reaches one follower through
 * the test proxy and puts 60 batches of 1..40 items with
 * zkl_queue_put_batch(); before 40 % of them the proxy is told to cut the
 * connection right after forwarding the next multi (the server applies
 * it, the answer is lost), and the leader is killed and restarted while
 * it puts.  Every put must return 0, or a documented "outcome unknown"
 * code (then the batch is whole or absent).  The queue, drained, holds
 * each batch exactly once, whole, in order, with consecutive sequences
 * and in batch order; no duplicate; no put marker is left once the object
 * is destroyed.
 *
 * killed_producer_batch_is_whole: 6 producer processes, one after the
 * other, put batches of 50..400 items in a loop and are SIGKILLed at a
 * random moment: the batch in flight is whole or absent, every batch
 * answered 0 is there once, and the killed sessions' markers go.
 *
 * ZKL_QUEUE_FAULT_SEED replays the random choices (the seed is printed
 * before each test and in every failure); ZKL_QUEUE_ITEMS sets the items
 * of the claims scenario (default 300).  A failed claims run writes its
 * whole log to queue-claims-SEED.log in the working directory.
 *
 * Every process is forked before the test process opens a session; a
 * worker dies with it (PR_SET_PDEATHSIG). */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "faults.h"

static uint64_t queue_seed;

static int between(uint64_t *r, int lo, int hi) {
  return lo + (int)(fc_xorshift(r) % (uint64_t)(hi - lo + 1));
}

static zkl_queue_t *queue_of(zkl_session_t *s, const char *path,
                             zkl_queue_format_t format) {
  zkl_queue_opts_t o;
  zkl_queue_opts_init(&o);
  o.format = format;
  zkl_queue_t *q = NULL;
  return zkl_queue_create(&q, s, path, &o) == 0 ? q : NULL;
}

/* A session of a worker process (no ck_assert there): NULL on failure. */
static zkl_session_t *worker_session(int timeout_ms) {
  zkl_session_opts_t o;
  zkl_session_opts_init(&o);
  o.session_timeout_ms = timeout_ms;
  o.connect_timeout_ms = 30000;
  zkl_session_t *s = NULL;
  return zkl_session_open(&s, it_hosts(), &o) == 0 ? s : NULL;
}

/* ==== 1. claims under consumer kills and pauses ============================ */

#define C_SESSION_MS 2000
#define C_CONSUMERS 4
#define C_SPARES 32
#define C_ITEMS 300
#define C_RUN_MS 40000
#define C_CLAIM_MS 500
#define C_MAX_PAUSED 2
#define C_QUIET_MS 10000 /* for paused victims to settle their acks */
#define C_STOP_MS 30000
#define C_MAXPAUSES 256
#define C_MAXITEMS 5000
#define C_LINGER_MS 1500 /* a race pause's item, redelivered, is held so */
#define C_PUT_FIRST 20   /* items put before the consumers start */
#define C_PUT_N 3        /* then this many */
#define C_PUT_MS 150     /* this often: 20 a second, about half of what the
                            consumers can do without faults */

/* What the log's records say (lane: the item; shared: a code; token: the
 * delivery token).  The fault injector writes common.c's R_PAUSE (lane:
 * the item the victim holds, shared 1, token its delivery token),
 * R_RESUME and R_KILLED. */
enum {
  QR_DELIVERED = 100, /* a claim: item, token                      */
  QR_TOLD,            /* claim_health() said no (shared: its code)  */
  QR_ACKING,          /* zkl_queue_ack() is called                  */
  QR_ACKED,           /* it said 0                                  */
  QR_ACK_LOST,        /* it said ZKL_ELOST                          */
  QR_ACK_OTHER,       /* it said something else (shared)            */
  QR_BAD              /* a claim brought a payload not ours         */
};

/* A consumer slot's state, written by its incarnation. */
enum { W_IDLE, W_CLAIMING, W_ACTING, W_ACKING };

struct cslot {
  int state, gen;     /* atomic: gen counts the state changes */
  int item;           /* held while W_ACTING / W_ACKING       */
  uint64_t token;
};

struct cspare {
  pid_t pid;
  int who, slot;
  int go; /* atomic, set after slot */
};

struct cshared {
  int go, stop; /* atomic */
  uint64_t seed;
  char path[128];
  int nitems;
  int session_ms[FC_MAXWHO]; /* atomic: each incarnation's negotiated */
  int linger[C_MAXITEMS];    /* atomic: whoever claims it holds it long */
  struct cslot slot[C_CONSUMERS];
  int nspares, used;
  struct cspare spare[C_SPARES];
};

static struct cshared *csh;
static struct fc_log *lg;
static pid_t parent_pid;

static int c_stopping(void) {
  return fc_load(&csh->stop) || getppid() != parent_pid;
}

/* The state is written before gen: a reader that sees the same gen and
 * the same state on both sides of a SIGSTOP knows the worker stayed in it. */
static void set_state(struct cslot *w, int st) {
  fc_store(&w->state, st);
  __atomic_add_fetch(&w->gen, 1, __ATOMIC_SEQ_CST);
}

static int consumer_run(int slot, int who) {
  struct cslot *w = &csh->slot[slot];
  uint64_t r = it_mix64(csh->seed ^ ((uint64_t)who << 20)) | 1;
  zkl_session_t *s = worker_session(C_SESSION_MS);
  zkl_queue_t *q = s != NULL ? queue_of(s, csh->path, ZKL_QUEUE_LOCKING)
                             : NULL;
  if (q == NULL) {
    fprintf(stderr, "queue: consumer w%d: no session or queue: %s\n", who,
            zkl_last_error());
    return 2;
  }
  fc_store(&csh->session_ms[who], zkl_session_timeout(s));
  while (!fc_load(&csh->go)) {
    if (c_stopping()) break;
    it_sleep_ms(2);
  }
  while (!c_stopping()) {
    zkl_item_t it;
    set_state(w, W_CLAIMING);
    int rc = zkl_queue_claim(q, C_CLAIM_MS, &it);
    if (rc == ZKL_ELOST) { /* cannot be (reestablish is on): start over */
      zkl_queue_destroy(q);
      zkl_session_close(s);
      s = worker_session(C_SESSION_MS);
      q = s != NULL ? queue_of(s, csh->path, ZKL_QUEUE_LOCKING) : NULL;
      if (q == NULL) return 3;
      continue;
    }
    if (rc != 0) {
      if (rc != ZKL_ETIMEDOUT && rc != ZKL_ESUSPENDED) {
        fprintf(stderr, "queue: consumer w%d: claim: %s (%s)\n", who,
                zkl_err_name(rc), zkl_last_error());
        it_sleep_ms(20);
      }
      continue;
    }
    int idx = -1;
    if (it.data == NULL || sscanf(it.data, "item-%d", &idx) != 1 || idx < 0 ||
        idx >= csh->nitems) {
      fc_add(lg, QR_BAD, -1, who, 0, it.token);
      zkl_queue_ack(q, &it);
      zkl_item_free(&it);
      continue;
    }
    fc_add(lg, QR_DELIVERED, idx, who, 0, it.token);
    w->item = idx;
    w->token = it.token;
    set_state(w, W_ACTING);
    /* acts while the claim holds; the clock is read before the health,
     * so that a pause anywhere in the loop is followed by a health check
     * before the loop may end */
    int act_ms = between(&r, 40, 160);
    if (fc_load(&csh->linger[idx])) act_ms = C_LINGER_MS;
    for (int64_t end = it_now_ms() + act_ms;;) {
      int done = it_now_ms() >= end;
      int h = zkl_queue_claim_health(q, &it);
      if (h != 0) {
        fc_add(lg, QR_TOLD, idx, who, h, it.token);
        break;
      }
      if (done) break;
      usleep(2000);
    }
    /* acks even when told: what the ack says is under test */
    set_state(w, W_ACKING);
    fc_add(lg, QR_ACKING, idx, who, 0, it.token);
    for (int tries = 0;; tries++) {
      rc = zkl_queue_ack(q, &it);
      fc_add(lg, rc == 0 ? QR_ACKED : rc == ZKL_ELOST ? QR_ACK_LOST
                                                      : QR_ACK_OTHER,
             idx, who, rc, it.token);
      /* not connected within the ack's deadline (a session timeout): the
       * claim stays as it was; ask again.  The header says
       * ZKL_ESUSPENDED; the library says ZKL_ETIMEDOUT (counted) */
      if ((rc != ZKL_ESUSPENDED && rc != ZKL_ETIMEDOUT) || tries >= 20)
        break;
    }
    zkl_item_free(&it);
    set_state(w, W_IDLE);
  }
  zkl_queue_destroy(q);
  zkl_session_close(s);
  return 0;
}

/* A spare waits (no session) until released into a slot. */
static int spare_run(int k) {
  struct cspare *sp = &csh->spare[k];
  while (!fc_load(&sp->go)) {
    if (c_stopping()) return 0;
    it_sleep_ms(5);
  }
  return consumer_run(sp->slot, sp->who);
}

/* Forks a consumer (spare < 0) or spare number `spare`. */
static pid_t c_spawn(int slot, int who, int spare) {
  pid_t pid = fc_fork();
  if (pid > 0) return pid;
  parent_pid = getppid();
  _exit(spare < 0 ? consumer_run(slot, who) : spare_run(spare));
}

/* ---- the fault injector (this process) ------------------------------------- */

/* A pause of a consumer under a claim.  A long one lasts 2.5 times the
 * session timeout; a race ends as soon as the item is delivered to
 * another consumer (which proves the victim's session is gone), and that
 * one holds it for C_LINGER_MS: the victim comes back while another
 * consumer's claim of the same name exists. */
enum { P_LONG, P_RACE };
struct cpause {
  int k; /* log index of the PAUSE */
  int who, item, kind, scanned;
  uint64_t token;
};

static struct {
  uint64_t rng;
  struct {
    pid_t pid; /* 0: exited on its own */
    int who;
    int64_t resume_at; /* paused until (0: not paused) */
    int pause;         /* which pause, while paused */
  } slot[C_CONSUMERS];
  int kills, kills_acking, pauses, races, unclean, skipped, died, stuck;
  int killed[FC_MAXWHO];
  int npauses;
  struct cpause pause[C_MAXPAUSES];
} cn;

static void c_lost(int s, int st) {
  fprintf(stderr, "queue: consumer slot %d (w%d) exited by itself, status "
          "%d\n", s, cn.slot[s].who, st);
  cn.slot[s].pid = 0;
  cn.died++;
}

static void c_reap_unexpected(void) {
  for (int s = 0; s < C_CONSUMERS; s++) {
    int st;
    pid_t pid = cn.slot[s].pid;
    if (pid > 0 && waitpid(pid, &st, WNOHANG) == pid) c_lost(s, st);
  }
}

static int c_paused(void) {
  int n = 0;
  for (int s = 0; s < C_CONSUMERS; s++) n += cn.slot[s].resume_at != 0;
  return n;
}

static void c_resume(int s) {
  fc_add(lg, R_RESUME, -1, cn.slot[s].who, 0, 0); /* before it can act */
  kill(cn.slot[s].pid, SIGCONT);
  cn.slot[s].resume_at = 0;
}

/* Whether a race pause's item went to another consumer (scanning on). */
static int c_redelivered(struct cpause *p) {
  int n = fc_load(&lg->n);
  if (n > FC_MAXREC) n = FC_MAXREC;
  if (p->scanned <= p->k) p->scanned = p->k + 1;
  for (; p->scanned < n; p->scanned++) {
    const struct fc_rec *r = &lg->r[p->scanned];
    if (r->type == 0) break; /* being written: look again later */
    if (r->type == QR_DELIVERED && r->lane == p->item && r->who != p->who)
      return 1;
  }
  return 0;
}

static void c_resume_due(int64_t now) {
  for (int s = 0; s < C_CONSUMERS; s++) {
    if (cn.slot[s].resume_at == 0) continue;
    struct cpause *p = &cn.pause[cn.slot[s].pause];
    if (now >= cn.slot[s].resume_at ||
        (p->kind == P_RACE && c_redelivered(p)))
      c_resume(s);
  }
}

/* Stops a consumer that acts on a claim, for 2.5 times its session
 * timeout: its session expires under the claim.  A consumer that left
 * that state meanwhile is resumed at once (not counted).  1 if paused. */
static int c_pause(uint64_t pick, int kind) {
  int cand[C_CONSUMERS], n = 0;
  if (c_paused() >= C_MAX_PAUSED || cn.npauses >= C_MAXPAUSES) return 0;
  for (int s = 0; s < C_CONSUMERS; s++)
    if (cn.slot[s].pid > 0 && cn.slot[s].resume_at == 0 &&
        fc_load(&csh->slot[s].state) == W_ACTING)
      cand[n++] = s;
  if (n == 0) return 0;
  int s = cand[pick % (uint64_t)n], st;
  struct cslot *w = &csh->slot[s];
  int gen = fc_load(&w->gen);
  if (fc_load(&w->state) != W_ACTING) return 0;
  kill(cn.slot[s].pid, SIGSTOP);
  if (waitpid(cn.slot[s].pid, &st, WUNTRACED) != cn.slot[s].pid ||
      !WIFSTOPPED(st)) {
    c_lost(s, st);
    return 0;
  }
  int who = cn.slot[s].who;
  if (fc_load(&w->state) != W_ACTING || fc_load(&w->gen) != gen) {
    cn.unclean++; /* it moved on: not stopped under a known claim */
    fc_add(lg, R_PAUSE, -1, who, 0, 0);
    fc_add(lg, R_RESUME, -1, who, 0, 0);
    kill(cn.slot[s].pid, SIGCONT);
    return 0;
  }
  struct cpause *p = &cn.pause[cn.npauses];
  p->k = fc_load(&lg->n);
  p->who = who;
  p->item = w->item;
  p->token = w->token;
  p->kind = kind;
  cn.slot[s].pause = cn.npauses++;
  if (kind == P_RACE) {
    fc_store(&csh->linger[p->item], 1);
    cn.races++;
  }
  fc_add(lg, R_PAUSE, p->item, who, 1 + kind, p->token);
  int ms = fc_load(&csh->session_ms[who]);
  cn.slot[s].resume_at = it_now_ms() + (ms > 0 ? ms : C_SESSION_MS) * 5 / 2;
  cn.pauses++;
  return 1;
}

/* SIGKILLs a consumer that holds a claim (in its ack, with `acking`: the
 * state lasts a few ms, so it is polled closely for up to 300 ms), and
 * a spare takes the slot.  1 if killed. */
static int c_kill(uint64_t pick, int acking) {
  if (csh->used >= csh->nspares) return 0;
  int cand[C_CONSUMERS], n = 0;
  for (int64_t until = it_now_ms() + (acking ? 300 : 0);;) {
    for (int s = 0; s < C_CONSUMERS; s++) {
      int st = fc_load(&csh->slot[s].state);
      if (cn.slot[s].pid > 0 && cn.slot[s].resume_at == 0 &&
          (acking ? st == W_ACKING : st == W_ACTING || st == W_ACKING))
        cand[n++] = s;
    }
    if (n > 0 || it_now_ms() >= until) break;
    usleep(100);
  }
  if (n == 0) return 0;
  int s = cand[pick % (uint64_t)n], st;
  int state = fc_load(&csh->slot[s].state), who = cn.slot[s].who;
  kill(cn.slot[s].pid, SIGKILL);
  waitpid(cn.slot[s].pid, &st, 0);
  fc_add(lg, R_KILLED, -1, who, state, 0); /* after all it wrote */
  cn.killed[who] = 1;
  cn.kills++;
  cn.kills_acking += state == W_ACKING;
  struct cspare *sp = &csh->spare[csh->used++];
  set_state(&csh->slot[s], W_IDLE); /* the dead one's word is void */
  sp->slot = s;
  fc_store(&sp->go, 1);
  cn.slot[s].pid = sp->pid;
  cn.slot[s].who = sp->who;
  return 1;
}

/* The first ack answer (0 or ZKL_ELOST) of `who` for item/token after
 * log index k: the record's type, or 0 if none. */
static int ack_after(int k, int who, int item, uint64_t token) {
  int n = fc_load(&lg->n);
  if (n > FC_MAXREC) n = FC_MAXREC;
  for (int i = k + 1; i < n; i++) {
    const struct fc_rec *r = &lg->r[i];
    if (r->who == who && r->lane == item && r->token == token &&
        (r->type == QR_ACKED || r->type == QR_ACK_LOST))
      return r->type;
  }
  return 0;
}

/* Paused victims (not killed since) that have not answered their ack. */
static int c_unsettled(void) {
  int n = 0;
  for (int i = 0; i < cn.npauses; i++) {
    const struct cpause *p = &cn.pause[i];
    n += !cn.killed[p->who] && ack_after(p->k, p->who, p->item, p->token) == 0;
  }
  return n;
}

/* ---- the verdict ------------------------------------------------------------ */

struct citem {
  int delivered, acked, bad_token;
  uint64_t max_token, ack_token;
  int ack_who;
  /* the last ACKING: by whom, which token, and how it ended (0: not
   * yet, else the answer's type, or R_KILLED) */
  int acking_who, acking_end;
  uint64_t acking_token;
};

struct cresult {
  int deliveries, redelivered, acked, acked_by_killed, ack_lost, told;
  int ack_timedout; /* ZKL_ETIMEDOUT from an ack (undocumented) */
  int bad; /* violations */
  int expired_lost, phantom, unexercised, told_after_pause;
  int raced; /* race pauses whose ack came while another held the item */
  int elost_applied, never_acked, twice, stale_ack, undelivered,
      token_order, bad_codes, bad_payload;
  char first[1024];
};

static void c_violation(struct cresult *res, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void c_violation(struct cresult *res, const char *fmt, ...) {
  if (res->bad++ == 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->first, sizeof res->first, fmt, ap);
    va_end(ap);
  }
}

static void c_judge(int nitems, int items_left, struct cresult *res) {
  memset(res, 0, sizeof *res);
  struct citem *it = calloc((size_t)nitems, sizeof *it);
  ck_assert_ptr_nonnull(it);
  static int acking_item[FC_MAXWHO]; /* who -> the item in its ack, or -1 */
  for (int w = 0; w < FC_MAXWHO; w++) acking_item[w] = -1;
  int n = fc_load(&lg->n);
  if (n > FC_MAXREC) n = FC_MAXREC;
  int64_t t0 = n > 0 ? lg->r[0].t_us : 0;
  for (int k = 0; k < n; k++) {
    const struct fc_rec *r = &lg->r[k];
    if (r->who < 0 || r->who >= FC_MAXWHO) continue;
    if (r->type == R_KILLED) {
      int i = acking_item[r->who];
      if (i >= 0 && it[i].acking_who == r->who && it[i].acking_end == 0)
        it[i].acking_end = R_KILLED;
      continue;
    }
    if (r->type == QR_BAD) {
      res->bad_payload++;
      c_violation(res, "w%d claimed an item with a payload not ours (token "
                  "%" PRIu64 ")", r->who, r->token);
      continue;
    }
    if (r->type < QR_DELIVERED || r->lane < 0 || r->lane >= nitems) continue;
    struct citem *x = &it[r->lane];
    double at = (r->t_us - t0) / 1e6;
    switch (r->type) {
      case QR_DELIVERED:
        res->deliveries++;
        if (r->token == 0 || r->token <= x->max_token) {
          res->token_order++;
          c_violation(res, "item %d delivered to w%d at +%.3f s with token "
                      "%" PRIu64 ", not above %" PRIu64 " delivered before",
                      r->lane, r->who, at, r->token, x->max_token);
        } else {
          x->max_token = r->token;
        }
        x->delivered++;
        break;
      case QR_TOLD: res->told++; break;
      case QR_ACKING:
        x->acking_who = r->who;
        x->acking_token = r->token;
        x->acking_end = 0;
        acking_item[r->who] = r->lane;
        break;
      case QR_ACKED:
      case QR_ACK_LOST:
      case QR_ACK_OTHER:
        if (x->acking_who == r->who && x->acking_token == r->token)
          x->acking_end = r->type;
        if (r->type == QR_ACK_OTHER && r->shared == ZKL_ETIMEDOUT)
          res->ack_timedout++;
        else if (r->type == QR_ACK_OTHER && r->shared != ZKL_ESUSPENDED) {
          res->bad_codes++;
          c_violation(res, "w%d's ack of item %d at +%.3f s said %s", r->who,
                      r->lane, at, zkl_err_name(r->shared));
        }
        if (r->type == QR_ACK_LOST) res->ack_lost++;
        if (r->type != QR_ACKED) break;
        res->acked++;
        if (++x->acked > 1) {
          res->twice++;
          c_violation(res, "item %d acked a second time, by w%d at +%.3f s "
                      "(token %" PRIu64 "; the first ack's %" PRIu64 ")",
                      r->lane, r->who, at, r->token, x->ack_token);
        }
        x->ack_token = r->token;
        x->ack_who = r->who;
        break;
    }
  }
  for (int i = 0; i < nitems; i++) {
    struct citem *x = &it[i];
    if (x->delivered == 0) {
      res->undelivered++;
      c_violation(res, "item %d was never delivered", i);
      continue;
    }
    if (x->delivered > 1) res->redelivered++;
    if (x->acked == 1 && x->ack_token != x->max_token) {
      res->stale_ack++;
      c_violation(res, "item %d: w%d's ack of the claim with token %" PRIu64
                  " said 0, but the item was delivered again with token "
                  "%" PRIu64 " (an ack on a lost claim)", i, x->ack_who,
                  x->ack_token, x->max_token);
    }
    if (x->acked > 0 || items_left > 0) continue;
    /* gone without an ACKED: only a consumer killed in its ack may have
     * deleted it */
    if (x->acking_end == R_KILLED && x->acking_token == x->max_token) {
      res->acked_by_killed++;
    } else if (x->acking_end == QR_ACK_LOST) {
      res->elost_applied++;
      c_violation(res, "item %d is gone, but its last ack (w%d, token "
                  "%" PRIu64 ") said ZKL_ELOST (\"nothing was deleted\") and "
                  "no ack said 0", i, x->acking_who, x->acking_token);
    } else {
      res->never_acked++;
      c_violation(res, "item %d is gone but no ack of it said 0 (its last "
                  "ack: w%d, token %" PRIu64 ", ended %d)", i, x->acking_who,
                  x->acking_token, x->acking_end);
    }
  }
  /* consumers resumed after their session expired under a claim */
  for (int p = 0; p < cn.npauses; p++) {
    const struct cpause *q = &cn.pause[p];
    int a = ack_after(q->k, q->who, q->item, q->token);
    if (a == QR_ACK_LOST) res->expired_lost++;
    else if (a == QR_ACKED) {
      res->phantom++;
      c_violation(res, "w%d, paused past its session timeout while it held "
                  "item %d (token %" PRIu64 "), was told its ack succeeded",
                  q->who, q->item, q->token);
    } else {
      res->unexercised++;
    }
    if (a != 0 && q->kind == P_RACE) {
      /* the ack's answer inside another consumer's claim of the item: its
       * DELIVERED before, its ack's answer (or end) after */
      int ans = -1, holder = -1, from = -1, to = n;
      for (int k = q->k + 1; k < n; k++) {
        const struct fc_rec *r = &lg->r[k];
        if (r->lane != q->item) continue;
        if (r->who == q->who && r->token == q->token && r->type == a) {
          ans = k;
          break;
        }
      }
      for (int k = q->k + 1; k < n && ans >= 0; k++) {
        const struct fc_rec *r = &lg->r[k];
        if (holder < 0 && r->type == QR_DELIVERED && r->lane == q->item &&
            r->who != q->who) {
          holder = r->who;
          from = k;
        } else if (holder >= 0 && r->who == holder &&
                   ((r->lane == q->item && r->type >= QR_ACKED &&
                     r->type <= QR_ACK_OTHER) || r->type == R_KILLED)) {
          to = k;
          break;
        }
      }
      if (from >= 0 && from < ans && ans < to) res->raced++;
    }
    /* was claim_health() the first to tell it? */
    for (int k = q->k + 1; k < n; k++) {
      const struct fc_rec *r = &lg->r[k];
      if (r->who != q->who || r->lane != q->item) continue;
      if (r->type == QR_TOLD) res->told_after_pause++;
      if (r->type == QR_TOLD || r->type == QR_ACKING) break;
    }
  }
  free(it);
}

/* Puts the next n items (of nitems), in one batch. */
static void put_items(zkl_queue_t *q, int *put, int n, int nitems) {
  char data[C_PUT_FIRST][24];
  zkl_buf_t b[C_PUT_FIRST];
  if (n > nitems - *put) n = nitems - *put;
  for (int j = 0; j < n; j++) {
    snprintf(data[j], sizeof data[j], "item-%d", *put + j);
    b[j] = (zkl_buf_t){data[j], strlen(data[j])};
  }
  int rc = zkl_queue_put_batch(q, b, (size_t)n, 10000);
  ck_assert_msg(rc == 0, "put_batch: %s (%s)", zkl_err_name(rc),
                zkl_last_error());
  *put += n;
}

static void c_dump_log(void) {
  char name[64];
  snprintf(name, sizeof name, "queue-claims-%" PRIu64 ".log", queue_seed);
  FILE *f = fopen(name, "w");
  if (f == NULL) return;
  static const char *qtypes[] = {"DELIVERED", "TOLD",     "ACKING",
                                 "ACKED",     "ACK_LOST", "ACK_OTHER",
                                 "BAD"};
  static const char *types[] = {"?",     "ENTER",  "EXIT",  "TOLD",
                                "PAUSE", "RESUME", "KILLED"};
  int n = fc_load(&lg->n) < FC_MAXREC ? fc_load(&lg->n) : FC_MAXREC;
  int64_t t0 = n > 0 ? lg->r[0].t_us : 0;
  for (int k = 0; k < n; k++) {
    const struct fc_rec *r = &lg->r[k];
    const char *t = r->type >= QR_DELIVERED && r->type <= QR_BAD
                        ? qtypes[r->type - QR_DELIVERED]
                    : r->type >= 0 && r->type <= R_KILLED ? types[r->type]
                                                          : "?";
    fprintf(f, "%6d %9.3f w%-3d %-9s item %4d  %-16s %" PRIu64 "\n", k,
            (r->t_us - t0) / 1e6, r->who, t, r->lane,
            r->type >= QR_DELIVERED ? zkl_err_name(r->shared) : "", r->token);
  }
  fclose(f);
  printf("the log: %s\n", name);
}

START_TEST(claims_survive_kills_and_pauses) {
  int nitems = fc_env_int("ZKL_QUEUE_ITEMS", C_ITEMS);
  if (nitems > C_MAXITEMS) nitems = C_MAXITEMS;
  printf("\nQueue claims: %d items, %d consumers, session timeout %d ms, "
         "consumers SIGKILLed and paused while holding claims\n", nitems,
         C_CONSUMERS, C_SESSION_MS);
  printf("queue seed %" PRIu64 " (replay: ZKL_QUEUE_FAULT_SEED=%" PRIu64
         ")\n", queue_seed, queue_seed);
  fflush(stdout); /* before the fork: no copy of it in the workers */
  memset(&cn, 0, sizeof cn);
  cn.rng = it_mix64(queue_seed ^ 0x1001) | 1;
  csh = mmap(NULL, sizeof *csh, PROT_READ | PROT_WRITE,
             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ck_assert(csh != MAP_FAILED);
  memset(csh, 0, sizeof *csh);
  csh->seed = queue_seed;
  csh->nitems = nitems;
  csh->nspares = C_SPARES;
  it_root(csh->path, sizeof csh->path, "queue-claims");
  lg = fc_log_new();
  int64_t t_start = it_now_ms();

  /* every process is forked before any session exists in this one */
  for (int s = 0; s < C_CONSUMERS; s++) {
    cn.slot[s].who = s;
    cn.slot[s].pid = c_spawn(s, s, -1);
  }
  for (int k = 0; k < C_SPARES; k++) {
    csh->spare[k].who = C_CONSUMERS + k;
    csh->spare[k].pid = c_spawn(-1, csh->spare[k].who, k);
  }

  zkl_session_t *s = it_session();
  zkl_queue_t *q = queue_of(s, csh->path, ZKL_QUEUE_LOCKING);
  ck_assert_ptr_nonnull(q);
  char entries[160], taken[160], waitp[160], puts[160];
  snprintf(entries, sizeof entries, "%s/entries", csh->path);
  snprintf(taken, sizeof taken, "%s/taken", csh->path);
  snprintf(waitp, sizeof waitp, "%s.zkl/wait-locking", csh->path);
  snprintf(puts, sizeof puts, "%s.zkl/puts", csh->path);
  int put = 0; /* items put so far, C_PUT_N every C_PUT_MS */
  put_items(q, &put, C_PUT_FIRST, nitems);

  fc_store(&csh->go, 1);
  int64_t t0 = it_now_ms(), end = t0 + C_RUN_MS, put_at = t0 + C_PUT_MS;
  int64_t next = t0 + between(&cn.rng, 300, 700), check_at = 0;
  int left = nitems, fired = 0;
  for (int64_t now = t0; now < end; now = it_now_ms()) {
    c_resume_due(now);
    c_reap_unexpected();
    if (put < nitems && now >= put_at) {
      put_items(q, &put, C_PUT_N, nitems);
      put_at += C_PUT_MS;
    }
    if (put == nitems && now >= check_at) {
      if ((left = it_children(s, entries, NULL)) == 0) break;
      check_at = now + 100;
    }
    if (put < nitems && now >= next) { /* faults while items come */
      /* 0 a long pause, 1 a kill, 2 a kill in an ack, 3 a race pause:
       * first a race, a kill and a long pause, then drawn */
      uint64_t kind = fc_xorshift(&cn.rng) % 4, pick = fc_xorshift(&cn.rng);
      if (fired < 3) kind = fired == 0 ? 3 : fired == 1 ? 1 : 0;
      int ok = kind == 0   ? c_pause(pick, P_LONG)
               : kind == 3 ? c_pause(pick, P_RACE)
                           : c_kill(pick, kind == 2);
      if (ok) fired++;
      else cn.skipped++;
      next = it_now_ms() + between(&cn.rng, 400, 1000);
    }
    it_sleep_ms(5);
  }
  int64_t run_ms = it_now_ms() - t0;
  /* the pauses end on schedule (their sessions expire), then the victims
   * settle their acks */
  while (c_paused() > 0) {
    c_resume_due(it_now_ms());
    it_sleep_ms(5);
  }
  for (int64_t until = it_now_ms() + C_QUIET_MS;
       c_unsettled() > 0 && it_now_ms() < until;)
    it_sleep_ms(20);
  fc_store(&csh->stop, 1);
  int64_t until = it_now_ms() + C_STOP_MS;
  for (int i = 0; i < C_CONSUMERS + C_SPARES; i++) {
    pid_t pid = i < C_CONSUMERS ? cn.slot[i].pid
                : i - C_CONSUMERS >= csh->used ? csh->spare[i - C_CONSUMERS].pid
                                                : 0;
    int st = 0;
    if (pid <= 0) continue;
    if (!fc_reap_by(pid, until, &st)) {
      fprintf(stderr, "queue: a consumer (pid %d) did not stop\n", (int)pid);
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      cn.stuck++;
    } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      fprintf(stderr, "queue: a consumer (pid %d) ended with status %d\n",
              (int)pid, st);
      cn.died++;
    }
  }

  int items_left = it_children(s, entries, NULL);
  zkl_queue_destroy(q); /* its put marker goes */
  int orphans = fc_orphans(s, taken, 15000) + fc_orphans(s, waitp, 15000) +
                fc_orphans(s, puts, 15000);
  zkl_session_close(s);

  struct cresult res;
  c_judge(nitems, items_left, &res);
  printf("| %5s | %6s | %6s | %5s | %6s | %6s | %5s | %6s | %10s | %4s | "
         "%7s | %5s |\n", "items", "deliv", "redel", "acked", "killed",
         "ELOST", "kills", "pauses", "expired->E", "told", "orphans",
         "run s");
  printf("|-------|--------|--------|-------|--------|--------|-------|"
         "--------|------------|------|---------|-------|\n");
  printf("| %5d | %6d | %6d | %5d | %6d | %6d | %5d | %6d | %5d / %-3d | "
         "%4d | %7d | %5.1f |\n", nitems, res.deliveries, res.redelivered,
         res.acked, res.acked_by_killed, res.ack_lost, cn.kills, cn.pauses,
         res.expired_lost, cn.npauses, res.told, orphans, run_ms / 1e3);
  printf("kills in ack %d; pauses: %d resumed once the item was "
         "redelivered, %d of them answered while the new claim was held, %d "
         "given up (the victim moved on); faults skipped %d; paused victims "
         "told by claim_health %d; acks answered ZKL_ETIMEDOUT %d; wall %.1f "
         "s\n", cn.kills_acking, cn.races, res.raced, cn.unclean, cn.skipped,
         res.told_after_pause, res.ack_timedout,
         (it_now_ms() - t_start) / 1e3);

  char why[2048];
  snprintf(why, sizeof why, "seed %" PRIu64 " (replay: ZKL_QUEUE_FAULT_SEED="
           "%" PRIu64 "):", queue_seed, queue_seed);
  int bad = 0;
  if (res.bad > 0 && ++bad)
    fc_appendf(why, sizeof why, " %d violations (never delivered %d, acked "
               "twice %d, ack on a lost claim %d, tokens not increasing %d, "
               "gone unacked %d, ELOST but deleted %d, ack after expiry said "
               "0 %d, odd ack codes %d, odd payloads %d), the first: %s;",
               res.bad, res.undelivered, res.twice, res.stale_ack,
               res.token_order, res.never_acked, res.elost_applied, res.phantom,
               res.bad_codes, res.bad_payload, res.first);
  if (items_left > 0 && ++bad)
    fc_appendf(why, sizeof why, " %d items left in entries/ after %d ms (%d "
               "of %d put);", items_left, C_RUN_MS, put, nitems);
  if (orphans > 0 && ++bad)
    fc_appendf(why, sizeof why, " %d nodes left in taken/, wait/ and puts/;",
               orphans);
  if (cn.kills == 0 && ++bad)
    fc_appendf(why, sizeof why, " no consumer killed;");
  if (res.expired_lost == 0 && ++bad)
    fc_appendf(why, sizeof why, " no consumer paused past its session timeout "
               "under a claim had its ack answered (%d pauses, %d unanswered);",
               cn.pauses, res.unexercised);
  if (res.raced == 0 && ++bad)
    fc_appendf(why, sizeof why, " no paused consumer's ack was answered while "
               "another consumer held the item (%d race pauses);", cn.races);
  if (res.redelivered == 0 && ++bad)
    fc_appendf(why, sizeof why, " no item was delivered twice;");
  if (cn.died > 0 && ++bad)
    fc_appendf(why, sizeof why, " %d consumers failed;", cn.died);
  if (cn.stuck > 0 && ++bad)
    fc_appendf(why, sizeof why, " %d consumers stuck after the stop;",
               cn.stuck);
  if (fc_load(&lg->n) >= FC_MAXREC && ++bad)
    fc_appendf(why, sizeof why, " the log overflowed;");
  if (bad || getenv("ZKL_QUEUE_TRACE") != NULL) c_dump_log();
  fflush(stdout);
  fc_log_free(lg);
  munmap(csh, sizeof *csh);
  ck_assert_msg(!bad, "%s", why);
}
END_TEST

/* ==== 2. put_batch through connection cuts and a leader restart ============ */

#define P_BATCHES 60
#define P_MAXITEMS 40
#define P_SESSION_MS 8000
#define P_CUT_PERCENT 40

/* Parses "b<batch>-<pos>-..." and the name's sequence: 1 if both. */
static int parse_item(const zkl_item_t *it, const char *prefix, int *b,
                      int *pos, long *seq) {
  size_t pl = strlen(prefix);
  const char *dash = strrchr(it->name, '-');
  if (it->data == NULL || strncmp(it->data, prefix, pl) != 0 ||
      sscanf(it->data + pl, "b%d-%d", b, pos) != 2 || dash == NULL)
    return 0;
  *seq = strtol(dash + 1, NULL, 10);
  return 1;
}

/* Drains the queue at path: the items in queue order (*n of them). */
static zkl_item_t *drain(zkl_session_t *s, const char *path, size_t *n) {
  zkl_queue_t *q = queue_of(s, path, ZKL_QUEUE_QN);
  ck_assert_ptr_nonnull(q);
  zkl_item_t *all = NULL;
  size_t got = 0;
  for (;;) {
    zkl_item_t *v = NULL;
    size_t k = 0;
    int rc = zkl_queue_take_batch(q, 1000, 0, &v, &k);
    if (rc == ZKL_EEMPTY) break;
    ck_assert_msg(rc == 0, "take_batch: %s (%s)", zkl_err_name(rc),
                  zkl_last_error());
    all = realloc(all, (got + k) * sizeof *all);
    ck_assert_ptr_nonnull(all);
    memcpy(all + got, v, k * sizeof *v);
    got += k;
    free(v); /* the data now belong to `all` */
  }
  zkl_queue_destroy(q);
  *n = got;
  return all;
}

/* What the drained items say of batches 0..nb-1 (sizes m[b]): count[b]
 * items of batch b are there.  Each present batch must be whole, once,
 * contiguous, in order, with consecutive sequences, and the batches in
 * order.  The violations are counted in *v and the first few described
 * in why; their number is returned. */
struct bverdict {
  int foreign, torn, twice, disorder, gaps, partial;
};

static int judge_batches(const zkl_item_t *items, size_t n, const char *prefix,
                         int nb, const int *m, int *count,
                         struct bverdict *v, char *why, size_t len) {
  int bad = 0, last_b = -1;
  memset(v, 0, sizeof *v);
  memset(count, 0, (size_t)nb * sizeof *count);
  for (size_t i = 0; i < n;) {
    int b, pos;
    long seq;
    if (!parse_item(&items[i], prefix, &b, &pos, &seq) || b < 0 || b >= nb ||
        pos < 0 || pos >= m[b]) {
      v->foreign++;
      if (bad++ < 3)
        fc_appendf(why, len, " %s: a foreign item (%s);", items[i].name,
                   items[i].data != NULL ? items[i].data : "");
      i++;
      continue;
    }
    if (pos != 0) {
      v->torn++;
      if (bad++ < 3)
        fc_appendf(why, len, " %s: batch %d item %d does not follow its "
                   "predecessor (a partial or torn batch);", items[i].name, b,
                   pos);
      count[b]++;
      i++;
      continue;
    }
    if (count[b] > 0) {
      v->twice++;
      if (bad++ < 3)
        fc_appendf(why, len, " batch %d is there twice (again at %s);", b,
                   items[i].name);
    }
    if (b < last_b) {
      v->disorder++;
      if (bad++ < 3)
        fc_appendf(why, len, " batch %d comes after batch %d;", b, last_b);
    }
    last_b = b;
    /* the batch, from its first item */
    int j = 1;
    count[b]++;
    for (; j < m[b] && i + (size_t)j < n; j++) {
      int b2, pos2;
      long seq2;
      if (!parse_item(&items[i + (size_t)j], prefix, &b2, &pos2, &seq2) ||
          b2 != b || pos2 != j)
        break;
      if (seq2 != seq + j) {
        v->gaps++;
        if (bad++ < 3)
          fc_appendf(why, len, " batch %d: %s does not follow %s (sequences "
                     "not consecutive);", b, items[i + (size_t)j].name,
                     items[i].name);
      }
      count[b]++;
    }
    if (j < m[b]) {
      v->partial++;
      if (bad++ < 3)
        fc_appendf(why, len, " batch %d is partial: %d of %d items from %s on;",
                   b, j, m[b], items[i].name);
    }
    i += (size_t)j;
  }
  return bad;
}

struct restarter {
  pthread_t th;
  int id, ok;
  int64_t at_ms, up_ms;
};

static int harness_run(const char *env, const char *verb, int id) {
  char cmd[1024];
  fc_harness_cmd(cmd, sizeof cmd, env, verb, id);
  return system(cmd) == 0;
}

/* Kills server id and starts it again (the call waits until it serves). */
static void *restart_main(void *arg) {
  struct restarter *r = arg;
  r->at_ms = it_now_ms();
  r->ok = harness_run("", "kill", r->id);
  it_sleep_ms(1000);
  r->ok &= harness_run("", "restart", r->id);
  r->up_ms = it_now_ms();
  return NULL;
}

START_TEST(put_batch_cut_no_duplicates) {
  printf("\nQueue put_batch: %d batches of 1..%d items through a proxy to a "
         "follower, %d %% of the multis cut after forwarding, the leader "
         "restarted meanwhile\n", P_BATCHES, P_MAXITEMS, P_CUT_PERCENT);
  printf("queue seed %" PRIu64 " (replay: ZKL_QUEUE_FAULT_SEED=%" PRIu64
         ")\n", queue_seed, queue_seed);
  fflush(stdout);
  uint64_t r = it_mix64(queue_seed ^ 0x2002) | 1;
  char path[128], puts[160];
  it_root(path, sizeof path, "queue-cut");
  snprintf(puts, sizeof puts, "%s.zkl/puts", path);
  int leader = fc_leader_id();
  ck_assert_int_gt(leader, 0);
  int target = leader % 3 + 1; /* a follower */
  it_proxy_t *px = it_proxy_start_to(fc_server_port(target));
  char hosts[64];
  snprintf(hosts, sizeof hosts, "127.0.0.1:%d", it_proxy_port(px));
  zkl_session_t *ps = it_session_at(hosts, P_SESSION_MS);
  zkl_session_t *ds = it_session(); /* direct, for the checks */
  zkl_queue_t *q = queue_of(ps, path, ZKL_QUEUE_QN);
  ck_assert_ptr_nonnull(q);

  int m[P_BATCHES], rcs[P_BATCHES], cut[P_BATCHES];
  int64_t began[P_BATCHES], ended[P_BATCHES];
  int cuts = 0, unknown = 0, failed = 0;
  struct restarter rs = {.id = leader};
  int restarting = 0; /* the thread was started */
  int64_t t0 = it_now_ms();
  char why[2048];
  snprintf(why, sizeof why, "seed %" PRIu64 " (replay: ZKL_QUEUE_FAULT_SEED="
           "%" PRIu64 "):", queue_seed, queue_seed);
  for (int b = 0; b < P_BATCHES; b++) {
    if (b == P_BATCHES / 3) {
      ck_assert_int_eq(pthread_create(&rs.th, NULL, restart_main, &rs), 0);
      restarting = 1;
    }
    m[b] = between(&r, 1, P_MAXITEMS);
    cut[b] = (int)(fc_xorshift(&r) % 100) < P_CUT_PERCENT;
    char data[P_MAXITEMS][48];
    zkl_buf_t bufs[P_MAXITEMS];
    for (int j = 0; j < m[b]; j++) {
      snprintf(data[j], sizeof data[j], "b%d-%d-%016" PRIx64, b, j,
               fc_xorshift(&r));
      bufs[j] = (zkl_buf_t){data[j], strlen(data[j])};
    }
    int before = it_proxy_cuts(px);
    if (cut[b]) it_proxy_cut_after(px, 14); /* multi */
    began[b] = it_now_ms();
    rcs[b] = zkl_queue_put_batch(q, bufs, (size_t)m[b], 20000);
    ended[b] = it_now_ms();
    if (cut[b]) {
      if (it_proxy_cuts(px) > before) cuts++;
      else it_proxy_cut_after(px, 0); /* no multi went: disarmed */
    }
    if (rcs[b] == ZKL_ESUSPENDED || rcs[b] == ZKL_ELOST) {
      unknown++;
      fprintf(stderr, "queue: batch %d: %s (%s)\n", b, zkl_err_name(rcs[b]),
              zkl_last_error());
    } else if (rcs[b] != 0) {
      if (failed++ < 3)
        fc_appendf(why, sizeof why, " batch %d: put_batch said %s (%s);", b,
                   zkl_err_name(rcs[b]), zkl_last_error());
    }
  }
  int64_t put_ms = it_now_ms() - t0;
  if (restarting) pthread_join(rs.th, NULL);
  int overlapped = 0; /* puts underway while the leader was down or back */
  for (int b = 0; restarting && b < P_BATCHES; b++)
    overlapped += ended[b] >= rs.at_ms && began[b] <= rs.up_ms;
  it_proxy_cut_after(px, 0);
  zkl_queue_destroy(q); /* its last put's marker: deleted by the janitor */
  int markers = fc_orphans(ds, puts, 10000);
  zkl_session_close(ps);
  it_proxy_stop(px);

  size_t n = 0;
  zkl_item_t *items = drain(ds, path, &n);
  int count[P_BATCHES];
  struct bverdict v;
  int bad = judge_batches(items, n, "", P_BATCHES, m, count, &v, why,
                          sizeof why);
  int present = 0, lost = 0, unknown_present = 0;
  for (int b = 0; b < P_BATCHES; b++) {
    present += count[b] > 0;
    if (rcs[b] == 0 && count[b] == 0 && lost++ < 3)
      fc_appendf(why, sizeof why, " batch %d (put said 0) is missing;", b);
    if (rcs[b] != 0 && count[b] > 0) unknown_present++;
    if (rcs[b] != 0 && rcs[b] != ZKL_ESUSPENDED && rcs[b] != ZKL_ELOST &&
        count[b] > 0 && bad++ < 3)
      fc_appendf(why, sizeof why, " batch %d is there though its put said %s;",
                 b, zkl_err_name(rcs[b]));
  }
  int left = it_children(ds, path, NULL);
  zkl_items_free(items, n);
  zkl_session_close(ds);

  printf("| %7s | %5s | %4s | %7s | %7s | %7s | %10s | %7s | %7s | %9s |"
         " %6s |\n", "batches", "items", "cuts", "unknown", "present",
         "partial", "duplicates", "other", "markers", "restart", "put s");
  printf("|---------|-------|------|---------|---------|---------|"
         "------------|---------|---------|-----------|--------|\n");
  printf("| %7d | %5zu | %4d | %7d | %7d | %7d | %10d | %7d | %7d | %9s |"
         " %6.1f |\n", P_BATCHES, n, cuts, unknown, present,
         v.partial + v.torn, v.twice, v.foreign + v.disorder + v.gaps,
         markers, !rs.ok ? "FAILED" : "done", put_ms / 1e3);
  printf("leader (server %d) killed at +%.1f s, serving again at +%.1f s; "
         "%d puts underway meanwhile\n", rs.id, (rs.at_ms - t0) / 1e3,
         (rs.up_ms - t0) / 1e3, overlapped);
  if (unknown > 0)
    printf("puts of unknown outcome: %d, of which %d are there\n", unknown,
           unknown_present);
  fflush(stdout);
  int fail = bad + lost + failed;
  if (markers > 0 && ++fail)
    fc_appendf(why, sizeof why, " %d put markers left in %s;", markers, puts);
  if (left > 0 && ++fail)
    fc_appendf(why, sizeof why, " %d children left after the drain;", left);
  if (cuts == 0 && ++fail)
    fc_appendf(why, sizeof why, " no connection was cut;");
  if (!rs.ok && ++fail)
    fc_appendf(why, sizeof why, " the leader's restart failed;");
  if (overlapped == 0 && ++fail)
    fc_appendf(why, sizeof why, " no put was underway during the leader's "
               "restart;");
  ck_assert_msg(!fail, "%s", why);
}
END_TEST

/* ==== 3. a producer SIGKILLed in put_batch ================================ */

#define K_ROUNDS 6
#define K_MAXB 256
#define K_SESSION_MS 2000

struct kround {
  char path[128];
  pid_t pid;
  int go, ready;       /* atomic */
  int started, done;   /* atomic: batches begun, batches answered */
  int m[K_MAXB], rc[K_MAXB];
};

struct kshared {
  struct kround round[K_ROUNDS];
};

static struct kshared *ksh;

static int k_size(int round, int b) {
  return 50 + (int)(it_mix64(queue_seed ^ ((uint64_t)round << 32) ^
                             (uint64_t)b) % 351);
}

static int producer_run(int round) {
  struct kround *k = &ksh->round[round];
  zkl_session_t *s = worker_session(K_SESSION_MS);
  zkl_queue_t *q = s != NULL ? queue_of(s, k->path, ZKL_QUEUE_QN) : NULL;
  if (q == NULL) return 2;
  static char data[400][64];
  static zkl_buf_t bufs[400];
  fc_store(&k->ready, 1);
  while (!fc_load(&k->go)) {
    if (getppid() != parent_pid) return 0;
    it_sleep_ms(1);
  }
  for (int b = 0; b < K_MAXB; b++) {
    int m = k_size(round, b);
    for (int j = 0; j < m; j++) {
      snprintf(data[j], sizeof data[j], "p%d-b%d-%d-%040d", round, b, j, 0);
      bufs[j] = (zkl_buf_t){data[j], strlen(data[j])};
    }
    k->m[b] = m;
    fc_store(&k->started, b + 1);
    k->rc[b] = zkl_queue_put_batch(q, bufs, (size_t)m, 10000);
    fc_store(&k->done, b + 1);
  }
  while (getppid() == parent_pid) it_sleep_ms(10); /* killed here */
  return 0;
}

START_TEST(killed_producer_batch_is_whole) {
  printf("\nQueue put_batch: %d producers SIGKILLed in a loop of batches "
         "of 50..400 items\n", K_ROUNDS);
  printf("queue seed %" PRIu64 " (replay: ZKL_QUEUE_FAULT_SEED=%" PRIu64
         ")\n", queue_seed, queue_seed);
  fflush(stdout);
  uint64_t r = it_mix64(queue_seed ^ 0x3003) | 1;
  ksh = mmap(NULL, sizeof *ksh, PROT_READ | PROT_WRITE,
             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ck_assert(ksh != MAP_FAILED);
  memset(ksh, 0, sizeof *ksh);
  for (int i = 0; i < K_ROUNDS; i++) {
    struct kround *k = &ksh->round[i];
    it_root(k->path, sizeof k->path, "queue-kill");
    pid_t pid = fc_fork();
    if (pid == 0) {
      parent_pid = getppid();
      _exit(producer_run(i));
    }
    k->pid = pid;
  }
  int in_flight = 0, whole = 0;
  int started[K_ROUNDS], done[K_ROUNDS];
  for (int i = 0; i < K_ROUNDS; i++) {
    struct kround *k = &ksh->round[i];
    int64_t until = it_now_ms() + 30000;
    while (!fc_load(&k->ready) && it_now_ms() < until) it_sleep_ms(2);
    ck_assert_msg(fc_load(&k->ready), "producer %d: no session", i);
    fc_store(&k->go, 1);
    while (fc_load(&k->done) < 2 && it_now_ms() < until) usleep(200);
    ck_assert_msg(fc_load(&k->done) >= 2, "producer %d put nothing", i);
    usleep((useconds_t)between(&r, 0, 40000));
    kill(k->pid, SIGKILL);
    int st;
    waitpid(k->pid, &st, 0);
    started[i] = fc_load(&k->started);
    done[i] = fc_load(&k->done);
    in_flight += started[i] > done[i];
  }

  zkl_session_t *s = it_session();
  char why[2048];
  snprintf(why, sizeof why, "seed %" PRIu64 " (replay: ZKL_QUEUE_FAULT_SEED="
           "%" PRIu64 "):", queue_seed, queue_seed);
  int fail = 0, batches = 0, markers = 0;
  size_t total = 0;
  for (int i = 0; i < K_ROUNDS; i++) {
    struct kround *k = &ksh->round[i];
    size_t n = 0;
    zkl_item_t *items = drain(s, k->path, &n);
    total += n;
    char prefix[16];
    snprintf(prefix, sizeof prefix, "p%d-", i);
    int count[K_MAXB];
    int m[K_MAXB];
    for (int b = 0; b < K_MAXB; b++) m[b] = b < started[i] ? k->m[b] : 1;
    /* a batch never begun has no size: m 1 makes any item of it a
     * violation below (count > 0) */
    struct bverdict v;
    fail += judge_batches(items, n, prefix, K_MAXB, m, count, &v, why,
                          sizeof why);
    for (int b = 0; b < K_MAXB; b++) {
      if (b < done[i] && k->rc[b] != 0 && fail++ < 3)
        fc_appendf(why, sizeof why, " producer %d batch %d: put_batch said %s;",
                   i, b, zkl_err_name(k->rc[b]));
      if (b < done[i] && k->rc[b] == 0 && count[b] == 0 && fail++ < 3)
        fc_appendf(why, sizeof why, " producer %d batch %d (put said 0) is "
                   "missing;", i, b);
      if (b >= started[i] && count[b] > 0 && fail++ < 3)
        fc_appendf(why, sizeof why, " producer %d batch %d, never begun, is "
                   "there;", i, b);
    }
    if (started[i] > done[i]) whole += count[started[i] - 1] > 0;
    batches += done[i];
    zkl_items_free(items, n);
    char puts[160];
    snprintf(puts, sizeof puts, "%s.zkl/puts", k->path);
    markers += fc_orphans(s, puts, 10000); /* the killed session's */
    if (it_children(s, k->path, NULL) != 0 && fail++ < 3)
      fc_appendf(why, sizeof why, " producer %d: items left after the drain;",
                 i);
  }
  zkl_session_close(s);
  munmap(ksh, sizeof *ksh);
  printf("| %6s | %7s | %5s | %9s | %20s | %7s |\n", "rounds", "batches",
         "items", "in flight", "in-flight batch there", "markers");
  printf("|--------|---------|-------|-----------|----------------------|"
         "---------|\n");
  printf("| %6d | %7d | %5zu | %9d | %20d | %7d |\n", K_ROUNDS, batches,
         total, in_flight, whole, markers);
  fflush(stdout);
  if (markers > 0 && ++fail)
    fc_appendf(why, sizeof why, " %d put markers left after the sessions "
               "ended;", markers);
  if (in_flight == 0 && ++fail)
    fc_appendf(why, sizeof why, " no producer was killed with a put in "
               "flight;");
  ck_assert_msg(!fail, "%s", why);
}
END_TEST

Suite *queue_suite(void) {
  queue_seed = fc_seed("ZKL_QUEUE_FAULT_SEED");
  /* a case each, so that CK_RUN_CASE can pick one */
  Suite *su = suite_create("queue-faults");
  TCase *tc = tcase_create("queue-claims");
  tcase_set_timeout(tc, 150);
  tcase_add_test(tc, claims_survive_kills_and_pauses);
  suite_add_tcase(su, tc);
  tc = tcase_create("queue-put-cut");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, put_batch_cut_no_duplicates);
  suite_add_tcase(su, tc);
  tc = tcase_create("queue-put-kill");
  tcase_set_timeout(tc, 90);
  tcase_add_test(tc, killed_producer_batch_is_whole);
  suite_add_tcase(su, tc);
  return su;
}
