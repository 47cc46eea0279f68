/* tests/integration/test-proxy.c - connection faults at the exact moment,
 * through the proxy: a create or a release whose reply is lost, a short
 * partition (same session comes back, still holder) and a long one (LOST,
 * the next waiter takes over). */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"

#define OP_MULTI 14
#define OP_CREATE2 15

static int single_server(void) {
  return strchr(it_hosts(), ',') == NULL;
}

static zkl_session_t *via(it_proxy_t *x, int timeout_ms) {
  char hosts[64];
  snprintf(hosts, sizeof hosts, "127.0.0.1:%d", it_proxy_port(x));
  return it_session_at(hosts, timeout_ms);
}

/* The end of a test with a mutex through the proxy (m on s) and one beside
 * it (dm on d). */
static void end_pair(it_proxy_t *x, zkl_session_t *s, zkl_mutex_t *m,
                     zkl_session_t *d, zkl_mutex_t *dm) {
  zkl_mutex_destroy(m);
  zkl_mutex_destroy(dm);
  zkl_session_close(s);
  zkl_session_close(d);
  it_proxy_stop(x);
}

/* The create is applied but its reply is lost: zkl finds its node again
 * by uuid; never a second node, never an orphan. */
START_TEST(create_reply_lost) {
  if (!single_server()) return;
  char root[128];
  it_root(root, sizeof root, "cut-create");
  it_proxy_t *x = it_proxy_start();
  zkl_session_t *s = via(x, 10000), *d = it_session();
  zkl_mutex_t *m = it_mutex(s, root);
  zkl_mutex_t *dm = it_mutex(d, root);
  ck_assert_int_eq(zkl_mutex_lock(dm), 0); /* so our create has a root */
  ck_assert_int_eq(zkl_mutex_unlock(dm), 0);
  it_proxy_cut_after(x, OP_CREATE2);
  ck_assert_int_eq(zkl_mutex_lock(m), 0);
  ck_assert_int_eq(it_proxy_cuts(x), 1);
  ck_assert_int_eq(it_children(d, root, NULL), 1); /* exactly one node */
  ck_assert_int_eq(zkl_mutex_trylock(dm), ZKL_EBUSY);
  ck_assert_int_eq(zkl_mutex_unlock(m), 0);
  ck_assert_int_eq(it_children(d, root, NULL), 0);
  ck_assert_int_eq(zkl_mutex_trylock(dm), 0);
  ck_assert_int_eq(zkl_mutex_unlock(dm), 0);
  end_pair(x, s, m, d, dm);
}
END_TEST

/* The release is applied but its reply is lost: unlock retries, finds the
 * node gone, and reports success truthfully.  After a contended hold (here
 * the keeper node was there when we listed) the release is the multi that
 * changes our node's data and deletes it, and that multi is what was
 * applied (the node's watcher heard its data change), not a fallback
 * delete; after a hold that saw nobody else, a plain delete (the watcher
 * hears the deletion). */
START_TEST(release_reply_lost) {
  if (!single_server()) return;
  for (int contended = 1; contended >= 0; contended--) {
    char root[128];
    it_root(root, sizeof root, contended ? "cut-multi" : "cut-delete");
    it_proxy_t *x = it_proxy_start();
    zkl_session_t *s = via(x, 10000), *d = it_session();
    zkl_mutex_t *m = it_mutex(s, root);
    /* the keeper keeps the root from being reaped before we look */
    if (contended) it_keep_root(d, root);
    ck_assert_int_eq(zkl_mutex_lock(m), 0);
    if (!contended) it_keep_root(d, root);
    char node[512];
    ck_assert_int_eq(zkl_mutex_node(m, node, sizeof node), 0);
    it_watch_t w;
    it_watch_node(d, node, &w);
    it_proxy_cut_after(x, contended ? OP_MULTI : ZOO_DELETE_OP);
    ck_assert_int_eq(zkl_mutex_unlock(m), 0);
    ck_assert_int_eq(it_proxy_cuts(x), 1);
    ck_assert_int_eq(it_children(d, root, NULL), 1); /* the keeper only */
    ck_assert_int_eq(it_heard(&w, 5000),
                     contended ? ZOO_CHANGED_EVENT : ZOO_DELETED_EVENT);
    zkl_mutex_destroy(m);
    zkl_session_close(s);
    zkl_session_close(d);
    it_proxy_stop(x);
  }
}
END_TEST

static int state_is(zkl_session_t *s, int want) {
  return zkl_session_state(s) == want;
}
static int suspended(void *s) { return state_is(s, ZKL_SESSION_SUSPENDED); }
static int connected(void *s) { return state_is(s, ZKL_SESSION_CONNECTED); }
static int lost(void *s) { return state_is(s, ZKL_SESSION_LOST); }

/* A partition shorter than the session timeout: SUSPENDED (the hold is in
 * doubt), then the same session is back and still holds; nobody else got
 * the lock meanwhile. */
START_TEST(short_partition_keeps_the_hold) {
  if (!single_server()) return;
  char root[128];
  it_root(root, sizeof root, "cut-short");
  it_proxy_t *x = it_proxy_start();
  /* the client notices after 2/3 of the timeout; LOST would come at the
   * full timeout since last heard: resume in between */
  zkl_session_t *s = via(x, 12000), *d = it_session();
  zkl_mutex_t *m = it_mutex(s, root), *dm = it_mutex(d, root);
  ck_assert_int_eq(zkl_mutex_lock(m), 0);
  it_proxy_blackhole(x, 1);
  ck_assert_msg(it_wait_until(suspended, s, 12000), "never SUSPENDED");
  ck_assert_int_eq(zkl_mutex_holding(m), ZKL_ESUSPENDED);
  ck_assert_int_eq(zkl_mutex_trylock(dm), ZKL_EBUSY);
  it_proxy_blackhole(x, 0);
  ck_assert_msg(it_wait_until(connected, s, 8000), "not back");
  ck_assert_int_eq(zkl_mutex_holding(m), 1);
  ck_assert_int_eq(zkl_mutex_trylock(dm), ZKL_EBUSY);
  ck_assert_int_eq(zkl_mutex_unlock(m), 0);
  ck_assert_int_eq(zkl_mutex_trylock(dm), 0);
  ck_assert_int_eq(zkl_mutex_unlock(dm), 0);
  end_pair(x, s, m, d, dm);
}
END_TEST

/* A partition longer than the session timeout: the holder is told LOST on
 * time (before the server lets the next waiter in), the waiter takes over,
 * and nothing of the old holder is left once the partition heals. */
struct taker {
  zkl_mutex_t *m;
  int rc, unlock_rc;
  int64_t at;
  int release; /* atomic: the main thread says when to unlock */
  uint64_t token; /* the grant's (read by the holding thread) */
};

static void *take_main(void *arg) {
  struct taker *t = arg;
  t->rc = zkl_mutex_timedlock(t->m, 20000);
  if (t->rc == 0 && zkl_mutex_token(t->m, &t->token) != 0) t->token = 0;
  __atomic_store_n(&t->at, it_now_ms(), __ATOMIC_SEQ_CST); /* publishes rc */
  if (t->rc != 0) return NULL;
  while (!__atomic_load_n(&t->release, __ATOMIC_SEQ_CST)) it_sleep_ms(5);
  t->unlock_rc = zkl_mutex_unlock(t->m);
  return NULL;
}

/* Lets the taker unlock, and checks that it did and left no node. */
static void taker_end(struct taker *t, pthread_t th, zkl_session_t *d,
                      const char *root) {
  __atomic_store_n(&t->release, 1, __ATOMIC_SEQ_CST);
  pthread_join(th, NULL);
  ck_assert_int_eq(t->unlock_rc, 0);
  ck_assert(it_wait_children(d, root, 0, 5000));
}

START_TEST(long_partition_hands_over) {
  if (!single_server()) return;
  char root[128];
  it_root(root, sizeof root, "cut-long");
  it_proxy_t *x = it_proxy_start();
  zkl_session_t *s = via(x, 3000), *d = it_session();
  zkl_mutex_t *m = it_mutex(s, root), *dm = it_mutex(d, root);
  ck_assert_int_eq(zkl_mutex_lock(m), 0);
  struct taker t = {dm, -1, -1, 0, 0, 0};
  pthread_t th;
  pthread_create(&th, NULL, take_main, &t); /* queued behind the holder */
  ck_assert(it_wait_children(d, root, 2, 5000));
  it_proxy_blackhole(x, 1);
  ck_assert_msg(it_wait_until(lost, s, 6000), "holder not told LOST");
  int64_t lost_at = it_now_ms();
  ck_assert_int_eq(zkl_mutex_holding(m), ZKL_ELOST);
  while (__atomic_load_n(&t.at, __ATOMIC_SEQ_CST) == 0) /* got it, or not */
    it_sleep_ms(5);
  ck_assert_int_eq(t.rc, 0);
  /* told LOST no later than the other one got the lock (5 ms polling) */
  ck_assert_msg(t.at + 5 >= lost_at, "taken over %" PRId64 " ms before LOST",
                lost_at - t.at);
  it_proxy_blackhole(x, 0);
  ck_assert_int_eq(zkl_mutex_unlock(m), ZKL_ELOST);
  ck_assert_int_eq(it_children(d, root, NULL), 1); /* the new holder only */
  taker_end(&t, th, d, root);
  end_pair(x, s, m, d, dm);
}
END_TEST

/* The holder leaves between a waiter's listing and its look at it: the
 * look (getData) finds it gone, and the exists of our own node sent right
 * behind it, answered after it, is the proof that our node outlived it;
 * the grant costs no further read.  The proxy keeps the look from the
 * server until the holder has left. */
#define OP_GETDATA 4
START_TEST(predecessor_gone_before_the_look) {
  if (!single_server()) return;
  char root[128];
  it_root(root, sizeof root, "gone-first");
  it_proxy_t *x = it_proxy_start();
  zkl_session_t *s = via(x, 10000), *d = it_session();
  zkl_mutex_t *m = it_mutex(s, root), *dm = it_mutex(d, root);
  ck_assert_int_eq(zkl_mutex_lock(dm), 0);
  uint64_t held_token = 0;
  ck_assert_int_eq(zkl_mutex_token(dm, &held_token), 0);
  zkl_session_stats_t st0, st1;
  ck_assert_int_eq(zkl_session_stats(s, &st0, sizeof st0), 0);
  it_proxy_hold_at(x, OP_GETDATA);
  struct taker t = {m, -1, -1, 0, 0, 0};
  pthread_t th;
  pthread_create(&th, NULL, take_main, &t);
  for (int i = 0; i < 500 && !it_proxy_holding(x); i++) it_sleep_ms(10);
  ck_assert_msg(it_proxy_holding(x), "the waiter never looked");
  ck_assert(it_wait_children(d, root, 2, 5000));
  ck_assert_int_eq(zkl_mutex_unlock(dm), 0); /* gone before the look */
  ck_assert(it_wait_children(d, root, 1, 5000));
  ck_assert_int_eq(__atomic_load_n(&t.at, __ATOMIC_SEQ_CST), 0);
  it_proxy_release(x);
  while (__atomic_load_n(&t.at, __ATOMIC_SEQ_CST) == 0) it_sleep_ms(5);
  ck_assert_int_eq(t.rc, 0);
  ck_assert_uint_gt(t.token, held_token);
  ck_assert_int_eq(zkl_session_stats(s, &st1, sizeof st1), 0);
  /* the listing, the look and our node's exists: nothing more */
  ck_assert_uint_eq(st1.children - st0.children, 1);
  ck_assert_uint_eq(st1.gets - st0.gets, 1);
  ck_assert_uint_eq(st1.exists - st0.exists, 1);
  ck_assert_uint_eq(st1.grants - st0.grants, 1);
  ck_assert_int_eq(zkl_mutex_trylock(dm), ZKL_EBUSY);
  taker_end(&t, th, d, root);
  end_pair(x, s, m, d, dm);
}
END_TEST

/* What on_state reported, in order, with when. */
struct states {
  pthread_mutex_t mu;
  int n;
  int state[32];
  int64_t at[32];
};

static void record_state(zkl_session_t *s, zkl_session_state_t st,
                         void *arg) {
  (void)s;
  struct states *r = arg;
  pthread_mutex_lock(&r->mu);
  if (r->n < 32) {
    r->state[r->n] = (int)st;
    r->at[r->n++] = it_now_ms();
  }
  pthread_mutex_unlock(&r->mu);
}

/* One client of the outage test: its session and what it reported. */
struct client {
  zkl_session_t *s;
  int64_t first_id;
  int before; /* states reported before the outage (the open's CONNECTED) */
  struct states r;
};

static int first_reported(void *arg) {
  struct states *r = arg;
  pthread_mutex_lock(&r->mu);
  int n = r->n;
  pthread_mutex_unlock(&r->mu);
  return n >= 1;
}

static int all_renewed(void *arg) {
  struct client *c = arg;
  for (int i = 0; i < 3; i++)
    if (zkl_session_state(c[i].s) != ZKL_SESSION_CONNECTED ||
        zkl_session_id(c[i].s) == c[i].first_id)
      return 0;
  return 1;
}

/* What a client reported since the outage began: 1 if exactly SUSPENDED,
 * LOST, CONNECTED; *seen says what it was (ms after `back`). */
static int reported_once(struct client *c, int64_t back, char *seen,
                         size_t len) {
  static const char *names[] = {"CONNECTING", "CONNECTED", "SUSPENDED",
                                "LOST", "CLOSED", "RECONNECTED"};
  pthread_mutex_lock(&c->r.mu);
  seen[0] = '\0';
  for (int i = c->before; i < c->r.n; i++)
    snprintf(seen + strlen(seen), len - strlen(seen), "%s%s@%+" PRId64,
             i > c->before ? " " : "", names[c->r.state[i] % 6],
             c->r.at[i] - back);
  const int *st = c->r.state + c->before;
  int ok = c->r.n - c->before == 3 && st[0] == ZKL_SESSION_SUSPENDED &&
           st[1] == ZKL_SESSION_LOST && st[2] == ZKL_SESSION_CONNECTED;
  pthread_mutex_unlock(&c->r.mu);
  return ok;
}

/* An outage three session timeouts long, for three clients: each reports
 * exactly one SUSPENDED, one LOST and one CONNECTED (one new session), and
 * no new session is declared LOST after it connects (its "last heard"
 * starts when it connects, not when its handle was made, during the
 * outage).  Each works at once: a lock. */
START_TEST(long_outage_gives_one_new_session) {
  if (!single_server()) return;
  enum { T = 2000 };
  char root[128], hosts[64], seen[256];
  it_root(root, sizeof root, "outage");
  it_proxy_t *x = it_proxy_start();
  snprintf(hosts, sizeof hosts, "127.0.0.1:%d", it_proxy_port(x));
  struct client c[3];
  memset(c, 0, sizeof c);
  for (int i = 0; i < 3; i++) {
    pthread_mutex_init(&c[i].r.mu, NULL);
    zkl_session_opts_t o;
    zkl_session_opts_init(&o);
    o.session_timeout_ms = T;
    o.on_state = record_state;
    o.state_arg = &c[i].r;
    ck_assert_int_eq(zkl_session_open(&c[i].s, hosts, &o), 0);
    c[i].first_id = zkl_session_id(c[i].s);
    ck_assert_msg(it_wait_until(first_reported, &c[i].r, 5000),
                  "the open's CONNECTED was not reported");
    c[i].before = 1;
  }
  it_proxy_blackhole(x, 1);
  it_sleep_ms(3 * T);
  it_proxy_blackhole(x, 0);
  ck_assert_msg(it_wait_until(all_renewed, c, 6 * T), "no new sessions");
  int64_t back = it_now_ms();
  it_sleep_ms(2 * T + T / 2); /* a LOST of a new session would show */
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(zkl_session_state(c[i].s), ZKL_SESSION_CONNECTED);
    zkl_mutex_t *m = it_mutex(c[i].s, root);
    ck_assert_int_eq(zkl_mutex_timedlock(m, 5000), 0);
    ck_assert_int_eq(zkl_mutex_holding(m), 1);
    ck_assert_int_eq(zkl_mutex_unlock(m), 0);
    zkl_mutex_destroy(m);
    ck_assert_msg(reported_once(&c[i], back, seen, sizeof seen),
                  "client %d: want SUSPENDED LOST CONNECTED, got %s (ms "
                  "after the new sessions were seen)", i, seen);
  }
  for (int i = 0; i < 3; i++) {
    zkl_session_close(c[i].s); /* joins the thread that reports states */
    pthread_mutex_destroy(&c[i].r.mu);
  }
  it_proxy_stop(x);
}
END_TEST

Suite *proxy_suite(void) {
  Suite *su = suite_create("proxy-faults");
  TCase *tc = it_tcase("exact-moment");
  tcase_add_test(tc, create_reply_lost);
  tcase_add_test(tc, release_reply_lost);
  tcase_add_test(tc, predecessor_gone_before_the_look);
  suite_add_tcase(su, tc);
  tc = it_tcase("partitions");
  tcase_add_test(tc, short_partition_keeps_the_hold);
  tcase_add_test(tc, long_partition_hands_over);
  tcase_add_test(tc, long_outage_gives_one_new_session);
  suite_add_tcase(su, tc);
  return su;
}
