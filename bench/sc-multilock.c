/* bench/sc-multilock.c - scenario 12: the multi-lock (zkl_multilock_*),
 * several exclusive locks held together, against the same protocol by
 * hand (floor.c) and, merged from bench/CuratorBench.java and
 * bench/kazoo_bench.py, Curator's InterProcessMultiLock and kazoo's Lock
 * taken path by path.
 *
 * S12 N contenders (--ml-contenders, default 8), a thread and a session
 *     each, take the SAME K paths (--ml-paths, default 2 and 8) together
 *     in a loop: lock all K, hold ~0 (the exclusion check below), unlock;
 *     until N x --ml-acquisitions acquisitions are done (a shared count of
 *     slots, as S11: all N contend to the end) or BENCH_S12_CAP_S (20 s)
 *     passed.  The K paths are made (persistent, empty) before each run.
 *       floor  a raw zhandle per contender: one multi of K creates, then
 *              the classic wait in each queue in turn; release: one multi
 *              of K deletes (floor_multilock_*)
 *       zkl    a zkl session and a zkl_multilock per contender,
 *              zkl_multilock_timedlock() / zkl_multilock_unlock()
 *     Each contender lists the K paths in its OWN random order (floor and
 *     zkl: one multi makes all of a contender's nodes, so no order can
 *     deadlock).  Curator's side ("curator", InterProcessMultiLock over
 *     InterProcessMutex, every contender in the SAME sorted order: in
 *     another order it can deadlock) and kazoo's ("kazoo": it has no
 *     multi-lock; a Lock per path taken one by one in sorted order,
 *     released in reverse) are run by zkl-bench.c after this and report
 *     the same rows.
 *     Exclusion: between a grant and its unlock call each contender counts
 *     itself in a per-path in-process counter; finding another there is a
 *     failure of the run.  After each run (sessions still open, so that an
 *     ephemeral node left behind is seen) every path must have no child.
 *     --reps runs of floor and zkl in turns per K (the order rotating);
 *     the median run's acquisitions/s, the latency of every lock call
 *     ("acquire": the queueing included), the handoff (from the previous
 *     holder's unlock call, or this lock call if later, to the grant),
 *     fairness (fewest / most acquisitions of a contender over the runs),
 *     the server's work and this process's CPU per acquisition.  Once the
 *     peers' rows are merged, sc_multilock_ratios() adds zkl / curator and
 *     zkl / kazoo acquisitions/s rows. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define LOCK_TIMEOUT_MS 60000 /* a lock call never waits longer */

enum { I_FLOOR, I_ZKL, N_IMPLS };
static const char *const impl_names[N_IMPLS] = {"floor", "zkl"};

typedef struct ml_run ml_run_t;

typedef struct mlc {
  ml_run_t *r;
  int order[ZKL_MULTILOCK_MAX]; /* its own order of the run's paths       */
  zhandle_t *zh;                /* floor                                  */
  floor_multilock_t fm;
  int fm_ok;
  zkl_session_t *s;             /* zkl                                    */
  zkl_multilock_t *m;
  long done;                    /* acquisitions                           */
  samples_t acq;                /* µs per lock call                       */
  samples_t hand;               /* µs per handoff                         */
  int64_t t_end;
} mlc_t;

struct ml_run {
  int impl, n, k;
  char (*paths)[256];
  long total;               /* acquisitions to do, over all contenders */
  mlc_t *c;
  bench_crew_t crew;
  atomic_long claimed;
  atomic_int holders[ZKL_MULTILOCK_MAX]; /* per path, in the run's order */
  atomic_long violations;
  atomic_llong last_release;
};

static void *mlc_main(void *arg) {
  mlc_t *c = arg;
  ml_run_t *r = c->r;
  bench_crew_wait(&r->crew);
  while (!atomic_load(&r->crew.stop) &&
         atomic_fetch_add(&r->claimed, 1) < r->total) {
    int64_t t0 = bench_now_ns();
    int rc = r->impl == I_FLOOR ? floor_multilock_acquire(&c->fm,
                                                          LOCK_TIMEOUT_MS)
                                : zkl_multilock_timedlock(c->m,
                                                          LOCK_TIMEOUT_MS);
    if (rc != 0) {
      bench_fail("S12 K=%d %s: lock: %d %s", r->k, impl_names[r->impl], rc,
                 r->impl == I_FLOOR ? zerror(rc) : zkl_last_error());
      break;
    }
    int64_t t1 = bench_now_ns();
    /* the critical section: nobody else in any of the K */
    for (int i = 0; i < r->k; i++)
      if (atomic_fetch_add(&r->holders[i], 1) != 0)
        atomic_fetch_add(&r->violations, 1);
    int64_t prev = atomic_load(&r->last_release);
    samples_add(&c->acq, (double)(t1 - t0) / 1e3);
    if (prev != 0)
      samples_add(&c->hand, (double)(t1 - (prev > t0 ? prev : t0)) / 1e3);
    c->done++;
    for (int i = 0; i < r->k; i++) atomic_fetch_sub(&r->holders[i], 1);
    atomic_store(&r->last_release, bench_now_ns());
    rc = r->impl == I_FLOOR ? floor_multilock_release(&c->fm)
                            : zkl_multilock_unlock(c->m);
    if (rc != 0) {
      bench_fail("S12 K=%d %s: unlock: %d %s", r->k, impl_names[r->impl], rc,
                 r->impl == I_FLOOR ? zerror(rc) : zkl_last_error());
      break;
    }
  }
  c->t_end = bench_now_ns();
  return NULL;
}

/* A random order of 0..k-1 (Fisher-Yates). */
static void shuffle(int *order, int k, unsigned *seed) {
  for (int i = 0; i < k; i++) order[i] = i;
  for (int i = k - 1; i > 0; i--) {
    int j = (int)((unsigned)rand_r(seed) % (unsigned)(i + 1));
    int t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
}

static int mlc_setup(ml_run_t *r, mlc_t *c, const char *hosts,
                     unsigned *seed) {
  c->r = r;
  shuffle(c->order, r->k, seed);
  const char *mine[ZKL_MULTILOCK_MAX];
  for (int i = 0; i < r->k; i++) mine[i] = r->paths[c->order[i]];
  if (r->impl == I_FLOOR) {
    c->zh = floor_open(hosts, 10000);
    if (c->zh == NULL) return -1;
    c->fm_ok = 1;
    return floor_multilock_init(&c->fm, c->zh, mine, r->k);
  }
  if ((c->s = bench_zkl_open(hosts, 0)) == NULL) return -1;
  int rc = zkl_multilock_create(&c->m, c->s, mine, (size_t)r->k, NULL);
  if (rc != 0)
    bench_fail("S12 zkl: zkl_multilock_create: %s: %s", zkl_strerror(rc),
               zkl_last_error());
  return rc == 0 ? 0 : -1;
}

static void mlc_teardown(mlc_t *c) {
  zkl_multilock_destroy(c->m);
  zkl_session_close(c->s);
  floor_close(c->zh);
  if (c->fm_ok) floor_multilock_fini(&c->fm);
  samples_free(&c->acq);
  samples_free(&c->hand);
}

/* One implementation's runs at one K, summed. */
typedef struct tally {
  samples_t rates;      /* acquisitions per second, one per run */
  samples_t acq, hand;  /* every one of every run, µs           */
  long *per;            /* acquisitions of contender i, over runs */
  long done;
  srv_counters_t srv;
  double cpu_us;
  int srv_ok;
} tally_t;

/* One run of impl with k paths, on fresh paths; adds to *t.  0 or -1
 * (reported). */
static int run_once(const bench_opts_t *o, int impl, int k, int rep,
                    tally_t *t) {
  int n = o->ml_contenders, rc = -1, ready = 0;
  char leaf[64], dir[256];
  snprintf(leaf, sizeof leaf, "s12-%s-k%d-%d", impl_names[impl], k, rep);
  bench_path(dir, sizeof dir, o->root, leaf, NULL);
  ml_run_t r;
  memset(&r, 0, sizeof r);
  r.impl = impl;
  r.n = n;
  r.k = k;
  r.total = (long)n * o->ml_acquisitions;
  r.paths = calloc((size_t)k, sizeof *r.paths);
  r.c = calloc((size_t)n, sizeof *r.c);
  if (r.paths == NULL || r.c == NULL) {
    bench_fail("S12: no memory");
    goto out;
  }
  for (int i = 0; i < k; i++) {
    char p[16];
    snprintf(p, sizeof p, "p%d", i);
    bench_path(r.paths[i], sizeof r.paths[i], dir, p, NULL);
    int zrc = bench_mkpath(bench_admin, r.paths[i]);
    if (zrc != ZOK) {
      bench_fail("S12: cannot create %s: %s", r.paths[i], zerror(zrc));
      goto out;
    }
  }
  unsigned seed = (unsigned)(time(NULL) ^ getpid()) + (unsigned)rep * 7919u +
                  (unsigned)k * 104729u;
  for (ready = 0; ready < n; ready++)
    if (mlc_setup(&r, &r.c[ready], o->hosts, &seed) != 0) {
      bench_fail("S12 K=%d %s: contender %d: setup failed", k,
                 impl_names[impl], ready);
      ready++;
      goto out;
    }
  bench_crew_run(&r.crew, "S12", o->hosts, n, mlc_main, r.c, sizeof *r.c,
                 BENCH_S12_CAP_S);
  int64_t t0 = r.crew.t0;
  t->cpu_us += r.crew.cpu_us;
  if (r.crew.srv_ok) srv_add(&t->srv, &r.crew.srv);
  else t->srv_ok = 0;
  int64_t t_end = t0;
  long sum = 0;
  for (int i = 0; i < n; i++) {
    if (r.c[i].t_end > t_end) t_end = r.c[i].t_end;
    sum += r.c[i].done;
    t->per[i] += r.c[i].done;
    for (size_t j = 0; j < r.c[i].acq.n; j++)
      samples_add(&t->acq, r.c[i].acq.v[j]);
    for (size_t j = 0; j < r.c[i].hand.n; j++)
      samples_add(&t->hand, r.c[i].hand.v[j]);
  }
  t->done += sum;
  if (t_end > t0)
    samples_add(&t->rates, (double)sum * 1e9 / (double)(t_end - t0));
  if (sum < r.total)
    bench_note("S12 K=%d %s: a run stopped after %d s with %ld of %ld "
               "acquisitions", k, impl_names[impl], BENCH_S12_CAP_S, sum,
               r.total);
  rc = 0;
  long v = atomic_load(&r.violations);
  if (v != 0) {
    bench_fail("S12 K=%d %s: two holders of one path at once %ld times", k,
               impl_names[impl], v);
    rc = -1;
  }
  /* nothing left under the paths (the sessions still open: an ephemeral
   * node left behind would still be there) */
  for (int i = 0; i < k; i++) {
    int left = bench_children(bench_admin, r.paths[i]);
    if (left != 0) {
      bench_fail("S12 K=%d %s: %d node(s) left under %s", k, impl_names[impl],
                 left, r.paths[i]);
      rc = -1;
    }
  }
out:
  for (int i = 0; i < ready; i++) mlc_teardown(&r.c[i]);
  free(r.c);
  free(r.paths);
  return rc;
}

static void kase_of(char *buf, size_t len, int k, int n) {
  snprintf(buf, len, "K=%d N=%d", k, n);
}

void sc_multilock(const bench_opts_t *o) {
  int n = o->ml_contenders;
  for (int ki = 0; ki < o->n_ml_paths; ki++) {
    int k = o->ml_paths[ki];
    char kase[24];
    kase_of(kase, sizeof kase, k, n);
    tally_t t[N_IMPLS];
    memset(t, 0, sizeof t);
    int ok = 1;
    for (int i = 0; i < N_IMPLS; i++) {
      t[i].per = calloc((size_t)n, sizeof *t[i].per);
      t[i].srv_ok = 1;
      ok = ok && t[i].per != NULL;
    }
    for (int rep = 0; rep < o->reps && ok; rep++)
      for (int j = 0; j < N_IMPLS && ok; j++) {
        int impl = (rep + j) % N_IMPLS; /* floor first, then zkl first, ... */
        ok = run_once(o, impl, k, rep, &t[impl]) == 0;
      }
    for (int i = 0; i < N_IMPLS; i++) {
      if (ok && t[i].done > 0) {
        const char *impl = impl_names[i];
        result_add("12", kase, impl, "acquisitions/s", "1/s",
                   samples_quantile(&t[i].rates, 0.5), NAN, t[i].done);
        result_add_samples("12", kase, impl, "acquire", "us", &t[i].acq);
        result_add_samples("12", kase, impl, "handoff", "us", &t[i].hand);
        result_add("12", kase, impl, "fairness", "",
                   bench_fairness(t[i].per, n), NAN, n);
        if (t[i].srv_ok)
          srv_report("12", kase, impl, "acq", &t[i].srv, (double)t[i].done);
        result_add("12", kase, impl, "cpu/acq", "us",
                   t[i].cpu_us / (double)t[i].done, NAN, t[i].done);
      }
      samples_free(&t[i].rates);
      samples_free(&t[i].acq);
      samples_free(&t[i].hand);
      free(t[i].per);
    }
    printf("  S12 %s done\n", kase);
  }
}

void sc_multilock_ratios(const bench_opts_t *o) {
  if (!(o->only & (1u << 12))) return;
  for (int ki = 0; ki < o->n_ml_paths; ki++) {
    char kase[24];
    kase_of(kase, sizeof kase, o->ml_paths[ki], o->ml_contenders);
    bench_peer_ratios("12", kase, "acquisitions/s", "acq/s ratio");
  }
}
