/* bench/stats.c - samples, the results of a run, the targets, and
 * how they are printed: a table on stdout and a CSV for the plots. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

int64_t bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

double bench_cpu_us(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
         (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

void bench_sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* ---- samples ------------------------------------------------------------------ */

void samples_add(samples_t *s, double x) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 256;
    double *v = realloc(s->v, cap * sizeof *v);
    if (v == NULL) return; /* a lost sample, not a lost run */
    s->v = v;
    s->cap = cap;
  }
  s->v[s->n++] = x;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double samples_quantile(samples_t *s, double q) {
  if (s->n == 0) return NAN;
  qsort(s->v, s->n, sizeof *s->v, cmp_double);
  size_t rank = (size_t)ceil(q * (double)s->n); /* nearest rank, 1-based */
  if (rank < 1) rank = 1;
  if (rank > s->n) rank = s->n;
  return s->v[rank - 1];
}

void samples_free(samples_t *s) {
  free(s->v);
  memset(s, 0, sizeof *s);
}

void samples_mt_init(samples_mt_t *m) {
  pthread_mutex_init(&m->mu, NULL);
  memset(&m->s, 0, sizeof m->s);
}

void samples_mt_add(samples_mt_t *m, double x) {
  pthread_mutex_lock(&m->mu);
  samples_add(&m->s, x);
  pthread_mutex_unlock(&m->mu);
}

void samples_mt_fini(samples_mt_t *m) {
  samples_free(&m->s);
  pthread_mutex_destroy(&m->mu);
}

/* ---- results -------------------------------------------------------------------- */

static result_t *results;
static size_t n_results, cap_results;

typedef struct target {
  char scenario[4];
  char what[96];
  double measured, limit;
  cmp_t cmp;
} target_t;

static target_t *targets;
static size_t n_targets, cap_targets;

static void copy_field(char *dst, size_t len, const char *src) {
  snprintf(dst, len, "%s", src != NULL ? src : "");
}

void result_add(const char *scenario, const char *kase, const char *impl,
                const char *metric, const char *unit, double median,
                double p99, long n) {
  if (n_results == cap_results) {
    size_t cap = cap_results ? cap_results * 2 : 64;
    result_t *r = realloc(results, cap * sizeof *r);
    if (r == NULL) return;
    results = r;
    cap_results = cap;
  }
  result_t *r = &results[n_results++];
  copy_field(r->scenario, sizeof r->scenario, scenario);
  copy_field(r->kase, sizeof r->kase, kase);
  copy_field(r->impl, sizeof r->impl, impl);
  copy_field(r->metric, sizeof r->metric, metric);
  copy_field(r->unit, sizeof r->unit, unit);
  r->median = median;
  r->p99 = p99;
  r->n = n;
}

void result_add_samples(const char *scenario, const char *kase,
                        const char *impl, const char *metric,
                        const char *unit, samples_t *s) {
  long n = (long)s->n;
  double med = samples_quantile(s, 0.5), p99 = samples_quantile(s, 0.99);
  result_add(scenario, kase, impl, metric, unit, med, p99, n);
  samples_free(s);
}

const result_t *result_find(const char *scenario, const char *kase,
                            const char *impl, const char *metric) {
  for (size_t i = 0; i < n_results; i++) {
    const result_t *r = &results[i];
    if (strcmp(r->scenario, scenario) == 0 && strcmp(r->kase, kase) == 0 &&
        strcmp(r->impl, impl) == 0 && strcmp(r->metric, metric) == 0)
      return r;
  }
  return NULL;
}

void target_add(const char *scenario, const char *what, double measured,
                cmp_t cmp, double limit) {
  if (n_targets == cap_targets) {
    size_t cap = cap_targets ? cap_targets * 2 : 32;
    target_t *t = realloc(targets, cap * sizeof *t);
    if (t == NULL) return;
    targets = t;
    cap_targets = cap;
  }
  target_t *t = &targets[n_targets++];
  copy_field(t->scenario, sizeof t->scenario, scenario);
  copy_field(t->what, sizeof t->what, what);
  t->measured = measured;
  t->cmp = cmp;
  t->limit = limit;
}

/* 1 met, 0 missed, -1 not measured */
static int verdict(const target_t *t) {
  if (isnan(t->measured)) return -1;
  /* the measured value itself, not as printed (3 significant digits):
   * rounding first passed 0.9476 as >= 0.95 */
  return t->cmp == CMP_LE ? t->measured <= t->limit
                          : t->measured >= t->limit;
}

static const char *verdict_name(int v) {
  return v > 0 ? "met" : v == 0 ? "MISSED" : "n/a";
}

int targets_missed(void) {
  int n = 0;
  for (size_t i = 0; i < n_targets; i++) n += verdict(&targets[i]) != 1;
  return n;
}

void results_free(void) {
  free(results);
  free(targets);
  results = NULL;
  targets = NULL;
  n_results = cap_results = n_targets = cap_targets = 0;
}

/* ---- merging another run's rows ------------------------------------------------- */

/* Splits a CSV line (no quoting: our fields never hold commas, see
 * csv_text) in place. */
static int split_csv(char *line, char **f, int max) {
  int n = 0;
  line[strcspn(line, "\r\n")] = '\0';
  for (char *p = line; n < max;) {
    f[n++] = p;
    char *c = strchr(p, ',');
    if (c == NULL) break;
    *c = '\0';
    p = c + 1;
  }
  return n;
}

static double parse_num(const char *s) {
  if (s == NULL || *s == '\0') return NAN;
  char *end;
  double v = strtod(s, &end);
  return end == s ? NAN : v;
}

/* Our columns: config,kind,scenario,case,impl,metric,unit,median,p99,n,... */
int results_merge(const char *path) {
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    fprintf(stderr, "zkl-bench: cannot read %s: %s\n", path, strerror(errno));
    return -1;
  }
  char line[512];
  int rows = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    char *fld[13];
    int n = split_csv(line, fld, 13);
    if (n < 10 || strcmp(fld[1], "m") != 0) continue; /* header, targets */
    result_add(fld[2], fld[3], fld[4], fld[5], fld[6], parse_num(fld[7]),
               parse_num(fld[8]), (long)parse_num(fld[9]));
    rows++;
  }
  fclose(f);
  if (rows == 0) fprintf(stderr, "zkl-bench: no rows in %s\n", path);
  return 0;
}

/* ---- printing -------------------------------------------------------------------- */

static const char *scenario_title(const char *s) {
  static const char *titles[] = {"",
                                 "S1 uncontended cycle",
                                 "S2 trylock on a held lock",
                                 "S3 contended handoff",
                                 "S4 wake cost vs queue length",
                                 "S5 read/write lock",
                                 "S6 election takeover",
                                 "S7 memory per waiter",
                                 "S8 pending async locks",
                                 "S9 queue throughput",
                                 "S10 queue herd: server work per put",
                                 "S11 counter: CAS increments, N contenders",
                                 "S12 multi-lock: K paths, N contenders",
                                 "S13 semaphore: MAX leases, N contenders",
                                 "S14 aggregate: T threads, a path each"};
  int i = atoi(s);
  return i >= 1 && i <= 14 ? titles[i] : s;
}

static void fmt_num(char *buf, size_t len, double v) {
  if (isnan(v)) snprintf(buf, len, "-");
  else if (fabs(v) >= 1000 || v == floor(v)) snprintf(buf, len, "%.0f", v);
  else if (fabs(v) >= 10) snprintf(buf, len, "%.1f", v);
  else snprintf(buf, len, "%.3g", v);
}

/* The floor of a row: same scenario, case and metric, impl "floor". */
static const result_t *floor_of(const result_t *r) {
  if (strcmp(r->impl, "floor") == 0) return NULL;
  return result_find(r->scenario, r->kase, "floor", r->metric);
}

static double ratio_to_floor(const result_t *r) {
  const result_t *f = floor_of(r);
  if (f == NULL || isnan(f->median) || f->median == 0) return NAN;
  return r->median / f->median;
}

static int scenario_order(const void *a, const void *b) {
  const result_t *x = a, *y = b;
  return atoi(x->scenario) - atoi(y->scenario);
}

void results_print(FILE *f, const char *config) {
  /* a stable sort by scenario keeps the order each scenario added */
  for (size_t i = 1; i < n_results; i++)
    for (size_t j = i; j > 0 && scenario_order(&results[j - 1],
                                               &results[j]) > 0; j--) {
      result_t t = results[j];
      results[j] = results[j - 1];
      results[j - 1] = t;
    }
  fprintf(f, "\nzkl-bench results (server config: %s)\n", config);
  const char *last = "";
  for (size_t i = 0; i < n_results; i++) {
    const result_t *r = &results[i];
    if (strcmp(r->scenario, last) != 0) {
      fprintf(f, "\n%s\n  %-12s %-11s %-15s %-4s %10s %10s %7s %8s\n",
              scenario_title(r->scenario), "case", "impl", "metric", "unit",
              "median", "p99", "n", "x floor");
      last = r->scenario;
    }
    char med[32], p99[32], ratio[32];
    fmt_num(med, sizeof med, r->median);
    fmt_num(p99, sizeof p99, r->p99);
    double q = ratio_to_floor(r);
    if (isnan(q)) snprintf(ratio, sizeof ratio, "%s",
                           strcmp(r->impl, "floor") == 0 ? "1" : "");
    else snprintf(ratio, sizeof ratio, "%.2f", q);
    fprintf(f, "  %-12s %-11s %-15s %-4s %10s %10s %7ld %8s\n", r->kase,
            r->impl, r->metric, r->unit, med, p99, r->n, ratio);
  }
  fprintf(f, "\nTargets of issue 6 (server config: %s)\n", config);
  fprintf(f, "  %-3s %-58s %9s %8s  %s\n", "S", "target", "measured",
          "limit", "verdict");
  for (size_t i = 0; i < n_targets; i++) {
    const target_t *t = &targets[i];
    char m[32];
    fmt_num(m, sizeof m, t->measured);
    if (!isnan(t->measured) && fabs(t->measured) < 1000)
      snprintf(m, sizeof m, "%.2f", t->measured);
    char lim[32];
    snprintf(lim, sizeof lim, "%s %g", t->cmp == CMP_LE ? "<=" : ">=",
             t->limit);
    fprintf(f, "  %-3s %-58s %9s %8s  %s\n", t->scenario, t->what, m, lim,
            verdict_name(verdict(t)));
  }
  fflush(f);
}

static void csv_num(FILE *f, double v) {
  if (!isnan(v)) fprintf(f, "%.6g", v);
}

/* A text field: our CSV has no quoting, so a comma becomes ';'. */
static void csv_text(FILE *f, const char *s) {
  for (; *s != '\0'; s++) fputc(*s == ',' ? ';' : *s, f);
}

int results_write_csv(const char *path, const char *config) {
  FILE *f = fopen(path, "w");
  if (f == NULL) {
    fprintf(stderr, "zkl-bench: cannot write %s: %s\n", path, strerror(errno));
    return -1;
  }
  fprintf(f, "config,kind,scenario,case,impl,metric,unit,median,p99,n,"
             "ratio,limit,verdict\n");
  for (size_t i = 0; i < n_results; i++) {
    const result_t *r = &results[i];
    fprintf(f, "%s,m,%s,%s,%s,%s,%s,", config, r->scenario, r->kase, r->impl,
            r->metric, r->unit);
    csv_num(f, r->median);
    fputc(',', f);
    csv_num(f, r->p99);
    fprintf(f, ",%ld,", r->n);
    csv_num(f, ratio_to_floor(r));
    fprintf(f, ",,\n");
  }
  for (size_t i = 0; i < n_targets; i++) {
    const target_t *t = &targets[i];
    fprintf(f, "%s,t,%s,,,", config, t->scenario);
    csv_text(f, t->what);
    fputs(",,", f);
    csv_num(f, t->measured);
    fprintf(f, ",,,,%s%g,%s\n", t->cmp == CMP_LE ? "<=" : ">=", t->limit,
            verdict_name(verdict(t)));
  }
  int rc = ferror(f) ? -1 : 0;
  if (fclose(f) != 0) rc = -1;
  return rc;
}

/* ---- a crew ------------------------------------------------------------------------ */

/* The host's busy CPU (µs) and context switches so far, from /proc/stat.
 * 0 or -1. */
static int host_sample(double *busy_us, double *ctxt) {
  FILE *f = fopen("/proc/stat", "r");
  if (f == NULL) return -1;
  char line[512];
  int got = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    unsigned long long u, ni, sy, id, io, irq, sirq, st;
    if (strncmp(line, "cpu ", 4) == 0 &&
        sscanf(line + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &u, &ni,
               &sy, &id, &io, &irq, &sirq, &st) == 8) {
      *busy_us = (double)(u + ni + sy + irq + sirq) * 1e6 /
                 (double)sysconf(_SC_CLK_TCK);
      got |= 1;
    } else if (strncmp(line, "ctxt ", 5) == 0) {
      *ctxt = strtod(line + 5, NULL);
      got |= 2;
    }
  }
  fclose(f);
  return got == 3 ? 0 : -1;
}

void bench_crew_wait(bench_crew_t *w) { pthread_barrier_wait(&w->start); }

void bench_crew_run(bench_crew_t *w, const char *what, const char *hosts,
                    int n, void *(*main)(void *), void *base, size_t size,
                    int cap_s) {
  pthread_t *th = calloc((size_t)n, sizeof *th);
  char *joined = calloc((size_t)n, 1);
  if (th == NULL || joined == NULL) {
    bench_fail("%s: no memory for %d threads", what, n);
    exit(1);
  }
  atomic_store(&w->stop, 0);
  pthread_barrier_init(&w->start, NULL, (unsigned)n + 1);
  for (int i = 0; i < n; i++)
    if (pthread_create(&th[i], NULL, main, (char *)base + (size_t)i * size) !=
        0) { /* the rest wait at the barrier for ever: give up */
      bench_fail("%s: cannot start %d threads", what, n);
      exit(1);
    }
  srv_counters_t a, b;
  int counted = srv_sample(hosts, &a) == 0;
  double h0 = 0, x0 = 0, h1 = 0, x1 = 0;
  int hosted = host_sample(&h0, &x0) == 0;
  double cpu0 = bench_cpu_us();
  pthread_barrier_wait(&w->start);
  w->t0 = bench_now_ns();
  struct timespec cap;
  clock_gettime(CLOCK_REALTIME, &cap);
  cap.tv_sec += cap_s;
  for (int i = 0; i < n; i++)
    if (pthread_timedjoin_np(th[i], NULL, &cap) == 0) {
      joined[i] = 1;
    } else {
      atomic_store(&w->stop, 1); /* each stops after its operation */
      break;
    }
  for (int i = 0; i < n; i++)
    if (!joined[i]) pthread_join(th[i], NULL);
  w->cpu_us = bench_cpu_us() - cpu0;
  w->host_ok = hosted && host_sample(&h1, &x1) == 0;
  w->host_us = w->host_ok ? h1 - h0 : 0;
  w->ctxt = w->host_ok ? x1 - x0 : 0;
  pthread_barrier_destroy(&w->start);
  w->srv_ok = counted && srv_sample(hosts, &b) == 0;
  if (w->srv_ok) srv_delta(&a, &b, &w->srv);
  free(th);
  free(joined);
}

double bench_fairness(const long *per, int n) {
  long lo = -1, hi = 0;
  for (int i = 0; i < n; i++) {
    if (lo < 0 || per[i] < lo) lo = per[i];
    if (per[i] > hi) hi = per[i];
  }
  return hi > 0 ? (double)lo / (double)hi : NAN;
}

void bench_peer_ratios(const char *sc, const char *kase, const char *metric,
                       const char *ratio_metric) {
  static const char *const peers[] = {"curator", "kazoo"};
  const result_t *z = result_find(sc, kase, "zkl", metric);
  for (size_t i = 0; i < sizeof peers / sizeof *peers; i++) {
    const result_t *p = result_find(sc, kase, peers[i], metric);
    if (z == NULL || p == NULL || !(p->median > 0)) continue;
    char impl[16];
    snprintf(impl, sizeof impl, "zkl/%s", peers[i]);
    /* a metric of its own: no floor row to be divided by */
    result_add(sc, kase, impl, ratio_metric, "x", z->median / p->median, NAN,
               0);
  }
}

void bench_runs_print(const char *sc, const char *kase, const char *impl,
                      const samples_t *rates, const char *unit) {
  printf("  S%s %s %s %s run by run:", sc, kase, impl, unit);
  for (size_t i = 0; i < rates->n; i++) printf(" %.1f", rates->v[i]);
  printf("\n");
}

void bench_paired(const char *sc, const char *kase, const char *rate,
                  const samples_t *zkl, const samples_t *floor) {
  samples_t r;
  memset(&r, 0, sizeof r);
  size_t n = zkl->n < floor->n ? zkl->n : floor->n;
  for (size_t i = 0; i < n; i++)
    if (floor->v[i] > 0) samples_add(&r, zkl->v[i] / floor->v[i]);
  if (r.n == 0) return; /* no pair: the targets fall back to the medians */
  char metric[24];
  /* the lowest and highest first: the median sorts them */
  double lo = r.v[0], hi = r.v[0];
  for (size_t i = 1; i < r.n; i++) {
    if (r.v[i] < lo) lo = r.v[i];
    if (r.v[i] > hi) hi = r.v[i];
  }
  long pairs = (long)r.n;
  double med = samples_quantile(&r, 0.5);
  samples_free(&r);
  snprintf(metric, sizeof metric, "%s paired", rate);
  result_add(sc, kase, "zkl/floor", metric, "x", med, NAN, pairs);
  result_add(sc, kase, "zkl/floor", "paired lowest", "x", lo, NAN, pairs);
  result_add(sc, kase, "zkl/floor", "paired highest", "x", hi, NAN, pairs);
}

/* ---- tallies of crew runs ----------------------------------------------------------- */

int bench_tallies_init(bench_tally_t *t, int n_impls, int n) {
  memset(t, 0, sizeof *t * (size_t)n_impls);
  int ok = 1;
  for (int i = 0; i < n_impls; i++) {
    t[i].per = calloc((size_t)n, sizeof *t[i].per);
    t[i].srv_ok = 1;
    ok = ok && t[i].per != NULL;
  }
  return ok ? 0 : -1;
}

void bench_tallies_free(bench_tally_t *t, int n_impls) {
  for (int i = 0; i < n_impls; i++) {
    samples_free(&t[i].rates);
    free(t[i].per);
    t[i].per = NULL;
  }
}

void bench_tally_add(bench_tally_t *t, const bench_crew_t *w, const long *per,
                     int n, int64_t t_end) {
  t->cpu_us += w->cpu_us;
  if (w->srv_ok) srv_add(&t->srv, &w->srv);
  else t->srv_ok = 0;
  long sum = 0;
  for (int i = 0; i < n; i++) {
    sum += per[i];
    t->per[i] += per[i];
  }
  t->done += sum;
  if (t_end > w->t0)
    samples_add(&t->rates, (double)sum * 1e9 / (double)(t_end - w->t0));
}

void bench_tally_report(const bench_tally_t *t, const char *sc,
                        const char *kase, const char *impl, const char *rate,
                        const char *op, int n) {
  if (t->done <= 0) return;
  char metric[24];
  samples_t rates = t->rates; /* sorted in place: the order is no matter */
  result_add(sc, kase, impl, rate, "1/s", samples_quantile(&rates, 0.5), NAN,
             t->done);
  result_add(sc, kase, impl, "fairness", "", bench_fairness(t->per, n), NAN,
             n);
  if (t->srv_ok) srv_report(sc, kase, impl, op, &t->srv, (double)t->done);
  snprintf(metric, sizeof metric, "cpu/%s", op);
  result_add(sc, kase, impl, metric, "us", t->cpu_us / (double)t->done, NAN,
             t->done);
}

int bench_rotate(int reps, int n_impls, int (*run)(void *arg, int impl),
                 void *arg) {
  for (int rep = 0; rep < reps; rep++)
    for (int k = 0; k < n_impls; k++)
      if (run(arg, (rep + k) % n_impls) != 0) return -1;
  return 0;
}
