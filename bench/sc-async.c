/* bench/sc-async.c - scenario 8: pending asynchronous acquisitions.
 *
 * P zkl_mutex_lock_async() calls (distinct mutex objects, on ONE session)
 * wait behind a holder on another session while this process's main
 * thread, the event loop, only dispatches.  Measured: the threads the
 * process has more than before (the session's are counted in the
 * baseline: a pending lock must add none), the resident memory each
 * pending acquisition adds (and, apart, what its object costs before it
 * is used), whether they are
 * served in the order they were made once the holder lets go, and how
 * fast the loop drains them (each completion releases at once, which
 * grants the next). */
#include <dirent.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

typedef struct pend {
  zkl_session_t *s;
  zkl_mutex_t **m;
  int p;
  int granted, released, errors, out_of_order;
  uint64_t last_token;
  int64_t t_first, t_last;
} pend_t;

static int threads_now(void) {
  DIR *d = opendir("/proc/self/task");
  if (d == NULL) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n;
}

static void on_released(void *obj, int rc, uint64_t token, void *arg) {
  (void)obj, (void)token;
  pend_t *pd = arg;
  if (rc != 0) pd->errors++;
  pd->released++;
}

/* A grant: in order?  Then hand over at once. */
static void on_granted(void *obj, int rc, uint64_t token, void *arg) {
  pend_t *pd = arg;
  if (rc != 0) {
    pd->errors++;
    pd->released++;
    return;
  }
  /* made in index order on one session, so granted in that order */
  if (obj != pd->m[pd->granted] || token <= pd->last_token)
    pd->out_of_order++;
  pd->last_token = token;
  if (pd->granted++ == 0) pd->t_first = bench_now_ns();
  pd->t_last = bench_now_ns();
  if (zkl_mutex_unlock_async(obj, on_released, pd) != 0) {
    pd->errors++;
    pd->released++;
  }
}

/* Dispatches until cond(pd) or the deadline; whether cond came. */
static int loop_until(pend_t *pd, int (*cond)(const pend_t *),
                      int64_t deadline) {
  struct pollfd p = {zkl_session_fd(pd->s), POLLIN, 0};
  while (!cond(pd)) {
    if (bench_now_ns() > deadline) return 0;
    if (poll(&p, 1, 50) == 1) zkl_session_dispatch(pd->s);
  }
  return 1;
}

static int all_released(const pend_t *pd) { return pd->released >= pd->p; }

void sc_pending_async(const bench_opts_t *o) {
  char path[256], kase[24];
  bench_path(path, sizeof path, o->root, "s8", NULL);
  bench_mkpath(bench_admin, path);
  snprintf(kase, sizeof kase, "P=%d", o->pending);
  pend_t pd;
  memset(&pd, 0, sizeof pd);
  pd.p = o->pending;
  pd.m = calloc((size_t)pd.p, sizeof *pd.m);
  zkl_session_t *hs = bench_zkl_open(o->hosts, 0);
  pd.s = bench_zkl_open(o->hosts, 0);
  zkl_mutex_t *hm = NULL;
  int made = 0;
  if (pd.m == NULL || hs == NULL || pd.s == NULL ||
      zkl_mutex_create(&hm, hs, path, NULL) != 0 || zkl_mutex_lock(hm) != 0) {
    bench_fail("S8: setup failed");
    goto out;
  }
  /* the baseline: both sessions open and used, the holder holding; the
   * objects first (what a daemon with that many locks keeps anyway), then
   * the acquisitions (what waiting for them adds) */
  int threads0 = threads_now();
  srv_counters_t w0;
  if (srv_sample(o->hosts, &w0) != 0) w0.watches = 0;
  double rss0 = bench_rss_bytes(), heap0 = bench_heap_bytes();
  for (; made < pd.p; made++)
    if (zkl_mutex_create(&pd.m[made], pd.s, path, NULL) != 0) break;
  double rss_obj = bench_rss_bytes(), heap_obj = bench_heap_bytes();
  int started = 0;
  for (; started < made; started++)
    if (zkl_mutex_lock_async(pd.m[started], -1, on_granted, &pd) != 0) break;
  if (started < pd.p) {
    bench_fail("S8: only %d of %d acquisitions started", started, pd.p);
    pd.p = started;
  }
  /* all queued: every node made (the listing of the last is what a
   * pending lock keeps), none granted */
  int64_t deadline = bench_now_ns() + (int64_t)(60000 + 20 * pd.p) * 1000000;
  while (bench_children(bench_admin, path) < pd.p + 1 &&
         bench_now_ns() < deadline)
    bench_sleep_ms(50);
  int queued = bench_children(bench_admin, path) == pd.p + 1;
  /* ... and waiting: a watch each on the server (on the node ahead), the
   * count settled (the last acquisitions are still reading their listing
   * and arming their watches when the last node appears) */
  int64_t since = 0;
  double last = -1;
  for (;;) {
    srv_counters_t c;
    int64_t now = bench_now_ns();
    if (now > deadline) break;
    if (srv_sample(o->hosts, &c) == 0 && c.watches >= w0.watches + pd.p) {
      if (c.watches != last) {
        last = c.watches;
        since = now;
      } else if (now - since >= 500 * 1000000LL) {
        break;
      }
    }
    bench_sleep_ms(50);
  }
  zkl_session_dispatch(pd.s);
  int threads1 = threads_now();
  double rss1 = bench_rss_bytes(), heap1 = bench_heap_bytes();
  if (!queued || pd.granted > 0)
    bench_fail("S8: %d of %d queued, %d granted before the release",
               bench_children(bench_admin, path) - 1, pd.p, pd.granted);
  int64_t t0 = bench_now_ns();
  if (zkl_mutex_unlock(hm) != 0) bench_fail("S8: the holder's unlock failed");
  if (!loop_until(&pd, all_released,
                  bench_now_ns() + (int64_t)(60000 + 20 * pd.p) * 1000000))
    bench_fail("S8: %d of %d served", pd.released, pd.p);
  double drain_s = (double)(bench_now_ns() - t0) / 1e9;
  if (pd.errors > 0) bench_fail("S8: %d acquisitions failed", pd.errors);
  result_add("8", kase, "zkl", "threads added", "", threads1 - threads0, NAN,
             pd.p);
  result_add("8", kase, "zkl", "rss/object", "B", (rss_obj - rss0) / made,
             NAN, made);
  result_add("8", kase, "zkl", "rss/pending", "B", (rss1 - rss_obj) / pd.p,
             NAN, pd.p);
  result_add("8", kase, "zkl", "rss/both", "B", (rss1 - rss0) / pd.p, NAN,
             pd.p);
  result_add("8", kase, "zkl", "heap/pending", "B",
             heap0 > 0 ? (heap1 - heap_obj) / pd.p : NAN, NAN, pd.p);
  result_add("8", kase, "zkl", "out of order", "", pd.out_of_order, NAN,
             pd.granted);
  result_add("8", kase, "zkl", "handoffs/s", "1/s",
             drain_s > 0 ? pd.granted / drain_s : NAN, NAN, pd.granted);
  printf("  S8 %s: %d served in %.1f s\n", kase, pd.granted, drain_s);
out:
  for (int i = 0; i < made; i++) zkl_mutex_destroy(pd.m[i]);
  free(pd.m);
  zkl_mutex_destroy(hm);
  zkl_session_close(pd.s);
  zkl_session_close(hs);
}
