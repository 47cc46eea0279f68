/* bench/sc-cycle.c - scenarios 1 and 2: one client alone.
 *
 * S1: an uncontended lock/unlock cycle, zkl against create + getChildren +
 *     delete by hand (each after the other's answer), against the same
 *     with create and getChildren sent back to back (floor-pipe), and with
 *     the delete made a multi that first changes the node's data as zkl's
 *     unlock of a contended hold does (floor-mark: what telling the
 *     release costs).  The variants take turns in blocks, kazoo's and
 *     Curator's cycles too (bench/peers.c), so that the disk and a machine
 *     shared with other jobs slow them alike.
 * S2: trylock on a lock another session holds: its latency against one
 *     raw getChildren, and what the server saw: requests, writes, the zxid
 *     and the lock root's cversion, which must not move. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define BLOCK BENCH_TURN_BLOCK /* operations per turn (the peers' too) */
#define COUNT_OPS 500   /* operations of a counted (mntr) window, at most */

typedef struct cycle_ctx {
  zhandle_t *zh;
  char floor_root[256], pipe_root[256], mark_root[256];
  zkl_mutex_t *m;
} cycle_ctx_t;

enum { V_FLOOR, V_PIPE, V_MARK, V_ZKL, N_VARIANTS };
static const char *variant_name[N_VARIANTS] = {"floor", "floor-pipe",
                                               "floor-mark", "zkl"};

/* One cycle of variant v.  0 or an error (already reported). */
static int cycle_once(cycle_ctx_t *c, int v) {
  int rc;
  switch (v) {
  case V_FLOOR:
    if ((rc = floor_cycle_seq(c->zh, c->floor_root)) != ZOK)
      bench_fail("S1 floor cycle: %s", zerror(rc));
    return rc;
  case V_PIPE:
    if ((rc = floor_cycle_pipelined(c->zh, c->pipe_root)) != ZOK)
      bench_fail("S1 pipelined floor cycle: %s", zerror(rc));
    return rc;
  case V_MARK:
    if ((rc = floor_cycle_mark(c->zh, c->mark_root)) != ZOK)
      bench_fail("S1 floor cycle with a mark: %s", zerror(rc));
    return rc;
  default:
    if ((rc = zkl_mutex_lock(c->m)) != 0) {
      bench_fail("S1 zkl_mutex_lock: %s: %s", zkl_strerror(rc),
                 zkl_last_error());
      return rc;
    }
    if ((rc = zkl_mutex_unlock(c->m)) != 0)
      bench_fail("S1 zkl_mutex_unlock: %s", zkl_strerror(rc));
    return rc;
  }
}

void sc_uncontended(const bench_opts_t *o) {
  cycle_ctx_t c;
  char zkl_root[256];
  memset(&c, 0, sizeof c);
  bench_path(c.floor_root, sizeof c.floor_root, o->root, "s1-floor", NULL);
  bench_path(c.pipe_root, sizeof c.pipe_root, o->root, "s1-pipe", NULL);
  bench_path(c.mark_root, sizeof c.mark_root, o->root, "s1-mark", NULL);
  bench_path(zkl_root, sizeof zkl_root, o->root, "s1-zkl", NULL);
  /* persistent roots for all three: no container reaping mid-run */
  bench_mkpath(bench_admin, c.floor_root);
  bench_mkpath(bench_admin, c.pipe_root);
  bench_mkpath(bench_admin, c.mark_root);
  bench_mkpath(bench_admin, zkl_root);
  c.zh = floor_open(o->hosts, 10000);
  zkl_session_t *s = bench_zkl_open(o->hosts, 0);
  if (c.zh == NULL || s == NULL ||
      zkl_mutex_create(&c.m, s, zkl_root, NULL) != 0) {
    bench_fail("S1: setup failed");
    goto out;
  }
  samples_t lat[N_VARIANTS];
  memset(lat, 0, sizeof lat);
  bench_peers_t peers; /* kazoo's and Curator's cycles: their turns */
  bench_peers_start(&peers, o, 1);
  int warm = o->iters < 20 ? o->iters : 20, bad = 0;
  for (int v = 0; v < N_VARIANTS && !bad; v++)
    for (int i = 0; i < warm && !bad; i++) bad = cycle_once(&c, v) != 0;
  if (!bad) bench_peers_turn(&peers); /* their warm-up */
  for (int done = 0; done < o->iters && !bad; done += BLOCK) {
    int block = o->iters - done < BLOCK ? o->iters - done : BLOCK;
    for (int v = 0; v < N_VARIANTS && !bad; v++)
      for (int i = 0; i < block && !bad; i++) {
        int64_t t0 = bench_now_ns();
        bad = cycle_once(&c, v) != 0;
        samples_add(&lat[v], (double)(bench_now_ns() - t0) / 1e3);
      }
    if (!bad) bench_peers_turn(&peers); /* the same block of theirs */
  }
  for (int v = 0; v < N_VARIANTS; v++)
    result_add_samples("1", "cycle", variant_name[v], "latency", "us",
                       &lat[v]);
  /* what each cycle costs the server, in windows of their own */
  int k = o->iters < COUNT_OPS ? o->iters : COUNT_OPS;
  for (int v = 0; v < N_VARIANTS && !bad; v++) {
    srv_counters_t a, b, d;
    if (srv_sample(o->hosts, &a) != 0) break;
    double cpu0 = bench_cpu_us();
    for (int i = 0; i < k && !bad; i++) bad = cycle_once(&c, v) != 0;
    double cpu = bench_cpu_us() - cpu0;
    if (srv_sample(o->hosts, &b) != 0) break;
    srv_delta(&a, &b, &d);
    srv_report("1", "cycle", variant_name[v], "op", &d, k);
    result_add("1", "cycle", variant_name[v], "cpu/op", "us", cpu / k, NAN, k);
  }
  if (!bad) bench_peers_turn(&peers); /* their counted windows */
  if (bad) bench_peers_stop(&peers);
  bench_peers_end(&peers);
out:
  zkl_mutex_destroy(c.m);
  zkl_session_close(s);
  floor_close(c.zh);
}

/* ---- S2 ------------------------------------------------------------------------ */

static int root_stat(const char *root, struct Stat *st) {
  int zrc = zoo_exists(bench_admin, root, 0, st);
  if (zrc != ZOK) bench_fail("S2: exists %s: %s", root, zerror(zrc));
  return zrc;
}

void sc_trylock(const bench_opts_t *o) {
  char root[256];
  bench_path(root, sizeof root, o->root, "s2", NULL);
  bench_mkpath(bench_admin, root);
  zkl_session_t *hs = bench_zkl_open(o->hosts, 0);
  zkl_session_t *ts = bench_zkl_open(o->hosts, 0);
  zhandle_t *zh = floor_open(o->hosts, 10000);
  zkl_mutex_t *held = NULL, *m = NULL;
  if (hs == NULL || ts == NULL || zh == NULL ||
      zkl_mutex_create(&held, hs, root, NULL) != 0 ||
      zkl_mutex_create(&m, ts, root, NULL) != 0 || zkl_mutex_lock(held) != 0) {
    bench_fail("S2: setup failed");
    goto out;
  }
  samples_t zl = {0}, fl = {0};
  int bad = 0;
  for (int done = 0; done < o->iters && !bad; done += BLOCK) {
    int block = o->iters - done < BLOCK ? o->iters - done : BLOCK;
    for (int i = 0; i < block && !bad; i++) { /* the floor: one listing */
      struct String_vector kids = {0, NULL};
      int64_t t0 = bench_now_ns();
      int zrc = zoo_get_children(zh, root, 0, &kids);
      samples_add(&fl, (double)(bench_now_ns() - t0) / 1e3);
      deallocate_String_vector(&kids);
      if (zrc != ZOK) {
        bad = 1;
        bench_fail("S2 floor: %s", zerror(zrc));
      }
    }
    for (int i = 0; i < block && !bad; i++) {
      int64_t t0 = bench_now_ns();
      int rc = zkl_mutex_trylock(m);
      samples_add(&zl, (double)(bench_now_ns() - t0) / 1e3);
      if (rc != ZKL_EBUSY) {
        bad = 1;
        bench_fail("S2: trylock on a held lock gave %s", zkl_err_name(rc));
        if (rc == 0) zkl_mutex_unlock(m);
      }
    }
  }
  result_add_samples("2", "held", "floor", "latency", "us", &fl);
  result_add_samples("2", "held", "zkl", "latency", "us", &zl);

  /* counted windows: the floor's listing, then trylock */
  int k = o->iters < COUNT_OPS ? o->iters : COUNT_OPS;
  srv_counters_t a, b, d;
  if (!bad && srv_sample(o->hosts, &a) == 0) {
    for (int i = 0; i < k; i++) {
      struct String_vector kids = {0, NULL};
      zoo_get_children(zh, root, 0, &kids);
      deallocate_String_vector(&kids);
    }
    if (srv_sample(o->hosts, &b) == 0) {
      srv_delta(&a, &b, &d);
      srv_report("2", "held", "floor", "try", &d, k);
    }
  }
  struct Stat before, after;
  if (!bad && root_stat(root, &before) == ZOK &&
      srv_sample(o->hosts, &a) == 0) {
    for (int i = 0; i < k && !bad; i++) bad = zkl_mutex_trylock(m) != ZKL_EBUSY;
    if (srv_sample(o->hosts, &b) == 0 && root_stat(root, &after) == ZOK) {
      srv_delta(&a, &b, &d);
      srv_report("2", "held", "zkl", "try", &d, k);
      result_add("2", "held", "zkl", "zxid-delta", "",
                 d.zxid >= 0 ? (double)d.zxid : NAN, NAN, k);
      result_add("2", "held", "zkl", "cversion-delta", "",
                 (double)(after.cversion - before.cversion), NAN, k);
    }
  }
  zkl_mutex_unlock(held);
out:
  zkl_mutex_destroy(m);
  zkl_mutex_destroy(held);
  zkl_session_close(ts);
  zkl_session_close(hs);
  floor_close(zh);
}
