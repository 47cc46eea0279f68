/* bench/sc-aggregate.c - scenario 14: aggregate throughput on distinct
 * keys.  T threads of ONE process, each looping lock/unlock on a path of
 * its own (nobody contends), for each T of --agg-threads (default
 * 1,8,32,64), for --agg-duration seconds a run: what one process gets out
 * of a session (or of a session per thread) when many of its threads use
 * locks at once.
 *       floor         ONE raw zhandle shared by the T threads: the
 *                     pipelined cycle (create EPHEMERAL_SEQUENTIAL and
 *                     getChildren sent back to back, then a delete, as
 *                     zkl releases a hold nobody contended:
 *                     floor_cycle_pipelined())
 *       zkl           ONE zkl session, a zkl_mutex per thread on its path
 *       zkl-sessions  a zkl session per thread, a zkl_mutex each
 *     --reps runs of each in turns (the order rotating); the median run's
 *     cycles/s over all T threads, the latency of every cycle (lock call
 *     to unlock's return), fairness (fewest / most cycles of a thread),
 *     the server's work and this process's CPU per cycle.  kazoo's side
 *     (bench/kazoo_bench.py: T Python threads on ONE KazooClient, a Lock
 *     each) and Curator's (bench/CuratorBench.java: T Java threads on ONE
 *     CuratorFramework, an InterProcessMutex each) take their runs in the
 *     same rotation (bench/peers.c), with the same figures, and report the
 *     same rows; once they are merged, sc_aggregate_ratios() adds zkl /
 *     curator and zkl / kazoo cycles/s rows. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define LOCK_TIMEOUT_MS 10000 /* nobody contends: a lock never waits long */

enum { I_FLOOR, I_ZKL, I_SESSIONS, N_IMPLS };
static const char *const impl_names[N_IMPLS] = {"floor", "zkl",
                                                "zkl-sessions"};

typedef struct agg_run agg_run_t;

typedef struct agg_worker {
  agg_run_t *r;
  char path[256];     /* its own lock path                          */
  zkl_session_t *s;   /* zkl-sessions: its own (else NULL)          */
  zkl_mutex_t *m;     /* zkl, zkl-sessions                          */
  long done;          /* cycles in the window                       */
  samples_t lat;      /* µs per cycle                               */
  int64_t t_end;      /* when it stopped                            */
} agg_worker_t;

struct agg_run {
  int impl, t;
  double duration_s;
  zhandle_t *zh;            /* floor: the one shared zhandle       */
  zkl_session_t *shared;    /* zkl: the one shared session         */
  agg_worker_t *w;
  bench_crew_t crew;
};

/* One lock/unlock cycle.  0 or an error (reported). */
static int agg_cycle(agg_worker_t *w) {
  agg_run_t *r = w->r;
  if (r->impl == I_FLOOR) {
    int zrc = floor_cycle_pipelined(r->zh, w->path);
    if (zrc != ZOK) bench_fail("S14 floor: %s", zerror(zrc));
    return zrc;
  }
  int rc = zkl_mutex_timedlock(w->m, LOCK_TIMEOUT_MS);
  if (rc == 0) rc = zkl_mutex_unlock(w->m);
  if (rc != 0)
    bench_fail("S14 %s: %s: %s", impl_names[r->impl], zkl_strerror(rc),
               zkl_last_error());
  return rc;
}

static void *agg_main(void *arg) {
  agg_worker_t *w = arg;
  agg_run_t *r = w->r;
  bench_crew_wait(&r->crew);
  int64_t end = bench_now_ns() + (int64_t)(r->duration_s * 1e9);
  while (!atomic_load(&r->crew.stop) && bench_now_ns() < end) {
    int64_t t0 = bench_now_ns();
    if (agg_cycle(w) != 0) break;
    samples_add(&w->lat, (double)(bench_now_ns() - t0) / 1e3);
    w->done++;
  }
  w->t_end = bench_now_ns();
  return NULL;
}

static int worker_setup(agg_run_t *r, agg_worker_t *w, const char *hosts,
                        const char *dir, int i) {
  w->r = r;
  char leaf[16];
  snprintf(leaf, sizeof leaf, "%d", i);
  bench_path(w->path, sizeof w->path, dir, leaf, NULL);
  if (bench_mkpath(bench_admin, w->path) != ZOK) return -1;
  if (r->impl == I_FLOOR) return 0;
  zkl_session_t *s = r->shared;
  if (s == NULL && (s = w->s = bench_zkl_open(hosts, 0)) == NULL) return -1;
  int rc = zkl_mutex_create(&w->m, s, w->path, NULL);
  if (rc == 0) rc = agg_cycle(w); /* warm: one cycle, unmeasured */
  return rc == 0 ? 0 : -1;
}

static void worker_teardown(agg_worker_t *w) {
  zkl_mutex_destroy(w->m);
  zkl_session_close(w->s);
  samples_free(&w->lat);
}

/* One implementation's runs at one T: the tally, and every cycle's
 * latency. */
typedef struct agg_tally {
  bench_tally_t t[N_IMPLS];
  samples_t lat[N_IMPLS];  /* µs, every cycle of every run */
  const bench_opts_t *o;
  int threads;
  bench_peers_t *peers;    /* kazoo's and Curator's runs: their turns */
} agg_tally_t;

/* One run of impl with a->threads threads; adds to a.  0 or -1
 * (reported). */
static int run_once(void *arg, int impl) {
  agg_tally_t *a = arg;
  const bench_opts_t *o = a->o;
  if (impl >= N_IMPLS) { /* a peer's run */
    bench_peer_turn(&a->peers->p[impl - N_IMPLS]);
    return 0;
  }
  int t = a->threads;
  char leaf[64], dir[256];
  snprintf(leaf, sizeof leaf, "s14-%s", impl_names[impl]);
  bench_path(dir, sizeof dir, o->root, leaf, NULL);
  agg_run_t r;
  memset(&r, 0, sizeof r);
  r.impl = impl;
  r.t = t;
  r.duration_s = o->agg_duration_s;
  r.w = calloc((size_t)t, sizeof *r.w);
  long *per = calloc((size_t)t, sizeof *per);
  int rc = -1, ready = 0, failed = bench_failures();
  if (r.w == NULL || per == NULL) goto out;
  if (impl == I_FLOOR && (r.zh = floor_open(o->hosts, 10000)) == NULL)
    goto out;
  if (impl == I_ZKL && (r.shared = bench_zkl_open(o->hosts, 0)) == NULL)
    goto out;
  for (ready = 0; ready < t; ready++)
    if (worker_setup(&r, &r.w[ready], o->hosts, dir, ready) != 0) {
      bench_fail("S14 %s T=%d: thread %d: setup failed", impl_names[impl],
                 t, ready);
      ready++;
      goto out;
    }
  int cap_s = (int)ceil(o->agg_duration_s) + BENCH_S14_CAP_S;
  bench_crew_run(&r.crew, "S14", o->hosts, t, agg_main, r.w, sizeof *r.w,
                 cap_s);
  int64_t t_end = r.crew.t0;
  for (int i = 0; i < t; i++) {
    if (r.w[i].t_end > t_end) t_end = r.w[i].t_end;
    per[i] = r.w[i].done;
    for (size_t k = 0; k < r.w[i].lat.n; k++)
      samples_add(&a->lat[impl], r.w[i].lat.v[k]);
  }
  bench_tally_add(&a->t[impl], &r.crew, per, t, t_end);
  rc = bench_failures() == failed ? 0 : -1; /* a cycle failed */
out:
  for (int i = 0; i < ready; i++) worker_teardown(&r.w[i]);
  zkl_session_close(r.shared);
  floor_close(r.zh);
  free(r.w);
  free(per);
  return rc;
}

void sc_aggregate(const bench_opts_t *o) {
  bench_peers_t peers;
  bench_peers_start(&peers, o, 14);
  for (int ti = 0; ti < o->n_agg_threads; ti++) {
    agg_tally_t a;
    memset(&a, 0, sizeof a);
    a.o = o;
    a.threads = o->agg_threads[ti];
    a.peers = &peers;
    char kase[24];
    snprintf(kase, sizeof kase, "T=%d", a.threads);
    int ok = bench_tallies_init(a.t, N_IMPLS, a.threads) == 0;
    if (ok) bench_peers_turn(&peers); /* their setup and warm-up */
    ok = ok &&
         bench_rotate(o->reps, N_IMPLS + peers.n, run_once, &a) == 0;
    if (ok) { /* before the report sorts the rates */
      for (int i = 0; i < N_IMPLS; i++)
        bench_runs_print("14", kase, impl_names[i], &a.t[i].rates, "cycles/s");
      bench_paired("14", kase, "cycles/s", &a.t[I_ZKL].rates,
                   &a.t[I_FLOOR].rates);
    }
    for (int i = 0; i < N_IMPLS; i++) {
      if (ok) {
        bench_tally_report(&a.t[i], "14", kase, impl_names[i], "cycles/s",
                           "cycle", a.threads);
        result_add_samples("14", kase, impl_names[i], "cycle", "us",
                           &a.lat[i]);
      }
      samples_free(&a.lat[i]);
    }
    bench_tallies_free(a.t, N_IMPLS);
    printf("  S14 %s done\n", kase);
    if (!ok) {
      bench_peers_stop(&peers); /* their turns are out of step now */
      break;
    }
  }
  bench_peers_end(&peers);
}

void sc_aggregate_ratios(const bench_opts_t *o) {
  if (!(o->only & (1u << 14))) return;
  for (int ti = 0; ti < o->n_agg_threads; ti++) {
    char kase[24];
    snprintf(kase, sizeof kase, "T=%d", o->agg_threads[ti]);
    bench_peer_ratios("14", kase, "cycles/s", "cycles/s ratio");
  }
}
