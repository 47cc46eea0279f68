/* tests/integration/test-semaphore-interop.c - zkl's semaphore with
 * Curator 5.4's InterProcessSemaphoreV2 (a small Java program,
 * CuratorSemPeer, compiled here), live and both ways, on the same nodes:
 * <path>/locks (the gate, a mutex queue both sides line up in) and
 * <path>/leases (one node per lease, both sides' counted).
 *  - mixed holders, zkl and Curator, looping, never hold more than MAX at
 *    once: by the holders' own intervals on the one monotonic clock
 *    (Java's System.nanoTime() is CLOCK_MONOTONIC), by each side's in-use
 *    counter, and by the server's <path>/leases sampled all along;
 *  - the gate is one FIFO across kinds: zkl, Curator, zkl, queued behind a
 *    full semaphore, are let in in that order, Curator's InterProcessMutex
 *    lists zkl's gate nodes, and a zkl acquirer timing out mid-queue leaves
 *    it without holding up the rest;
 *  - a shared count (Curator's SharedCount) is both sides' maximum: its
 *    raise by Curator lets a waiting zkl acquirer in, a raise by
 *    zkl_counter lets a waiting Curator acquirer in, and a zkl local max
 *    that disagrees is ZKL_EINVAL;
 *  - Curator's qty > 1, one lease per gate turn, deadlocks two clients
 *    wanting 3 of 4 (driven into it here, step by step, until their
 *    timeouts); zkl's atomic qty does not, in the same script, nor with
 *    zkl and Curator (qty 1) looping together - though a Curator client
 *    holding part of its qty and a zkl acquirer ahead of it in the gate
 *    wait for each other until the first deadline;
 *  - the leases of a Curator client whose process dies stop counting when
 *    its session ends: a waiting zkl acquirer gets in.
 *
 * The tcase "kazoo": zkl's semaphore in kazoo's layout (ZKL_SEM_KAZOO) with
 * python3-kazoo 2.8's Semaphore (sem_peer.py), live and both ways, on the
 * same nodes: <path>-__lock__ (the gate, a kazoo Lock queue both sides line
 * up in), <path>'s children (the leases, both sides' counted) and <path>'s
 * data (the maximum, ASCII).
 *  - mixed holders, zkl (qty 1 and 2) and kazoo, looping, never hold more
 *    than MAX at once: by the holders' intervals on the one monotonic clock
 *    (Python's time.monotonic_ns() is CLOCK_MONOTONIC), by each side's
 *    in-use counter, and by the server's children of <path> sampled all
 *    along (never over MAX: neither side makes a lease before it fits);
 *  - the gate is one FIFO across kinds: zkl, kazoo, zkl, queued behind a
 *    full semaphore, are let in in that order, kazoo's Lock.contenders()
 *    lists zkl's gate nodes by their data, and a zkl acquirer timing out
 *    mid-queue or trying (ZKL_EBUSY) leaves no node behind;
 *  - the maximum in <path>'s data: zkl makes <path> (persistent) with its
 *    max and a kazoo Semaphore with another max_leases raises ValueError;
 *    a zkl local max that disagrees with kazoo's is ZKL_EINVAL, max 0 takes
 *    kazoo's; data that is no number is ignored by both;
 *  - kazoo's lease_holders() lists zkl's leases, zkl_sem_holders() kazoo's
 *    (data, name, czxid token, owner session);
 *  - the leases of kazoo clients whose process is killed stop counting when
 *    their sessions end: a waiting zkl acquirer gets in;
 *  - a zkl try on a semaphore kazoo fills (or whose gate a kazoo acquirer
 *    holds) is ZKL_EBUSY and leaves no zkl node in either root.
 *
 * Every client's node data names it (Curator's default data, kazoo's
 * identifier, zkl's opts.data), so the tests read who is queued and who
 * holds, in order, straight from the server.  A peer is driven through its
 * stdin, one command a line, each answered with one line; it exits by
 * itself (a watchdog) shortly before the test's own timeout, and at the end
 * of its stdin.  Every test works on its own nodes
 * (/zkl-test/six-<run>-<tag>-..., kazoo's /zkl-test/sixk-<run>-<tag>-...
 * and its sibling ...-__lock__) and deletes them at its end; each tcase's
 * teardown sweeps what a failed test left. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"

/* ---- the peer (peer.c) -------------------------------------------------- */

/* Under valgrind (or ZKL_TEST_SLOW) zkl's side takes longer: the
 * deadlines that zkl's steps must beat are this many times longer. */
static int slow(void) {
  const char *w = getenv("ZKL_TEST_WRAPPER");
  int wrapped = w != NULL && w[0] != '\0';
  return wrapped || getenv("ZKL_TEST_SLOW") != NULL ? 2 : 1;
}

static void suite_setup(void) {
  it_peer_setup("semaphore-interop", "six", "CuratorSemPeer");
}

static void curator(it_peer_t *p) { it_peer_curator(p, "CuratorSemPeer"); }

/* ---- nodes ---------------------------------------------------------------- */

/* Deletes a test's tree (the semaphore's containers may have been reaped
 * already) and checks it is gone. */
static void drop_tree(zkl_session_t *s, const char *path) {
  zhandle_t *zh = zkl_session_zhandle(s);
  it_peer_delete_tree(zh, path);
  int rc = zoo_exists(zh, path, 0, NULL);
  ck_assert_msg(rc == ZNONODE, "%s still there: %s", path, zerror(rc));
}

static int by_seq(const void *x, const void *y) {
  const char *a = *(char *const *)x, *b = *(char *const *)y;
  size_t la = strlen(a), lb = strlen(b);
  return strcmp(a + (la > 10 ? la - 10 : 0), b + (lb > 10 ? lb - 10 : 0));
}

/* Who is in dir: its children by sequence, each shown as its data (the
 * client's name), space-separated into `who` ("" for none or no dir); their
 * names the same way into `names` if not NULL.  Listed again if a child
 * goes between the listing and its read. */
static void owners(zkl_session_t *s, const char *dir, char *who, size_t len,
                   char *names, size_t nlen) {
  zhandle_t *zh = zkl_session_zhandle(s);
  for (int tries = 0;; tries++) {
    ck_assert_int_lt(tries, 100);
    struct String_vector v = {0, NULL};
    who[0] = '\0';
    if (names != NULL) names[0] = '\0';
    int rc = zoo_get_children(zh, dir, 0, &v);
    if (rc == ZNONODE) return;
    ck_assert_msg(rc == ZOK, "get_children %s: %s", dir, zerror(rc));
    qsort(v.data, (size_t)v.count, sizeof *v.data, by_seq);
    int again = 0;
    size_t at = 0, nat = 0;
    for (int i = 0; i < v.count && !again; i++) {
      char p[1024], data[64];
      int dl = sizeof data - 1;
      snprintf(p, sizeof p, "%s/%s", dir, v.data[i]);
      rc = zoo_get(zh, p, 0, data, &dl, NULL);
      if (rc == ZNONODE) {
        again = 1;
        break;
      }
      ck_assert_msg(rc == ZOK, "get %s: %s", p, zerror(rc));
      data[dl < 0 ? 0 : dl] = '\0';
      at += (size_t)snprintf(who + at, at < len ? len - at : 0, "%s%s",
                             i > 0 ? " " : "", data);
      if (names != NULL)
        nat += (size_t)snprintf(names + nat, nat < nlen ? nlen - nat : 0,
                                "%s%s", i > 0 ? " " : "", v.data[i]);
    }
    deallocate_String_vector(&v);
    if (!again) return;
  }
}

/* Waits until `owners` of <path>/<sub> is `want` (its names into names). */
static void owners_are(zkl_session_t *s, const char *path, const char *sub,
                       const char *want, char *names, size_t nlen) {
  char dir[512], who[1024] = "";
  snprintf(dir, sizeof dir, "%s/%s", path, sub);
  int64_t end = it_now_ms() + 10000;
  for (;;) {
    owners(s, dir, who, sizeof who, names, nlen);
    if (strcmp(who, want) == 0) return;
    ck_assert_msg(it_now_ms() < end, "%s is \"%s\", not \"%s\"", dir, who,
                  want);
    it_sleep_ms(2);
  }
}

/* The lease `name` (as Curator's Lease.getNodeName() gives it) is a child
 * of <path>/leases with data `who`, named as Curator's protected nodes. */
static void lease_is(zkl_session_t *s, const char *path, const char *name,
                     const char *who) {
  ck_assert_int_eq(strlen(name), 3 + 36 + 1 + 6 + 10);
  ck_assert_int_eq(strncmp(name, "_c_", 3), 0);
  ck_assert_int_eq(strncmp(name + 39, "-lease-", 7), 0);
  char p[1024], data[64];
  int dl = sizeof data - 1;
  snprintf(p, sizeof p, "%s/leases/%s", path, name);
  int rc = zoo_get(zkl_session_zhandle(s), p, 0, data, &dl, NULL);
  ck_assert_msg(rc == ZOK, "get %s: %s", p, zerror(rc));
  data[dl < 0 ? 0 : dl] = '\0';
  ck_assert_str_eq(data, who);
}

/* ---- zkl side --------------------------------------------------------------- */

static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A semaphore object whose nodes carry `who`. */
static zkl_sem_t *sem(zkl_session_t *s, const char *path, int max,
                      const char *count_path, const char *who) {
  zkl_sem_opts_t o = {0};
  o.max = max;
  o.count_path = count_path;
  o.data = who;
  o.data_len = strlen(who);
  zkl_sem_t *m = NULL;
  int rc = zkl_sem_create(&m, s, path, &o);
  ck_assert_msg(rc == 0, "sem_create %s: %s", path, it_code(rc));
  return m;
}

/* A zkl_sem_acquire() blocked in a thread. */
typedef struct zacq {
  zkl_sem_t *m;
  unsigned qty;
  int64_t timeout_ms;
  pthread_t th;
  int rc; /* 99 while underway */
  zkl_lease_t l[4];
} zacq_t;

static void *zacq_main(void *arg) {
  zacq_t *a = arg;
  int rc = zkl_sem_acquire(a->m, a->qty, a->timeout_ms, a->l);
  __atomic_store_n(&a->rc, rc, __ATOMIC_SEQ_CST);
  return NULL;
}

static void zacq_start(zacq_t *a, zkl_sem_t *m, unsigned qty,
                       int64_t timeout_ms) {
  *a = (zacq_t){.m = m, .qty = qty, .timeout_ms = timeout_ms, .rc = 99};
  ck_assert_int_eq(pthread_create(&a->th, NULL, zacq_main, a), 0);
}

static int zacq_rc(zacq_t *a) { return __atomic_load_n(&a->rc, __ATOMIC_SEQ_CST); }

/* The acquire ends within timeout_ms with rc (and is joined). */
static void zacq_ends(zacq_t *a, int rc, int timeout_ms) {
  int64_t end = it_now_ms() + timeout_ms;
  while (zacq_rc(a) == 99 && it_now_ms() < end) it_sleep_ms(1);
  ck_assert_msg(zacq_rc(a) != 99, "zkl acquire still waiting after %d ms",
                timeout_ms);
  pthread_join(a->th, NULL);
  ck_assert_msg(a->rc == rc, "zkl acquire: %s, not %s", it_code(a->rc),
                it_code(rc));
}

/* ---- holders looping, their intervals ---------------------------------------- */

/* One lease hold: from just after the acquire returned to just before the
 * release was called, on CLOCK_MONOTONIC; side 0 zkl, 1 the peer.  The
 * nodes existed, granted, all through it: holds that overlap coexisted. */
typedef struct span {
  int64_t t0, t1;
  int qty, side;
} span_t;

#define MAX_ROUNDS 100

static int zkl_in_use; /* the zkl holders' leases now (atomic) */

/* A zkl holder looping in a thread: rounds acquires of qty[i % 2]. */
typedef struct holder {
  zkl_sem_t *m;
  int max, rounds, hold_ms;
  unsigned qty[2];
  pthread_t th;
  int fails, last_rc, over, n_spans, n_names;
  span_t spans[MAX_ROUNDS];
  char names[2 * MAX_ROUNDS][64];
} holder_t;

static void *holder_main(void *arg) {
  holder_t *h = arg;
  for (int i = 0; i < h->rounds; i++) {
    unsigned q = h->qty[i % 2];
    zkl_lease_t l[4];
    int rc = zkl_sem_acquire(h->m, q, 10000, l);
    if (rc != 0) {
      h->fails++;
      h->last_rc = rc;
      continue;
    }
    int64_t t0 = mono_ns();
    int n = __atomic_add_fetch(&zkl_in_use, (int)q, __ATOMIC_SEQ_CST);
    if (n > h->max) h->over++;
    for (unsigned j = 0; j < q && h->n_names < 2 * MAX_ROUNDS; j++)
      snprintf(h->names[h->n_names++], 64, "%s", l[j].name);
    if (h->hold_ms > 0) usleep((useconds_t)h->hold_ms * 1000);
    __atomic_sub_fetch(&zkl_in_use, (int)q, __ATOMIC_SEQ_CST);
    h->spans[h->n_spans++] = (span_t){t0, mono_ns(), (int)q, 0};
    if ((rc = zkl_sem_release(h->m, l, q)) != 0) {
      h->fails++;
      h->last_rc = rc;
    }
  }
  return NULL;
}

static void holder_start(holder_t *h, zkl_sem_t *m, int max, int rounds,
                         int hold_ms, unsigned q0, unsigned q1) {
  memset(h, 0, sizeof *h);
  h->m = m;
  h->max = max;
  h->rounds = rounds;
  h->hold_ms = hold_ms;
  h->qty[0] = q0;
  h->qty[1] = q1;
  ck_assert_int_eq(pthread_create(&h->th, NULL, holder_main, h), 0);
}

static void holder_join(holder_t *h) {
  pthread_join(h->th, NULL);
  ck_assert_msg(h->fails == 0, "zkl holder: %d of %d rounds failed, last %s",
                h->fails, h->rounds, it_code(h->last_rc));
  ck_assert_int_eq(h->over, 0);
  ck_assert_int_eq(h->n_spans, h->rounds);
}

/* A peer's loop answer (Curator's or kazoo's), "loop FAILS OVER PEAK T0
 * T1 ...": its spans appended to v (n of them), the peak of its process's
 * in-use counter out. */
static void peer_loop(it_peer_t *j, const char *id, int rounds, span_t *v,
                      size_t *n, int *peak) {
  static char line[1 << 16];
  it_peer_query(j, line, sizeof line, "await %s 30000", id);
  ck_assert_msg(strncmp(line, "loop ", 5) == 0, "%s's loop: %.300s", id, line);
  char *at = line + 5, *end;
  long fails = strtol(at, &end, 10);
  long over = strtol(end, &end, 10);
  *peak = (int)strtol(end, &end, 10);
  ck_assert_msg(fails == 0, "%s %s: %ld acquires timed out", j->name, id,
                fails);
  ck_assert_msg(over == 0, "%s %s: its process over MAX %ld times", j->name,
                id, over);
  for (int i = 0; i < rounds; i++) {
    at = end;
    int64_t t0 = strtoll(at, &end, 10), t1 = strtoll(end, &end, 10);
    ck_assert_msg(end != at, "%s %s gave %d spans, not %d", j->name, id, i,
                  rounds);
    v[(*n)++] = (span_t){t0, t1, 1, 1};
  }
  ck_assert_msg(*end == '\0', "%s %s gave more than %d spans", j->name, id,
                rounds);
}

typedef struct edge {
  int64_t t;
  int delta, side;
} edge_t;

static int by_time(const void *x, const void *y) {
  const edge_t *a = x, *b = y;
  if (a->t != b->t) return (a->t > b->t) - (a->t < b->t);
  return b->delta - a->delta; /* acquires first: a tie counts as overlap */
}

/* The holds never overlap past max: the peak of leases held at once, and
 * how many acquires found the other side holding too (mixed). */
static int spans_peak(const span_t *v, size_t n, int max, int *mixed) {
  edge_t *e = calloc(2 * n, sizeof *e);
  ck_assert_ptr_nonnull(e);
  for (size_t i = 0; i < n; i++) {
    ck_assert_int_le(v[i].t0, v[i].t1);
    e[2 * i] = (edge_t){v[i].t0, v[i].qty, v[i].side};
    e[2 * i + 1] = (edge_t){v[i].t1, -v[i].qty, v[i].side};
  }
  qsort(e, 2 * n, sizeof *e, by_time);
  int held = 0, peak = 0, side[2] = {0, 0};
  *mixed = 0;
  for (size_t i = 0; i < 2 * n; i++) {
    held += e[i].delta;
    side[e[i].side] += e[i].delta;
    if (held > peak) peak = held;
    ck_assert_msg(held <= max,
                  "%d leases held at once (zkl %d, peer %d), max %d, at "
                  "%lld ns",
                  held, side[0], side[1], max, (long long)e[i].t);
    if (e[i].delta > 0 && side[0] > 0 && side[1] > 0) (*mixed)++;
  }
  free(e);
  return peak;
}

/* ---- the server's view, sampled ------------------------------------------------ */

#define EDGE_KEEP 4096
#define NAME_LEN 64

/* A raw zhandle of its own lists <path>/leases over and over, with a child
 * watch to go again at once on a change (else every 2 ms).  More than MAX
 * children can be there: a Curator acquirer makes its lease node first and
 * only then counts, in the gate, so one node over MAX (that Curator
 * acquirer's) may be seen; never two. */
typedef struct sampler {
  char leases[512];
  int max;
  zhandle_t *zh;
  pthread_t th;
  int stop, fired;
  long samples, errors;
  int peak;
  long n_edge;                     /* samples of max + 1 children */
  char (*edge)[8][NAME_LEN];       /* the first EDGE_KEEP of them  */
} sampler_t;

static void quiet_watch(zhandle_t *zh, int type, int state, const char *path,
                        void *ctx) {
  (void)zh, (void)type, (void)state, (void)path, (void)ctx;
}

static void kid_watch(zhandle_t *zh, int type, int state, const char *path,
                      void *ctx) {
  (void)zh, (void)type, (void)state, (void)path;
  __atomic_store_n((int *)ctx, 1, __ATOMIC_SEQ_CST);
}

static void *sampler_main(void *arg) {
  sampler_t *x = arg;
  while (!__atomic_load_n(&x->stop, __ATOMIC_SEQ_CST)) {
    __atomic_store_n(&x->fired, 0, __ATOMIC_SEQ_CST);
    struct String_vector v = {0, NULL};
    int rc = zoo_wget_children(x->zh, x->leases, kid_watch, &x->fired, &v);
    if (rc == ZOK) {
      x->samples++;
      if (v.count > x->peak) x->peak = v.count;
      if (v.count == x->max + 1 && x->n_edge++ < EDGE_KEEP)
        for (int i = 0; i < v.count && i < 8; i++)
          snprintf(x->edge[x->n_edge - 1][i], NAME_LEN, "%s", v.data[i]);
      deallocate_String_vector(&v);
    } else if (rc != ZNONODE) {
      x->errors++;
    }
    for (int i = 0; i < 20 && !__atomic_load_n(&x->fired, __ATOMIC_SEQ_CST);
         i++)
      usleep(100);
  }
  return NULL;
}

/* Samples dir's children: <path>/leases (Curator's layout), <path>
 * (kazoo's). */
static void sampler_start_at(sampler_t *x, const char *dir, int max) {
  memset(x, 0, sizeof *x);
  snprintf(x->leases, sizeof x->leases, "%s", dir);
  x->max = max;
  x->edge = calloc(EDGE_KEEP, sizeof *x->edge);
  ck_assert_ptr_nonnull(x->edge);
  zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
  x->zh = zookeeper_init(it_hosts(), quiet_watch, 10000, NULL, NULL, 0);
  ck_assert_ptr_nonnull(x->zh);
  int64_t end = it_now_ms() + 10000;
  while (zoo_state(x->zh) != ZOO_CONNECTED_STATE && it_now_ms() < end)
    it_sleep_ms(2);
  ck_assert_int_eq(zoo_state(x->zh), ZOO_CONNECTED_STATE);
  ck_assert_int_eq(pthread_create(&x->th, NULL, sampler_main, x), 0);
}

static void sampler_start(sampler_t *x, const char *path, int max) {
  char dir[512];
  snprintf(dir, sizeof dir, "%s/leases", path);
  sampler_start_at(x, dir, max);
}

static int is_zkl_lease(const char *name, holder_t *const *hs, int nh) {
  for (int i = 0; i < nh; i++)
    for (int j = 0; j < hs[i]->n_names; j++)
      if (strcmp(hs[i]->names[j], name) == 0) return 1;
  return 0;
}

/* Stops the sampler: never more than max + 1 children, and when max + 1,
 * one of them not a zkl lease (zkl makes its leases only when they fit:
 * the extra one is a Curator acquirer's, still counting). */
static void sampler_stop(sampler_t *x, holder_t *const *hs, int nh) {
  __atomic_store_n(&x->stop, 1, __ATOMIC_SEQ_CST);
  pthread_join(x->th, NULL);
  zookeeper_close(x->zh);
  fprintf(stderr,
          "semaphore-interop: %ld samples of %s, peak %d children, %ld at "
          "max + 1 (a Curator acquirer's node counting)\n",
          x->samples, x->leases, x->peak, x->n_edge);
  ck_assert_int_eq(x->errors, 0);
  ck_assert_int_gt(x->samples, 100);
  ck_assert_msg(x->peak <= x->max + 1, "%d leases seen, max %d", x->peak,
                x->max);
  for (long i = 0; i < x->n_edge && i < EDGE_KEEP; i++) {
    int zkl = 0;
    for (int k = 0; k <= x->max; k++) zkl += is_zkl_lease(x->edge[i][k], hs, nh);
    ck_assert_msg(zkl <= x->max,
                  "%d zkl leases of %d children, max %d: %s %s %s %s", zkl,
                  x->max + 1, x->max, x->edge[i][0], x->edge[i][1],
                  x->edge[i][2], x->edge[i][3]);
  }
  free(x->edge);
}

/* ---- mixed holders ------------------------------------------------------------- */

#define MIX_MAX 3
#define MIX_ROUNDS 40
#define MIX_HOLD_MS 20 /* long enough for both sides to overlap on a
                           loaded machine (3 ms: once they did not) */

/* First, one lease each way: Curator's (Lease.getNodeName) and zkl's are
 * children of the same <path>/leases, Curator's getParticipantNodes lists
 * zkl's, and each side's count the other's (a zkl try is ZKL_EBUSY, a
 * Curator timed acquire null).  Then MAX 3: two zkl objects (own sessions,
 * threads, qty 1 and 2 alternating) and two Curator clients (acquire() and
 * acquire(10 s)), MIX_ROUNDS each, holding MIX_HOLD_MS: never more than MAX
 * held at once, by the holds' intervals, by each side's in-use counter and
 * by the server's sampled children; the sides did hold together. */
START_TEST(mixed_holders_never_exceed_max) {
  if (!it_peer_curator_here()) return;
  int64_t t_start = it_now_ms();
  char path[256], names[1024], line[1024];
  it_peer_node(path, sizeof path, "mix");
  zkl_session_t *s1 = it_session(), *s2 = it_session();
  zkl_sem_t *a = sem(s1, path, MIX_MAX, NULL, "zA");
  zkl_sem_t *b = sem(s2, path, MIX_MAX, NULL, "zB");
  it_peer_t j;
  curator(&j);
  it_peer_query(&j, line, sizeof line, "open J1 %s %d 10000", path, MIX_MAX);
  it_peer_query(&j, line, sizeof line, "open J2 %s %d 10000", path, MIX_MAX);
  /* one lease each way, on the same nodes */
  it_peer_ask(&j, "ok", "acquire J1 1 -1");
  it_peer_query(&j, line, sizeof line, "await J1 10000");
  ck_assert_msg(strncmp(line, "got ", 4) == 0, "J1: %s", line);
  char j1[NAME_LEN];
  snprintf(j1, sizeof j1, "%.63s", line + 4);
  lease_is(s1, path, j1, "J1");
  zkl_lease_t la[2], lb[1];
  ck_assert_int_eq(zkl_sem_acquire(a, 2, 10000, la), 0);
  lease_is(s1, path, la[0].name, "zA");
  lease_is(s1, path, la[1].name, "zA");
  owners_are(s1, path, "leases", "J1 zA zA", names, sizeof names);
  char want[1100];
  snprintf(want, sizeof want, "ok %s", names);
  it_peer_ask(&j, want, "leases J1"); /* Curator lists zkl's leases */
  ck_assert_int_eq(zkl_sem_acquire(b, 1, 0, lb), ZKL_EBUSY);
  size_t leased = 0;
  int max = 0;
  ck_assert_int_eq(zkl_sem_count(b, &leased, &max), 0);
  ck_assert_uint_eq(leased, 3);
  ck_assert_int_eq(max, MIX_MAX);
  it_peer_ask(&j, "ok", "acquire J2 1 300");
  it_peer_ask(&j, "none", "await J2 5000"); /* zkl's leases count for Curator */
  owners_are(s1, path, "leases", "J1 zA zA", NULL, 0);
  owners_are(s1, path, "locks", "", NULL, 0);
  ck_assert_int_eq(zkl_sem_release(a, la, 2), 0);
  it_peer_ask(&j, "ok", "release J1 1");
  owners_are(s1, path, "leases", "", NULL, 0);

  /* the loops */
  static sampler_t smp;
  static holder_t ha, hb;
  static span_t spans[4 * MAX_ROUNDS];
  sampler_start(&smp, path, MIX_MAX);
  __atomic_store_n(&zkl_in_use, 0, __ATOMIC_SEQ_CST);
  int64_t t0 = it_now_ms();
  it_peer_ask(&j, "ok", "loop J1 %d %d -1", MIX_ROUNDS, MIX_HOLD_MS);
  it_peer_ask(&j, "ok", "loop J2 %d %d 10000", MIX_ROUNDS, MIX_HOLD_MS);
  holder_start(&ha, a, MIX_MAX, MIX_ROUNDS, MIX_HOLD_MS, 1, 2);
  holder_start(&hb, b, MIX_MAX, MIX_ROUNDS, MIX_HOLD_MS, 2, 1);
  holder_join(&ha);
  holder_join(&hb);
  size_t n = 0;
  int jpeak1, jpeak2;
  peer_loop(&j, "J1", MIX_ROUNDS, spans, &n, &jpeak1);
  peer_loop(&j, "J2", MIX_ROUNDS, spans, &n, &jpeak2);
  int64_t t1 = it_now_ms();
  holder_t *hs[2] = {&ha, &hb};
  sampler_stop(&smp, hs, 2);
  for (int i = 0; i < ha.n_spans; i++) spans[n++] = ha.spans[i];
  for (int i = 0; i < hb.n_spans; i++) spans[n++] = hb.spans[i];
  int mixed = 0;
  int peak = spans_peak(spans, n, MIX_MAX, &mixed);
  fprintf(stderr,
          "semaphore-interop: mixed, %zu holds in %lld ms: peak %d held at "
          "once, %d acquires while the other side held\n",
          n, (long long)(t1 - t0), peak, mixed);
  ck_assert_int_le(jpeak1 > jpeak2 ? jpeak1 : jpeak2, 2);
  ck_assert_int_eq(peak, MIX_MAX); /* contended: the semaphore was full */
  ck_assert_int_gt(mixed, 0);      /* and shared by both sides */
  owners_are(s1, path, "leases", "", NULL, 0);
  owners_are(s1, path, "locks", "", NULL, 0);
  it_peer_quit(&j);
  zkl_sem_destroy(a);
  zkl_sem_destroy(b);
  drop_tree(s1, path);
  zkl_session_close(s1);
  zkl_session_close(s2);
  fprintf(stderr, "semaphore-interop: mixed_holders %lld ms\n",
          (long long)(it_now_ms() - t_start));
}
END_TEST

/* ---- one FIFO through the gate --------------------------------------------------- */

/* MAX 3, all held by Curator client H.  zkl A, Curator B and zkl C line up
 * in the gate in that order (each seen queued, by its node's data, before
 * the next starts); Curator's InterProcessMutex on <path>/locks lists the
 * gate nodes, zkl's too, in that order.  On the way, a zkl D (400 ms)
 * queued between B and C times out and leaves the queue (C then waits on
 * Curator's B), and a zkl try finds the gate busy (ZKL_EBUSY) and leaves
 * no node.  H gives its leases back one at a time: A gets in, then B (whose
 * lease node, made while it held the gate, waited as the fourth child),
 * then C - each only when its turn comes. */
START_TEST(fifo_through_the_gate) {
  if (!it_peer_curator_here()) return;
  int64_t t_start = it_now_ms();
  char path[256], names[1024], line[1024], want[1100];
  it_peer_node(path, sizeof path, "fifo");
  zkl_session_t *sa = it_session(), *sc = it_session();
  zkl_sem_t *a = sem(sa, path, 3, NULL, "zA");
  zkl_sem_t *c = sem(sc, path, 3, NULL, "zC");
  zkl_sem_t *d = sem(sa, path, 3, NULL, "zD");
  it_peer_t j;
  curator(&j);
  it_peer_query(&j, line, sizeof line, "open H %s 3 10000", path);
  it_peer_query(&j, line, sizeof line, "open B %s 3 10000", path);
  it_peer_ask(&j, "ok", "acquire H 3 -1");
  it_peer_query(&j, line, sizeof line, "await H 10000");
  ck_assert_msg(strncmp(line, "got ", 4) == 0, "H: %s", line);
  owners_are(sa, path, "leases", "H H H", NULL, 0);
  owners_are(sa, path, "locks", "", NULL, 0);
  /* A, B, C line up */
  zacq_t qa, qc;
  zacq_start(&qa, a, 1, 20000);
  owners_are(sa, path, "locks", "zA", names, sizeof names);
  snprintf(want, sizeof want, "ok %s", names);
  it_peer_ask(&j, want, "participants H %s/locks", path);
  it_peer_ask(&j, "ok", "acquire B 1 -1");
  owners_are(sa, path, "locks", "zA B", NULL, 0);
  /* D (400 ms, more when slow) lines up behind B, C behind D; D gives up: C now waits on
   * B, and D's gate node is gone */
  zacq_t qd;
  zacq_start(&qd, d, 1, 400 * slow());
  owners_are(sa, path, "locks", "zA B zD", NULL, 0);
  zacq_start(&qc, c, 1, 20000);
  owners_are(sa, path, "locks", "zA B zD zC", NULL, 0);
  zacq_ends(&qd, ZKL_ETIMEDOUT, 5000);
  owners_are(sa, path, "locks", "zA B zC", names, sizeof names);
  /* a try while the gate is busy: ZKL_EBUSY, the queue as it was */
  zkl_lease_t ld[1];
  ck_assert_int_eq(zkl_sem_acquire(d, 1, 0, ld), ZKL_EBUSY);
  owners_are(sa, path, "locks", "zA B zC", names, sizeof names);
  snprintf(want, sizeof want, "ok %s", names);
  it_peer_ask(&j, want, "participants H %s/locks", path);
  owners_are(sa, path, "leases", "H H H", NULL, 0);
  ck_assert_int_eq(zacq_rc(&qa), 99);
  ck_assert_int_eq(zacq_rc(&qc), 99);
  it_peer_ask(&j, "waiting", "await B 0");
  /* one lease back: A */
  it_peer_ask(&j, "ok", "release H 1");
  zacq_ends(&qa, 0, 10000);
  lease_is(sa, path, qa.l[0].name, "zA");
  owners_are(sa, path, "locks", "B zC", NULL, 0);
  /* B in the gate: its lease node made, counting as the fourth */
  owners_are(sa, path, "leases", "H H zA B", names, sizeof names);
  char b_node[NAME_LEN];
  snprintf(b_node, sizeof b_node, "%s", strrchr(names, ' ') + 1);
  it_sleep_ms(100);
  it_peer_ask(&j, "waiting", "await B 0");
  ck_assert_int_eq(zacq_rc(&qc), 99);
  /* another: B, with that node */
  it_peer_ask(&j, "ok", "release H 1");
  snprintf(want, sizeof want, "got %s", b_node);
  it_peer_ask(&j, want, "await B 10000");
  owners_are(sa, path, "locks", "zC", NULL, 0);
  owners_are(sa, path, "leases", "H zA B", NULL, 0);
  it_sleep_ms(100);
  ck_assert_int_eq(zacq_rc(&qc), 99);
  /* the last: C */
  it_peer_ask(&j, "ok", "release H 1");
  zacq_ends(&qc, 0, 10000);
  owners_are(sa, path, "leases", "zA B zC", NULL, 0);
  owners_are(sa, path, "locks", "", NULL, 0);
  ck_assert_uint_gt(qc.l[0].token, qa.l[0].token);
  ck_assert_int_eq(zkl_sem_release(a, qa.l, 1), 0);
  ck_assert_int_eq(zkl_sem_release(c, qc.l, 1), 0);
  it_peer_ask(&j, "ok", "release B 1");
  owners_are(sa, path, "leases", "", NULL, 0);
  it_peer_quit(&j);
  zkl_sem_destroy(a);
  zkl_sem_destroy(c);
  zkl_sem_destroy(d);
  drop_tree(sa, path);
  zkl_session_close(sa);
  zkl_session_close(sc);
  fprintf(stderr, "semaphore-interop: fifo %lld ms\n",
          (long long)(it_now_ms() - t_start));
}
END_TEST

/* ---- the shared count ------------------------------------------------------------ */

/* Curator's SharedCount makes the count (2); Curator's semaphore on it and
 * zkl's (count_path, no local max) share that maximum: Curator holds 2, a
 * zkl try is ZKL_EBUSY and a zkl acquire waits in the gate until Curator's
 * setCount(3) lets it in (zkl watches the count).  The other way: a
 * Curator acquire waits (its lease node the fourth) until zkl_counter sets
 * the count to 4.  A zkl local max of 3 with the count at 4 is ZKL_EINVAL
 * ("disagrees"); a local 4 agrees (ZKL_EBUSY: all 4 held). */
START_TEST(shared_count_is_the_max) {
  if (!it_peer_curator_here()) return;
  int64_t t_start = it_now_ms();
  char path[256], count[256], line[1024];
  it_peer_node(path, sizeof path, "sc");
  it_peer_node(count, sizeof count, "sc-max");
  zkl_session_t *s = it_session();
  it_peer_t j;
  curator(&j);
  it_peer_ask(&j, "ok 2", "openc J %s %s 2 10000", path, count);
  char data[8];
  int dl = sizeof data;
  ck_assert_int_eq(zoo_get(zkl_session_zhandle(s), count, 0, data, &dl, NULL),
                   ZOK);
  ck_assert_int_eq(dl, 4);
  ck_assert_int_eq(memcmp(data, "\0\0\0\2", 4), 0);
  zkl_sem_t *z = sem(s, path, 0, count, "zZ");
  size_t leased = 9;
  int max = 0;
  ck_assert_int_eq(zkl_sem_count(z, &leased, &max), 0);
  ck_assert_uint_eq(leased, 0);
  ck_assert_int_eq(max, 2);
  it_peer_ask(&j, "ok", "acquire J 2 -1");
  it_peer_query(&j, line, sizeof line, "await J 10000");
  ck_assert_msg(strncmp(line, "got ", 4) == 0, "J: %s", line);
  owners_are(s, path, "leases", "J J", NULL, 0);
  zkl_lease_t l[1];
  ck_assert_int_eq(zkl_sem_acquire(z, 1, 0, l), ZKL_EBUSY);
  /* Curator raises the count: the waiting zkl acquirer gets in */
  zacq_t q;
  zacq_start(&q, z, 1, 20000);
  owners_are(s, path, "locks", "zZ", NULL, 0);
  it_sleep_ms(100);
  ck_assert_int_eq(zacq_rc(&q), 99);
  it_peer_ask(&j, "ok", "setcount J 3");
  zacq_ends(&q, 0, 10000);
  owners_are(s, path, "leases", "J J zZ", NULL, 0);
  /* zkl raises the count: the waiting Curator acquirer gets in */
  it_peer_ask(&j, "ok", "acquire J 1 20000");
  owners_are(s, path, "locks", "J", NULL, 0);
  owners_are(s, path, "leases", "J J zZ J", NULL, 0);
  it_sleep_ms(100);
  it_peer_ask(&j, "waiting", "await J 0");
  zkl_counter_opts_t co;
  zkl_counter_opts_init(&co);
  co.format = ZKL_COUNTER_INT32;
  zkl_counter_t *cnt = NULL;
  ck_assert_int_eq(zkl_counter_create(&cnt, s, count, &co), 0);
  zkl_count_t now;
  ck_assert_int_eq(zkl_counter_set(cnt, 4, &now), 0);
  it_peer_query(&j, line, sizeof line, "await J 10000");
  ck_assert_msg(strncmp(line, "got ", 4) == 0, "J after the raise: %s", line);
  owners_are(s, path, "locks", "", NULL, 0);
  owners_are(s, path, "leases", "J J zZ J", NULL, 0);
  ck_assert_int_eq(zkl_sem_count(z, &leased, &max), 0);
  ck_assert_uint_eq(leased, 4);
  ck_assert_int_eq(max, 4);
  /* a local max that disagrees; one that agrees */
  zkl_sem_t *d = sem(s, path, 3, count, "zD");
  ck_assert_int_eq(zkl_sem_acquire(d, 1, 1000, l), ZKL_EINVAL);
  ck_assert_ptr_nonnull(strstr(zkl_last_error(), "disagrees"));
  zkl_sem_destroy(d);
  d = sem(s, path, 4, count, "zD");
  ck_assert_int_eq(zkl_sem_acquire(d, 1, 0, l), ZKL_EBUSY);
  zkl_sem_destroy(d);
  owners_are(s, path, "locks", "", NULL, 0);
  ck_assert_int_eq(zkl_sem_release(z, q.l, 1), 0);
  it_peer_ask(&j, "ok", "release J 3");
  owners_are(s, path, "leases", "", NULL, 0);
  it_peer_quit(&j);
  zkl_counter_destroy(cnt);
  zkl_sem_destroy(z);
  drop_tree(s, path);
  drop_tree(s, count);
  zkl_session_close(s);
  fprintf(stderr, "semaphore-interop: shared count %lld ms\n",
          (long long)(it_now_ms() - t_start));
}
END_TEST

/* ---- qty > 1: Curator's deadlock, zkl's none ---------------------------------------- */

#define DL_ROUNDS 100

/* Curator: MAX 4, all held by zkl Z; Curator X and Y each acquire(3, 2 s)
 * and line up; Z gives its leases back one at a time, and each goes to the
 * acquirer in the gate: X, Y, X, Y.  Then X (in the gate, its third lease
 * node made, a fifth child) waits for a lease only Y could give back, and Y
 * for the gate X holds: nothing moves until X's timeout (X: null, its
 * leases given back); Y is reported either way (in the time it has left it
 * may get its third).
 * zkl, the same script with zkl A and B: nothing is taken until 3 fit, A
 * then takes 3 at once, B waits holding nothing and gets in when A gives
 * them back.
 * Mixed, Curator X holding 2 of its 3 and zkl A wanting 3 ahead of it in
 * the gate wait for each other (A for X's leases, X for the gate) until
 * A's deadline: ZKL_ETIMEDOUT, nothing of A's left, and X gets its third.
 * Then, MAX 4, those two zkl objects (own sessions) each taking 3 at once
 * and a Curator client taking 1 (acquire(10 s)), DL_ROUNDS each, together:
 * every acquire succeeds (a deadlock would time them out), never more than
 * 4 held at once (holds' intervals, zkl's in-use counter). */
START_TEST(qty_deadlock_curator_not_zkl) {
  if (!it_peer_curator_here()) return;
  int64_t t_start = it_now_ms();
  char path[256], line[1024];
  it_peer_node(path, sizeof path, "dl");
  zkl_session_t *s = it_session();
  zkl_sem_t *z = sem(s, path, 4, NULL, "zZ");
  zkl_lease_t lz[4];
  ck_assert_int_eq(zkl_sem_acquire(z, 4, 10000, lz), 0);
  it_peer_t j;
  curator(&j);
  it_peer_query(&j, line, sizeof line, "open X %s 4 10000", path);
  it_peer_query(&j, line, sizeof line, "open Y %s 4 10000", path);
  int64_t t0 = it_now_ms();
  const int dl_ms = 2000 * slow(); /* Curator's acquire(3, 2, SECONDS) */
  it_peer_ask(&j, "ok", "acquire X 3 %d", dl_ms);
  owners_are(s, path, "locks", "X", NULL, 0);
  owners_are(s, path, "leases", "zZ zZ zZ zZ X", NULL, 0);
  it_peer_ask(&j, "ok", "acquire Y 3 %d", dl_ms);
  owners_are(s, path, "locks", "X Y", NULL, 0);
  static const char *const steps[4][2] = {
      {"Y X", "zZ zZ zZ X Y"}, /* X has 1, Y in the gate */
      {"X Y", "zZ zZ X Y X"},  /* Y has 1, X in the gate */
      {"Y X", "zZ X Y X Y"},   /* X has 2 */
      {"X Y", "X Y X Y X"},    /* Y has 2: X in the gate, for good */
  };
  for (int i = 0; i < 4; i++) {
    ck_assert_int_eq(zkl_sem_release(z, &lz[i], 1), 0);
    owners_are(s, path, "locks", steps[i][0], NULL, 0);
    owners_are(s, path, "leases", steps[i][1], NULL, 0);
  }
  int64_t t_stuck = it_now_ms() - t0;
  it_sleep_ms(300);
  owners_are(s, path, "locks", "X Y", NULL, 0); /* nothing moved */
  owners_are(s, path, "leases", "X Y X Y X", NULL, 0);
  it_peer_ask(&j, "waiting", "await X 0");
  it_peer_ask(&j, "waiting", "await Y 0");
  char rx[1024], ry[1024];
  it_peer_query(&j, rx, sizeof rx, "await X %d", dl_ms + 5000);
  it_peer_query(&j, ry, sizeof ry, "await Y %d", dl_ms + 5000);
  int64_t t_end = it_now_ms() - t0;
  fprintf(stderr,
          "semaphore-interop: Curator qty 3 of 4: deadlocked (2 + 2 held, "
          "X in the gate) %lld ms after the start; at the %d ms timeouts "
          "X: %s, Y: %.12s (%lld ms)\n",
          (long long)t_stuck, dl_ms, rx, ry, (long long)t_end);
  ck_assert_str_eq(rx, "none");
  ck_assert_int_ge(t_end, dl_ms - 100);
  if (strncmp(ry, "got ", 4) == 0) {
    owners_are(s, path, "leases", "Y Y Y", NULL, 0);
    it_peer_ask(&j, "ok", "release Y 3");
  } else {
    ck_assert_str_eq(ry, "none");
  }
  owners_are(s, path, "leases", "", NULL, 0);
  owners_are(s, path, "locks", "", NULL, 0);

  /* zkl, the same script: A and B each want 3 of 4 while Z holds all 4;
   * Z gives them back one at a time.  A, first in the gate, takes nothing
   * until 3 fit, then all 3 at once; B, waiting, holds nothing, and gets
   * in as soon as A gives its 3 back. */
  zkl_session_t *s2 = it_session();
  zkl_sem_t *za = sem(s, path, 4, NULL, "zA"), *zb = sem(s2, path, 4, NULL, "zB");
  ck_assert_int_eq(zkl_sem_acquire(z, 4, 10000, lz), 0);
  zacq_t qa, qb;
  zacq_start(&qa, za, 3, 10000);
  owners_are(s, path, "locks", "zA", NULL, 0);
  zacq_start(&qb, zb, 3, 10000);
  owners_are(s, path, "locks", "zA zB", NULL, 0);
  static const char *const zsteps[2] = {"zZ zZ zZ", "zZ zZ"};
  for (int i = 0; i < 2; i++) { /* 3 do not fit yet: nothing taken */
    ck_assert_int_eq(zkl_sem_release(z, &lz[i], 1), 0);
    owners_are(s, path, "leases", zsteps[i], NULL, 0);
    it_sleep_ms(50);
    owners_are(s, path, "leases", zsteps[i], NULL, 0);
    owners_are(s, path, "locks", "zA zB", NULL, 0);
  }
  ck_assert_int_eq(zkl_sem_release(z, &lz[2], 1), 0);
  zacq_ends(&qa, 0, 10000); /* 3 fit: A takes them in one multi */
  ck_assert_uint_eq(qa.l[0].token, qa.l[2].token);
  owners_are(s, path, "leases", "zZ zA zA zA", NULL, 0);
  owners_are(s, path, "locks", "zB", NULL, 0);
  ck_assert_int_eq(zkl_sem_release(z, &lz[3], 1), 0);
  owners_are(s, path, "leases", "zA zA zA", NULL, 0);
  it_sleep_ms(50);
  ck_assert_int_eq(zacq_rc(&qb), 99); /* waiting, holding nothing */
  owners_are(s, path, "leases", "zA zA zA", NULL, 0);
  ck_assert_int_eq(zkl_sem_release(za, qa.l, 3), 0);
  zacq_ends(&qb, 0, 10000);
  owners_are(s, path, "leases", "zB zB zB", NULL, 0);
  owners_are(s, path, "locks", "", NULL, 0);
  ck_assert_int_eq(zkl_sem_release(zb, qb.l, 3), 0);

  /* but a Curator acquirer holding 2 of its 3 and a zkl acquirer wanting 3,
   * in the gate before it, wait for each other: zkl for X's leases, X for
   * the gate - until zkl's deadline (ZKL_ETIMEDOUT, nothing left), after
   * which X gets its third */
  ck_assert_int_eq(zkl_sem_acquire(z, 4, 10000, lz), 0);
  it_peer_ask(&j, "ok", "acquire X 3 %d", 5000 * slow());
  owners_are(s, path, "leases", "zZ zZ zZ zZ X", NULL, 0);
  ck_assert_int_eq(zkl_sem_release(z, &lz[0], 1), 0);
  owners_are(s, path, "leases", "zZ zZ zZ X X", NULL, 0); /* 1 + pending */
  owners_are(s, path, "locks", "X", NULL, 0);
  int64_t t3 = it_now_ms();
  zacq_start(&qa, za, 3, 1000 * slow());
  owners_are(s, path, "locks", "X zA", NULL, 0);
  ck_assert_int_eq(zkl_sem_release(z, &lz[1], 1), 0);
  owners_are(s, path, "locks", "zA X", NULL, 0); /* X has 2 */
  ck_assert_int_eq(zkl_sem_release(z, lz + 2, 2), 0);
  owners_are(s, path, "leases", "X X", NULL, 0);
  it_sleep_ms(200);
  owners_are(s, path, "leases", "X X", NULL, 0); /* stuck */
  owners_are(s, path, "locks", "zA X", NULL, 0);
  ck_assert_int_eq(zacq_rc(&qa), 99);
  zacq_ends(&qa, ZKL_ETIMEDOUT, 5000);
  it_peer_query(&j, line, sizeof line, "await X %d", 5000 * slow());
  fprintf(stderr,
          "semaphore-interop: Curator X holding 2 of 3, zkl wanting 3 in "
          "the gate: stuck until zkl's %d ms deadline (%lld ms), then X: "
          "%.12s\n",
          1000 * slow(), (long long)(it_now_ms() - t3), line);
  ck_assert_msg(strncmp(line, "got ", 4) == 0, "X: %s", line);
  owners_are(s, path, "leases", "X X X", NULL, 0);
  owners_are(s, path, "locks", "", NULL, 0);
  it_peer_ask(&j, "ok", "release X 3");

  /* zkl's qty is atomic: no deadlock, round after round, with Curator
   * taking 1 alongside */
  static holder_t h1, h2;
  static span_t spans[3 * DL_ROUNDS];
  __atomic_store_n(&zkl_in_use, 0, __ATOMIC_SEQ_CST);
  int64_t t1 = it_now_ms();
  it_peer_ask(&j, "ok", "loop X %d 1 10000", DL_ROUNDS);
  holder_start(&h1, za, 4, DL_ROUNDS, 1, 3, 3);
  holder_start(&h2, zb, 4, DL_ROUNDS, 1, 3, 3);
  holder_join(&h1);
  holder_join(&h2);
  size_t n = 0;
  int jpeak;
  peer_loop(&j, "X", DL_ROUNDS, spans, &n, &jpeak);
  int64_t t2 = it_now_ms();
  for (int i = 0; i < h1.n_spans; i++) spans[n++] = h1.spans[i];
  for (int i = 0; i < h2.n_spans; i++) spans[n++] = h2.spans[i];
  int mixed = 0;
  int peak = spans_peak(spans, n, 4, &mixed);
  fprintf(stderr,
          "semaphore-interop: zkl 2 x qty 3 + Curator qty 1, %d rounds each "
          "in %lld ms: peak %d held at once, %d acquires while the other "
          "side held\n",
          DL_ROUNDS, (long long)(t2 - t1), peak, mixed);
  owners_are(s, path, "leases", "", NULL, 0);
  owners_are(s, path, "locks", "", NULL, 0);
  it_peer_quit(&j);
  zkl_sem_destroy(z);
  zkl_sem_destroy(za);
  zkl_sem_destroy(zb);
  drop_tree(s, path);
  zkl_session_close(s);
  zkl_session_close(s2);
  fprintf(stderr, "semaphore-interop: qty deadlock %lld ms\n",
          (long long)(it_now_ms() - t_start));
}
END_TEST

/* ---- a dead Curator client's leases ------------------------------------------------ */

/* MAX 2, both held by Curator client K (its own JVM, a 1.5 s session); zkl
 * waits in the gate.  K's process is killed: once its session ends its
 * lease nodes go and zkl gets in - not before (the leases count while the
 * session lives). */
START_TEST(dead_curator_leases_stop_counting) {
  if (!it_peer_curator_here()) return;
  int64_t t_start = it_now_ms();
  char path[256], line[1024];
  it_peer_node(path, sizeof path, "dead");
  zkl_session_t *s = it_session();
  zkl_sem_t *w = sem(s, path, 2, NULL, "zW");
  it_peer_t j;
  curator(&j);
  char sid[64];
  it_peer_query(&j, sid, sizeof sid, "open K %s 2 1500", path);
  it_peer_ask(&j, "ok", "acquire K 2 -1");
  it_peer_query(&j, line, sizeof line, "await K 10000");
  ck_assert_msg(strncmp(line, "got ", 4) == 0, "K: %s", line);
  char k1[NAME_LEN], p[512];
  snprintf(k1, sizeof k1, "%.*s", (int)strcspn(line + 4, " "), line + 4);
  lease_is(s, path, k1, "K");
  snprintf(p, sizeof p, "%s/leases/%s", path, k1);
  char owner[64];
  snprintf(owner, sizeof owner, "ok 0x%llx",
           (unsigned long long)it_owner_of(s, p));
  ck_assert_str_eq(owner, sid); /* K's session holds it */
  owners_are(s, path, "leases", "K K", NULL, 0);
  zkl_lease_t l[1];
  ck_assert_int_eq(zkl_sem_acquire(w, 1, 0, l), ZKL_EBUSY);
  zacq_t q;
  zacq_start(&q, w, 1, 20000);
  owners_are(s, path, "locks", "zW", NULL, 0);
  /* K dies */
  int64_t t_kill = it_now_ms();
  it_peer_kill(&j);
  ck_assert_int_eq(zacq_rc(&q), 99); /* its leases count until its session ends */
  zacq_ends(&q, 0, 15000);
  int64_t took = it_now_ms() - t_kill;
  fprintf(stderr,
          "semaphore-interop: zkl in %lld ms after Curator's JVM was killed "
          "(session 1.5 s)\n",
          (long long)took);
  ck_assert_int_ge(took, 500);
  ck_assert_int_eq(it_owner_of(s, p), 0);
  owners_are(s, path, "leases", "zW", NULL, 0);
  owners_are(s, path, "locks", "", NULL, 0);
  ck_assert_int_eq(zkl_sem_release(w, q.l, 1), 0);
  zkl_sem_destroy(w);
  drop_tree(s, path);
  zkl_session_close(s);
  fprintf(stderr, "semaphore-interop: dead client %lld ms\n",
          (long long)(it_now_ms() - t_start));
}
END_TEST

/* ==== kazoo's Semaphore: ZKL_SEM_KAZOO ==================================== */

/* This run's kazoo-layout nodes: /zkl-test/sixk-<runner pid>-<tag>-...;
 * every semaphore is two of them, <path> (the leases, the maximum in its
 * data) and its sibling <path>-__lock__ (the gate). */
static char ktag[64];

static void kazoo_setup(void) {
  snprintf(ktag, sizeof ktag, "sixk-%ld", (long)getpid());
}

/* Deletes every node of this run that a failed test left behind: both
 * roots of each semaphore start with ktag. */
static void kazoo_teardown(void) {
  size_t n = strlen(ktag);
  zkl_session_t *s = it_session();
  zhandle_t *zh = zkl_session_zhandle(s);
  struct String_vector kids = {0, NULL};
  if (zoo_get_children(zh, "/zkl-test", 0, &kids) == ZOK) {
    for (int i = 0; i < kids.count; i++) {
      if (strncmp(kids.data[i], ktag, n) != 0 || kids.data[i][n] != '-')
        continue;
      char p[1024];
      snprintf(p, sizeof p, "/zkl-test/%s", kids.data[i]);
      fprintf(stderr, "semaphore-interop: deleting %s, left behind\n", p);
      it_peer_delete_tree(zh, p);
    }
    deallocate_String_vector(&kids);
  }
  zkl_session_close(s);
}

/* A unique <path> for one test (its gate: <path>-__lock__). */
static void knode(char *buf, size_t len, const char *tag) {
  char t[128];
  snprintf(t, sizeof t, "%s-%s", ktag, tag);
  it_root(buf, len, t);
}

static void kazoo(it_peer_t *p) { it_peer_kazoo(p, "sem_peer.py"); }

/* A semaphore object in kazoo's layout whose nodes carry `who`. */
static zkl_sem_t *ksem(zkl_session_t *s, const char *path, int max,
                       const char *who) {
  zkl_sem_opts_t o;
  zkl_sem_opts_init(&o);
  o.max = max;
  o.data = who;
  o.data_len = strlen(who);
  o.format = ZKL_SEM_KAZOO;
  zkl_sem_t *m = NULL;
  int rc = zkl_sem_create(&m, s, path, &o);
  ck_assert_msg(rc == 0, "sem_create %s (kazoo): %s", path, it_code(rc));
  return m;
}

/* A kazoo client's "open" answer, "ok 0x...": its session. */
static int64_t ksid(const char *line) {
  ck_assert_msg(strncmp(line, "ok 0x", 5) == 0, "open: %s", line);
  return (int64_t)strtoull(line + 3, NULL, 16);
}

/* A background acquire's "got NAME": NAME into name (a kazoo lease node:
 * 32 hex digits). */
static void kgot(const char *line, char *name, size_t len) {
  ck_assert_msg(strncmp(line, "got ", 4) == 0, "kazoo acquire: %s", line);
  snprintf(name, len, "%s", line + 4);
}

/* zkl's node names: _c_<uuid>-<kind><10 digits> (kind "lease-" or
 * "__lock__"). */
static int is_zkl_node(const char *name, const char *kind) {
  size_t k = strlen(kind);
  return strlen(name) == 3 + 36 + 1 + k + 10 &&
         strncmp(name, "_c_", 3) == 0 && name[39] == '-' &&
         strncmp(name + 40, kind, k) == 0 &&
         strspn(name + 40 + k, "0123456789") == 10;
}

/* kazoo's: a lease is <32 hex> (uuid4().hex), a gate node
 * <32 hex>__lock__<10 digits>. */
static int is_kazoo_lease(const char *name) {
  return strlen(name) == 32 && strspn(name, "0123456789abcdef") == 32;
}

static int is_kazoo_gate(const char *name) {
  return strlen(name) == 32 + 8 + 10 &&
         strspn(name, "0123456789abcdef") == 32 &&
         strncmp(name + 32, "__lock__", 8) == 0 &&
         strspn(name + 40, "0123456789") == 10;
}

/* The n-th (from 0) space-separated word of s into w. */
static void word(const char *s, int n, char *w, size_t len) {
  for (int i = 0; i < n && s != NULL; i++) {
    s = strchr(s, ' ');
    if (s != NULL) s++;
  }
  ck_assert_msg(s != NULL, "no word %d", n);
  snprintf(w, len, "%.*s", (int)strcspn(s, " "), s);
}

/* One child of <path>: a lease, whoever's. */
typedef struct kkid {
  char name[NAME_LEN];
  char data[64];
  int64_t czxid, owner;
} kkid_t;

#define KKIDS 16

static int by_czxid(const void *x, const void *y) {
  const kkid_t *a = x, *b = y;
  if (a->czxid != b->czxid)
    return (a->czxid > b->czxid) - (a->czxid < b->czxid);
  const char *an = a->name, *bn = b->name;
  return by_seq(&an, &bn);
}

/* <path>'s children, the leases, with their data and stat, in the order
 * they were taken (czxid; zkl's leases of one acquisition share it, then by
 * sequence): how many (0 for no <path>).  Listed again if a child goes
 * between the listing and its read. */
static int kleases(zkl_session_t *s, const char *path, kkid_t *v, int cap) {
  zhandle_t *zh = zkl_session_zhandle(s);
  for (int tries = 0;; tries++) {
    ck_assert_int_lt(tries, 100);
    struct String_vector kids = {0, NULL};
    int rc = zoo_get_children(zh, path, 0, &kids);
    if (rc == ZNONODE) return 0;
    ck_assert_msg(rc == ZOK, "get_children %s: %s", path, zerror(rc));
    ck_assert_int_le(kids.count, cap);
    int n = 0, again = 0;
    for (int i = 0; i < kids.count && !again; i++) {
      char p[1024];
      struct Stat st;
      int dl = (int)sizeof v[n].data - 1;
      snprintf(p, sizeof p, "%s/%s", path, kids.data[i]);
      rc = zoo_get(zh, p, 0, v[n].data, &dl, &st);
      if (rc == ZNONODE) {
        again = 1;
        break;
      }
      ck_assert_msg(rc == ZOK, "get %s: %s", p, zerror(rc));
      v[n].data[dl < 0 ? 0 : dl] = '\0';
      snprintf(v[n].name, sizeof v[n].name, "%s", kids.data[i]);
      v[n].czxid = st.czxid;
      v[n].owner = st.ephemeralOwner;
      n++;
    }
    deallocate_String_vector(&kids);
    if (again) continue;
    qsort(v, (size_t)n, sizeof *v, by_czxid);
    return n;
  }
}

/* Appends word w to the space-separated list in buf (len bytes). */
static void add_word(char *buf, size_t len, const char *w) {
  size_t at = strlen(buf);
  if (at + 1 < len) snprintf(buf + at, len - at, "%s%s", at > 0 ? " " : "", w);
}

/* Waits until the leases (kleases()) are `want`, shown by their data
 * (space-separated, "" for none); their names the same way into names if
 * not NULL. */
static void kleases_are(zkl_session_t *s, const char *path, const char *want,
                        char *names, size_t nlen) {
  kkid_t v[KKIDS];
  char who[1024];
  int64_t end = it_now_ms() + 10000 * slow();
  for (;;) {
    int n = kleases(s, path, v, KKIDS);
    who[0] = '\0';
    if (names != NULL) names[0] = '\0';
    for (int i = 0; i < n; i++) {
      add_word(who, sizeof who, v[i].data);
      if (names != NULL) add_word(names, nlen, v[i].name);
    }
    if (strcmp(who, want) == 0) return;
    ck_assert_msg(it_now_ms() < end, "%s's leases are \"%s\", not \"%s\"",
                  path, who, want);
    it_sleep_ms(2);
  }
}

/* Waits until the gate's nodes (<path>-__lock__'s children, by sequence,
 * shown by their data) are `want`; their names into names. */
static void kgate_is(zkl_session_t *s, const char *path, const char *want,
                     char *names, size_t nlen) {
  char dir[512], who[1024] = "";
  snprintf(dir, sizeof dir, "%s-__lock__", path);
  int64_t end = it_now_ms() + 10000 * slow();
  for (;;) {
    owners(s, dir, who, sizeof who, names, nlen);
    if (strcmp(who, want) == 0) return;
    ck_assert_msg(it_now_ms() < end, "%s is \"%s\", not \"%s\"", dir, who,
                  want);
    it_sleep_ms(2);
  }
}

/* No zkl node (_c_...) under either root of the semaphore. */
static void no_zkl_nodes(zkl_session_t *s, const char *path) {
  char dirs[2][512];
  snprintf(dirs[0], sizeof dirs[0], "%s", path);
  snprintf(dirs[1], sizeof dirs[1], "%s-__lock__", path);
  for (int d = 0; d < 2; d++) {
    struct String_vector v = {0, NULL};
    it_children(s, dirs[d], &v);
    for (int i = 0; i < v.count; i++)
      ck_assert_msg(strncmp(v.data[i], "_c_", 3) != 0, "%s/%s left behind",
                    dirs[d], v.data[i]);
    deallocate_String_vector(&v);
  }
}

/* <path>'s data (NUL-ended) and stat. */
static void kdata(zkl_session_t *s, const char *path, char *buf, int len,
                  struct Stat *st) {
  int dl = len - 1;
  int rc = zoo_get(zkl_session_zhandle(s), path, 0, buf, &dl, st);
  ck_assert_msg(rc == ZOK, "get %s: %s", path, zerror(rc));
  buf[dl < 0 ? 0 : dl] = '\0';
}

/* Deletes both roots of a test's semaphore and checks they are gone. */
static void kdrop(zkl_session_t *s, const char *path) {
  char gate[512];
  snprintf(gate, sizeof gate, "%s-__lock__", path);
  drop_tree(s, path);
  drop_tree(s, gate);
}

/* Stops a sampler of <path> in kazoo's layout: never more than max
 * children - neither side makes a lease node before it fits (kazoo counts
 * first, in the gate, unlike Curator). */
static void ksampler_stop(sampler_t *x) {
  __atomic_store_n(&x->stop, 1, __ATOMIC_SEQ_CST);
  pthread_join(x->th, NULL);
  zookeeper_close(x->zh);
  free(x->edge);
  fprintf(stderr,
          "semaphore-interop: kazoo: %ld samples of %s, peak %d children\n",
          x->samples, x->leases, x->peak);
  ck_assert_int_eq(x->errors, 0);
  ck_assert_int_gt(x->samples, 100);
  ck_assert_msg(x->peak <= x->max, "%d leases seen, max %d", x->peak,
                x->max);
  ck_assert_int_eq(x->n_edge, 0);
  ck_assert_int_eq(x->peak, x->max); /* the sampler saw it full */
}

/* ---- kazoo: mixed holders --------------------------------------------- */

#define KMIX_MAX 3
#define KMIX_ROUNDS 40
#define KMIX_HOLD_MS 20 /* as MIX_HOLD_MS */

/* MAX 3: two zkl objects (own sessions, threads, qty 1 and 2 alternating)
 * and two kazoo Semaphore clients (acquire() and acquire(timeout=10 s)),
 * KMIX_ROUNDS each, holding KMIX_HOLD_MS: never more than MAX held at
 * once, by the holds' intervals (CLOCK_MONOTONIC on both sides), by each
 * side's in-use counter and by the server's children of <path>, sampled all
 * along (never over MAX: neither side makes a lease before it fits); the
 * semaphore was full, the sides held together, and every acquire of both
 * succeeded. */
START_TEST(kazoo_mixed_holders_never_exceed_max) {
  int64_t t_start = it_now_ms();
  char path[256], line[1024];
  knode(path, sizeof path, "mix");
  zkl_session_t *s1 = it_session(), *s2 = it_session();
  zkl_sem_t *a = ksem(s1, path, KMIX_MAX, "zA");
  zkl_sem_t *b = ksem(s2, path, KMIX_MAX, "zB");
  it_peer_t k;
  kazoo(&k);
  it_peer_query(&k, line, sizeof line, "open K1 %s %d 10000", path, KMIX_MAX);
  it_peer_query(&k, line, sizeof line, "open K2 %s %d 10000", path, KMIX_MAX);
  static sampler_t smp;
  static holder_t ha, hb;
  static span_t spans[4 * MAX_ROUNDS];
  sampler_start_at(&smp, path, KMIX_MAX);
  __atomic_store_n(&zkl_in_use, 0, __ATOMIC_SEQ_CST);
  int64_t t0 = it_now_ms();
  it_peer_ask(&k, "ok", "loop K1 %d %d -1", KMIX_ROUNDS, KMIX_HOLD_MS);
  it_peer_ask(&k, "ok", "loop K2 %d %d %d", KMIX_ROUNDS, KMIX_HOLD_MS,
              10000 * slow());
  holder_start(&ha, a, KMIX_MAX, KMIX_ROUNDS, KMIX_HOLD_MS, 1, 2);
  holder_start(&hb, b, KMIX_MAX, KMIX_ROUNDS, KMIX_HOLD_MS, 2, 1);
  holder_join(&ha);
  holder_join(&hb);
  size_t n = 0;
  int kpeak1, kpeak2;
  peer_loop(&k, "K1", KMIX_ROUNDS, spans, &n, &kpeak1);
  peer_loop(&k, "K2", KMIX_ROUNDS, spans, &n, &kpeak2);
  int64_t t1 = it_now_ms();
  ksampler_stop(&smp);
  for (int i = 0; i < ha.n_spans; i++) spans[n++] = ha.spans[i];
  for (int i = 0; i < hb.n_spans; i++) spans[n++] = hb.spans[i];
  int mixed = 0;
  int peak = spans_peak(spans, n, KMIX_MAX, &mixed);
  fprintf(stderr,
          "semaphore-interop: kazoo mixed, %zu holds in %lld ms: peak %d "
          "held at once, %d acquires while the other side held\n",
          n, (long long)(t1 - t0), peak, mixed);
  ck_assert_int_le(kpeak1 > kpeak2 ? kpeak1 : kpeak2, 2);
  ck_assert_int_eq(peak, KMIX_MAX); /* contended: the semaphore was full */
  ck_assert_int_gt(mixed, 0);       /* and shared by both sides */
  kleases_are(s1, path, "", NULL, 0);
  kgate_is(s1, path, "", NULL, 0);
  it_peer_quit(&k);
  zkl_sem_destroy(a);
  zkl_sem_destroy(b);
  kdrop(s1, path);
  zkl_session_close(s1);
  zkl_session_close(s2);
  fprintf(stderr, "semaphore-interop: kazoo mixed_holders %lld ms\n",
          (long long)(it_now_ms() - t_start));
}
END_TEST

/* ---- kazoo: one FIFO through the gate --------------------------------- */

/* MAX 3, held by kazoo H1, zkl Z and kazoo H2.  zkl A, kazoo B and zkl C
 * line up in the gate <path>-__lock__ in that order (each seen queued, by
 * its node's data, before the next starts; zkl's gate nodes named
 * _c_<uuid>-__lock__<seq>, kazoo's <hex>__lock__<seq>), and kazoo's
 * Lock(<path>-__lock__).contenders() lists them all, zkl's by their data,
 * in that order.  On the way a zkl D (400 ms) queued between B and C times
 * out and leaves (C then waits on kazoo's B), and a zkl try finds the gate
 * busy (ZKL_EBUSY) and leaves no node.  The holders give their leases back
 * one at a time, H1, Z, H2: A gets in, then B, then C - each only when its
 * turn comes.
 * kazoo 2.8's Semaphore hands its identifier to its gate Lock already
 * encoded, and Lock str()s it: a kazoo gate node's data is "b'B'" for
 * identifier "B" (its lease's is "B"). */
START_TEST(kazoo_fifo_through_the_gate) {
  int64_t t_start = it_now_ms();
  char path[256], names[1024], line[1024], w[NAME_LEN];
  knode(path, sizeof path, "fifo");
  zkl_session_t *sa = it_session(), *sc = it_session();
  zkl_sem_t *z = ksem(sa, path, 3, "zZ"), *a = ksem(sa, path, 3, "zA");
  zkl_sem_t *c = ksem(sc, path, 3, "zC"), *d = ksem(sa, path, 3, "zD");
  it_peer_t k;
  kazoo(&k);
  it_peer_query(&k, line, sizeof line, "open H1 %s 3 10000", path);
  it_peer_query(&k, line, sizeof line, "open H2 %s 3 10000", path);
  it_peer_query(&k, line, sizeof line, "open B %s 3 10000", path);
  /* full: H1, Z, H2 */
  it_peer_ask(&k, "ok", "acquire H1 -1");
  it_peer_query(&k, line, sizeof line, "await H1 10000");
  kgot(line, w, sizeof w);
  zkl_lease_t lz[1], ld[1];
  ck_assert_int_eq(zkl_sem_acquire(z, 1, 10000, lz), 0);
  ck_assert(is_zkl_node(lz[0].name, "lease-"));
  it_peer_ask(&k, "ok", "acquire H2 -1");
  it_peer_query(&k, line, sizeof line, "await H2 10000");
  kleases_are(sa, path, "H1 zZ H2", names, sizeof names);
  word(names, 0, w, sizeof w);
  ck_assert_msg(is_kazoo_lease(w), "kazoo's lease %s", w);
  word(names, 1, w, sizeof w);
  ck_assert_str_eq(w, lz[0].name);
  kgate_is(sa, path, "", NULL, 0);
  /* A, B, C line up */
  zacq_t qa, qc, qd;
  zacq_start(&qa, a, 1, 20000 * slow());
  kgate_is(sa, path, "zA", NULL, 0);
  it_peer_ask(&k, "ok", "acquire B -1");
  kgate_is(sa, path, "zA b'B'", names, sizeof names);
  word(names, 0, w, sizeof w);
  ck_assert_msg(is_zkl_node(w, "__lock__"), "zkl's gate node %s", w);
  word(names, 1, w, sizeof w);
  ck_assert_msg(is_kazoo_gate(w), "kazoo's gate node %s", w);
  zacq_start(&qd, d, 1, 400 * slow());
  kgate_is(sa, path, "zA b'B' zD", NULL, 0);
  zacq_start(&qc, c, 1, 20000 * slow());
  kgate_is(sa, path, "zA b'B' zD zC", NULL, 0);
  zacq_ends(&qd, ZKL_ETIMEDOUT, 5000 * slow());
  kgate_is(sa, path, "zA b'B' zC", NULL, 0);
  /* a try while the gate is busy: ZKL_EBUSY, the queue as it was */
  ck_assert_int_eq(zkl_sem_acquire(d, 1, 0, ld), ZKL_EBUSY);
  kgate_is(sa, path, "zA b'B' zC", NULL, 0);
  it_peer_ask(&k, "ok zA b'B' zC", "contenders H1"); /* kazoo sees zkl's */
  kleases_are(sa, path, "H1 zZ H2", NULL, 0);
  ck_assert_int_eq(zacq_rc(&qa), 99);
  ck_assert_int_eq(zacq_rc(&qc), 99);
  it_peer_ask(&k, "waiting", "await B 0");
  /* H1 gives its lease back: A */
  it_peer_ask(&k, "ok", "release H1");
  zacq_ends(&qa, 0, 10000 * slow());
  kgate_is(sa, path, "b'B' zC", NULL, 0);
  kleases_are(sa, path, "zZ H2 zA", NULL, 0);
  it_sleep_ms(100);
  it_peer_ask(&k, "waiting", "await B 0");
  ck_assert_int_eq(zacq_rc(&qc), 99);
  kleases_are(sa, path, "zZ H2 zA", NULL, 0); /* B made none: it counts */
  /* Z: B */
  ck_assert_int_eq(zkl_sem_release(z, lz, 1), 0);
  it_peer_query(&k, line, sizeof line, "await B %d", 10000 * slow());
  kgot(line, w, sizeof w);
  ck_assert_msg(is_kazoo_lease(w), "kazoo's lease %s", w);
  kgate_is(sa, path, "zC", NULL, 0);
  kleases_are(sa, path, "H2 zA B", names, sizeof names);
  ck_assert_ptr_nonnull(strstr(names, w));
  it_sleep_ms(100);
  ck_assert_int_eq(zacq_rc(&qc), 99);
  /* H2: C */
  it_peer_ask(&k, "ok", "release H2");
  zacq_ends(&qc, 0, 10000 * slow());
  kleases_are(sa, path, "zA B zC", NULL, 0);
  kgate_is(sa, path, "", NULL, 0);
  ck_assert_uint_gt(qc.l[0].token, qa.l[0].token);
  ck_assert_int_eq(zkl_sem_release(a, qa.l, 1), 0);
  ck_assert_int_eq(zkl_sem_release(c, qc.l, 1), 0);
  it_peer_ask(&k, "ok", "release B");
  kleases_are(sa, path, "", NULL, 0);
  it_peer_quit(&k);
  zkl_sem_destroy(z);
  zkl_sem_destroy(a);
  zkl_sem_destroy(c);
  zkl_sem_destroy(d);
  kdrop(sa, path);
  zkl_session_close(sa);
  zkl_session_close(sc);
  fprintf(stderr, "semaphore-interop: kazoo fifo %lld ms\n",
          (long long)(it_now_ms() - t_start));
}
END_TEST

/* ---- kazoo: the maximum in <path>'s data ------------------------------ */

/* zkl makes <path> with its max in ASCII, "3", PERSISTENT (still there
 * once the server's reaper has taken a container emptied after it); a
 * kazoo Semaphore with max_leases 2 raises ValueError (and leaves nothing),
 * one with 3 takes a lease.  kazoo makes <path> with "2": a zkl local max
 * of 3 is ZKL_EINVAL ("disagrees"), for an acquire and for
 * zkl_sem_count(), leaving nothing; max 0 takes kazoo's 2 (count, qty 3
 * over it ZKL_EINVAL, a second lease ZKL_EBUSY, and kazoo finds it full
 * too); a local 2 agrees.  Data that is no number ("hello") is ignored by
 * both: kazoo's 2 and zkl's 2 are each side's maximum, it stays as it was,
 * and zkl with no local max is ZKL_EINVAL ("no maximum"). */
START_TEST(kazoo_max_agreement) {
  int64_t t_start = it_now_ms();
  char p1[256], p2[256], p3[256], line[1024], data[64];
  knode(p1, sizeof p1, "max-zkl");
  knode(p2, sizeof p2, "max-kazoo");
  knode(p3, sizeof p3, "max-text");
  zkl_session_t *s = it_session();
  it_peer_t k;
  kazoo(&k);
  struct Stat st;
  zkl_lease_t l[3];
  size_t leased = 99;
  int max = -1;

  /* zkl makes <path> */
  zkl_sem_t *z = ksem(s, p1, 3, "zZ");
  ck_assert_int_eq(zkl_sem_acquire(z, 1, 10000, l), 0);
  kdata(s, p1, data, sizeof data, &st);
  ck_assert_str_eq(data, "3");
  ck_assert_int_eq(st.ephemeralOwner, 0); /* (a container's is 0 too) */
  it_peer_query(&k, line, sizeof line, "open X %s 2 10000", p1);
  it_peer_ask(&k, "ok", "acquire X -1");
  it_peer_query(&k, line, sizeof line, "await X 10000");
  ck_assert_msg(strncmp(line, "raised ValueError", 17) == 0 &&
                    strstr(line, "Inconsistent max leases: 3, expected: 2"),
                "kazoo max 2 on zkl's 3: %s", line);
  kleases_are(s, p1, "zZ", NULL, 0);
  kgate_is(s, p1, "", NULL, 0);
  it_peer_query(&k, line, sizeof line, "open Y %s 3 10000", p1);
  it_peer_ask(&k, "ok", "acquire Y -1");
  it_peer_query(&k, line, sizeof line, "await Y 10000");
  ck_assert_msg(strncmp(line, "got ", 4) == 0, "kazoo max 3: %s", line);
  kleases_are(s, p1, "zZ Y", NULL, 0);
  it_peer_ask(&k, "ok", "release Y");
  ck_assert_int_eq(zkl_sem_release(z, l, 1), 0);
  kleases_are(s, p1, "", NULL, 0);
  kdata(s, p1, data, sizeof data, &st);
  ck_assert_str_eq(data, "3");
  /* <path> is empty now: were it a container, the server's reaper would
   * take it as it takes ctl, a container emptied just after it (checked
   * at the end of the test) */
  char ctl[512];
  snprintf(ctl, sizeof ctl, "%s-ctl", p1);
  zhandle_t *zh = zkl_session_zhandle(s);
  ck_assert_int_eq(zoo_create(zh, ctl, "", 0, &ZOO_OPEN_ACL_UNSAFE,
                              ZOO_CONTAINER, NULL, 0),
                   ZOK);
  snprintf(line, sizeof line, "%s/x", ctl);
  ck_assert_int_eq(zoo_create(zh, line, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL,
                              0),
                   ZOK);
  ck_assert_int_eq(zoo_delete(zh, line, -1), ZOK);

  /* kazoo makes <path> */
  it_peer_query(&k, line, sizeof line, "open K %s 2 10000", p2);
  it_peer_ask(&k, "ok", "acquire K -1");
  it_peer_query(&k, line, sizeof line, "await K 10000");
  ck_assert_msg(strncmp(line, "got ", 4) == 0, "kazoo max 2: %s", line);
  kdata(s, p2, data, sizeof data, &st);
  ck_assert_str_eq(data, "2");
  zkl_sem_t *d = ksem(s, p2, 3, "zD");
  ck_assert_int_eq(zkl_sem_acquire(d, 1, 1000 * slow(), l), ZKL_EINVAL);
  ck_assert_msg(strstr(zkl_last_error(), "disagrees") != NULL,
                "zkl_last_error: %s", zkl_last_error());
  ck_assert_int_eq(zkl_sem_acquire(d, 1, 0, l), ZKL_EINVAL);
  ck_assert_int_eq(zkl_sem_count(d, &leased, &max), ZKL_EINVAL);
  ck_assert_uint_eq(zkl_sem_held(d), 0);
  no_zkl_nodes(s, p2);
  kleases_are(s, p2, "K", NULL, 0);
  zkl_sem_t *e = ksem(s, p2, 0, "zE");
  ck_assert_int_eq(zkl_sem_count(e, &leased, &max), 0);
  ck_assert_uint_eq(leased, 1);
  ck_assert_int_eq(max, 2);
  ck_assert_int_eq(zkl_sem_acquire(e, 3, 1000 * slow(), l), ZKL_EINVAL);
  no_zkl_nodes(s, p2);
  ck_assert_int_eq(zkl_sem_acquire(e, 1, 10000, l), 0);
  ck_assert_int_eq(zkl_sem_acquire(e, 1, 0, l + 1), ZKL_EBUSY);
  kleases_are(s, p2, "K zE", NULL, 0);
  it_peer_query(&k, line, sizeof line, "open K2 %s 2 10000", p2);
  it_peer_ask(&k, "ok", "acquire K2 0");
  it_peer_ask(&k, "none", "await K2 10000"); /* full for kazoo too */
  ck_assert_int_eq(zkl_sem_release(e, l, 1), 0);
  zkl_sem_t *f = ksem(s, p2, 2, "zF");
  ck_assert_int_eq(zkl_sem_acquire(f, 1, 10000, l), 0);
  kleases_are(s, p2, "K zF", NULL, 0);
  ck_assert_int_eq(zkl_sem_release(f, l, 1), 0);
  it_peer_ask(&k, "ok", "release K");
  kleases_are(s, p2, "", NULL, 0);
  kdata(s, p2, data, sizeof data, &st);
  ck_assert_str_eq(data, "2");

  /* no number in <path>'s data */
  ck_assert_int_eq(zoo_create(zkl_session_zhandle(s), p3, "hello", 5,
                              &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0),
                   ZOK);
  it_peer_query(&k, line, sizeof line, "open T %s 2 10000", p3);
  it_peer_ask(&k, "ok", "acquire T -1");
  it_peer_query(&k, line, sizeof line, "await T 10000");
  ck_assert_msg(strncmp(line, "got ", 4) == 0, "kazoo on \"hello\": %s", line);
  zkl_sem_t *g = ksem(s, p3, 2, "zG");
  ck_assert_int_eq(zkl_sem_acquire(g, 1, 10000, l), 0);
  ck_assert_int_eq(zkl_sem_acquire(g, 1, 0, l + 1), ZKL_EBUSY);
  ck_assert_int_eq(zkl_sem_count(g, &leased, &max), 0);
  ck_assert_uint_eq(leased, 2);
  ck_assert_int_eq(max, 2);
  zkl_sem_t *h = ksem(s, p3, 0, "zH");
  ck_assert_int_eq(zkl_sem_acquire(h, 1, 1000 * slow(), l + 1), ZKL_EINVAL);
  ck_assert_msg(strstr(zkl_last_error(), "no maximum") != NULL,
                "zkl_last_error: %s", zkl_last_error());
  it_peer_query(&k, line, sizeof line, "open T2 %s 2 10000", p3);
  it_peer_ask(&k, "ok", "acquire T2 0");
  it_peer_ask(&k, "none", "await T2 10000");
  kleases_are(s, p3, "T zG", NULL, 0);
  kgate_is(s, p3, "", NULL, 0);
  ck_assert_int_eq(zkl_sem_release(g, l, 1), 0);
  it_peer_ask(&k, "ok", "release T");
  kleases_are(s, p3, "", NULL, 0);
  kdata(s, p3, data, sizeof data, &st);
  ck_assert_str_eq(data, "hello");

  /* the reaper took ctl (the harness runs it every second): zkl's <path>
   * stayed, PERSISTENT; a server whose reaper is slower tells nothing */
  int64_t end = it_now_ms() + 5000;
  while (zoo_exists(zh, ctl, 0, NULL) == ZOK && it_now_ms() < end)
    it_sleep_ms(20);
  if (zoo_exists(zh, ctl, 0, NULL) == ZNONODE) {
    kdata(s, p1, data, sizeof data, &st);
    ck_assert_str_eq(data, "3");
  } else {
    fprintf(stderr, "semaphore-interop: kazoo max: the server reaps no "
                    "container within 5 s, <path> not checked\n");
    ck_assert_int_eq(zoo_delete(zh, ctl, -1), ZOK);
  }
  it_peer_quit(&k);
  zkl_sem_destroy(z);
  zkl_sem_destroy(d);
  zkl_sem_destroy(e);
  zkl_sem_destroy(f);
  zkl_sem_destroy(g);
  zkl_sem_destroy(h);
  kdrop(s, p1);
  kdrop(s, p2);
  kdrop(s, p3);
  zkl_session_close(s);
  fprintf(stderr, "semaphore-interop: kazoo max %lld ms\n",
          (long long)(it_now_ms() - t_start));
}
END_TEST

/* ---- kazoo: who holds, seen from both sides --------------------------- */

/* MAX 4: kazoo K1, zkl A (qty 2), kazoo K2 take leases in that order.
 * kazoo's lease_holders() lists zkl's by their data; zkl_sem_holders() lists
 * kazoo's and zkl's in the order they were taken, each with its data, name
 * (kazoo's as its acquire named it, zkl's as zkl_sem_acquire() did), token
 * (its node's czxid; A's two share one) and session (its ephemeral owner:
 * the kazoo client's, A's). */
START_TEST(kazoo_holders_both_ways) {
  int64_t t_start = it_now_ms();
  char path[256], line[1024], n1[NAME_LEN], n2[NAME_LEN];
  knode(path, sizeof path, "who");
  zkl_session_t *sa = it_session();
  zkl_sem_t *a = ksem(sa, path, 4, "zA");
  it_peer_t k;
  kazoo(&k);
  it_peer_query(&k, line, sizeof line, "open K1 %s 4 10000", path);
  int64_t sid1 = ksid(line);
  it_peer_query(&k, line, sizeof line, "open K2 %s 4 10000", path);
  int64_t sid2 = ksid(line);
  it_peer_ask(&k, "ok", "acquire K1 -1");
  it_peer_query(&k, line, sizeof line, "await K1 10000");
  kgot(line, n1, sizeof n1);
  zkl_lease_t la[2];
  ck_assert_int_eq(zkl_sem_acquire(a, 2, 10000, la), 0);
  ck_assert_uint_eq(la[0].token, la[1].token);
  it_peer_ask(&k, "ok", "acquire K2 -1");
  it_peer_query(&k, line, sizeof line, "await K2 10000");
  kgot(line, n2, sizeof n2);
  kleases_are(sa, path, "K1 zA zA K2", NULL, 0);
  it_peer_ask(&k, "ok K1 K2 zA zA", "holders K1"); /* kazoo sees zkl's */
  zkl_sem_holder_t *hv = NULL;
  size_t hn = 0;
  ck_assert_int_eq(zkl_sem_holders(a, &hv, &hn), 0);
  ck_assert_uint_eq(hn, 4);
  static const char *const whos[4] = {"K1", "zA", "zA", "K2"};
  const char *const nm[4] = {n1, la[0].name, la[1].name, n2};
  const int64_t sids[4] = {sid1, zkl_session_id(sa), zkl_session_id(sa),
                           sid2};
  for (size_t i = 0; i < 4; i++) {
    ck_assert_str_eq(hv[i].data, whos[i]);
    ck_assert_uint_eq(hv[i].len, strlen(whos[i]));
    ck_assert_str_eq(hv[i].name, nm[i]);
    char p[1024];
    struct Stat st;
    snprintf(p, sizeof p, "%s/%s", path, hv[i].name);
    ck_assert_int_eq(zoo_exists(zkl_session_zhandle(sa), p, 0, &st), ZOK);
    ck_assert_uint_eq(hv[i].token, (uint64_t)st.czxid);
    ck_assert_int_eq(hv[i].session, st.ephemeralOwner);
    ck_assert_int_eq(hv[i].session, sids[i]);
  }
  ck_assert_uint_eq(hv[1].token, la[0].token);
  ck_assert_uint_eq(hv[2].token, la[0].token);
  ck_assert_uint_lt(hv[0].token, hv[1].token);
  ck_assert_uint_lt(hv[2].token, hv[3].token);
  ck_assert(is_kazoo_lease(hv[0].name) && is_kazoo_lease(hv[3].name));
  ck_assert(is_zkl_node(hv[1].name, "lease-"));
  zkl_sem_holders_free(hv, hn);
  size_t leased = 0;
  int max = 0;
  ck_assert_int_eq(zkl_sem_count(a, &leased, &max), 0);
  ck_assert_uint_eq(leased, 4);
  ck_assert_int_eq(max, 4);
  ck_assert_int_eq(zkl_sem_release(a, la, 2), 0);
  it_peer_ask(&k, "ok K1 K2", "holders K2");
  it_peer_ask(&k, "ok", "release K1");
  it_peer_ask(&k, "ok", "release K2");
  it_peer_ask(&k, "ok", "holders K1");
  hv = (zkl_sem_holder_t *)1;
  hn = 9;
  ck_assert_int_eq(zkl_sem_holders(a, &hv, &hn), 0);
  ck_assert_ptr_null(hv);
  ck_assert_uint_eq(hn, 0);
  it_peer_quit(&k);
  zkl_sem_destroy(a);
  kdrop(sa, path);
  zkl_session_close(sa);
  fprintf(stderr, "semaphore-interop: kazoo holders %lld ms\n",
          (long long)(it_now_ms() - t_start));
}
END_TEST

/* ---- kazoo: a dead client's leases ------------------------------------ */

/* MAX 2, both held by kazoo clients K1 and K2 (one process, 1.5 s
 * sessions); zkl waits in the gate.  The process is killed (SIGKILL): once
 * their sessions end their lease nodes go and zkl gets in - not before. */
START_TEST(kazoo_dead_client_leases_stop_counting) {
  int64_t t_start = it_now_ms();
  char path[256], line[1024], n1[NAME_LEN], p[512];
  knode(path, sizeof path, "dead");
  zkl_session_t *s = it_session();
  zkl_sem_t *w = ksem(s, path, 2, "zW");
  it_peer_t k;
  kazoo(&k);
  it_peer_query(&k, line, sizeof line, "open K1 %s 2 1500", path);
  int64_t sid1 = ksid(line);
  it_peer_query(&k, line, sizeof line, "open K2 %s 2 1500", path);
  it_peer_ask(&k, "ok", "acquire K1 -1");
  it_peer_query(&k, line, sizeof line, "await K1 10000");
  kgot(line, n1, sizeof n1);
  it_peer_ask(&k, "ok", "acquire K2 -1");
  it_peer_query(&k, line, sizeof line, "await K2 10000");
  kleases_are(s, path, "K1 K2", NULL, 0);
  snprintf(p, sizeof p, "%s/%s", path, n1);
  ck_assert_int_eq(it_owner_of(s, p), sid1);
  zkl_lease_t l[1];
  ck_assert_int_eq(zkl_sem_acquire(w, 1, 0, l), ZKL_EBUSY);
  zacq_t q;
  zacq_start(&q, w, 1, 20000 * slow());
  kgate_is(s, path, "zW", NULL, 0);
  int64_t t_kill = it_now_ms();
  it_peer_kill(&k);
  ck_assert_int_eq(zacq_rc(&q), 99); /* they count until the sessions end */
  zacq_ends(&q, 0, 15000 * slow());
  int64_t took = it_now_ms() - t_kill;
  fprintf(stderr,
          "semaphore-interop: zkl in %lld ms after the kazoo process was "
          "killed (sessions 1.5 s)\n",
          (long long)took);
  ck_assert_int_ge(took, 500);
  ck_assert_int_eq(it_owner_of(s, p), 0);
  kleases_are(s, path, "zW", NULL, 0);
  kgate_is(s, path, "", NULL, 0);
  ck_assert_int_eq(zkl_sem_release(w, q.l, 1), 0);
  zkl_sem_destroy(w);
  kdrop(s, path);
  zkl_session_close(s);
  fprintf(stderr, "semaphore-interop: kazoo dead client %lld ms\n",
          (long long)(it_now_ms() - t_start));
}
END_TEST

/* ---- kazoo: zkl's try on a semaphore kazoo fills ---------------------- */

/* MAX 2, both held by kazoo K1 and K2: a zkl try (timeout 0, qty 1 or 2)
 * is ZKL_EBUSY and leaves no node in either root; so is it with kazoo K3
 * waiting in the gate (the gate busy), and a timed zkl acquire behind K3
 * times out leaving nothing, K3 still first.  K1 gives back: K3 gets in;
 * a try is still ZKL_EBUSY (full); K2 gives back: a try gets in. */
START_TEST(kazoo_zkl_try_on_full) {
  int64_t t_start = it_now_ms();
  char path[256], line[1024];
  knode(path, sizeof path, "try");
  zkl_session_t *s = it_session();
  zkl_sem_t *t = ksem(s, path, 2, "zT");
  it_peer_t k;
  kazoo(&k);
  it_peer_query(&k, line, sizeof line, "open K1 %s 2 10000", path);
  it_peer_query(&k, line, sizeof line, "open K2 %s 2 10000", path);
  it_peer_query(&k, line, sizeof line, "open K3 %s 2 10000", path);
  it_peer_ask(&k, "ok", "acquire K1 -1");
  it_peer_query(&k, line, sizeof line, "await K1 10000");
  it_peer_ask(&k, "ok", "acquire K2 -1");
  it_peer_query(&k, line, sizeof line, "await K2 10000");
  kleases_are(s, path, "K1 K2", NULL, 0);
  zkl_lease_t l[2];
  ck_assert_int_eq(zkl_sem_acquire(t, 1, 0, l), ZKL_EBUSY);
  ck_assert_int_eq(zkl_sem_acquire(t, 2, 0, l), ZKL_EBUSY);
  ck_assert_uint_eq(zkl_sem_held(t), 0);
  no_zkl_nodes(s, path);
  kleases_are(s, path, "K1 K2", NULL, 0);
  kgate_is(s, path, "", NULL, 0);
  size_t leased = 0;
  int max = 0;
  ck_assert_int_eq(zkl_sem_count(t, &leased, &max), 0);
  ck_assert_uint_eq(leased, 2);
  ck_assert_int_eq(max, 2);
  /* K3 waits in the gate */
  it_peer_ask(&k, "ok", "acquire K3 -1");
  kgate_is(s, path, "b'K3'", NULL, 0);
  ck_assert_int_eq(zkl_sem_acquire(t, 1, 0, l), ZKL_EBUSY);
  no_zkl_nodes(s, path);
  ck_assert_int_eq(zkl_sem_acquire(t, 1, 300 * slow(), l), ZKL_ETIMEDOUT);
  no_zkl_nodes(s, path);
  kgate_is(s, path, "b'K3'", NULL, 0);
  it_peer_ask(&k, "waiting", "await K3 0");
  /* K1 gives back: K3 */
  it_peer_ask(&k, "ok", "release K1");
  it_peer_query(&k, line, sizeof line, "await K3 %d", 10000 * slow());
  ck_assert_msg(strncmp(line, "got ", 4) == 0, "K3: %s", line);
  kleases_are(s, path, "K2 K3", NULL, 0);
  kgate_is(s, path, "", NULL, 0);
  ck_assert_int_eq(zkl_sem_acquire(t, 1, 0, l), ZKL_EBUSY);
  no_zkl_nodes(s, path);
  /* K2 gives back: a try gets in */
  it_peer_ask(&k, "ok", "release K2");
  kleases_are(s, path, "K3", NULL, 0);
  ck_assert_int_eq(zkl_sem_acquire(t, 1, 0, l), 0);
  kleases_are(s, path, "K3 zT", NULL, 0);
  ck_assert_int_eq(zkl_sem_release(t, l, 1), 0);
  it_peer_ask(&k, "ok", "release K3");
  kleases_are(s, path, "", NULL, 0);
  no_zkl_nodes(s, path);
  it_peer_quit(&k);
  zkl_sem_destroy(t);
  kdrop(s, path);
  zkl_session_close(s);
  fprintf(stderr, "semaphore-interop: kazoo try %lld ms\n",
          (long long)(it_now_ms() - t_start));
}
END_TEST

Suite *semaphore_interop_suite(void) {
  Suite *su = suite_create("semaphore-interop");
  TCase *tc = it_tcase("semaphore-interop");
  tcase_add_unchecked_fixture(tc, suite_setup, it_peer_teardown);
  tcase_add_test(tc, mixed_holders_never_exceed_max);
  tcase_add_test(tc, fifo_through_the_gate);
  tcase_add_test(tc, shared_count_is_the_max);
  tcase_add_test(tc, qty_deadlock_curator_not_zkl);
  tcase_add_test(tc, dead_curator_leases_stop_counting);
  suite_add_tcase(su, tc);
  /* kazoo's Semaphore: no Java, a fixture of its own */
  tc = it_tcase("kazoo");
  tcase_add_unchecked_fixture(tc, kazoo_setup, kazoo_teardown);
  tcase_add_test(tc, kazoo_mixed_holders_never_exceed_max);
  tcase_add_test(tc, kazoo_fifo_through_the_gate);
  tcase_add_test(tc, kazoo_max_agreement);
  tcase_add_test(tc, kazoo_holders_both_ways);
  tcase_add_test(tc, kazoo_dead_client_leases_stop_counting);
  tcase_add_test(tc, kazoo_zkl_try_on_full);
  suite_add_tcase(su, tc);
  return su;
}
