/* bench/sc-handoff.c - scenarios 3 and 5: contenders looping lock/unlock
 * on one path for a fixed time, each on a session of its own: a thread
 * each (floor, zkl), or, for S3, all driven by ONE event-loop thread with
 * the async calls (zkl-loop).
 *
 * An exclusive run (mutex, writers) counts handoffs per second, the
 * handoff latency (from the holder's unlock call to the next holder's
 * lock returning), fairness (fewest / most acquisitions of a contender)
 * and checks that no two ever hold at once.  A shared run (readers) counts
 * cycles per second and the cycle latency. */
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define LOCK_TIMEOUT_MS 60000 /* a contender never waits longer */

typedef enum { IMPL_FLOOR, IMPL_ZKL, IMPL_LOOP } impl_t;
static const char *const impl_names[] = {"floor", "zkl", "zkl-loop"};
typedef enum { LOCK_MUTEX, LOCK_READ, LOCK_WRITE } lock_kind_t;

typedef struct runner runner_t;

typedef struct contender {
  runner_t *r;
  pthread_t th;
  zhandle_t *zh;          /* floor */
  floor_lock_t fl;
  zkl_session_t *s;       /* zkl   */
  zkl_mutex_t *m;
  zkl_rwlock_t *rw;
  long counted, total;
  int idle;               /* zkl-loop: stopped, nothing pending         */
  int64_t t_req;          /* zkl-loop: when the lock was asked for      */
} contender_t;

struct runner {
  impl_t impl;
  lock_kind_t kind;
  int n;
  contender_t *c;
  pthread_barrier_t start;
  atomic_int stop;
  atomic_int holders;
  atomic_int violations;
  atomic_llong last_release;
  samples_mt_t lat;
};

static int is_exclusive(const runner_t *r) { return r->kind != LOCK_READ; }

static int do_lock(contender_t *c) {
  runner_t *r = c->r;
  if (r->impl == IMPL_FLOOR) return floor_lock_acquire(&c->fl, LOCK_TIMEOUT_MS);
  switch (r->kind) {
  case LOCK_MUTEX: return zkl_mutex_timedlock(c->m, LOCK_TIMEOUT_MS);
  case LOCK_READ: return zkl_rwlock_timedrdlock(c->rw, LOCK_TIMEOUT_MS);
  default: return zkl_rwlock_timedwrlock(c->rw, LOCK_TIMEOUT_MS);
  }
}

static int do_unlock(contender_t *c) {
  runner_t *r = c->r;
  if (r->impl == IMPL_FLOOR) return floor_lock_release(&c->fl);
  return r->kind == LOCK_MUTEX ? zkl_mutex_unlock(c->m)
                               : zkl_rwlock_unlock(c->rw);
}

/* A grant just came (now): checks that nobody else holds, records the
 * handoff latency and counts it.  Whether the run was stopping. */
static int count_grant(contender_t *c) {
  runner_t *r = c->r;
  int64_t t_acq = bench_now_ns();
  int stopped = atomic_load(&r->stop);
  if (is_exclusive(r)) {
    if (atomic_fetch_add(&r->holders, 1) != 0)
      atomic_fetch_add(&r->violations, 1);
    int64_t prev = atomic_load(&r->last_release);
    if (!stopped && prev != 0)
      samples_mt_add(&r->lat, (double)(t_acq - prev) / 1e3);
    atomic_fetch_sub(&r->holders, 1);
    atomic_store(&r->last_release, bench_now_ns());
  }
  if (!stopped) c->counted++;
  c->total++;
  return stopped;
}

static void *contender_main(void *arg) {
  contender_t *c = arg;
  runner_t *r = c->r;
  pthread_barrier_wait(&r->start);
  while (!atomic_load(&r->stop)) {
    int64_t t_req = bench_now_ns();
    int rc = do_lock(c);
    if (rc != 0) {
      bench_fail("contender: lock: %d %s", rc,
                 r->impl != IMPL_FLOOR ? zkl_last_error() : zerror(rc));
      break;
    }
    int stopped = count_grant(c);
    rc = do_unlock(c);
    if (rc != 0)
      bench_fail("contender: unlock: %d %s", rc,
                 r->impl != IMPL_FLOOR ? zkl_last_error() : zerror(rc));
    if (!is_exclusive(r) && !stopped)
      samples_mt_add(&r->lat, (double)(bench_now_ns() - t_req) / 1e3);
  }
  return NULL;
}

/* ---- zkl-loop: the same cycle, as completions on one thread ------------------ */

static void loop_locked(void *obj, int rc, uint64_t token, void *arg);

static void loop_unlocked(void *obj, int rc, uint64_t token, void *arg) {
  (void)obj, (void)token;
  contender_t *c = arg;
  if (rc != 0) bench_fail("contender: unlock_async: %d %s", rc,
                          zkl_last_error());
  if (atomic_load(&c->r->stop) || rc != 0) {
    c->idle = 1;
    return;
  }
  c->t_req = bench_now_ns();
  if (zkl_mutex_lock_async(c->m, LOCK_TIMEOUT_MS, loop_locked, c) != 0) {
    bench_fail("contender: lock_async: %s", zkl_last_error());
    c->idle = 1;
  }
}

static void loop_locked(void *obj, int rc, uint64_t token, void *arg) {
  (void)token;
  contender_t *c = arg;
  if (rc != 0) {
    bench_fail("contender: lock_async: %d %s", rc, zkl_last_error());
    c->idle = 1;
    return;
  }
  count_grant(c);
  if (zkl_mutex_unlock_async(obj, loop_unlocked, c) != 0) {
    bench_fail("contender: unlock_async: %s", zkl_last_error());
    c->idle = 1;
  }
}

/* One thread, the caller's: polls every contender's session and
 * dispatches, until the stop and every contender idle. */
static void loop_run(runner_t *r, double duration_s) {
  struct pollfd *p = calloc((size_t)r->n, sizeof *p);
  if (p == NULL) {
    bench_fail("zkl-loop: no memory");
    return;
  }
  for (int i = 0; i < r->n; i++) {
    p[i].fd = zkl_session_fd(r->c[i].s);
    p[i].events = POLLIN;
    r->c[i].t_req = bench_now_ns();
    if (zkl_mutex_lock_async(r->c[i].m, LOCK_TIMEOUT_MS, loop_locked,
                             &r->c[i]) != 0) {
      bench_fail("zkl-loop: lock_async: %s", zkl_last_error());
      r->c[i].idle = 1;
    }
  }
  int64_t end = bench_now_ns() + (int64_t)(duration_s * 1e9);
  int64_t limit = end + (int64_t)LOCK_TIMEOUT_MS * 1000000;
  for (;;) {
    int64_t now = bench_now_ns();
    if (now >= end) atomic_store(&r->stop, 1);
    int idle = 0;
    for (int i = 0; i < r->n; i++) idle += r->c[i].idle;
    if (idle == r->n || now > limit) break;
    if (poll(p, (nfds_t)r->n, 5) > 0)
      for (int i = 0; i < r->n; i++)
        if (p[i].revents & POLLIN) zkl_session_dispatch(r->c[i].s);
  }
  free(p);
}

static int contender_setup(contender_t *c, const char *hosts,
                           const char *path) {
  runner_t *r = c->r;
  if (r->impl == IMPL_FLOOR) {
    c->zh = floor_open(hosts, 10000);
    floor_kind_t k = r->kind == LOCK_MUTEX  ? FLOOR_MUTEX
                     : r->kind == LOCK_READ ? FLOOR_READER
                                            : FLOOR_WRITER;
    return c->zh != NULL && floor_lock_init(&c->fl, c->zh, path, k) == 0
               ? 0
               : -1;
  }
  if ((c->s = bench_zkl_open(hosts, 0)) == NULL) return -1;
  return r->kind == LOCK_MUTEX ? zkl_mutex_create(&c->m, c->s, path, NULL)
                               : zkl_rwlock_create(&c->rw, c->s, path, NULL);
}

static void contender_teardown(contender_t *c) {
  if (c->r->impl == IMPL_FLOOR) {
    if (c->zh != NULL) {
      floor_close(c->zh); /* before the lock: its watches point at it */
      floor_lock_fini(&c->fl);
    }
    return;
  }
  zkl_mutex_destroy(c->m);
  zkl_rwlock_destroy(c->rw);
  zkl_session_close(c->s);
}

/* One implementation's runs of a case, summed. */
typedef struct tally {
  samples_t rates;      /* operations per second, one per run            */
  samples_t lat;        /* every handoff (cycle) latency of every run    */
  long *per;            /* acquisitions of contender i, over the runs    */
  long total;           /* acquisitions, the drain after the stop too    */
  srv_counters_t srv;   /* the server's work over the runs               */
  double cpu_us;        /* this process's CPU time over the runs         */
  int srv_ok;
} tally_t;

/* Runs n contenders for duration_s and adds what it saw to *t.  0 or -1. */
static int run_contenders(const bench_opts_t *o, const char *scenario,
                          const char *kase, impl_t impl, lock_kind_t kind,
                          int n, const char *path, tally_t *t) {
  runner_t r;
  memset(&r, 0, sizeof r);
  r.impl = impl;
  r.kind = kind;
  r.n = n;
  r.c = calloc((size_t)n, sizeof *r.c);
  samples_mt_init(&r.lat);
  const char *impl_name = impl_names[impl];
  int ready = 0, started = 0, rc = -1;
  if (r.c == NULL) goto out;
  for (ready = 0; ready < n; ready++) {
    r.c[ready].r = &r;
    if (contender_setup(&r.c[ready], o->hosts, path) != 0) {
      bench_fail("S%s %s %s: contender %d: setup failed", scenario, kase,
                 impl_name, ready);
      ready++;
      goto out;
    }
  }
  srv_counters_t a, b, d;
  int counted;
  double cpu0, elapsed;
  if (impl == IMPL_LOOP) { /* no thread of its own: this one runs the loop */
    counted = srv_sample(o->hosts, &a) == 0;
    cpu0 = bench_cpu_us();
    int64_t t0 = bench_now_ns();
    loop_run(&r, o->duration_s);
    elapsed = (double)(bench_now_ns() - t0) / 1e9;
    if (elapsed > o->duration_s) elapsed = o->duration_s; /* the drain */
  } else {
    pthread_barrier_init(&r.start, NULL, (unsigned)n + 1);
    for (started = 0; started < n; started++)
      if (pthread_create(&r.c[started].th, NULL, contender_main,
                         &r.c[started]) != 0)
        break;
    if (started < n) { /* the rest wait at the barrier forever: give up */
      bench_fail("S%s: cannot start %d threads", scenario, n);
      exit(1);
    }
    counted = srv_sample(o->hosts, &a) == 0;
    cpu0 = bench_cpu_us();
    pthread_barrier_wait(&r.start);
    int64_t t0 = bench_now_ns();
    bench_sleep_ms((int)(o->duration_s * 1000));
    atomic_store(&r.stop, 1);
    elapsed = (double)(bench_now_ns() - t0) / 1e9;
    for (int i = 0; i < n; i++) pthread_join(r.c[i].th, NULL);
    pthread_barrier_destroy(&r.start);
  }
  t->cpu_us += bench_cpu_us() - cpu0;
  if (counted && srv_sample(o->hosts, &b) == 0) {
    srv_delta(&a, &b, &d);
    srv_add(&t->srv, &d);
  } else {
    t->srv_ok = 0;
  }
  long sum = 0;
  for (int i = 0; i < n; i++) {
    sum += r.c[i].counted;
    t->per[i] += r.c[i].counted;
    t->total += r.c[i].total;
  }
  samples_add(&t->rates, (double)sum / elapsed);
  for (size_t i = 0; i < r.lat.s.n; i++) samples_add(&t->lat, r.lat.s.v[i]);
  if (atomic_load(&r.violations) > 0)
    bench_fail("S%s %s %s: %d times two contenders held at once", scenario,
               kase, impl_name, atomic_load(&r.violations));
  rc = 0;
out:
  for (int i = 0; i < ready; i++) contender_teardown(&r.c[i]);
  samples_mt_fini(&r.lat);
  free(r.c);
  return rc;
}

static void tally_report(const char *scenario, const char *kase,
                         const char *impl, int excl, int n, tally_t *t) {
  long sum = 0, lo = -1, hi = 0;
  for (int i = 0; i < n; i++) {
    sum += t->per[i];
    if (lo < 0 || t->per[i] < lo) lo = t->per[i];
    if (t->per[i] > hi) hi = t->per[i];
  }
  /* the rate: the median of the runs (one slow run on a shared machine
   * moves it less than a mean) */
  result_add(scenario, kase, impl, excl ? "handoffs/s" : "cycles/s", "1/s",
             samples_quantile(&t->rates, 0.5), NAN, sum);
  result_add_samples(scenario, kase, impl, excl ? "handoff" : "cycle", "us",
                     &t->lat);
  result_add(scenario, kase, impl, "fairness", "",
             hi > 0 ? (double)lo / (double)hi : NAN, NAN, n);
  if (t->srv_ok)
    srv_report(scenario, kase, impl, excl ? "handoff" : "cycle", &t->srv,
               (double)t->total);
  if (t->total > 0)
    result_add(scenario, kase, impl, excl ? "cpu/handoff" : "cpu/cycle", "us",
               t->cpu_us / (double)t->total, NAN, t->total);
}

/* The floor and zkl (and for the mutex zkl-loop), and the peers (S3), in
 * turns, o->reps runs each (the order rotating), so that the disk and load
 * from elsewhere on a shared machine hit them alike.  The peers first set
 * up and warm up for this case, in a turn each. */
static void compare(const bench_opts_t *o, const char *scenario,
                    const char *kase, lock_kind_t kind, int n,
                    const char *leaf, bench_peers_t *peers) {
  int impls = kind == LOCK_MUTEX ? 3 : 2;
  int all = impls + (peers != NULL ? peers->n : 0);
  tally_t t[3];
  char path[3][256];
  memset(t, 0, sizeof t);
  int ok = 1;
  for (int impl = 0; impl < impls; impl++) {
    char name[64];
    snprintf(name, sizeof name, "%s-%s", leaf, impl_names[impl]);
    bench_path(path[impl], sizeof path[impl], o->root, name, NULL);
    bench_mkpath(bench_admin, path[impl]);
    t[impl].per = calloc((size_t)n, sizeof *t[impl].per);
    t[impl].srv_ok = 1;
    ok = ok && t[impl].per != NULL;
  }
  if (ok) bench_peers_turn(peers); /* their setup and warm-up */
  for (int r = 0; r < o->reps && ok; r++)
    for (int k = 0; k < all && ok; k++) {
      int impl = (r + k) % all; /* floor first, then zkl first, ... */
      if (impl >= impls) bench_peer_turn(&peers->p[impl - impls]);
      else
        ok = run_contenders(o, scenario, kase, (impl_t)impl, kind, n,
                            path[impl], &t[impl]) == 0;
    }
  if (!ok) bench_peers_stop(peers); /* their turns are out of step now */
  const char *rate = kind != LOCK_READ ? "handoffs/s" : "cycles/s";
  if (ok) { /* before the report sorts the rates */
    for (int impl = 0; impl < impls; impl++)
      bench_runs_print(scenario, kase, impl_names[impl], &t[impl].rates, rate);
    bench_paired(scenario, kase, rate, &t[1].rates, &t[0].rates);
  }
  for (int impl = 0; impl < impls; impl++) {
    if (ok)
      tally_report(scenario, kase, impl_names[impl], kind != LOCK_READ, n,
                   &t[impl]);
    samples_free(&t[impl].rates);
    samples_free(&t[impl].lat);
    free(t[impl].per);
  }
  printf("  S%s %s done\n", scenario, kase);
}

void sc_contended(const bench_opts_t *o) {
  bench_peers_t peers; /* kazoo's and Curator's runs: their turns */
  bench_peers_start(&peers, o, 3);
  for (int i = 0; i < o->n_ns; i++) {
    char kase[24], leaf[32];
    snprintf(kase, sizeof kase, "N=%d", o->ns[i]);
    snprintf(leaf, sizeof leaf, "s3-%d", o->ns[i]);
    compare(o, "3", kase, LOCK_MUTEX, o->ns[i], leaf, &peers);
  }
  bench_peers_end(&peers);
}

void sc_rwlock(const bench_opts_t *o) {
  char kase[24];
  snprintf(kase, sizeof kase, "R=%d", o->readers);
  compare(o, "5", kase, LOCK_READ, o->readers, "s5-read", NULL);
  snprintf(kase, sizeof kase, "W=%d", o->writers);
  compare(o, "5", kase, LOCK_WRITE, o->writers, "s5-write", NULL);
}
