/* bench/sc-semaphore.c - scenario 13: the counting semaphore (zkl_sem_*)
 * against the same protocol by hand (floor.c) and, merged from
 * bench/CuratorBench.java and bench/kazoo_bench.py, Curator's
 * InterProcessSemaphoreV2 and kazoo's Semaphore.
 *
 * S13 N contenders (--sem-contenders, default 32), a thread and a session
 *     each, take ONE lease of the same semaphore of maximum MAX
 *     (--sem-max, default 1, 5 and 20) in a loop: acquire 1, hold
 *     (--sem-hold MS, default 0: ~0, the check below), release; until
 *     N x --sem-grants grants are done (a shared count of slots, as S11
 *     and S12: all N contend to the end) or BENCH_S13_CAP_S (20 s)
 *     passed.  Every run is on a fresh path whose locks/ and leases/ are
 *     made (persistent, empty) before it; one unmeasured run of each (5
 *     grants per contender, the first MAX) comes first, except --quick.
 *       floor  a raw zhandle per contender: the gate (the classic lock
 *              under <path>/locks), the leases listed with a child watch
 *              until one fits, a plain create of the lease, the gate's
 *              node deleted; release: one delete (floor_sem_*)
 *       zkl    a zkl session and a zkl_sem (opts.max = MAX) per
 *              contender: zkl_sem_acquire(m, 1, 60 s, &lease) /
 *              zkl_sem_release(m, &lease, 1)
 *     Curator's side ("curator", InterProcessSemaphoreV2 on the same
 *     layout: acquire(60 s) / returnLease) and kazoo's ("kazoo": its
 *     Semaphore(max_leases=MAX) has a layout of its own, a gate lock at
 *     the sibling <path>-__lock__ and the leases right under <path>, so it
 *     runs on paths of its own) are run by zkl-bench.c after this and
 *     report the same rows.
 *     The maximum: between a grant and its release call each contender
 *     counts itself in one in-process counter; finding MAX others there is
 *     a failure of the run (a holder counts itself out before its release
 *     call and a new one in after its grant, so the count is never above
 *     the server's).  The highest count seen is reported ("peak
 *     holders").  After each run (sessions still open, so that an
 *     ephemeral node left behind is seen) locks/ and leases/ must be
 *     empty.  --reps runs of floor and zkl in turns per MAX (the order
 *     rotating); the median run's grants/s, the latency of every acquire
 *     call (the queueing included), fairness (fewest / most grants of a
 *     contender over the runs), the server's work and this process's CPU
 *     per grant.  Once the peers' rows are merged, sc_semaphore_ratios()
 *     adds zkl / curator and zkl / kazoo grants/s rows. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

#define ACQUIRE_TIMEOUT_MS 60000 /* an acquire call never waits longer */

enum { I_FLOOR, I_ZKL, N_IMPLS };
static const char *const impl_names[N_IMPLS] = {"floor", "zkl"};

typedef struct sem_run sem_run_t;

typedef struct semc {
  sem_run_t *r;
  zhandle_t *zh;      /* floor                                     */
  floor_sem_t fs;
  int fs_ok;
  zkl_session_t *s;   /* zkl                                       */
  zkl_sem_t *m;
  long done;          /* grants                                     */
  samples_t acq;      /* µs per acquire call                        */
  int64_t t_end;
} semc_t;

struct sem_run {
  int impl, n, max, hold_ms;
  char path[256];
  long total;               /* grants to do, over all contenders */
  semc_t *c;
  bench_crew_t crew;
  atomic_long claimed;
  atomic_int holders;       /* holding now, in this process      */
  atomic_int peak;          /* the most seen at once             */
  atomic_long violations;   /* grants that found MAX holding     */
};

static void *semc_main(void *arg) {
  semc_t *c = arg;
  sem_run_t *r = c->r;
  zkl_lease_t lease;
  bench_crew_wait(&r->crew);
  while (!atomic_load(&r->crew.stop) &&
         atomic_fetch_add(&r->claimed, 1) < r->total) {
    int64_t t0 = bench_now_ns();
    int rc = r->impl == I_FLOOR
                 ? floor_sem_acquire(&c->fs, ACQUIRE_TIMEOUT_MS)
                 : zkl_sem_acquire(c->m, 1, ACQUIRE_TIMEOUT_MS, &lease);
    if (rc != 0) {
      bench_fail("S13 MAX=%d %s: acquire: %d %s", r->max,
                 impl_names[r->impl], rc,
                 r->impl == I_FLOOR ? zerror(rc) : zkl_last_error());
      break;
    }
    int64_t t1 = bench_now_ns();
    /* the critical section: at most MAX in it */
    int h = atomic_fetch_add(&r->holders, 1) + 1;
    if (h > r->max) atomic_fetch_add(&r->violations, 1);
    int p = atomic_load(&r->peak);
    while (h > p && !atomic_compare_exchange_weak(&r->peak, &p, h)) {
    }
    samples_add(&c->acq, (double)(t1 - t0) / 1e3);
    c->done++;
    if (r->hold_ms > 0) bench_sleep_ms(r->hold_ms);
    atomic_fetch_sub(&r->holders, 1);
    rc = r->impl == I_FLOOR ? floor_sem_release(&c->fs)
                            : zkl_sem_release(c->m, &lease, 1);
    if (rc != 0) {
      bench_fail("S13 MAX=%d %s: release: %d %s", r->max,
                 impl_names[r->impl], rc,
                 r->impl == I_FLOOR ? zerror(rc) : zkl_last_error());
      break;
    }
  }
  c->t_end = bench_now_ns();
  return NULL;
}

static int semc_setup(sem_run_t *r, semc_t *c, const char *hosts) {
  c->r = r;
  if (r->impl == I_FLOOR) {
    c->zh = floor_open(hosts, 10000);
    if (c->zh == NULL) return -1;
    c->fs_ok = 1;
    return floor_sem_init(&c->fs, c->zh, r->path, r->max);
  }
  if ((c->s = bench_zkl_open(hosts, 0)) == NULL) return -1;
  zkl_sem_opts_t so;
  zkl_sem_opts_init(&so);
  so.max = r->max;
  int rc = zkl_sem_create(&c->m, c->s, r->path, &so);
  if (rc != 0)
    bench_fail("S13 zkl: zkl_sem_create: %s: %s", zkl_strerror(rc),
               zkl_last_error());
  return rc == 0 ? 0 : -1;
}

static void semc_teardown(semc_t *c) {
  zkl_sem_destroy(c->m);
  zkl_session_close(c->s);
  floor_close(c->zh);
  if (c->fs_ok) floor_sem_fini(&c->fs);
  samples_free(&c->acq);
}

/* One implementation's runs at one MAX, summed. */
typedef struct tally {
  samples_t rates;      /* grants per second, one per run    */
  samples_t acq;        /* every acquire of every run, µs    */
  long *per;            /* grants of contender i, over runs  */
  long done;
  int peak;             /* the most holders seen in any run  */
  int runs;
  srv_counters_t srv;
  double cpu_us;
  int srv_ok;
} tally_t;

/* One run of impl at max with `grants` per contender, on a fresh path;
 * adds to *t.  rep < 0: the warm-up.  0 or -1 (reported). */
static int run_once(const bench_opts_t *o, int impl, int max, int rep,
                    int grants, tally_t *t) {
  int n = o->sem_contenders, rc = -1, ready = 0;
  char leaf[64], locks[300], leases[300];
  sem_run_t r;
  memset(&r, 0, sizeof r);
  if (rep < 0)
    snprintf(leaf, sizeof leaf, "s13-%s-m%d-warm", impl_names[impl], max);
  else
    snprintf(leaf, sizeof leaf, "s13-%s-m%d-%d", impl_names[impl], max, rep);
  bench_path(r.path, sizeof r.path, o->root, leaf, NULL);
  bench_path(locks, sizeof locks, r.path, "locks", NULL);
  bench_path(leases, sizeof leases, r.path, "leases", NULL);
  r.impl = impl;
  r.n = n;
  r.max = max;
  r.hold_ms = o->sem_hold_ms;
  r.total = (long)n * grants;
  r.c = calloc((size_t)n, sizeof *r.c);
  if (r.c == NULL) {
    bench_fail("S13: no memory");
    return -1;
  }
  const char *dirs[] = {locks, leases};
  for (int i = 0; i < 2; i++) {
    int zrc = bench_mkpath(bench_admin, dirs[i]);
    if (zrc != ZOK) {
      bench_fail("S13: cannot create %s: %s", dirs[i], zerror(zrc));
      goto out;
    }
  }
  for (ready = 0; ready < n; ready++)
    if (semc_setup(&r, &r.c[ready], o->hosts) != 0) {
      bench_fail("S13 MAX=%d %s: contender %d: setup failed", max,
                 impl_names[impl], ready);
      ready++;
      goto out;
    }
  bench_crew_run(&r.crew, "S13", o->hosts, n, semc_main, r.c, sizeof *r.c,
                 BENCH_S13_CAP_S);
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
  }
  t->done += sum;
  t->runs++;
  if (atomic_load(&r.peak) > t->peak) t->peak = atomic_load(&r.peak);
  if (t_end > t0)
    samples_add(&t->rates, (double)sum * 1e9 / (double)(t_end - t0));
  if (sum < r.total)
    bench_note("S13 MAX=%d %s: a run stopped after %d s with %ld of %ld "
               "grants", max, impl_names[impl], BENCH_S13_CAP_S, sum,
               r.total);
  rc = 0;
  long v = atomic_load(&r.violations);
  if (v != 0) {
    bench_fail("S13 MAX=%d %s: more than MAX holders at once %ld times "
               "(peak %d)", max, impl_names[impl], v, atomic_load(&r.peak));
    rc = -1;
  }
  /* nothing left under the path (the sessions still open: an ephemeral
   * node left behind would still be there) */
  for (int i = 0; i < 2; i++) {
    int left = bench_children(bench_admin, dirs[i]);
    if (left != 0) {
      bench_fail("S13 MAX=%d %s: %d node(s) left under %s", max,
                 impl_names[impl], left, dirs[i]);
      rc = -1;
    }
  }
out:
  for (int i = 0; i < ready; i++) semc_teardown(&r.c[i]);
  free(r.c);
  return rc;
}

static void kase_of(char *buf, size_t len, int max, int n) {
  snprintf(buf, len, "MAX=%d N=%d", max, n);
}

#define WARM_GRANTS 5 /* per contender, in the warm-up run of each impl */

void sc_semaphore(const bench_opts_t *o) {
  int n = o->sem_contenders;
  if (!o->quick) {
    /* one unmeasured run of each, at the first MAX: the first of them
     * would otherwise meet a server whose JIT is cold (--only 13 on a
     * fresh server), while kazoo's and Curator's come later; Curator
     * warms its own JIT the same way */
    tally_t w;
    memset(&w, 0, sizeof w);
    w.per = calloc((size_t)n, sizeof *w.per);
    int g = o->sem_grants < WARM_GRANTS ? o->sem_grants : WARM_GRANTS;
    for (int i = 0; i < N_IMPLS && w.per != NULL; i++)
      if (run_once(o, i, o->sem_max[0], -1, g, &w) != 0) break;
    samples_free(&w.rates);
    samples_free(&w.acq);
    free(w.per);
  }
  for (int mi = 0; mi < o->n_sem_max; mi++) {
    int max = o->sem_max[mi];
    char kase[24];
    kase_of(kase, sizeof kase, max, n);
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
        ok = run_once(o, impl, max, rep, o->sem_grants, &t[impl]) == 0;
      }
    for (int i = 0; i < N_IMPLS; i++) {
      if (ok && t[i].done > 0) {
        const char *impl = impl_names[i];
        result_add("13", kase, impl, "grants/s", "1/s",
                   samples_quantile(&t[i].rates, 0.5), NAN, t[i].done);
        result_add_samples("13", kase, impl, "acquire", "us", &t[i].acq);
        result_add("13", kase, impl, "peak holders", "", t[i].peak, NAN,
                   t[i].runs);
        result_add("13", kase, impl, "fairness", "",
                   bench_fairness(t[i].per, n), NAN, n);
        if (t[i].srv_ok)
          srv_report("13", kase, impl, "grant", &t[i].srv,
                     (double)t[i].done);
        result_add("13", kase, impl, "cpu/grant", "us",
                   t[i].cpu_us / (double)t[i].done, NAN, t[i].done);
      }
      samples_free(&t[i].rates);
      samples_free(&t[i].acq);
      free(t[i].per);
    }
    printf("  S13 %s done\n", kase);
  }
}

void sc_semaphore_ratios(const bench_opts_t *o) {
  if (!(o->only & (1u << 13))) return;
  for (int mi = 0; mi < o->n_sem_max; mi++) {
    char kase[24];
    kase_of(kase, sizeof kase, o->sem_max[mi], o->sem_contenders);
    bench_peer_ratios("13", kase, "grants/s", "grants/s ratio");
  }
}
