/* bench/sc-counter.c - scenario 11: the shared counter (zkl_counter_*)
 * against the compare-and-set by hand (floor.c) and, merged from
 * bench/kazoo_bench.py and bench/CuratorBench.java, kazoo's
 * Counter(support_curator=True) and Curator's DistributedAtomicInteger.
 *
 * S11 N contenders (--cas-contenders, default 8), a thread each, increment
 *     ONE counter (a 4-byte big-endian int, ZKL_COUNTER_INT32, in a node
 *     made with 0 before the run) by 1 in a loop until N x --increments
 *     increments are done: a shared count of slots, so that all N contend
 *     until the end (a contender that finished its share early would leave
 *     the rest less contended), or BENCH_S11_CAP_S (20 s) passed.  Then the
 *     node must hold exactly the number of increments done; anything else
 *     is a lost update, an error of the run.
 *       floor       a raw zhandle per contender: get, then set at the
 *                   version read, both again on ZBADVERSION
 *       zkl         a zkl session and a zkl_counter per contender:
 *                   zkl_counter_add(c, 1, OP_TIMEOUT_MS, NULL)
 *       zkl-shared  the same, the N counter objects on ONE session
 *     --reps runs of each in turns (the order rotating); the median run's
 *     increments/s, the latency of every increment (one add call, its
 *     retries included), fairness (fewest / most increments of a
 *     contender over the runs), the server's work per increment (writes/inc
 *     - 1 is the conflicts: every try is one read and one write), this
 *     process's CPU per increment, and the whole machine's busy CPU time
 *     and context switches per increment (/proc/stat: every process, the
 *     server's too when it is local; meaningful only on a quiet machine:
 *     with the server on the same cores the run is CPU-bound, and the
 *     rate is about the cores / host-cpu/inc).
 *     Curator's side (bench/CuratorBench.java, "curator") and kazoo's
 *     ("kazoo": its default retry, which sleeps before each retry;
 *     "kazoo-0wait": retrying at once) are run by zkl-bench.c after this,
 *     with the same figures, and report the same rows.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define OP_TIMEOUT_MS 10000   /* every zkl_counter_add's deadline         */

enum { I_FLOOR, I_ZKL, I_SHARED, N_IMPLS };
static const char *const impl_names[N_IMPLS] = {"floor", "zkl", "zkl-shared"};

typedef struct cas_run cas_run_t;

typedef struct incer {
  cas_run_t *r;
  zhandle_t *zh;      /* floor                                    */
  zkl_session_t *s;   /* zkl (NULL: zkl-shared, the run's session) */
  zkl_counter_t *c;
  long done;          /* increments applied                        */
  samples_t lat;      /* µs per increment                          */
  int64_t t_end;      /* when it stopped                           */
} incer_t;

struct cas_run {
  int impl, n;
  const char *path;
  long total;               /* increments to do, over all contenders */
  incer_t *c;
  zkl_session_t *shared;    /* zkl-shared                            */
  bench_crew_t crew;
  atomic_long claimed;
};

static void *incer_main(void *arg) {
  incer_t *c = arg;
  cas_run_t *r = c->r;
  bench_crew_wait(&r->crew);
  while (!atomic_load(&r->crew.stop) && atomic_fetch_add(&r->claimed, 1) < r->total) {
    int64_t t0 = bench_now_ns();
    if (r->impl == I_FLOOR) {
      int zrc = floor_counter_add(c->zh, r->path, 1, NULL);
      if (zrc != ZOK) {
        bench_fail("S11 floor: %s", zerror(zrc));
        break;
      }
    } else {
      int rc = zkl_counter_add(c->c, 1, OP_TIMEOUT_MS, NULL);
      if (rc != 0) {
        bench_fail("S11 %s: zkl_counter_add: %s: %s", impl_names[r->impl],
                   zkl_strerror(rc), zkl_last_error());
        break;
      }
    }
    samples_add(&c->lat, (double)(bench_now_ns() - t0) / 1e3);
    c->done++;
  }
  c->t_end = bench_now_ns();
  return NULL;
}

static int incer_setup(cas_run_t *r, incer_t *c, const char *hosts) {
  c->r = r;
  if (r->impl == I_FLOOR) {
    c->zh = floor_open(hosts, 10000);
    if (c->zh == NULL) return -1;
    int32_t v;
    return floor_counter_read(c->zh, r->path, &v, NULL) == ZOK ? 0 : -1;
  }
  zkl_session_t *s = r->shared;
  if (s == NULL && (s = c->s = bench_zkl_open(hosts, 0)) == NULL) return -1;
  zkl_counter_opts_t co;
  zkl_counter_opts_init(&co);
  co.format = ZKL_COUNTER_INT32;
  int rc = zkl_counter_create(&c->c, s, r->path, &co);
  zkl_count_t now;
  if (rc == 0) rc = zkl_counter_get(c->c, &now); /* warm: one read */
  if (rc == 0 && !now.exists) rc = ZKL_EPROTO;
  if (rc != 0)
    bench_fail("S11 %s: %s: %s", impl_names[r->impl], zkl_strerror(rc),
               zkl_last_error());
  return rc == 0 ? 0 : -1;
}

static void incer_teardown(incer_t *c) {
  floor_close(c->zh);
  zkl_counter_destroy(c->c);
  zkl_session_close(c->s);
  samples_free(&c->lat);
}

/* One implementation's runs, summed. */
typedef struct tally {
  samples_t rates;      /* increments per second, one per run   */
  samples_t lat;        /* every increment of every run, µs     */
  long *per;            /* increments of contender i, over runs */
  long done;
  srv_counters_t srv;
  double cpu_us;
  double host_us, ctxt;     /* the machine's, over the runs            */
  int srv_ok, host_ok;
} tally_t;

/* One run of impl on a fresh node; adds to *t.  0 or -1 (reported). */
static int run_once(const bench_opts_t *o, int impl, int rep, tally_t *t) {
  int n = o->cas_contenders, rc = -1, ready = 0;
  char leaf[64], path[256];
  snprintf(leaf, sizeof leaf, "s11-%s-%d", impl_names[impl], rep);
  bench_path(path, sizeof path, o->root, leaf, NULL);
  static const char zero[4] = {0, 0, 0, 0};
  int zrc = zoo_create(bench_admin, path, zero, 4, &ZOO_OPEN_ACL_UNSAFE, 0,
                       NULL, 0);
  if (zrc != ZOK) {
    bench_fail("S11: cannot create %s: %s", path, zerror(zrc));
    return -1;
  }
  cas_run_t r;
  memset(&r, 0, sizeof r);
  r.impl = impl;
  r.n = n;
  r.path = path;
  r.total = (long)n * o->increments;
  r.c = calloc((size_t)n, sizeof *r.c);
  if (r.c == NULL) return -1;
  if (impl == I_SHARED && (r.shared = bench_zkl_open(o->hosts, 0)) == NULL)
    goto out;
  for (ready = 0; ready < n; ready++)
    if (incer_setup(&r, &r.c[ready], o->hosts) != 0) {
      bench_fail("S11 %s: contender %d: setup failed", impl_names[impl],
                 ready);
      ready++;
      goto out;
    }
  bench_crew_run(&r.crew, "S11", o->hosts, n, incer_main, r.c, sizeof *r.c,
                 BENCH_S11_CAP_S);
  int64_t t0 = r.crew.t0;
  t->cpu_us += r.crew.cpu_us;
  if (r.crew.srv_ok) srv_add(&t->srv, &r.crew.srv);
  else t->srv_ok = 0;
  if (r.crew.host_ok) {
    t->host_us += r.crew.host_us;
    t->ctxt += r.crew.ctxt;
  } else {
    t->host_ok = 0;
  }
  int64_t t_end = t0;
  long sum = 0;
  for (int i = 0; i < n; i++) {
    if (r.c[i].t_end > t_end) t_end = r.c[i].t_end;
    sum += r.c[i].done;
    t->per[i] += r.c[i].done;
    for (size_t k = 0; k < r.c[i].lat.n; k++)
      samples_add(&t->lat, r.c[i].lat.v[k]);
  }
  t->done += sum;
  if (t_end > t0) samples_add(&t->rates, (double)sum * 1e9 / (double)(t_end - t0));
  if (sum < r.total)
    bench_note("S11 %s: a run stopped after %d s with %ld of %ld increments",
               impl_names[impl], BENCH_S11_CAP_S, sum, r.total);
  /* no update lost: the node holds exactly what was added */
  int32_t v = 0;
  zrc = floor_counter_read(bench_admin, path, &v, NULL);
  if (zrc != ZOK)
    bench_fail("S11 %s: cannot read %s: %s", impl_names[impl], path,
               zerror(zrc));
  else if ((long)v != sum)
    bench_fail("S11 %s: %s holds %ld after %ld increments: %s",
               impl_names[impl], path, (long)v, sum,
               (long)v < sum ? "a lost update" : "counted twice");
  else
    rc = 0;
out:
  for (int i = 0; i < ready; i++) incer_teardown(&r.c[i]);
  zkl_session_close(r.shared);
  free(r.c);
  return rc;
}

void sc_counter(const bench_opts_t *o) {
  int n = o->cas_contenders;
  char kase[24];
  snprintf(kase, sizeof kase, "N=%d", n);
  tally_t t[N_IMPLS];
  memset(t, 0, sizeof t);
  int ok = 1;
  for (int i = 0; i < N_IMPLS; i++) {
    t[i].per = calloc((size_t)n, sizeof *t[i].per);
    t[i].srv_ok = 1;
    t[i].host_ok = 1;
    ok = ok && t[i].per != NULL;
  }
  for (int rep = 0; rep < o->reps && ok; rep++)
    for (int k = 0; k < N_IMPLS && ok; k++) {
      int impl = (rep + k) % N_IMPLS; /* floor first, then zkl first, ... */
      ok = run_once(o, impl, rep, &t[impl]) == 0;
    }
  for (int i = 0; i < N_IMPLS; i++) {
    if (ok && t[i].done > 0) {
      const char *impl = impl_names[i];
      result_add("11", kase, impl, "increments/s", "1/s",
                 samples_quantile(&t[i].rates, 0.5), NAN, t[i].done);
      result_add_samples("11", kase, impl, "increment", "us", &t[i].lat);
      result_add("11", kase, impl, "fairness", "",
                 bench_fairness(t[i].per, n), NAN, n);
      if (t[i].srv_ok)
        srv_report("11", kase, impl, "inc", &t[i].srv, (double)t[i].done);
      result_add("11", kase, impl, "cpu/inc", "us",
                 t[i].cpu_us / (double)t[i].done, NAN, t[i].done);
      if (t[i].host_ok) {
        result_add("11", kase, impl, "host-cpu/inc", "us",
                   t[i].host_us / (double)t[i].done, NAN, t[i].done);
        result_add("11", kase, impl, "ctxsw/inc", "",
                   t[i].ctxt / (double)t[i].done, NAN, t[i].done);
      }
    }
    samples_free(&t[i].rates);
    samples_free(&t[i].lat);
    free(t[i].per);
  }
  printf("  S11 %s done\n", kase);
}
