/* tests/integration/test-curator-interop.c - zkl's mutex, read/write lock
 * and election beside Curator 5.4's InterProcessMutex,
 * InterProcessReadWriteLock and LeaderLatch on the same paths, live and
 * both ways.  The peer: java/CuratorLockPeer.java (compiled here), whose
 * clients each have a session and a thread of their own; zkl's contenders
 * are clients of the same shape here (a thread each, with its own session,
 * running its calls in order).  Every contender's node data is its name
 * (zkl's Z..., Curator's C...), so each queue is read, in sequence order,
 * straight from the server, and every test ends with no node left while
 * the peer still lives.
 *  - mutex_fifo_both_ways: zkl Z0 holds; Curator C1, zkl Z1, Curator C2
 *    queue in that order (the server's children by sequence, and Curator's
 *    getParticipantNodes(), say so); released one at a time they are
 *    served in that order and no sooner; while a zkl client holds,
 *    Curator's acquire(0) fails and leaves no node, while a Curator client
 *    holds, zkl's trylock says ZKL_EBUSY.  Then a mixed loop (2 zkl
 *    threads, 2 Curator clients, 20 rounds each, 4 ms holds): every round
 *    done, and no two holds overlap.
 *  - rwlock_arrival_order_both_ways: readers of both kinds share; a writer
 *    of either kind waiting behind them makes later readers of both kinds
 *    wait for it (and the tries of both kinds fail) until it has held and
 *    let go; the two kinds' write locks exclude each other, both ways.
 *  - rwlock_downgrade_and_loop: Curator's downgrade (its write holder
 *    takes the read lock, then lets the write lock go) lets a zkl reader
 *    queued in between in beside it; zkl's downgrade keeps its write node
 *    until the read hold ends, so a Curator reader waits that long.  (Not
 *    run: a WRITER queued between Curator's write node and its later read
 *    node gets the write lock as soon as Curator lets the write lock go,
 *    while Curator still reads - Curator's own protocol, whichever kind
 *    that writer is; zkl's downgrade makes no second node.)  Then a
 *    mixed loop (zkl and Curator readers and writers, 10 rounds each):
 *    every round done, no write hold overlaps any other hold.
 *  - election_handover_both_ways: zkl Z1, Curator C1, zkl Z2, Curator C2
 *    stand on one path in that order; leadership follows that order, one
 *    at a time (Z1 resigns: C1; C1 closes: Z2; Z2 resigns: C2), each side
 *    naming the other's leader (zkl_election_leader(), Curator's
 *    getLeader() and getParticipants()), and Curator's listener hearing
 *    isLeader / notLeader once each.
 *  - election_killed_curator_leader: a Curator leader's process is killed;
 *    its leadership passes to the zkl candidate behind it once its session
 *    ends, never while its node is there.
 * Exclusion: each client logs each hold, from just after its acquire
 * returned (or its on_elected / isLeader ran) to just before its release
 * (resign, close) was called, on CLOCK_MONOTONIC (Java's
 * System.nanoTime(), ours - one clock): no two holds overlap but two reads,
 * or a client's own (a downgrade).  The tcase's teardown sweeps what a
 * failed test left (/zkl-test/cui-<run>-...). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"

static void suite_setup(void) {
  it_peer_setup("curator-interop", "cui", "CuratorLockPeer");
}

/* Under valgrind (or ZKL_TEST_SLOW) zkl's side takes longer. */
static int slow(void) {
  const char *w = getenv("ZKL_TEST_WRAPPER");
  int wrapped = w != NULL && w[0] != '\0';
  return wrapped || getenv("ZKL_TEST_SLOW") != NULL ? 2 : 1;
}

static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- the server's view --------------------------------------------------- */

static int by_seq(const void *x, const void *y) {
  const char *a = *(char *const *)x, *b = *(char *const *)y;
  size_t la = strlen(a), lb = strlen(b);
  return strcmp(a + (la > 10 ? la - 10 : 0), b + (lb > 10 ? lb - 10 : 0));
}

/* The nodes under path by sequence, each shown as its data (its client's
 * name), with "/r" for a __READ__ node and "/w" for a __WRIT__ one,
 * space-separated into who ("" for none or no path).  Listed again if a
 * node goes between the listing and its read. */
static void owners(zkl_session_t *s, const char *path, char *who, size_t len) {
  zhandle_t *zh = zkl_session_zhandle(s);
  for (int tries = 0;; tries++) {
    ck_assert_int_lt(tries, 100);
    struct String_vector v = {0, NULL};
    who[0] = '\0';
    int rc = zoo_get_children(zh, path, 0, &v);
    if (rc == ZNONODE) return;
    ck_assert_msg(rc == ZOK, "get_children %s: %s", path, zerror(rc));
    qsort(v.data, (size_t)v.count, sizeof *v.data, by_seq);
    int again = 0;
    size_t at = 0;
    for (int i = 0; i < v.count; i++) {
      char p[1024], data[64];
      int dl = sizeof data - 1;
      snprintf(p, sizeof p, "%s/%s", path, v.data[i]);
      rc = zoo_get(zh, p, 0, data, &dl, NULL);
      if (rc == ZNONODE) {
        again = 1;
        break;
      }
      ck_assert_msg(rc == ZOK, "get %s: %s", p, zerror(rc));
      data[dl < 0 ? 0 : dl] = '\0';
      const char *k = strstr(v.data[i], "__READ__")   ? "/r"
                      : strstr(v.data[i], "__WRIT__") ? "/w"
                                                      : "";
      at += (size_t)snprintf(who + at, at < len ? len - at : 0, "%s%s%s",
                             i > 0 ? " " : "", data, k);
    }
    deallocate_String_vector(&v);
    if (!again) return;
  }
}

/* Waits (10 s at most) until the queue on path is `want`. */
static void owners_are(zkl_session_t *s, const char *path, const char *want) {
  char who[1024] = "";
  int64_t end = it_now_ms() + 10000 * slow();
  for (;;) {
    owners(s, path, who, sizeof who);
    if (strcmp(who, want) == 0) return;
    ck_assert_msg(it_now_ms() < end, "%s is \"%s\", not \"%s\"", path, who,
                  want);
    it_sleep_ms(2);
  }
}

/* The queue on path is `want` now (a state that must hold still). */
static void owners_still(zkl_session_t *s, const char *path,
                         const char *want) {
  char who[1024] = "";
  owners(s, path, who, sizeof who);
  ck_assert_msg(strcmp(who, want) == 0, "%s is \"%s\", not still \"%s\"",
                path, who, want);
}

static void drop_tree(zkl_session_t *s, const char *path) {
  zhandle_t *zh = zkl_session_zhandle(s);
  it_peer_delete_tree(zh, path);
  int rc = zoo_exists(zh, path, 0, NULL);
  ck_assert_msg(rc == ZNONODE, "%s still there: %s", path, zerror(rc));
}

/* ---- holds: spans on one clock ------------------------------------------- */

/* One hold by one client, CLOCK_MONOTONIC ns: 'm' a mutex hold, 'r' a
 * read hold, 'w' a write hold or a leadership. */
typedef struct span {
  char who[8];
  char kind;
  int64_t t0, t1;
} span_t;

#define MAX_SPANS 512
typedef struct spans {
  span_t v[MAX_SPANS];
  int n;
} spans_t;

static spans_t all; /* every hold of the test's phase underway */

static void span_add(spans_t *sp, const char *who, char kind, int64_t t0,
                     int64_t t1) {
  ck_assert_int_lt(sp->n, MAX_SPANS);
  ck_assert_int_le(t0, t1);
  span_t *x = &sp->v[sp->n++];
  snprintf(x->who, sizeof x->who, "%s", who);
  x->kind = kind;
  x->t0 = t0;
  x->t1 = t1;
}

static int by_start(const void *x, const void *y) {
  const span_t *a = x, *b = y;
  return (a->t0 > b->t0) - (a->t0 < b->t0);
}

/* No two holds in `all` overlap, but two read holds or two of one client
 * (a downgrade).  The holders in order of their start into seq (if not
 * NULL); the number of holds is returned, and the pairs of read holds of
 * different clients that did overlap into *shared (if not NULL). */
static int exclusive(char *seq, size_t len, int *shared) {
  qsort(all.v, (size_t)all.n, sizeof *all.v, by_start);
  int sh = 0;
  for (int i = 0; i < all.n; i++) {
    const span_t *p = &all.v[i];
    for (int j = i + 1; j < all.n && all.v[j].t0 < p->t1; j++) {
      const span_t *q = &all.v[j];
      if (strcmp(p->who, q->who) == 0) continue;
      ck_assert_msg(p->kind == 'r' && q->kind == 'r',
                    "%s (%c) and %s (%c) held at once (%lld ns overlap)",
                    p->who, p->kind, q->who, q->kind,
                    (long long)((q->t1 < p->t1 ? q->t1 : p->t1) - q->t0));
      sh++;
    }
  }
  size_t at = 0;
  if (seq != NULL) seq[0] = '\0';
  for (int i = 0; seq != NULL && i < all.n; i++)
    at += (size_t)snprintf(seq + at, at < len ? len - at : 0, "%s%s",
                           i > 0 ? " " : "", all.v[i].who);
  if (shared != NULL) *shared = sh;
  return all.n;
}

/* The holds of `who` (of kind, or any if 0) in `all`. */
static int holds_of(const char *who, char kind) {
  int n = 0;
  for (int i = 0; i < all.n; i++)
    n += strcmp(all.v[i].who, who) == 0 &&
         (kind == 0 || all.v[i].kind == kind);
  return n;
}

/* The first hold of who of kind in `all`. */
static const span_t *hold_of(const char *who, char kind) {
  for (int i = 0; i < all.n; i++)
    if (strcmp(all.v[i].who, who) == 0 && all.v[i].kind == kind)
      return &all.v[i];
  ck_assert_msg(0, "no hold (%c) of %s", kind, who);
  return NULL;
}

/* Did the read holds of a and b overlap (the first of each)? */
static int shared(const char *a, const char *b) {
  const span_t *x = hold_of(a, 'r'), *y = hold_of(b, 'r');
  return x->t0 < y->t1 && y->t0 < x->t1;
}

/* seq (holders by start) is head followed by x and y in either order (two
 * readers let in together). */
static void seq_is(const char *seq, const char *head, const char *x,
                   const char *y) {
  char a[256], b[256];
  snprintf(a, sizeof a, "%s %s %s", head, x, y);
  snprintf(b, sizeof b, "%s %s %s", head, y, x);
  ck_assert_msg(strcmp(seq, a) == 0 || strcmp(seq, b) == 0,
                "holders \"%s\", not \"%s\"", seq, a);
}

/* ---- zkl clients: a thread each, running its calls in order --------------
 * Each has its own session and one lock object (a mutex or a read/write
 * lock) on the test's path, whose node data is its name. */

enum { J_LOCK, J_UNLOCK, J_LOOP };

typedef struct zjob {
  int op;
  char kind;     /* 'm', 'r', 'w' */
  int64_t ms;    /* < 0 forever, 0 a try, > 0 timed */
  int rounds, hold_ms;
  int done, rc;  /* under the client's mu */
  struct zjob *next, *all;
} zjob_t;

typedef struct zc {
  char id[8];
  zkl_session_t *s;
  zkl_mutex_t *m;
  zkl_rwlock_t *l;
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  zjob_t *head, *tail, *jobs;
  int stop;
  int64_t since_m, since_r, since_w; /* ns, 0: not held; its thread's */
  spans_t log;                       /* under mu */
} zc_t;

/* On the client's thread. */
static int zc_lock(zc_t *c, char kind, int64_t ms) {
  int rc;
  if (kind == 'm')
    rc = ms < 0    ? zkl_mutex_lock(c->m)
         : ms == 0 ? zkl_mutex_trylock(c->m)
                   : zkl_mutex_timedlock(c->m, ms);
  else if (kind == 'r')
    rc = ms < 0    ? zkl_rwlock_rdlock(c->l)
         : ms == 0 ? zkl_rwlock_tryrdlock(c->l)
                   : zkl_rwlock_timedrdlock(c->l, ms);
  else
    rc = ms < 0    ? zkl_rwlock_wrlock(c->l)
         : ms == 0 ? zkl_rwlock_trywrlock(c->l)
                   : zkl_rwlock_timedwrlock(c->l, ms);
  if (rc == 0) {
    int64_t t = mono_ns();
    int64_t *since = kind == 'm' ? &c->since_m
                     : kind == 'r' ? &c->since_r
                                   : &c->since_w;
    if (*since == 0) *since = t;
  }
  return rc;
}

/* On the client's thread: one level of its hold (a rwlock's write hold
 * first, as zkl_rwlock_unlock() does), logged. */
static int zc_unlock(zc_t *c) {
  int64_t t1 = mono_ns();
  int64_t *since = c->m != NULL      ? &c->since_m
                   : c->since_w != 0 ? &c->since_w
                                     : &c->since_r;
  char kind = c->m != NULL ? 'm' : since == &c->since_w ? 'w' : 'r';
  if (*since != 0) {
    pthread_mutex_lock(&c->mu);
    span_add(&c->log, c->id, kind, *since, t1);
    pthread_mutex_unlock(&c->mu);
    *since = 0;
  }
  return c->m != NULL ? zkl_mutex_unlock(c->m) : zkl_rwlock_unlock(c->l);
}

static int zc_loop(zc_t *c, const zjob_t *j) {
  for (int i = 0; i < j->rounds; i++) {
    int rc = zc_lock(c, j->kind, j->ms);
    if (rc != 0) return rc;
    if (j->hold_ms > 0) it_sleep_ms(j->hold_ms);
    if ((rc = zc_unlock(c)) != 0) return rc;
  }
  return 0;
}

static void *zc_main(void *arg) {
  zc_t *c = arg;
  pthread_mutex_lock(&c->mu);
  for (;;) {
    while (c->head == NULL && !c->stop) pthread_cond_wait(&c->cv, &c->mu);
    zjob_t *j = c->head;
    if (j == NULL) break;
    c->head = j->next;
    if (c->head == NULL) c->tail = NULL;
    pthread_mutex_unlock(&c->mu);
    int rc = j->op == J_LOCK     ? zc_lock(c, j->kind, j->ms)
             : j->op == J_UNLOCK ? zc_unlock(c)
                                 : zc_loop(c, j);
    pthread_mutex_lock(&c->mu);
    j->rc = rc;
    j->done = 1;
    pthread_cond_broadcast(&c->cv);
  }
  pthread_mutex_unlock(&c->mu);
  return NULL;
}

/* A client `id` with a mutex (rw = 0) or a read/write lock on path. */
static zc_t *zc_new(const char *id, const char *path, int rw) {
  zc_t *c = calloc(1, sizeof *c);
  ck_assert_ptr_nonnull(c);
  snprintf(c->id, sizeof c->id, "%s", id);
  c->s = it_session();
  int rc;
  if (rw) {
    zkl_rwlock_opts_t o;
    zkl_rwlock_opts_init(&o);
    o.data = c->id;
    o.data_len = strlen(c->id);
    rc = zkl_rwlock_create(&c->l, c->s, path, &o);
  } else {
    zkl_mutex_opts_t o;
    zkl_mutex_opts_init(&o);
    o.data = c->id;
    o.data_len = strlen(c->id);
    rc = zkl_mutex_create(&c->m, c->s, path, &o);
  }
  ck_assert_msg(rc == 0, "%s: create: %s", id, it_code(rc));
  pthread_mutex_init(&c->mu, NULL);
  pthread_cond_init(&c->cv, NULL);
  ck_assert_int_eq(pthread_create(&c->th, NULL, zc_main, c), 0);
  return c;
}

static zjob_t *zc_post(zc_t *c, int op, char kind, int64_t ms, int rounds,
                       int hold_ms) {
  zjob_t *j = calloc(1, sizeof *j);
  ck_assert_ptr_nonnull(j);
  j->op = op;
  j->kind = kind;
  j->ms = ms;
  j->rounds = rounds;
  j->hold_ms = hold_ms;
  pthread_mutex_lock(&c->mu);
  j->all = c->jobs;
  c->jobs = j;
  if (c->tail != NULL)
    c->tail->next = j;
  else
    c->head = j;
  c->tail = j;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
  return j;
}

static int zc_done(zc_t *c, zjob_t *j) {
  pthread_mutex_lock(&c->mu);
  int d = j->done;
  pthread_mutex_unlock(&c->mu);
  return d;
}

/* The call's result, within timeout_ms (or the test fails). */
static int zc_wait(zc_t *c, zjob_t *j, int timeout_ms) {
  int64_t end = it_now_ms() + timeout_ms;
  while (!zc_done(c, j)) {
    ck_assert_msg(it_now_ms() < end, "zkl %s: no result in %d ms", c->id,
                  timeout_ms);
    it_sleep_ms(1);
  }
  return j->rc;
}

/* Starts a lock call of kind (forever); its job. */
static zjob_t *zc_start(zc_t *c, char kind) {
  return zc_post(c, J_LOCK, kind, -1, 0, 0);
}

/* A lock call of kind (ms as zc_lock()), waited for: its code. */
static int zc_lock_now(zc_t *c, char kind, int64_t ms) {
  return zc_wait(c, zc_post(c, J_LOCK, kind, ms, 0, 0), 15000 * slow());
}

static void zc_unlock_now(zc_t *c) {
  int rc = zc_wait(c, zc_post(c, J_UNLOCK, 0, 0, 0, 0), 15000 * slow());
  ck_assert_msg(rc == 0, "zkl %s: unlock: %s", c->id, it_code(rc));
}

static zjob_t *zc_loop_start(zc_t *c, char kind, int rounds, int hold_ms,
                             int64_t ms) {
  return zc_post(c, J_LOOP, kind, ms, rounds, hold_ms);
}

/* Its holds ended since the last time, into `all`. */
static void zc_log(zc_t *c) {
  pthread_mutex_lock(&c->mu);
  for (int i = 0; i < c->log.n; i++)
    span_add(&all, c->log.v[i].who, c->log.v[i].kind, c->log.v[i].t0,
             c->log.v[i].t1);
  c->log.n = 0;
  pthread_mutex_unlock(&c->mu);
}

static void zc_free(zc_t *c) {
  pthread_mutex_lock(&c->mu);
  c->stop = 1;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
  pthread_join(c->th, NULL);
  zkl_mutex_destroy(c->m);
  zkl_rwlock_destroy(c->l);
  zkl_session_close(c->s);
  while (c->jobs != NULL) {
    zjob_t *j = c->jobs;
    c->jobs = j->all;
    free(j);
  }
  pthread_mutex_destroy(&c->mu);
  pthread_cond_destroy(&c->cv);
  free(c);
}

/* ---- the Curator peer ---------------------------------------------------- */

/* A CuratorLockPeer process, path label L naming path. */
static it_peer_t *cpeer(const char *label, const char *path) {
  it_peer_t *p = calloc(1, sizeof *p);
  ck_assert_ptr_nonnull(p);
  it_peer_curator(p, "CuratorLockPeer");
  it_peer_ask(p, "ok", "path %s %s", label, path);
  return p;
}

static void cpeer_quit(it_peer_t *p) {
  it_peer_quit(p);
  free(p);
}

/* Client id, its own session (timeout sess_ms): the session's id. */
static int64_t c_open(it_peer_t *p, const char *id, int sess_ms) {
  char line[256];
  it_peer_query(p, line, sizeof line, "open %s %d", id, sess_ms);
  ck_assert_msg(strncmp(line, "ok 0x", 5) == 0, "open %s: %s", id, line);
  return (int64_t)strtoull(line + 5, NULL, 16);
}

/* Client id's lock `name` (ms < 0: forever, 0: acquire(0)), as call tag. */
static void c_acquire(it_peer_t *p, const char *tag, const char *id,
                      const char *name, int ms) {
  it_peer_say(p, "acquire %s %s %s %d", tag, id, name, ms);
}

/* Call tag's result within timeout_ms: 1 true, 0 false (anything else
 * fails the test); its end (us) if asked. */
static int c_result(it_peer_t *p, const char *tag, int timeout_ms,
                    int64_t *t1) {
  it_peer_result_t r = it_peer_result(p, tag, timeout_ms);
  ck_assert_msg(strcmp(r.what, "true") == 0 || strcmp(r.what, "false") == 0,
                "curator %s: %s", tag, r.what);
  if (t1 != NULL) *t1 = r.t1;
  return strcmp(r.what, "true") == 0;
}

/* A try of client id's lock `name` (acquire(0)): must fail, leaving the
 * queue on path as it was. */
static void c_try_fails(it_peer_t *p, zkl_session_t *s, const char *path,
                        const char *id, const char *name, const char *queue) {
  static int n;
  char tag[16];
  snprintf(tag, sizeof tag, "try%d", ++n);
  c_acquire(p, tag, id, name, 0);
  ck_assert_msg(!c_result(p, tag, 10000 * slow(), NULL),
                "curator %s got %s while it was not free (%s)", id, name,
                queue);
  owners_still(s, path, queue);
}

static void c_release(it_peer_t *p, const char *id, const char *name) {
  it_peer_ask(p, "ok", "release %s %s", id, name);
}

/* Client id's holds ended since the last time, into `all` (labels "M":
 * a mutex hold, "R:r" / "R:w": read / write); its loops' retries. */
static int c_log(it_peer_t *p, const char *id) {
  static char line[1 << 16];
  it_peer_query(p, line, sizeof line, "log %s", id);
  ck_assert_msg(strncmp(line, "ok ", 3) == 0, "log %s: %.300s", id, line);
  char *save = NULL, *w = strtok_r(line + 3, " ", &save);
  ck_assert_ptr_nonnull(w);
  int retries = atoi(w);
  while ((w = strtok_r(NULL, " ", &save)) != NULL) {
    char *colon = strchr(w, ':');
    char kind = colon == NULL ? 'm' : colon[1];
    char *a = strtok_r(NULL, " ", &save), *b = strtok_r(NULL, " ", &save);
    ck_assert_msg(a != NULL && b != NULL, "log %s: a hold cut short", id);
    span_add(&all, id, kind, strtoll(a, NULL, 10), strtoll(b, NULL, 10));
  }
  return retries;
}

/* ---- the mutex ----------------------------------------------------------- */

#define MX_ROUNDS 20
#define MX_HOLD_MS 4

START_TEST(mutex_fifo_both_ways) {
  if (!it_peer_curator_here()) return;
  int64_t t_start = it_now_ms();
  all.n = 0;
  char path[256];
  it_peer_node(path, sizeof path, "mutex");
  zkl_session_t *s = it_session();
  it_peer_t *p = cpeer("M", path);
  const char *cs[] = {"C1", "C2", "C3", "CA", "CB"};
  for (int i = 0; i < 5; i++) {
    c_open(p, cs[i], 10000);
    it_peer_ask(p, "ok", "mutex %s m M", cs[i]);
  }
  zc_t *z0 = zc_new("Z0", path, 0), *z1 = zc_new("Z1", path, 0),
       *zt = zc_new("Zt", path, 0);

  /* Z0 holds; C1, Z1, C2 queue in that order */
  ck_assert_int_eq(zc_lock_now(z0, 'm', -1), 0);
  owners_are(s, path, "Z0");
  c_acquire(p, "c1", "C1", "m", -1);
  owners_are(s, path, "Z0 C1");
  zjob_t *j1 = zc_start(z1, 'm');
  owners_are(s, path, "Z0 C1 Z1");
  c_acquire(p, "c2", "C2", "m", -1);
  owners_are(s, path, "Z0 C1 Z1 C2");
  /* Curator's own view of the queue is the same */
  it_peer_ask(p, "ok Z0 C1 Z1 C2", "queue C3 M");
  /* zkl holds: Curator's acquire(0) fails and leaves no node */
  c_try_fails(p, s, path, "C3", "m", "Z0 C1 Z1 C2");
  it_sleep_ms(200);
  ck_assert(it_peer_pending(p, "c1"));
  ck_assert(it_peer_pending(p, "c2"));
  ck_assert(!zc_done(z1, j1));
  ck_assert_int_eq(zc_lock_now(zt, 'm', 0), ZKL_EBUSY);
  owners_still(s, path, "Z0 C1 Z1 C2");

  /* released one at a time: served C1, Z1, C2, each no sooner */
  zc_unlock_now(z0);
  ck_assert(c_result(p, "c1", 10000 * slow(), NULL));
  owners_are(s, path, "C1 Z1 C2");
  /* Curator holds: zkl's trylock says busy and leaves no node */
  ck_assert_int_eq(zc_lock_now(zt, 'm', 0), ZKL_EBUSY);
  owners_still(s, path, "C1 Z1 C2");
  ck_assert(!zc_done(z1, j1));
  ck_assert(it_peer_pending(p, "c2"));
  c_release(p, "C1", "m");
  ck_assert_int_eq(zc_wait(z1, j1, 10000 * slow()), 0);
  owners_are(s, path, "Z1 C2");
  c_try_fails(p, s, path, "C3", "m", "Z1 C2");
  ck_assert(it_peer_pending(p, "c2"));
  zc_unlock_now(z1);
  ck_assert(c_result(p, "c2", 10000 * slow(), NULL));
  owners_are(s, path, "C2");
  ck_assert_int_eq(zc_lock_now(zt, 'm', 0), ZKL_EBUSY);
  owners_still(s, path, "C2");
  c_release(p, "C2", "m");
  owners_are(s, path, "");

  /* the order, and exclusion, on the clients' own clocks */
  zc_log(z0);
  zc_log(z1);
  zc_log(zt);
  for (int i = 0; i < 3; i++) c_log(p, cs[i]);
  char seq[1 << 14];
  ck_assert_int_eq(exclusive(seq, sizeof seq, NULL), 4);
  ck_assert_str_eq(seq, "Z0 C1 Z1 C2");

  /* the mixed loop: two zkl threads, two Curator clients */
  all.n = 0;
  zc_t *za = zc_new("ZA", path, 0), *zb = zc_new("ZB", path, 0);
  const int ms = 20000 * slow(), limit = (it_peer_secs() - 20) * 1000;
  int64_t t_loop = it_now_ms();
  it_peer_say(p, "loop LA CA %d %d %d m", MX_ROUNDS, MX_HOLD_MS, ms);
  it_peer_say(p, "loop LB CB %d %d %d m", MX_ROUNDS, MX_HOLD_MS, ms);
  zjob_t *la = zc_loop_start(za, 'm', MX_ROUNDS, MX_HOLD_MS, ms);
  zjob_t *lb = zc_loop_start(zb, 'm', MX_ROUNDS, MX_HOLD_MS, ms);
  ck_assert(c_result(p, "LA", limit, NULL));
  ck_assert(c_result(p, "LB", limit, NULL));
  int rc = zc_wait(za, la, limit);
  ck_assert_msg(rc == 0, "zkl ZA loop: %s", it_code(rc));
  rc = zc_wait(zb, lb, limit);
  ck_assert_msg(rc == 0, "zkl ZB loop: %s", it_code(rc));
  int64_t took = it_now_ms() - t_loop;
  zc_log(za);
  zc_log(zb);
  ck_assert_int_eq(c_log(p, "CA"), 0); /* no acquire timed out */
  ck_assert_int_eq(c_log(p, "CB"), 0);
  ck_assert_int_eq(exclusive(seq, sizeof seq, NULL), 4 * MX_ROUNDS);
  const char *who[] = {"ZA", "ZB", "CA", "CB"};
  for (int i = 0; i < 4; i++)
    ck_assert_int_eq(holds_of(who[i], 'm'), MX_ROUNDS);
  int cross = 0; /* handovers between the kinds */
  for (int i = 1; i < all.n; i++)
    cross += all.v[i].who[0] != all.v[i - 1].who[0];
  owners_are(s, path, "");
  fprintf(stderr,
          "curator-interop: mutex loop, %d holds of %d ms in %lld ms, %d "
          "handovers between zkl and Curator\n",
          4 * MX_ROUNDS, MX_HOLD_MS, (long long)took, cross);

  cpeer_quit(p);
  zc_free(z0);
  zc_free(z1);
  zc_free(zt);
  zc_free(za);
  zc_free(zb);
  owners_are(s, path, "");
  drop_tree(s, path);
  zkl_session_close(s);
  fprintf(stderr, "curator-interop: mutex %lld ms\n",
          (long long)(it_now_ms() - t_start));
}
END_TEST

/* ---- the read/write lock ------------------------------------------------- */

/* Curator clients: C1 C2 readers, CW a writer, CT tries; zkl's: Z1 Z2
 * readers, ZW a writer, ZT tries.  Each Curator client has its own
 * InterProcessReadWriteLock ("r" its read lock, "w" its write lock). */
START_TEST(rwlock_arrival_order_both_ways) {
  if (!it_peer_curator_here()) return;
  int64_t t_start = it_now_ms();
  all.n = 0;
  char path[256];
  it_peer_node(path, sizeof path, "rw");
  zkl_session_t *s = it_session();
  it_peer_t *p = cpeer("R", path);
  const char *cs[] = {"C1", "C2", "CW", "CT"};
  for (int i = 0; i < 4; i++) {
    c_open(p, cs[i], 10000);
    it_peer_ask(p, "ok", "rwlock %s r w R", cs[i]);
  }
  zc_t *z1 = zc_new("Z1", path, 1), *z2 = zc_new("Z2", path, 1),
       *zw = zc_new("ZW", path, 1), *zt = zc_new("ZT", path, 1);
  char seq[1024];
  int sh;

  /* (a) readers of both kinds share; a zkl writer queues behind them, and
   * readers of both kinds arriving after it wait for it */
  ck_assert_int_eq(zc_lock_now(z1, 'r', -1), 0);
  c_acquire(p, "r1", "C1", "r", -1);
  ck_assert(c_result(p, "r1", 10000 * slow(), NULL));
  owners_are(s, path, "Z1/r C1/r");
  ck_assert_int_eq(zc_lock_now(zt, 'r', 0), 0); /* a zkl try shares too */
  zc_unlock_now(zt);
  c_try_fails(p, s, path, "CT", "w", "Z1/r C1/r");
  ck_assert_int_eq(zc_lock_now(zt, 'w', 0), ZKL_EBUSY);
  zjob_t *jw = zc_start(zw, 'w');
  owners_are(s, path, "Z1/r C1/r ZW/w");
  c_acquire(p, "r2", "C2", "r", -1);
  owners_are(s, path, "Z1/r C1/r ZW/w C2/r");
  zjob_t *j2 = zc_start(z2, 'r');
  owners_are(s, path, "Z1/r C1/r ZW/w C2/r Z2/r");
  /* Curator's view: zkl's nodes among its readers and its writers */
  it_peer_ask(p, "ok Z1 C1 C2 Z2 | ZW", "rwqueue CT R");
  /* the tries of both kinds fail behind the waiting writer */
  ck_assert_int_eq(zc_lock_now(zt, 'r', 0), ZKL_EBUSY);
  ck_assert_int_eq(zc_lock_now(zt, 'w', 0), ZKL_EBUSY);
  c_try_fails(p, s, path, "CT", "r", "Z1/r C1/r ZW/w C2/r Z2/r");
  c_try_fails(p, s, path, "CT", "w", "Z1/r C1/r ZW/w C2/r Z2/r");
  it_sleep_ms(200);
  ck_assert(!zc_done(zw, jw));
  ck_assert(!zc_done(z2, j2));
  ck_assert(it_peer_pending(p, "r2"));
  /* the zkl reader goes: the writer still waits for the Curator reader */
  zc_unlock_now(z1);
  owners_are(s, path, "C1/r ZW/w C2/r Z2/r");
  it_sleep_ms(100);
  ck_assert(!zc_done(zw, jw));
  c_release(p, "C1", "r");
  ck_assert_int_eq(zc_wait(zw, jw, 10000 * slow()), 0);
  owners_are(s, path, "ZW/w C2/r Z2/r");
  c_try_fails(p, s, path, "CT", "r", "ZW/w C2/r Z2/r");
  c_try_fails(p, s, path, "CT", "w", "ZW/w C2/r Z2/r");
  ck_assert(!zc_done(z2, j2));
  ck_assert(it_peer_pending(p, "r2"));
  /* the writer lets go: both late readers get in, together */
  zc_unlock_now(zw);
  ck_assert(c_result(p, "r2", 10000 * slow(), NULL));
  ck_assert_int_eq(zc_wait(z2, j2, 10000 * slow()), 0);
  owners_are(s, path, "C2/r Z2/r");
  ck_assert_int_eq(zc_lock_now(zt, 'w', 0), ZKL_EBUSY);
  c_try_fails(p, s, path, "CT", "w", "C2/r Z2/r");
  c_release(p, "C2", "r");
  zc_unlock_now(z2);
  owners_are(s, path, "");
  zc_log(z1);
  zc_log(z2);
  zc_log(zw);
  zc_log(zt);
  for (int i = 0; i < 4; i++) c_log(p, cs[i]);
  exclusive(seq, sizeof seq, &sh);
  seq_is(seq, "Z1 C1 ZT ZW", "C2", "Z2");
  ck_assert(shared("Z1", "C1"));
  ck_assert(shared("Z1", "ZT") && shared("C1", "ZT"));
  ck_assert(shared("C2", "Z2"));
  ck_assert_int_ge(hold_of("C2", 'r')->t0, hold_of("ZW", 'w')->t1);
  ck_assert_int_ge(hold_of("Z2", 'r')->t0, hold_of("ZW", 'w')->t1);

  /* (b) the same with a Curator writer */
  all.n = 0;
  c_acquire(p, "r3", "C1", "r", -1);
  ck_assert(c_result(p, "r3", 10000 * slow(), NULL));
  ck_assert_int_eq(zc_lock_now(z1, 'r', -1), 0);
  owners_are(s, path, "C1/r Z1/r");
  c_acquire(p, "w1", "CW", "w", -1);
  owners_are(s, path, "C1/r Z1/r CW/w");
  j2 = zc_start(z2, 'r');
  owners_are(s, path, "C1/r Z1/r CW/w Z2/r");
  c_acquire(p, "r4", "C2", "r", -1);
  owners_are(s, path, "C1/r Z1/r CW/w Z2/r C2/r");
  it_peer_ask(p, "ok C1 Z1 Z2 C2 | CW", "rwqueue CT R");
  ck_assert_int_eq(zc_lock_now(zt, 'r', 0), ZKL_EBUSY);
  ck_assert_int_eq(zc_lock_now(zt, 'w', 0), ZKL_EBUSY);
  c_try_fails(p, s, path, "CT", "r", "C1/r Z1/r CW/w Z2/r C2/r");
  it_sleep_ms(200);
  ck_assert(it_peer_pending(p, "w1"));
  ck_assert(it_peer_pending(p, "r4"));
  ck_assert(!zc_done(z2, j2));
  c_release(p, "C1", "r");
  owners_are(s, path, "Z1/r CW/w Z2/r C2/r");
  it_sleep_ms(100);
  ck_assert(it_peer_pending(p, "w1"));
  zc_unlock_now(z1);
  ck_assert(c_result(p, "w1", 10000 * slow(), NULL));
  owners_are(s, path, "CW/w Z2/r C2/r");
  /* Curator's writer holds: zkl's tries fail */
  ck_assert_int_eq(zc_lock_now(zt, 'r', 0), ZKL_EBUSY);
  ck_assert_int_eq(zc_lock_now(zt, 'w', 0), ZKL_EBUSY);
  owners_still(s, path, "CW/w Z2/r C2/r");
  ck_assert(!zc_done(z2, j2));
  ck_assert(it_peer_pending(p, "r4"));
  c_release(p, "CW", "w");
  ck_assert_int_eq(zc_wait(z2, j2, 10000 * slow()), 0);
  ck_assert(c_result(p, "r4", 10000 * slow(), NULL));
  owners_are(s, path, "Z2/r C2/r");
  zc_unlock_now(z2);
  c_release(p, "C2", "r");
  owners_are(s, path, "");
  zc_log(z1);
  zc_log(z2);
  for (int i = 0; i < 4; i++) c_log(p, cs[i]);
  exclusive(seq, sizeof seq, &sh);
  seq_is(seq, "C1 Z1 CW", "Z2", "C2");
  ck_assert(shared("C1", "Z1"));
  ck_assert(shared("Z2", "C2"));
  ck_assert_int_ge(hold_of("C2", 'r')->t0, hold_of("CW", 'w')->t1);
  ck_assert_int_ge(hold_of("Z2", 'r')->t0, hold_of("CW", 'w')->t1);

  /* (c) the two kinds' write locks exclude each other, both ways */
  all.n = 0;
  ck_assert_int_eq(zc_lock_now(zw, 'w', -1), 0);
  c_try_fails(p, s, path, "CT", "w", "ZW/w");
  c_try_fails(p, s, path, "CT", "r", "ZW/w");
  c_acquire(p, "w2", "CW", "w", -1);
  owners_are(s, path, "ZW/w CW/w");
  it_sleep_ms(200);
  ck_assert(it_peer_pending(p, "w2"));
  zc_unlock_now(zw);
  ck_assert(c_result(p, "w2", 10000 * slow(), NULL));
  owners_are(s, path, "CW/w");
  ck_assert_int_eq(zc_lock_now(zt, 'w', 0), ZKL_EBUSY);
  ck_assert_int_eq(zc_lock_now(zt, 'r', 0), ZKL_EBUSY);
  jw = zc_start(zw, 'w');
  owners_are(s, path, "CW/w ZW/w");
  it_sleep_ms(200);
  ck_assert(!zc_done(zw, jw));
  c_release(p, "CW", "w");
  ck_assert_int_eq(zc_wait(zw, jw, 10000 * slow()), 0);
  owners_are(s, path, "ZW/w");
  zc_unlock_now(zw);
  owners_are(s, path, "");
  zc_log(zw);
  c_log(p, "CW");
  exclusive(seq, sizeof seq, &sh);
  ck_assert_str_eq(seq, "ZW CW ZW");

  cpeer_quit(p);
  zc_free(z1);
  zc_free(z2);
  zc_free(zw);
  zc_free(zt);
  owners_are(s, path, "");
  drop_tree(s, path);
  zkl_session_close(s);
  fprintf(stderr, "curator-interop: rwlock arrival order %lld ms\n",
          (long long)(it_now_ms() - t_start));
}
END_TEST

#define RW_ROUNDS 10
#define RW_HOLD_MS 4

START_TEST(rwlock_downgrade_and_loop) {
  if (!it_peer_curator_here()) return;
  int64_t t_start = it_now_ms();
  all.n = 0;
  char path[256];
  it_peer_node(path, sizeof path, "rwd");
  zkl_session_t *s = it_session();
  it_peer_t *p = cpeer("R", path);
  const char *cs[] = {"CD", "C1", "CR", "CW"};
  for (int i = 0; i < 4; i++) {
    c_open(p, cs[i], 10000);
    it_peer_ask(p, "ok", "rwlock %s r w R", cs[i]);
  }
  zc_t *zd = zc_new("ZD", path, 1), *z1 = zc_new("Z1", path, 1),
       *zt = zc_new("ZT", path, 1);
  char seq[1 << 14];
  int sh;

  /* Curator's downgrade: CD writes; Z1 queues to read; CD takes the read
   * lock (its node after Z1's) and lets the write lock go: Z1 reads beside
   * it, writers stay out */
  c_acquire(p, "dw", "CD", "w", -1);
  ck_assert(c_result(p, "dw", 10000 * slow(), NULL));
  zjob_t *j1 = zc_start(z1, 'r');
  owners_are(s, path, "CD/w Z1/r");
  c_acquire(p, "dr", "CD", "r", -1);
  ck_assert(c_result(p, "dr", 10000 * slow(), NULL));
  owners_are(s, path, "CD/w Z1/r CD/r");
  it_sleep_ms(100);
  ck_assert(!zc_done(z1, j1));
  c_release(p, "CD", "w");
  ck_assert_int_eq(zc_wait(z1, j1, 10000 * slow()), 0);
  owners_are(s, path, "Z1/r CD/r");
  ck_assert_int_eq(zc_lock_now(zt, 'w', 0), ZKL_EBUSY);
  zc_unlock_now(z1);
  c_release(p, "CD", "r");
  owners_are(s, path, "");
  zc_log(z1);
  c_log(p, "CD");
  exclusive(seq, sizeof seq, &sh);
  ck_assert_str_eq(seq, "CD CD Z1"); /* its write hold, its read hold, Z1 */
  ck_assert(shared("Z1", "CD"));
  ck_assert_int_ge(hold_of("Z1", 'r')->t0, hold_of("CD", 'w')->t1);

  /* zkl's downgrade: ZD writes; C1 queues to read; ZD takes the read lock
   * and lets the write lock go: its write node stays until the read hold
   * ends, and Curator's reader waits that long */
  all.n = 0;
  ck_assert_int_eq(zc_lock_now(zd, 'w', -1), 0);
  c_acquire(p, "r1", "C1", "r", -1);
  owners_are(s, path, "ZD/w C1/r");
  ck_assert_int_eq(zc_lock_now(zd, 'r', -1), 0);
  zc_unlock_now(zd); /* the write hold */
  owners_still(s, path, "ZD/w C1/r");
  it_sleep_ms(200);
  ck_assert(it_peer_pending(p, "r1"));
  owners_still(s, path, "ZD/w C1/r");
  zc_unlock_now(zd); /* the read hold */
  ck_assert(c_result(p, "r1", 10000 * slow(), NULL));
  owners_are(s, path, "C1/r");
  c_release(p, "C1", "r");
  owners_are(s, path, "");
  zc_log(zd);
  c_log(p, "C1");
  exclusive(seq, sizeof seq, &sh);
  ck_assert_str_eq(seq, "ZD ZD C1");
  ck_assert_int_ge(hold_of("C1", 'r')->t0, hold_of("ZD", 'r')->t1);

  /* the mixed loop: a reader and a writer of each kind */
  all.n = 0;
  zc_t *zr = zc_new("ZR", path, 1), *zw = zc_new("ZW", path, 1);
  const int ms = 20000 * slow(), limit = (it_peer_secs() - 20) * 1000;
  int64_t t_loop = it_now_ms();
  it_peer_say(p, "loop LR CR %d %d %d r", RW_ROUNDS, RW_HOLD_MS, ms);
  it_peer_say(p, "loop LW CW %d %d %d w", RW_ROUNDS, RW_HOLD_MS, ms);
  zjob_t *lr = zc_loop_start(zr, 'r', RW_ROUNDS, RW_HOLD_MS, ms);
  zjob_t *lw = zc_loop_start(zw, 'w', RW_ROUNDS, RW_HOLD_MS, ms);
  ck_assert(c_result(p, "LR", limit, NULL));
  ck_assert(c_result(p, "LW", limit, NULL));
  int rc = zc_wait(zr, lr, limit);
  ck_assert_msg(rc == 0, "zkl ZR loop: %s", it_code(rc));
  rc = zc_wait(zw, lw, limit);
  ck_assert_msg(rc == 0, "zkl ZW loop: %s", it_code(rc));
  int64_t took = it_now_ms() - t_loop;
  zc_log(zr);
  zc_log(zw);
  ck_assert_int_eq(c_log(p, "CR"), 0);
  ck_assert_int_eq(c_log(p, "CW"), 0);
  ck_assert_int_eq(exclusive(NULL, 0, &sh), 4 * RW_ROUNDS);
  ck_assert_int_eq(holds_of("ZR", 'r'), RW_ROUNDS);
  ck_assert_int_eq(holds_of("CR", 'r'), RW_ROUNDS);
  ck_assert_int_eq(holds_of("ZW", 'w'), RW_ROUNDS);
  ck_assert_int_eq(holds_of("CW", 'w'), RW_ROUNDS);
  owners_are(s, path, "");
  fprintf(stderr,
          "curator-interop: rwlock loop, %d holds of %d ms in %lld ms, %d "
          "times zkl's and Curator's readers shared\n",
          4 * RW_ROUNDS, RW_HOLD_MS, (long long)took, sh);

  cpeer_quit(p);
  zc_free(zd);
  zc_free(z1);
  zc_free(zt);
  zc_free(zr);
  zc_free(zw);
  owners_are(s, path, "");
  drop_tree(s, path);
  zkl_session_close(s);
  fprintf(stderr, "curator-interop: rwlock downgrade and loop %lld ms\n",
          (long long)(it_now_ms() - t_start));
}
END_TEST

/* ---- the election -------------------------------------------------------- */

/* A zkl candidate: its own session, its callbacks' record. */
typedef struct zcand {
  char id[8];
  zkl_session_t *s;
  zkl_election_t *e;
  pthread_mutex_t mu;
  int elected, revoked, reason;
  uint64_t token;
  int64_t t_elected; /* ns */
} zcand_t;

static void cand_elected(zkl_election_t *e, uint64_t token, void *arg) {
  (void)e;
  int64_t t = mono_ns();
  zcand_t *c = arg;
  pthread_mutex_lock(&c->mu);
  c->elected++;
  c->token = token;
  c->t_elected = t;
  pthread_mutex_unlock(&c->mu);
}

static void cand_revoked(zkl_election_t *e, zkl_election_reason_t why,
                         void *arg) {
  (void)e;
  zcand_t *c = arg;
  pthread_mutex_lock(&c->mu);
  c->revoked++;
  c->reason = (int)why;
  pthread_mutex_unlock(&c->mu);
}

/* A candidate `id` on path, started. */
static zcand_t *cand_new(const char *id, const char *path) {
  zcand_t *c = calloc(1, sizeof *c);
  ck_assert_ptr_nonnull(c);
  snprintf(c->id, sizeof c->id, "%s", id);
  pthread_mutex_init(&c->mu, NULL);
  c->s = it_session();
  zkl_election_opts_t o;
  zkl_election_opts_init(&o);
  o.on_elected = cand_elected;
  o.on_revoked = cand_revoked;
  o.arg = c;
  int rc = zkl_election_create(&c->e, c->s, path, c->id, strlen(c->id), &o);
  ck_assert_msg(rc == 0, "election_create: %s", it_code(rc));
  ck_assert_int_eq(zkl_election_start(c->e), 0);
  return c;
}

/* Its callbacks so far: elected, revoked (and why). */
static void cand_seen(zcand_t *c, int *elected, int *revoked, int *reason) {
  pthread_mutex_lock(&c->mu);
  *elected = c->elected;
  *revoked = c->revoked;
  if (reason != NULL) *reason = c->reason;
  pthread_mutex_unlock(&c->mu);
}

/* Waits (10 s) until its callbacks are `elected` and `revoked` in number. */
static void cand_wait(zcand_t *c, int elected, int revoked) {
  int64_t end = it_now_ms() + 10000 * slow();
  int e, r;
  for (;;) {
    cand_seen(c, &e, &r, NULL);
    if (e == elected && r == revoked) return;
    ck_assert_msg(it_now_ms() < end,
                  "zkl %s: elected %d and revoked %d times, not %d and %d",
                  c->id, e, r, elected, revoked);
    it_sleep_ms(2);
  }
}

static void cand_free(zcand_t *c) {
  zkl_election_destroy(c->e);
  zkl_session_close(c->s);
  pthread_mutex_destroy(&c->mu);
  free(c);
}

/* zkl_election_leader() through e names `want` (NULL: nobody leads). */
static void zkl_leader_is(zkl_election_t *e, const char *want) {
  char buf[64];
  size_t len = sizeof buf - 1;
  int rc = zkl_election_leader(e, buf, &len);
  if (want == NULL) {
    ck_assert_msg(rc == ZKL_ENOENT, "zkl_election_leader: %s, not ENOENT",
                  it_code(rc));
    return;
  }
  ck_assert_msg(rc == 0, "zkl_election_leader: %s", it_code(rc));
  buf[len] = '\0';
  ck_assert_msg(strcmp(buf, want) == 0, "zkl names \"%s\" leader, not %s",
                buf, want);
}

/* Curator's latch event tag (e.g. "l1#1") is `what`: its time (ns). */
static int64_t c_event(it_peer_t *p, const char *tag, const char *what) {
  it_peer_result_t r = it_peer_result(p, tag, 10000 * slow());
  ck_assert_msg(strcmp(r.what, what) == 0, "curator %s: %s, not %s", tag,
                r.what, what);
  return r.t0 * 1000;
}

/* Curator closes latch `name` of client id (NOTIFY_LEADER): the time just
 * before the call (ns). */
static int64_t c_close(it_peer_t *p, const char *id, const char *name) {
  char line[256];
  it_peer_query(p, line, sizeof line, "close %s %s notify", id, name);
  ck_assert_msg(strncmp(line, "ok ", 3) == 0, "close %s: %s", id, line);
  return strtoll(line + 3, NULL, 10) * 1000;
}

/* zkl Z1, Curator C1 (latch l1), zkl Z2, Curator C2 (latch l2), in that
 * order on one path. */
START_TEST(election_handover_both_ways) {
  if (!it_peer_curator_here()) return;
  int64_t t_start = it_now_ms();
  all.n = 0;
  char path[256];
  it_peer_node(path, sizeof path, "elect");
  zkl_session_t *s = it_session();
  it_peer_t *p = cpeer("E", path);
  c_open(p, "C1", 10000);
  c_open(p, "C2", 10000);
  it_peer_ask(p, "ok", "latch C1 l1 E");
  it_peer_ask(p, "ok", "latch C2 l2 E");
  const int wait = 10000 * slow();

  zcand_t *z1 = cand_new("Z1", path);
  ck_assert_int_eq(zkl_election_await(z1->e, wait), 0);
  owners_are(s, path, "Z1");
  it_peer_ask(p, "ok", "start C1 l1");
  owners_are(s, path, "Z1 C1");
  zcand_t *z2 = cand_new("Z2", path);
  owners_are(s, path, "Z1 C1 Z2");
  it_peer_ask(p, "ok", "start C2 l2");
  owners_are(s, path, "Z1 C1 Z2 C2");
  /* both sides see the one order and the one leader */
  it_peer_ask(p, "ok Z1:true C1:false Z2:false C2:false", "participants C1 l1");
  it_peer_ask(p, "ok Z1 true", "leader C2 l2");
  zkl_leader_is(z2->e, "Z1");
  /* and nobody else leads while it stays */
  it_peer_say(p, "await a0 C1 l1 300");
  ck_assert(!c_result(p, "a0", wait, NULL));
  ck_assert_int_eq(zkl_election_await(z2->e, 300), ZKL_ETIMEDOUT);
  it_peer_ask(p, "ok false", "hasleader C1 l1");
  it_peer_ask(p, "ok false", "hasleader C2 l2");
  ck_assert_int_eq(zkl_election_is_leader(z1->e), 1);
  ck_assert_int_eq(zkl_election_is_leader(z2->e), 0);
  cand_wait(z1, 1, 0);
  cand_wait(z2, 0, 0);

  /* zkl -> Curator: Z1 resigns, C1 leads */
  it_peer_say(p, "await a1 C1 l1 %d", wait);
  int64_t t = mono_ns();
  ck_assert_int_eq(zkl_election_resign(z1->e), 0);
  span_add(&all, "Z1", 'w', z1->t_elected, t);
  ck_assert(c_result(p, "a1", wait + 5000, NULL));
  int64_t c1_from = c_event(p, "l1#1", "isLeader");
  int why;
  cand_wait(z1, 1, 1);
  cand_seen(z1, &(int){0}, &(int){0}, &why);
  ck_assert_int_eq(why, ZKL_REASON_RESIGNED);
  owners_are(s, path, "C1 Z2 C2");
  it_peer_ask(p, "ok true", "hasleader C1 l1");
  it_peer_ask(p, "ok false", "hasleader C2 l2");
  it_peer_ask(p, "ok C1 true", "leader C2 l2");
  zkl_leader_is(z2->e, "C1");
  zkl_leader_is(z1->e, "C1");
  ck_assert_int_eq(zkl_election_await(z2->e, 300), ZKL_ETIMEDOUT);
  ck_assert_int_eq(zkl_election_is_leader(z2->e), 0);

  /* Curator -> zkl: C1 closes, Z2 leads */
  int64_t c1_to = c_close(p, "C1", "l1");
  span_add(&all, "C1", 'w', c1_from, c1_to);
  ck_assert_int_eq(zkl_election_await(z2->e, wait), 0);
  c_event(p, "l1#2", "notLeader");
  cand_wait(z2, 1, 0);
  ck_assert_uint_gt(z2->token, z1->token);
  owners_are(s, path, "Z2 C2");
  it_peer_ask(p, "ok Z2 true", "leader C2 l2");
  it_peer_ask(p, "ok Z2:true C2:false", "participants C2 l2");
  it_peer_ask(p, "ok false", "hasleader C2 l2");
  zkl_leader_is(z2->e, "Z2");

  /* zkl -> Curator again: Z2 resigns, C2 leads */
  it_peer_say(p, "await a2 C2 l2 %d", wait);
  t = mono_ns();
  ck_assert_int_eq(zkl_election_resign(z2->e), 0);
  span_add(&all, "Z2", 'w', z2->t_elected, t);
  ck_assert(c_result(p, "a2", wait + 5000, NULL));
  int64_t c2_from = c_event(p, "l2#1", "isLeader");
  cand_wait(z2, 1, 1);
  owners_are(s, path, "C2");
  zkl_leader_is(z1->e, "C2");
  it_peer_ask(p, "ok C2 true", "leader C2 l2");
  int64_t c2_to = c_close(p, "C2", "l2");
  span_add(&all, "C2", 'w', c2_from, c2_to);
  c_event(p, "l2#2", "notLeader");
  owners_are(s, path, "");
  zkl_leader_is(z1->e, NULL);

  /* one leader at a time, in the order they stood */
  char seq[256];
  ck_assert_int_eq(exclusive(seq, sizeof seq, NULL), 4);
  ck_assert_str_eq(seq, "Z1 C1 Z2 C2");
  /* no listener event beyond those: isLeader, notLeader once each */
  ck_assert_int_eq(p->nstash, 0);
  cpeer_quit(p);
  cand_free(z1);
  cand_free(z2);
  owners_are(s, path, "");
  drop_tree(s, path);
  zkl_session_close(s);
  fprintf(stderr, "curator-interop: election handover %lld ms\n",
          (long long)(it_now_ms() - t_start));
}
END_TEST

/* A Curator leader K (session timeout 4 s) and a zkl candidate Z3 behind
 * it; K's process is killed: Z3 leads once K's session is gone, and never
 * while K's node is there. */
START_TEST(election_killed_curator_leader) {
  if (!it_peer_curator_here()) return;
  int64_t t_start = it_now_ms();
  char path[256];
  it_peer_node(path, sizeof path, "ekill");
  zkl_session_t *s = it_session();
  it_peer_t *p = cpeer("E", path);
  const int sess_ms = 4000;
  int64_t sid = c_open(p, "K", sess_ms);
  it_peer_ask(p, "ok", "latch K k E");
  it_peer_ask(p, "ok", "start K k");
  it_peer_say(p, "await a K k %d", 10000 * slow());
  ck_assert(c_result(p, "a", 15000 * slow(), NULL));
  c_event(p, "k#1", "isLeader");
  owners_are(s, path, "K");
  struct String_vector v = {0, NULL};
  ck_assert_int_eq(it_children(s, path, &v), 1);
  char knode[512];
  snprintf(knode, sizeof knode, "%s/%s", path, v.data[0]);
  deallocate_String_vector(&v);
  ck_assert_int_eq(it_owner_of(s, knode), sid);

  zcand_t *z3 = cand_new("Z3", path);
  owners_are(s, path, "K Z3");
  zkl_leader_is(z3->e, "K");
  ck_assert_int_eq(zkl_election_await(z3->e, 300), ZKL_ETIMEDOUT);

  int64_t t_kill = it_now_ms();
  it_peer_kill(p);
  free(p);
  /* until Z3 leads: whenever it does, K's node is gone already */
  zhandle_t *zh = zkl_session_zhandle(s);
  int64_t gone = -1, led = -1;
  int64_t end = t_kill + 3 * sess_ms + 20000 * slow();
  while (led < 0) {
    int l = zkl_election_is_leader(z3->e);
    int ex = zoo_exists(zh, knode, 0, NULL);
    ck_assert_msg(ex == ZOK || ex == ZNONODE, "exists %s: %s", knode,
                  zerror(ex));
    ck_assert_msg(!(l == 1 && ex == ZOK),
                  "zkl leads while the killed Curator leader's node is "
                  "still there");
    if (ex == ZNONODE && gone < 0) gone = it_now_ms() - t_kill;
    if (l == 1) led = it_now_ms() - t_kill;
    ck_assert_msg(it_now_ms() < end, "zkl not leader %lld ms after the kill",
                  (long long)(it_now_ms() - t_kill));
    it_sleep_ms(10);
  }
  ck_assert_int_eq(zkl_election_await(z3->e, 0), 0);
  cand_wait(z3, 1, 0);
  owners_are(s, path, "Z3");
  zkl_leader_is(z3->e, "Z3");
  ck_assert_int_eq(zkl_election_resign(z3->e), 0);
  cand_wait(z3, 1, 1);
  owners_are(s, path, "");
  cand_free(z3);
  owners_are(s, path, "");
  drop_tree(s, path);
  zkl_session_close(s);
  fprintf(stderr,
          "curator-interop: killed Curator leader (session %d ms): its node "
          "gone after %lld ms, zkl leader after %lld ms; %lld ms\n",
          sess_ms, (long long)gone, (long long)led,
          (long long)(it_now_ms() - t_start));
}
END_TEST

Suite *curator_interop_suite(void) {
  Suite *su = suite_create("curator-interop");
  TCase *tc = it_tcase("curator-interop");
  tcase_add_unchecked_fixture(tc, suite_setup, it_peer_teardown);
  tcase_add_test(tc, mutex_fifo_both_ways);
  tcase_add_test(tc, rwlock_arrival_order_both_ways);
  tcase_add_test(tc, rwlock_downgrade_and_loop);
  tcase_add_test(tc, election_handover_both_ways);
  tcase_add_test(tc, election_killed_curator_leader);
  suite_add_tcase(su, tc);
  return su;
}
