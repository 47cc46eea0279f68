/* bench/sc-queue.c - scenarios 4 and 7: a queue of Q waiters formed once
 * behind a holder, then drained: each waiter takes the lock once and
 * releases it, without queuing again.
 *
 * S4: what the server does per handoff while the queue drains (mntr
 *     before/after), for Q = 10, 100, 1000: flat for zkl (no listing per
 *     wake-up), linear for the classic protocol.
 * S7: the memory of a waiting mutex object: 1000 waiters on ONE session
 *     in this process; RSS and heap before (threads parked) and after
 *     (each waiting in zkl_mutex_lock).  Each thread first takes and
 *     releases a lock of its own once, as any thread of a daemon using zkl
 *     has: the figure is what the waiting object adds, not the first use
 *     of a fresh thread's stack and allocator cache.  How deep a waiting
 *     lock call goes into its thread's stack is reported on its own. */
#include <malloc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define WAIT_MS 120000          /* bound of every wait of a waiter     */
#define STACK_SIZE (256 * 1024) /* per waiter thread                    */
#define PROBE_SIZE (32 * 1024)  /* stack below a waiter, patterned (S7)  */
#define PROBE_BYTE 0xA5

typedef struct drain drain_t;

typedef struct waiter {
  drain_t *d;
  pthread_t th;
  int idx;
  char *probe_lo, *probe_hi; /* patterned stack below waiter_main (S7) */
  zkl_mutex_t *m;     /* zkl   */
  floor_lock_t fl;    /* floor */
} waiter_t;

struct drain {
  int floor;                /* 1: the classic protocol by hand          */
  int q;                    /* waiters                                   */
  int n_sess;
  zkl_session_t **ss;       /* zkl sessions the waiters share            */
  zhandle_t **zhs;          /* or raw sessions                           */
  const char *path;
  waiter_t *w;
  pthread_mutex_t mu;       /* gate: the waiters start together          */
  pthread_cond_t cv;
  int go, arrived;
  int warm;                 /* S7: one lock of their own first           */
  int probe;                /* S7: measure the stack a waiting lock uses */
  atomic_long stack_max;    /* S7: deepest stack use of a waiting lock   */
  atomic_int holders, violations, errors;
  atomic_llong last_release;
  samples_mt_t lat;
};

static void gate_wait(drain_t *d) {
  pthread_mutex_lock(&d->mu);
  d->arrived++;
  pthread_cond_broadcast(&d->cv);
  while (!d->go) pthread_cond_wait(&d->cv, &d->mu);
  pthread_mutex_unlock(&d->mu);
}

/* Waits until n waiters stand at the gate. */
static void gate_wait_arrived(drain_t *d, int n) {
  pthread_mutex_lock(&d->mu);
  while (d->arrived < n) pthread_cond_wait(&d->cv, &d->mu);
  pthread_mutex_unlock(&d->mu);
}

static void gate_open(drain_t *d) {
  pthread_mutex_lock(&d->mu);
  d->go = 1;
  pthread_cond_broadcast(&d->cv);
  pthread_mutex_unlock(&d->mu);
}

/* Takes and releases a lock of this thread's own, uncontended. */
static void warm_up(waiter_t *w) {
  char path[300];
  snprintf(path, sizeof path, "%s-warm/%d", w->d->path, w->idx);
  zkl_mutex_t *m;
  if (zkl_mutex_create(&m, w->d->ss[w->idx % w->d->n_sess], path, NULL) != 0)
    return;
  if (zkl_mutex_lock(m) == 0) zkl_mutex_unlock(m);
  zkl_mutex_destroy(m);
}

/* Patterns the stack just below the caller's frame, where the frames of
 * the caller's next call will lie. */
__attribute__((noinline)) static void probe_fill(waiter_t *w) {
  volatile unsigned char probe[PROBE_SIZE];
  for (size_t i = 0; i < PROBE_SIZE; i++) probe[i] = PROBE_BYTE;
  uintptr_t lo = (uintptr_t)probe; /* kept only to look at it later */
  w->probe_lo = (char *)lo;
  w->probe_hi = (char *)(lo + PROBE_SIZE);
}

/* How much of the patterned stack a call since probe_fill() used. */
static long probe_used(const waiter_t *w) {
  for (const volatile char *p = w->probe_lo; p < w->probe_hi; p++)
    if ((unsigned char)*p != PROBE_BYTE) return (long)(w->probe_hi - p);
  return 0;
}

static void *waiter_main(void *arg) {
  waiter_t *w = arg;
  drain_t *d = w->d;
  void *volatile warm = malloc(64); /* attach this thread to a malloc */
  free(warm);                         /* arena before the baseline (S7) */
  if (d->warm) warm_up(w);
  if (d->probe) probe_fill(w);
  gate_wait(d);
  int rc;
  if (d->floor) {
    floor_lock_init(&w->fl, d->zhs[w->idx % d->n_sess], d->path, FLOOR_MUTEX);
    rc = floor_lock_acquire(&w->fl, WAIT_MS);
  } else {
    rc = zkl_mutex_create(&w->m, d->ss[w->idx % d->n_sess], d->path, NULL);
    if (rc == 0) rc = zkl_mutex_timedlock(w->m, WAIT_MS);
  }
  if (d->probe) {
    long used = probe_used(w), max = atomic_load(&d->stack_max);
    while (used > max && !atomic_compare_exchange_weak(&d->stack_max, &max,
                                                        used)) {
    }
  }
  if (rc != 0) {
    bench_fail("waiter %d: lock: %d %s", w->idx, rc,
               d->floor ? zerror(rc) : zkl_last_error());
    atomic_fetch_add(&d->errors, 1);
    return NULL;
  }
  int64_t t = bench_now_ns();
  if (atomic_fetch_add(&d->holders, 1) != 0)
    atomic_fetch_add(&d->violations, 1);
  samples_mt_add(&d->lat, (double)(t - atomic_load(&d->last_release)) / 1e3);
  atomic_fetch_sub(&d->holders, 1);
  atomic_store(&d->last_release, bench_now_ns());
  rc = d->floor ? floor_lock_release(&w->fl) : zkl_mutex_unlock(w->m);
  if (rc != 0) bench_fail("waiter %d: unlock: %d", w->idx, rc);
  return NULL;
}

/* The holder the queue forms behind: a session and a lock of its own. */
typedef struct holder {
  zhandle_t *zh;
  floor_lock_t fl;
  zkl_session_t *s;
  zkl_mutex_t *m;
} holder_t;

static int holder_lock(drain_t *d, holder_t *h, const char *hosts) {
  if (d->floor) {
    if ((h->zh = floor_open(hosts, 10000)) == NULL) return -1;
    floor_lock_init(&h->fl, h->zh, d->path, FLOOR_MUTEX);
    return floor_lock_acquire(&h->fl, WAIT_MS);
  }
  if ((h->s = bench_zkl_open(hosts, 0)) == NULL) return -1;
  int rc = zkl_mutex_create(&h->m, h->s, d->path, NULL);
  return rc != 0 ? rc : zkl_mutex_lock(h->m);
}

static int holder_unlock(drain_t *d, holder_t *h) {
  return d->floor ? floor_lock_release(&h->fl) : zkl_mutex_unlock(h->m);
}

static void holder_close(drain_t *d, holder_t *h) {
  if (d->floor) {
    if (h->zh != NULL) {
      floor_close(h->zh);
      floor_lock_fini(&h->fl);
    }
    return;
  }
  zkl_mutex_destroy(h->m);
  zkl_session_close(h->s);
}

/* What a queue's formation is measured by (S7); NULL for none. */
typedef struct mem_probe {
  double rss0, heap0, rss1, heap1;
} mem_probe_t;

/* Resident memory, after handing the allocator's free pages back (the
 * first listing of each waiter is transient: what is measured is what the
 * waiting objects keep). */
double bench_rss_bytes(void) {
  malloc_trim(0);
  long pages = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f == NULL) return NAN;
  int ok = fscanf(f, "%ld %ld", &pages, &resident) == 2;
  fclose(f);
  return ok ? (double)resident * (double)sysconf(_SC_PAGESIZE) : NAN;
}

double bench_heap_bytes(void) {
  struct mallinfo2 mi = mallinfo2(); /* every arena */
  return (double)mi.uordblks + (double)mi.hblkhd;
}

/* How long the server's watch count must stay put, all nodes made, before
 * the queue counts as formed. */
#define SETTLE_MS 300

/* Waits until every waiter is queued and waiting: all nodes made, at least
 * one watch per waiter on the server (zkl's waiters also watch their own
 * node, which the server counts once per session and path, so the total
 * is not known in advance), and the count settled.  0 or -1. */
static int wait_queued(drain_t *d, const char *hosts, double min_watches,
                       int timeout_ms) {
  int64_t deadline = bench_now_ns() + (int64_t)timeout_ms * 1000000;
  double last = -1;
  int64_t since = 0;
  for (;;) {
    srv_counters_t c;
    int64_t now = bench_now_ns();
    if (now > deadline) return -1;
    if (srv_sample(hosts, &c) == 0 && c.watches >= min_watches &&
        bench_children(bench_admin, d->path) == d->q + 1) {
      if (c.watches != last) {
        last = c.watches;
        since = now;
      } else if (now - since >= (int64_t)SETTLE_MS * 1000000) {
        return 0;
      }
    }
    bench_sleep_ms(20);
  }
}

/* Forms a queue of q waiters behind a holder, then drains it.  *delta gets
 * the server's counters over the drain; 0 or -1. */
static int drain_run(drain_t *d, const char *hosts, int per_session,
                     mem_probe_t *mem, srv_counters_t *delta) {
  holder_t h;
  memset(&h, 0, sizeof h);
  int rc = -1, sessions = 0, spawned = 0;
  d->n_sess = (d->q + per_session - 1) / per_session;
  d->ss = calloc((size_t)d->n_sess, sizeof *d->ss);
  d->zhs = calloc((size_t)d->n_sess, sizeof *d->zhs);
  d->w = calloc((size_t)d->q, sizeof *d->w);
  pthread_mutex_init(&d->mu, NULL);
  pthread_cond_init(&d->cv, NULL);
  samples_mt_init(&d->lat);
  if (d->ss == NULL || d->zhs == NULL || d->w == NULL) goto out;
  for (; sessions < d->n_sess; sessions++) {
    if (d->floor) d->zhs[sessions] = floor_open(hosts, 10000);
    else d->ss[sessions] = bench_zkl_open(hosts, 0);
    if (d->zhs[sessions] == NULL && d->ss[sessions] == NULL) goto out;
  }
  if (holder_lock(d, &h, hosts) != 0) {
    bench_fail("queue: the holder could not lock %s", d->path);
    goto out;
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, STACK_SIZE);
  for (; spawned < d->q; spawned++) {
    d->w[spawned].d = d;
    d->w[spawned].idx = spawned;
    if (pthread_create(&d->w[spawned].th, &attr, waiter_main,
                       &d->w[spawned]) != 0)
      break;
  }
  pthread_attr_destroy(&attr);
  srv_counters_t before, a, b;
  if (spawned < d->q || srv_sample(hosts, &before) != 0) {
    bench_fail("queue: cannot start %d waiters", d->q);
    d->q = spawned; /* release the ones that run: they queue and drain */
  }
  gate_wait_arrived(d, spawned);
  if (mem != NULL) {
    mem->rss0 = bench_rss_bytes();
    mem->heap0 = bench_heap_bytes();
  }
  gate_open(d);
  int queued = wait_queued(d, hosts, before.watches + spawned,
                           30000 + 30 * d->q) == 0;
  if (!queued) bench_fail("queue: %d waiters did not all queue", spawned);
  if (mem != NULL) {
    mem->rss1 = bench_rss_bytes();
    mem->heap1 = bench_heap_bytes();
  }
  int counted = srv_sample(hosts, &a) == 0;
  atomic_store(&d->last_release, bench_now_ns());
  if (holder_unlock(d, &h) != 0) bench_fail("queue: holder unlock failed");
  for (int i = 0; i < spawned; i++) pthread_join(d->w[i].th, NULL);
  counted = counted && srv_sample(hosts, &b) == 0;
  if (counted) srv_delta(&a, &b, delta);
  if (atomic_load(&d->violations) > 0)
    bench_fail("queue: two holders at once (%d times)",
               atomic_load(&d->violations));
  rc = queued && counted && atomic_load(&d->errors) == 0 ? 0 : -1;
out:
  holder_close(d, &h);
  for (int i = 0; i < spawned; i++) zkl_mutex_destroy(d->w[i].m);
  for (int i = 0; i < sessions; i++) {
    if (d->floor) floor_close(d->zhs[i]);
    else zkl_session_close(d->ss[i]);
  }
  if (d->floor)
    for (int i = 0; i < spawned; i++) floor_lock_fini(&d->w[i].fl);
  free(d->ss);
  free(d->zhs);
  free(d->w);
  pthread_cond_destroy(&d->cv);
  pthread_mutex_destroy(&d->mu);
  return rc;
}

void sc_wake_cost(const bench_opts_t *o) {
  for (int i = 0; i < o->n_queues; i++) {
    int q = o->queues[i];
    /* short queues are formed several times: enough handoffs to count */
    int reps = o->quick || q >= 100 ? 1 : 5;
    for (int floor = 1; floor >= 0; floor--) {
      const char *impl = floor ? "floor" : "zkl";
      char kase[24], leaf[32], path[256];
      snprintf(kase, sizeof kase, "Q=%d", q);
      snprintf(leaf, sizeof leaf, "s4-%s-%d", impl, q);
      bench_path(path, sizeof path, o->root, leaf, NULL);
      bench_mkpath(bench_admin, path);
      srv_counters_t sum;
      memset(&sum, 0, sizeof sum);
      samples_t lat = {0};
      int ok = 1;
      for (int r = 0; r < reps && ok; r++) {
        drain_t d;
        memset(&d, 0, sizeof d);
        d.floor = floor;
        d.q = q;
        d.path = path;
        srv_counters_t delta;
        ok = drain_run(&d, o->hosts, 25, NULL, &delta) == 0;
        for (size_t k = 0; k < d.lat.s.n; k++) samples_add(&lat, d.lat.s.v[k]);
        samples_mt_fini(&d.lat);
        if (!ok) break;
        srv_add(&sum, &delta);
      }
      result_add_samples("4", kase, impl, "handoff", "us", &lat);
      if (ok) srv_report("4", kase, impl, "handoff", &sum, (double)q * reps);
      printf("  S4 %s %s done\n", kase, impl);
    }
  }
}

void sc_memory(const bench_opts_t *o) {
  char path[256];
  bench_path(path, sizeof path, o->root, "s7", NULL);
  bench_mkpath(bench_admin, path);
  drain_t d;
  memset(&d, 0, sizeof d);
  d.q = o->waiters;
  d.path = path;
  d.warm = 1;
  /* The probe reads stack below the stack pointer, which valgrind reports;
   * its allocator, which mallinfo2 does not see, gives it away. */
  d.probe = bench_heap_bytes() > 0;
  mem_probe_t mem = {NAN, NAN, NAN, NAN};
  srv_counters_t delta;
  char kase[24];
  snprintf(kase, sizeof kase, "W=%d", d.q);
  /* every waiter on ONE session: what one process with many locks pays */
  if (drain_run(&d, o->hosts, d.q, &mem, &delta) == 0) {
    result_add("7", kase, "zkl", "rss/waiter", "B",
               (mem.rss1 - mem.rss0) / d.q, NAN, d.q);
    /* mallinfo2 says 0 under valgrind, whose allocator it does not see */
    double heap = mem.heap0 > 0 ? (mem.heap1 - mem.heap0) / d.q : NAN;
    result_add("7", kase, "zkl", "heap/waiter", "B", heap, NAN, d.q);
    result_add("7", kase, "zkl", "stack/lock", "B",
               d.probe ? (double)atomic_load(&d.stack_max) : NAN, NAN, d.q);
  }
  samples_mt_fini(&d.lat);
}
