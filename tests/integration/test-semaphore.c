/* tests/integration/test-semaphore.c - the counting semaphore against a
 * real server: Curator's layout and names, tokens, try/timed/cancel, qty
 * leases taken atomically (two acquirers wanting 3 of 4, round after
 * round, never deadlock), never more than MAX held under contention, the
 * maximum from a shared count (disagreement refused, a raise lets a
 * waiter in), a lost session's leases block nobody, async forms, destroy
 * giving leases back, bad input, kazoo's layout (ZKL_SEM_KAZOO), and herd
 * freedom in both layouts (the server's watches: one watcher of the
 * leases, each waiter watching only its predecessor, one wake a release). */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"

static zkl_sem_t *sem(zkl_session_t *s, const char *path, int max) {
  zkl_sem_opts_t o = {0};
  o.max = max;
  zkl_sem_t *m = NULL;
  ck_assert_int_eq(zkl_sem_create(&m, s, path, &o), 0);
  return m;
}

static int kids(zkl_session_t *s, const char *root, const char *sub) {
  char p[256];
  snprintf(p, sizeof p, "%s/%s", root, sub);
  return it_children(s, p, NULL);
}

/* The czxid of lease `name` under root/sub (sub NULL: root itself). */
static uint64_t lease_czxid(zkl_session_t *s, const char *root,
                            const char *sub, const char *name) {
  char p[512];
  if (sub != NULL) snprintf(p, sizeof p, "%s/%s/%s", root, sub, name);
  else snprintf(p, sizeof p, "%s/%s", root, name);
  struct Stat st;
  ck_assert_int_eq(zoo_exists(zkl_session_zhandle(s), p, 0, &st), ZOK);
  return (uint64_t)st.czxid;
}

START_TEST(layout_tokens_and_try) {
  char root[128];
  it_root(root, sizeof root, "sem-basic");
  zkl_session_t *s = it_session(), *o = it_session();
  zkl_sem_t *a = sem(s, root, 3), *b = sem(o, root, 3);
  zkl_lease_t la[3], lb[3];
  ck_assert_int_eq(zkl_sem_acquire(a, 1, 5000, la), 0);
  ck_assert_int_eq(zkl_sem_acquire(b, 2, 5000, lb), 0);
  ck_assert_uint_eq(lb[0].token, lb[1].token); /* one multi */
  ck_assert_uint_gt(lb[0].token, la[0].token);
  ck_assert_str_ne(lb[0].name, lb[1].name);
  /* Curator's protected names */
  ck_assert_int_eq(strncmp(la[0].name, "_c_", 3), 0);
  ck_assert_ptr_nonnull(strstr(la[0].name, "-lease-"));
  ck_assert_int_eq(strlen(la[0].name), 3 + 36 + 1 + 6 + 10);
  ck_assert_int_eq(kids(s, root, "leases"), 3);
  ck_assert_int_eq(kids(s, root, "locks"), 0); /* the gate let go */
  /* the token is the leases' czxid (from the gate write's mzxid) */
  ck_assert_uint_eq(lb[0].token, lease_czxid(s, root, "leases", lb[1].name));
  ck_assert_uint_eq(la[0].token, lease_czxid(s, root, "leases", la[0].name));
  ck_assert_uint_eq(zkl_sem_held(a), 1);
  ck_assert_uint_eq(zkl_sem_held(b), 2);
  /* full */
  ck_assert_int_eq(zkl_sem_acquire(a, 1, 0, la + 1), ZKL_EBUSY);
  int64_t t0 = it_now_ms();
  ck_assert_int_eq(zkl_sem_acquire(a, 1, 300, la + 1), ZKL_ETIMEDOUT);
  ck_assert_int_ge(it_now_ms() - t0, 280);
  ck_assert_int_eq(kids(s, root, "leases"), 3); /* nothing left behind */
  ck_assert_int_eq(kids(s, root, "locks"), 0);
  size_t leased = 0;
  int max = 0;
  ck_assert_int_eq(zkl_sem_count(a, &leased, &max), 0);
  ck_assert_uint_eq(leased, 3);
  ck_assert_int_eq(max, 3);
  ck_assert_int_eq(zkl_sem_lease_health(b, &lb[1]), 0);
  ck_assert_int_eq(zkl_sem_lease_health(a, &lb[1]), ZKL_EPERM);
  ck_assert_int_eq(zkl_sem_release(a, &lb[0], 1), ZKL_EPERM);
  ck_assert_int_eq(zkl_sem_release(b, &lb[0], 1), 0);
  ck_assert_int_eq(zkl_sem_release(b, &lb[0], 1), ZKL_EPERM); /* twice */
  ck_assert_int_eq(zkl_sem_acquire(a, 1, 0, la + 1), 0);
  ck_assert_uint_gt(la[1].token, lb[0].token);
  ck_assert_int_eq(zkl_sem_acquire(a, 1, 0, la + 2), ZKL_EBUSY);
  ck_assert_int_eq(zkl_sem_release_all(a), 0);
  ck_assert_uint_eq(zkl_sem_held(a), 0);
  ck_assert_int_eq(zkl_sem_release_all(b), 0);
  ck_assert_int_eq(kids(s, root, "leases"), 0);
  /* more than the maximum: refused, not waited for */
  ck_assert_int_eq(zkl_sem_acquire(a, 4, 1000, la), ZKL_EINVAL);
  zkl_sem_destroy(a);
  zkl_sem_destroy(b);
  zkl_session_close(s);
  zkl_session_close(o);
}
END_TEST

/* ---- qty atomic: 3 of 4, two acquirers, never a deadlock ----------------------- */

#define ROUNDS 60

static atomic_int in_use;
static atomic_int over;

struct greedy {
  zkl_session_t *s;
  const char *path;
  int max, qty, rounds, fails;
};

static void *greedy_run(void *arg) {
  struct greedy *g = arg;
  zkl_sem_opts_t o = {0};
  o.max = g->max;
  zkl_sem_t *m = NULL;
  if (zkl_sem_create(&m, g->s, g->path, &o) != 0) {
    g->fails = g->rounds;
    return NULL;
  }
  zkl_lease_t l[8];
  for (int i = 0; i < g->rounds; i++) {
    if (zkl_sem_acquire(m, (unsigned)g->qty, 20000, l) != 0) {
      g->fails++;
      continue;
    }
    if (atomic_fetch_add(&in_use, g->qty) + g->qty > g->max)
      atomic_fetch_add(&over, 1);
    usleep(1000);
    atomic_fetch_sub(&in_use, g->qty);
    if (zkl_sem_release(m, l, (size_t)g->qty) != 0) g->fails++;
  }
  zkl_sem_destroy(m);
  return NULL;
}

START_TEST(qty_is_atomic_no_deadlock) {
  char root[128];
  it_root(root, sizeof root, "sem-qty");
  zkl_session_t *s[2] = {it_session(), it_session()};
  atomic_store(&in_use, 0);
  atomic_store(&over, 0);
  struct greedy g[2] = {{s[0], root, 4, 3, ROUNDS, 0},
                        {s[1], root, 4, 3, ROUNDS, 0}};
  pthread_t t[2];
  int64_t t0 = it_now_ms();
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, greedy_run, &g[i]);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  ck_assert_int_eq(g[0].fails + g[1].fails, 0);
  ck_assert_int_eq(atomic_load(&over), 0);
  ck_assert_int_lt(it_now_ms() - t0, 40000);
  ck_assert_int_eq(kids(s[0], root, "leases"), 0);
  zkl_session_close(s[0]);
  zkl_session_close(s[1]);
}
END_TEST

START_TEST(never_more_than_max) {
  char root[128];
  it_root(root, sizeof root, "sem-max");
  zkl_session_t *s[3] = {it_session(), it_session(), it_session()};
  atomic_store(&in_use, 0);
  atomic_store(&over, 0);
  struct greedy g[8];
  pthread_t t[8];
  for (int i = 0; i < 8; i++) {
    g[i] = (struct greedy){s[i % 3], root, 3, 1 + i % 2, 25, 0};
    pthread_create(&t[i], NULL, greedy_run, &g[i]);
  }
  int fails = 0;
  for (int i = 0; i < 8; i++) {
    pthread_join(t[i], NULL);
    fails += g[i].fails;
  }
  ck_assert_int_eq(fails, 0);
  ck_assert_int_eq(atomic_load(&over), 0);
  ck_assert_int_eq(kids(s[0], root, "leases"), 0);
  for (int i = 0; i < 3; i++) zkl_session_close(s[i]);
}
END_TEST

/* ---- the maximum from a shared count ------------------------------------------------ */

static void put_count(zkl_session_t *s, const char *path, int32_t v) {
  char b[4] = {(char)(v >> 24), (char)(v >> 16), (char)(v >> 8), (char)v};
  zhandle_t *zh = zkl_session_zhandle(s);
  int rc = zoo_create(zh, path, b, 4, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  if (rc == ZNODEEXISTS) rc = zoo_set(zh, path, b, 4, -1);
  ck_assert_int_eq(rc, ZOK);
}

struct later_acquire {
  zkl_sem_t *m;
  int rc;
  zkl_lease_t l[2];
};

static void *acquire_run(void *arg) {
  struct later_acquire *a = arg;
  a->rc = zkl_sem_acquire(a->m, 1, 20000, a->l);
  return NULL;
}

START_TEST(max_from_shared_count) {
  char root[128], count[160];
  it_root(root, sizeof root, "sem-count");
  snprintf(count, sizeof count, "%s-max", root);
  zkl_session_t *s = it_session();
  zkl_sem_opts_t o = {0};
  o.count_path = count;
  zkl_sem_t *m = NULL;
  ck_assert_int_eq(zkl_sem_create(&m, s, root, &o), 0);
  zkl_lease_t l[4];
  ck_assert_int_eq(zkl_sem_acquire(m, 1, 1000, l), ZKL_EINVAL); /* none */
  put_count(s, count, 2);
  ck_assert_int_eq(zkl_sem_acquire(m, 2, 1000, l), 0);
  int max = 0;
  size_t n = 0;
  ck_assert_int_eq(zkl_sem_count(m, &n, &max), 0);
  ck_assert_int_eq(max, 2);
  /* a local max that disagrees */
  zkl_sem_t *d = NULL;
  o.max = 3;
  ck_assert_int_eq(zkl_sem_create(&d, s, root, &o), 0);
  ck_assert_int_eq(zkl_sem_acquire(d, 1, 1000, l + 2), ZKL_EINVAL);
  ck_assert_ptr_nonnull(strstr(zkl_last_error(), "disagrees"));
  zkl_sem_destroy(d);
  /* a waiter let in by a raise */
  o.max = 0;
  ck_assert_int_eq(zkl_sem_create(&d, s, root, &o), 0);
  struct later_acquire a = {d, 99, {{0}}};
  pthread_t t;
  pthread_create(&t, NULL, acquire_run, &a);
  it_sleep_ms(300);
  ck_assert_int_eq(a.rc, 99);
  /* a disagreeing acquirer is told at once, not after the line ahead */
  zkl_sem_t *e = NULL;
  o.max = 5;
  ck_assert_int_eq(zkl_sem_create(&e, s, root, &o), 0);
  int64_t t0 = it_now_ms();
  ck_assert_int_eq(zkl_sem_acquire(e, 1, 5000, l + 3), ZKL_EINVAL);
  ck_assert_int_lt(it_now_ms() - t0, 2000);
  zkl_sem_destroy(e);
  o.max = 0;
  put_count(s, count, 3);
  pthread_join(t, NULL);
  ck_assert_int_eq(a.rc, 0);
  ck_assert_int_eq(zkl_sem_release_all(d), 0);
  ck_assert_int_eq(zkl_sem_release_all(m), 0);
  zkl_sem_destroy(d);
  zkl_sem_destroy(m);
  ck_assert_int_eq(zoo_delete(zkl_session_zhandle(s), count, -1), ZOK);
  zkl_session_close(s);
}
END_TEST

/* ---- a lost session's leases block nobody --------------------------------------- */

START_TEST(lost_session_blocks_nobody) {
  char root[128];
  it_root(root, sizeof root, "sem-lost");
  zkl_session_t *v = it_session_final(2000), *o = it_session();
  zkl_sem_t *a = sem(v, root, 1), *b = sem(o, root, 1);
  zkl_lease_t la, lb;
  ck_assert_int_eq(zkl_sem_acquire(a, 1, 5000, &la), 0);
  ck_assert_int_eq(zkl_sem_acquire(b, 1, 0, &lb), ZKL_EBUSY);
  it_expire_session(v);
  ck_assert_int_eq(zkl_sem_lease_health(a, &la), ZKL_ELOST);
  ck_assert_int_eq(zkl_sem_acquire(b, 1, 10000, &lb), 0);
  ck_assert_int_eq(zkl_sem_release(a, &la, 1), ZKL_ELOST);
  ck_assert_uint_eq(zkl_sem_held(a), 0);
  ck_assert_int_eq(zkl_sem_release(b, &lb, 1), 0);
  zkl_sem_destroy(a);
  zkl_sem_destroy(b);
  zkl_session_close(v);
  zkl_session_close(o);
}
END_TEST

/* ---- cancel, async, destroy ------------------------------------------------------------- */

static void *cancel_later(void *arg) {
  it_sleep_ms(200);
  zkl_sem_cancel(arg);
  return NULL;
}

struct tally {
  int done, last_rc;
  size_t n;
  zkl_lease_t l[4];
};

static void granted(zkl_sem_t *m, int rc, const zkl_lease_t *l, size_t n,
                    void *arg) {
  (void)m;
  struct tally *t = arg;
  t->done++;
  t->last_rc = rc;
  t->n = n;
  for (size_t i = 0; i < n && i < 4; i++) t->l[i] = l[i];
}

static void released(void *obj, int rc, uint64_t token, void *arg) {
  (void)obj;
  (void)token;
  struct tally *t = arg;
  t->done++;
  t->last_rc = rc;
}

static void dispatch_until(zkl_session_t *s, struct tally *t, int n) {
  int64_t end = it_now_ms() + 20000;
  while (t->done < n && it_now_ms() < end) {
    zkl_session_dispatch(s);
    it_sleep_ms(1);
  }
  ck_assert_int_eq(t->done, n);
}

START_TEST(cancel_async_destroy) {
  char root[128];
  it_root(root, sizeof root, "sem-async");
  zkl_session_t *s = it_session();
  zkl_sem_t *a = sem(s, root, 2), *b = sem(s, root, 2);
  zkl_lease_t l[2];
  ck_assert_int_eq(zkl_sem_acquire(a, 2, 5000, l), 0);
  pthread_t t;
  pthread_create(&t, NULL, cancel_later, b);
  ck_assert_int_eq(zkl_sem_acquire(b, 1, 20000, l), ZKL_ECANCELED);
  pthread_join(t, NULL);
  ck_assert_int_eq(kids(s, root, "locks"), 0);
  /* async: waits for room, which a release_async makes */
  struct tally g = {0, 99, 0, {{0}}}, r = {0, 99, 0, {{0}}};
  ck_assert_int_eq(zkl_sem_acquire_async(b, 2, 20000, granted, &g), 0);
  ck_assert_int_eq(zkl_sem_acquire_async(b, 1, 0, granted, &g), ZKL_EBUSY);
  it_sleep_ms(200);
  zkl_session_dispatch(s);
  ck_assert_int_eq(g.done, 0);
  ck_assert_int_eq(zkl_sem_release_async(a, NULL, 0, released, &r), 0);
  ck_assert_uint_eq(zkl_sem_held(a), 0);
  dispatch_until(s, &r, 1);
  ck_assert_int_eq(r.last_rc, 0);
  dispatch_until(s, &g, 1);
  ck_assert_int_eq(g.last_rc, 0);
  ck_assert_uint_eq(g.n, 2);
  ck_assert_uint_eq(zkl_sem_held(b), 2);
  ck_assert_int_eq(zkl_sem_release_async(b, g.l, 1, released, &r), 0);
  dispatch_until(s, &r, 2);
  ck_assert_uint_eq(zkl_sem_held(b), 1);
  /* destroyed while holding: its leases go (the janitor) */
  zkl_sem_destroy(b);
  ck_assert_int_eq(zkl_sem_acquire(a, 2, 10000, l), 0);
  ck_assert_int_eq(zkl_sem_release_all(a), 0);
  zkl_sem_destroy(a);
  zkl_session_close(s);
}
END_TEST

START_TEST(sem_bad_input) {
  zkl_session_t *s = it_session();
  zkl_sem_t *m = (zkl_sem_t *)1;
  zkl_sem_opts_t o = {0};
  ck_assert_int_eq(zkl_sem_create(&m, s, "/x", NULL), ZKL_EINVAL);
  ck_assert_ptr_null(m);
  ck_assert_int_eq(zkl_sem_create(&m, s, "/x", &o), ZKL_EINVAL); /* no max */
  o.max = -1;
  ck_assert_int_eq(zkl_sem_create(&m, s, "/x", &o), ZKL_EINVAL);
  o.max = 2;
  o.count_path = "bad";
  ck_assert_int_eq(zkl_sem_create(&m, s, "/x", &o), ZKL_EINVAL);
  o.count_path = NULL;
  ck_assert_int_eq(zkl_sem_create(&m, s, "/", &o), ZKL_EINVAL);
  ck_assert_int_eq(zkl_sem_create(&m, NULL, "/x", &o), ZKL_EINVAL);
  m = sem(s, "/zkl-test/sem-never", 2);
  zkl_lease_t l[3];
  ck_assert_int_eq(zkl_sem_acquire(m, 0, 0, l), ZKL_EINVAL);
  ck_assert_int_eq(zkl_sem_acquire(m, 3, 0, l), ZKL_EINVAL);
  ck_assert_int_eq(zkl_sem_acquire(m, 1, 0, NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_sem_acquire(NULL, 1, 0, l), ZKL_EINVAL);
  ck_assert_int_eq(zkl_sem_acquire_async(m, 1, 0, NULL, NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_sem_release(m, l, 0), ZKL_EINVAL);
  ck_assert_int_eq(zkl_sem_release(m, NULL, 1), ZKL_EINVAL);
  ck_assert_int_eq(zkl_sem_release_all(NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_sem_lease_health(m, NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_sem_cancel(NULL), ZKL_EINVAL);
  ck_assert_uint_eq(zkl_sem_held(NULL), 0);
  zkl_sem_destroy(m);
  zkl_sem_destroy(NULL);
  zkl_session_close(s);
}
END_TEST

/* zkl_sem_holders(): everyone's leases, in the order taken, with the
 * holder's data, token and session; nothing when nobody holds. */
START_TEST(holders_listed) {
  char root[128];
  it_root(root, sizeof root, "sem-holders");
  zkl_session_t *s = it_session(), *o = it_session();
  zkl_sem_opts_t ob = {0};
  ob.max = 4;
  ob.data = "worker-b";
  ob.data_len = 8;
  zkl_sem_t *a = sem(s, root, 4), *b = NULL;
  ck_assert_int_eq(zkl_sem_create(&b, o, root, &ob), 0);
  zkl_sem_holder_t *v = (zkl_sem_holder_t *)1;
  size_t n = 99;
  ck_assert_int_eq(zkl_sem_holders(a, &v, &n), 0); /* no leases/ yet */
  ck_assert_ptr_null(v);
  ck_assert_uint_eq(n, 0);
  zkl_lease_t la[1], lb[2];
  ck_assert_int_eq(zkl_sem_acquire(a, 1, 5000, la), 0);
  ck_assert_int_eq(zkl_sem_acquire(b, 2, 5000, lb), 0);
  ck_assert_int_eq(zkl_sem_holders(b, &v, &n), 0);
  ck_assert_uint_eq(n, 3);
  ck_assert_str_eq(v[0].name, la[0].name);
  ck_assert_uint_eq(v[0].token, la[0].token);
  ck_assert_int_eq(v[0].session, zkl_session_id(s));
  ck_assert_ptr_nonnull(strchr(v[0].data, ':')); /* "host:pid" */
  for (int i = 1; i < 3; i++) {
    ck_assert_uint_eq(v[i].token, lb[0].token);
    ck_assert_int_eq(v[i].session, zkl_session_id(o));
    ck_assert_uint_eq(v[i].len, 8);
    ck_assert_str_eq(v[i].data, "worker-b");
  }
  ck_assert_str_eq(v[1].name, strcmp(lb[0].name, lb[1].name) < 0
                                  ? lb[0].name : lb[1].name);
  zkl_sem_holders_free(v, n);
  ck_assert_int_eq(zkl_sem_release_all(b), 0);
  ck_assert_int_eq(zkl_sem_holders(a, &v, &n), 0);
  ck_assert_uint_eq(n, 1);
  zkl_sem_holders_free(v, n);
  ck_assert_int_eq(zkl_sem_release_all(a), 0);
  ck_assert_int_eq(zkl_sem_holders(a, &v, &n), 0);
  ck_assert_uint_eq(n, 0);
  ck_assert_ptr_null(v);
  ck_assert_int_eq(zkl_sem_holders(NULL, &v, &n), ZKL_EINVAL);
  ck_assert_int_eq(zkl_sem_holders(a, NULL, &n), ZKL_EINVAL);
  ck_assert_int_eq(zkl_sem_holders(a, &v, NULL), ZKL_EINVAL);
  zkl_sem_holders_free(NULL, 0);
  zkl_sem_destroy(a);
  zkl_sem_destroy(b);
  zkl_session_close(s);
  zkl_session_close(o);
}
END_TEST

/* ---- a gate node its creator may not write ------------------------------------- */

/* The lease multi writes the acquirer's gate node (the write gives the
 * token and tells a zkl waiter behind it to go on).  Under an ACL that
 * does not let the creator write its nodes the write is refused
 * (ZNOAUTH): the acquire then checks the gate node instead and reads the
 * token after, with the same leases, tokens and order, and nothing left
 * behind. */
START_TEST(gate_write_refused) {
  char root[128];
  it_root(root, sizeof root, "sem-nowrite");
  struct ACL no_write = {ZOO_PERM_READ | ZOO_PERM_CREATE | ZOO_PERM_DELETE,
                         {"world", "anyone"}};
  struct ACL_vector acl = {1, &no_write};
  zkl_session_opts_t so;
  zkl_session_opts_init(&so);
  so.acl = ZKL_ACL_CUSTOM;
  so.custom_acl = &acl;
  zkl_session_t *s = NULL, *o = NULL;
  ck_assert_int_eq(zkl_session_open(&s, it_hosts(), &so), 0);
  ck_assert_int_eq(zkl_session_open(&o, it_hosts(), &so), 0);
  zkl_sem_t *a = sem(s, root, 2), *b = sem(o, root, 2);
  zkl_lease_t la[2], lb[2];
  uint64_t last = 0;
  for (int round = 0; round < 3; round++) {
    ck_assert_int_eq(zkl_sem_acquire(a, 1, 5000, la), 0);
    ck_assert_int_eq(zkl_sem_acquire(b, 1, 5000, lb), 0);
    ck_assert_uint_gt(la[0].token, last);
    ck_assert_uint_gt(lb[0].token, la[0].token);
    ck_assert_uint_eq(la[0].token, lease_czxid(s, root, "leases", la[0].name));
    ck_assert_uint_eq(lb[0].token, lease_czxid(s, root, "leases", lb[0].name));
    ck_assert_int_eq(zkl_sem_acquire(a, 1, 0, la + 1), ZKL_EBUSY);
    last = lb[0].token;
    ck_assert_int_eq(zkl_sem_release_all(a), 0);
    ck_assert_int_eq(zkl_sem_release_all(b), 0);
  }
  /* two at once from one object: one multi, one token */
  ck_assert_int_eq(zkl_sem_acquire(b, 2, 5000, lb), 0);
  ck_assert_uint_eq(lb[0].token, lb[1].token);
  ck_assert_uint_eq(lb[1].token, lease_czxid(s, root, "leases", lb[1].name));
  ck_assert_int_eq(zkl_sem_release_all(b), 0);
  ck_assert_int_eq(kids(s, root, "leases"), 0);
  ck_assert_int_eq(kids(s, root, "locks"), 0);
  zkl_sem_destroy(a);
  zkl_sem_destroy(b);
  zkl_session_close(s);
  zkl_session_close(o);
}
END_TEST

/* ---- kazoo's layout (ZKL_SEM_KAZOO) --------------------------------------------- */

static zkl_sem_t *ksem(zkl_session_t *s, const char *path, int max) {
  zkl_sem_opts_t o;
  zkl_sem_opts_init(&o);
  o.max = max;
  o.format = ZKL_SEM_KAZOO;
  o.data = "zkl-k";
  o.data_len = 5;
  zkl_sem_t *m = NULL;
  ck_assert_int_eq(zkl_sem_create(&m, s, path, &o), 0);
  return m;
}

struct kwait {
  zkl_sem_t *m;
  zkl_lease_t l;
  int rc;
};

static void *kwait_run(void *arg) {
  struct kwait *k = arg;
  k->rc = zkl_sem_acquire(k->m, 1, 20000, &k->l);
  return NULL;
}

/* The nodes of kazoo's Semaphore (kazoo/recipe/lock.py): the leases right
 * under <path> (a PERSISTENT node holding the maximum as ASCII), the gate
 * a kazoo Lock queue at <path>-__lock__ whose names kazoo's regex
 * "__lock__(-?\d{10})$" counts.  The maximum stored there rules: a local
 * one that disagrees is refused before lining up, 0 takes it, data that
 * is no number is ignored (as kazoo does).  Live interop with kazoo
 * itself: test-semaphore-interop.c. */
START_TEST(kazoo_layout) {
  char root[128], gate[160];
  it_root(root, sizeof root, "sem-kazoo");
  snprintf(gate, sizeof gate, "%s-__lock__", root);
  zkl_session_t *s = it_session(), *o = it_session();
  zhandle_t *zh = zkl_session_zhandle(s);
  zkl_sem_t *a = ksem(s, root, 3), *b = ksem(o, root, 3);
  zkl_lease_t la[3], lb[3];
  ck_assert_int_eq(zkl_sem_acquire(a, 1, 5000, la), 0);
  ck_assert_int_eq(zkl_sem_acquire(b, 2, 5000, lb), 0);
  ck_assert_uint_eq(lb[0].token, lb[1].token); /* still one multi */
  ck_assert_uint_gt(lb[0].token, la[0].token);
  ck_assert_uint_eq(lb[1].token, lease_czxid(s, root, NULL, lb[1].name));
  ck_assert_int_eq(it_children(s, root, NULL), 3); /* leases: <path>/ */
  ck_assert_int_eq(it_children(s, gate, NULL), 0); /* the gate let go */
  char buf[32];
  int len = sizeof buf;
  struct Stat st;
  ck_assert_int_eq(zoo_get(zh, root, 0, buf, &len, &st), ZOK);
  ck_assert_int_eq(len, 1);
  ck_assert_int_eq(buf[0], '3');
  ck_assert(st.ephemeralOwner == 0); /* not ephemeral (PERSISTENT: the
                                        interop suite watches the reaper) */
  /* a waiter's gate node, as kazoo's Lock names its own */
  struct kwait w = {ksem(s, root, 0), {0}, -1};
  pthread_t t;
  pthread_create(&t, NULL, kwait_run, &w);
  ck_assert(it_wait_children(s, gate, 1, 5000));
  struct String_vector v;
  ck_assert_int_eq(it_children(s, gate, &v), 1);
  size_t nl = strlen(v.data[0]);
  ck_assert_int_ge(nl, 18);
  ck_assert_int_eq(strncmp(v.data[0], "_c_", 3), 0);
  ck_assert_int_eq(strncmp(v.data[0] + nl - 18, "__lock__", 8), 0);
  ck_assert_uint_eq(strspn(v.data[0] + nl - 10, "0123456789"), 10);
  deallocate_String_vector(&v);
  ck_assert_int_eq(zkl_sem_release(a, la, 1), 0);
  pthread_join(t, NULL);
  ck_assert_int_eq(w.rc, 0); /* max 0: the stored 3 */
  size_t leased = 0;
  int max = 0;
  ck_assert_int_eq(zkl_sem_count(w.m, &leased, &max), 0);
  ck_assert_uint_eq(leased, 3);
  ck_assert_int_eq(max, 3);
  zkl_sem_holder_t *hv = NULL;
  size_t nh = 0;
  ck_assert_int_eq(zkl_sem_holders(w.m, &hv, &nh), 0);
  ck_assert_uint_eq(nh, 3);
  ck_assert_str_eq(hv[2].name, w.l.name);
  ck_assert_str_eq(hv[2].data, "zkl-k");
  zkl_sem_holders_free(hv, nh);
  /* a local max that disagrees: refused before lining up */
  zkl_sem_t *c = ksem(s, root, 5);
  ck_assert_int_eq(zkl_sem_acquire(c, 1, 1000, la), ZKL_EINVAL);
  ck_assert_ptr_nonnull(strstr(zkl_last_error(), "disagrees"));
  ck_assert_int_eq(zkl_sem_count(c, &leased, &max), ZKL_EINVAL);
  ck_assert_int_eq(it_children(s, gate, NULL), 0);
  zkl_sem_destroy(c);
  ck_assert_int_eq(zkl_sem_release_all(b), 0);
  ck_assert_int_eq(zkl_sem_release_all(w.m), 0);
  ck_assert_int_eq(it_children(s, root, NULL), 0);
  /* data that is no number is ignored: the local max, or none at all */
  ck_assert_int_eq(zoo_set(zh, root, "spare", 5, -1), ZOK);
  c = ksem(s, root, 0);
  ck_assert_int_eq(zkl_sem_acquire(c, 1, 1000, la), ZKL_EINVAL);
  ck_assert_ptr_nonnull(strstr(zkl_last_error(), "no maximum"));
  zkl_sem_destroy(c);
  ck_assert_int_eq(zkl_sem_acquire(a, 2, 1000, la), 0);
  ck_assert_int_eq(zkl_sem_acquire(a, 2, 0, la + 2), ZKL_EBUSY);
  ck_assert_int_eq(zkl_sem_release_all(a), 0);
  /* python's int(): blanks and '_' between digits */
  ck_assert_int_eq(zoo_set(zh, root, " 1_0\n", 5, -1), ZOK);
  ck_assert_int_eq(zkl_sem_count(w.m, &leased, &max), 0);
  ck_assert_int_eq(max, 10);
  ck_assert_int_eq(zoo_set(zh, root, "0", 1, -1), ZOK);
  ck_assert_int_eq(zkl_sem_count(w.m, &leased, &max), ZKL_EINVAL);
  zkl_sem_destroy(a);
  zkl_sem_destroy(b);
  zkl_sem_destroy(w.m);
  ck_assert_int_eq(zoo_delete(zh, root, -1), ZOK);
  /* no <path> and no max: nothing to go by, and nothing made */
  c = ksem(s, root, 0);
  ck_assert_int_eq(zkl_sem_acquire(c, 1, 1000, la), ZKL_EINVAL);
  ck_assert_int_eq(zoo_exists(zh, root, 0, NULL), ZNONODE);
  zkl_sem_destroy(c);
  /* bad options */
  zkl_sem_opts_t bo;
  zkl_sem_opts_init(&bo);
  ck_assert_int_eq(bo.format, ZKL_SEM_CURATOR);
  bo.format = ZKL_SEM_KAZOO;
  bo.max = 2;
  bo.count_path = "/zkl-test/some-count";
  ck_assert_int_eq(zkl_sem_create(&c, s, root, &bo), ZKL_EINVAL);
  ck_assert_ptr_null(c);
  bo.count_path = NULL;
  bo.format = 7;
  ck_assert_int_eq(zkl_sem_create(&c, s, root, &bo), ZKL_EINVAL);
  zoo_delete(zh, gate, -1); /* a container: gone soon anyway */
  zkl_session_close(s);
  zkl_session_close(o);
}
END_TEST

/* ==== semaphore-adversarial: the guarantees under faults ======================= *
 *
 * The promises tried here, against a real server with the proxy's faults:
 *  - never more than MAX valid holders (a shared in-use counter of the
 *    holders whose sessions are never expired, and a sampler listing the
 *    leases on the server);
 *  - one fencing token per acquisition, the czxid of every one of its lease
 *    nodes, larger for every later acquisition (one that began after
 *    another one returned);
 *  - nothing left behind on failure (no lease, no gate node, once every
 *    object is destroyed, with the sessions still open);
 *  - exactly one completion per accepted async call;
 * around the lease multi's write of the acquirer's gate node (a zkl waiter
 * behind it goes on at that write, one round trip before the gate node is
 * deleted), lost answers of the lease multi (found again by prefix), the
 * gate node refusing the write (gate_ro), kazoo's layout, and a zkl mutex
 * on the gate's path (one queue: a mutex holder keeps the acquirers out,
 * and a gate holder keeps the mutex out). */

/* Under valgrind (or ZKL_TEST_SLOW) deadlines are this many times longer. */
static int adv_slow(void) {
  const char *w = getenv("ZKL_TEST_WRAPPER");
  return (w != NULL && w[0] != '\0') || getenv("ZKL_TEST_SLOW") != NULL ? 2
                                                                         : 1;
}

static void adv_quiet(const char *message) { (void)message; }

static unsigned adv_rnd(uint64_t *st, unsigned n) {
  return (unsigned)(it_splitmix64(st) % n);
}

/* A session on hosts; ro: every node it makes refuses writes (its ACL has
 * no WRITE), so that a semaphore's lease multi falls back on a check. */
static zkl_session_t *adv_open(const char *hosts, int timeout_ms, int ro) {
  struct ACL no_write = {ZOO_PERM_READ | ZOO_PERM_CREATE | ZOO_PERM_DELETE,
                         {"world", "anyone"}};
  struct ACL_vector acl = {1, &no_write}; /* copied by the session */
  zkl_session_opts_t so;
  zkl_session_opts_init(&so);
  so.session_timeout_ms = timeout_ms;
  if (ro) {
    so.acl = ZKL_ACL_CUSTOM;
    so.custom_acl = &acl;
  }
  zkl_session_t *s = NULL;
  int rc = zkl_session_open(&s, hosts, &so);
  ck_assert_msg(rc == 0, "session_open %s: %s", hosts, it_code(rc));
  return s;
}

static int adv_sem_new(zkl_sem_t **m, zkl_session_t *s, const char *root,
                       int max, int kazoo) {
  zkl_sem_opts_t o;
  zkl_sem_opts_init(&o);
  o.max = max;
  o.format = kazoo ? ZKL_SEM_KAZOO : ZKL_SEM_CURATOR;
  return zkl_sem_create(m, s, root, &o);
}

static void adv_paths(const char *root, int kazoo, char *leases, char *gate,
                      size_t len) {
  if (kazoo) {
    snprintf(leases, len, "%s", root);
    snprintf(gate, len, "%s-__lock__", root);
  } else {
    snprintf(leases, len, "%s/leases", root);
    snprintf(gate, len, "%s/locks", root);
  }
}

/* The zxid of a write of ours to node (a point in the server's order). */
static uint64_t adv_mark(zhandle_t *zh, const char *node) {
  struct Stat st;
  int rc = zoo_set2(zh, node, "m", 1, -1, &st);
  return rc == ZOK ? (uint64_t)st.mzxid : 0;
}

/* Lists what is left under path (names and owners), for a message. */
static void adv_leftovers(zhandle_t *zh, const char *path, char *buf,
                          size_t len) {
  struct String_vector v = {0, NULL};
  buf[0] = '\0';
  if (zoo_get_children(zh, path, 0, &v) != ZOK) return;
  size_t at = 0;
  for (int i = 0; i < v.count && at + 1 < len; i++) {
    char p[512];
    struct Stat st;
    memset(&st, 0, sizeof st);
    snprintf(p, sizeof p, "%s/%s", path, v.data[i]);
    zoo_exists(zh, p, 0, &st);
    int n = snprintf(buf + at, len - at, "%s%s (owner 0x%llx, czxid %lld)",
                     i > 0 ? ", " : "", v.data[i],
                     (unsigned long long)st.ephemeralOwner,
                     (long long)st.czxid);
    if (n < 0) break;
    at += (size_t)n;
  }
  deallocate_String_vector(&v);
}

/* Waits until path has no children, with the sessions still open (the
 * janitors at work); fails naming what is left. */
static void adv_assert_empty(zkl_session_t *obs, const char *path,
                             int timeout_ms, const char *what) {
  if (it_wait_children(obs, path, 0, timeout_ms)) return;
  char left[2048];
  adv_leftovers(zkl_session_zhandle(obs), path, left, sizeof left);
  ck_abort_msg("%s %s: left behind after %d ms: %s", what, path, timeout_ms,
               left);
}

/* Waits until some session watches path (the server's wchp). */
static int adv_watched(const char *path, int64_t except, int timeout_ms) {
  int64_t end = it_now_ms() + timeout_ms;
  do {
    char *w = it_4lw("wchp");
    int n = w != NULL ? it_watchers_of(w, path, except) : 0;
    free(w);
    if (n > 0) return 1;
    it_sleep_ms(20);
  } while (it_now_ms() < end);
  return 0;
}

static void adv_conn_watcher(zhandle_t *zh, int type, int state,
                             const char *path, void *ctx) {
  (void)zh;
  (void)path;
  if (type == ZOO_SESSION_EVENT && state == ZOO_CONNECTED_STATE)
    __atomic_store_n((int *)ctx, 1, __ATOMIC_SEQ_CST);
}

/* Ends session `id` on the server (a second handle with its id and
 * password closes it) without waiting for its own handle to hear of it
 * (that one may be cut off by the proxy). */
static void adv_kill_session(const clientid_t *id, int timeout_ms) {
  clientid_t copy = *id;
  int connected = 0;
  zhandle_t *other = zookeeper_init2(it_hosts(), adv_conn_watcher, timeout_ms,
                                     &copy, &connected, 0, adv_quiet);
  ck_assert_ptr_nonnull(other);
  for (int i = 0; i < 2000 && !__atomic_load_n(&connected, __ATOMIC_SEQ_CST);
       i++)
    it_sleep_ms(5);
  ck_assert_msg(__atomic_load_n(&connected, __ATOMIC_SEQ_CST),
                "could not reach session 0x%llx to end it",
                (unsigned long long)copy.client_id);
  zookeeper_close(other);
}

/* ---- the storm ------------------------------------------------------------------- */

struct adv;
static void adv_storm_empty(struct adv *A, const char *path, const char *what);

/* sessions: 0, 1 blocking; 2 async; 3, 4 victims (expired); 5 the mutex */
#define ADV_NS 6
#define ADV_NW 7    /* blocking workers */
#define ADV_NSLOT 3 /* async objects */

enum { ADV_KAZOO = 1, ADV_RO = 2, ADV_MUTEX = 4, ADV_COUNT = 8 };

static int adv_victim(int sess) { return sess == 3 || sess == 4; }

typedef struct adv_grant {
  uint64_t token;
  int64_t t0, t1;
  unsigned qty;
  int sess;
} adv_grant_t;

typedef struct adv_hold {
  uint64_t z1, z2;
} adv_hold_t;

struct adv_acall;

typedef struct adv_slot {
  zkl_sem_t *m;
  struct adv_acall *cur; /* its acquire underway (NULL: none) */
  zkl_lease_t held[3];
  unsigned nheld;
  int hold_loops;
} adv_slot_t;

typedef struct adv {
  int flags, slow, max;
  uint64_t seed;
  char root[128], leases[192], gate[192], scratch[192], count[192];
  zkl_session_t *s[ADV_NS];
  it_proxy_t *px[ADV_NS];
  zkl_session_t *obs;
  zhandle_t *ozh;
  zkl_sem_t *probe; /* the sampler's object (count, holders) */
  zkl_mutex_t *mx;  /* ADV_MUTEX: a mutex on the gate's path */
  atomic_int stop, async_done, mutex_done, sampler_done;
  atomic_int in_use, over;
  atomic_int exp_gen[ADV_NS]; /* odd while an expiry is underway */
  atomic_int sampled_max, samples;
  atomic_int expiries, cancels, cuts, acq_ok, acq_fail, async_ok, async_fail,
      mutex_holds, cb_destroys, pending_destroys;
  atomic_int f_timedout, f_canceled, f_busy, f_suspended, f_lost;
  pthread_mutex_t mu;
  adv_grant_t *g;
  size_t ng, capg;
  adv_hold_t *mh;
  size_t nmh, capmh;
  struct adv_acall **calls;
  size_t ncalls, capcalls;
  int nbad;
  char bad[1024];
  char (*notes)[128]; /* what became of each grant, for a leftover's story */
  size_t nnotes, capnotes;
  adv_slot_t slot[ADV_NSLOT];
  uint64_t arng;
} adv_t;

typedef struct adv_acall {
  adv_t *A;
  adv_slot_t *slot; /* an acquire's; NULL: a release */
  adv_slot_t *rslot; /* a release's */
  int done, rc;
  unsigned qty;
  int64_t t0;
  char name[64]; /* a release's first lease */
} adv_acall_t;

typedef struct adv_worker {
  adv_t *A;
  int sess, shared;
  zkl_sem_t *m;
  uint64_t rng;
  atomic_int done;
} adv_worker_t;

__attribute__((format(printf, 2, 3))) static void adv_bad(adv_t *A,
                                                         const char *fmt,
                                                         ...) {
  char b[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(b, sizeof b, fmt, ap);
  va_end(ap);
  pthread_mutex_lock(&A->mu);
  int n = A->nbad++;
  if (n == 0) snprintf(A->bad, sizeof A->bad, "%s", b);
  pthread_mutex_unlock(&A->mu);
  if (n < 20)
    fprintf(stderr, "semaphore-adversarial (seed %llu): %s\n",
            (unsigned long long)A->seed, b);
}

static void *adv_grow(void *v, size_t *cap, size_t n, size_t size) {
  if (n < *cap) return v;
  size_t c = *cap ? *cap * 2 : 256;
  void *nv = realloc(v, c * size);
  if (nv == NULL) abort();
  *cap = c;
  return nv;
}

__attribute__((format(printf, 2, 3))) static void adv_note(adv_t *A,
                                                          const char *fmt,
                                                          ...) {
  va_list ap;
  pthread_mutex_lock(&A->mu);
  A->notes = adv_grow(A->notes, &A->capnotes, A->nnotes, sizeof *A->notes);
  va_start(ap, fmt);
  vsnprintf(A->notes[A->nnotes++], sizeof *A->notes, fmt, ap);
  va_end(ap);
  pthread_mutex_unlock(&A->mu);
}

/* A grant reported (blocking or async): its leases, their tokens against
 * the server, and the log of grants for the order. */
static void adv_granted(adv_t *A, int sess, const zkl_lease_t *l, size_t n,
                        unsigned qty, int64_t t0, int gen0) {
  int64_t t1 = it_now_ms();
  if (n != qty || l == NULL) {
    adv_bad(A, "granted %zu leases of %u", n, qty);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    if (l[i].token == 0 || l[i].token != l[0].token)
      adv_bad(A, "one acquisition, tokens %llu and %llu",
              (unsigned long long)l[0].token,
              (unsigned long long)l[i].token);
    if (strncmp(l[i].name, "_c_", 3) != 0 ||
        strstr(l[i].name, "-lease-") == NULL)
      adv_bad(A, "a lease named %s", l[i].name);
    for (size_t j = 0; j < i; j++)
      if (strcmp(l[i].name, l[j].name) == 0)
        adv_bad(A, "lease %s granted twice in one acquisition", l[i].name);
  }
  for (size_t i = 0; i < n; i++) {
    char p[512];
    struct Stat st;
    snprintf(p, sizeof p, "%s/%s", A->leases, l[i].name);
    int rc = zoo_exists(A->ozh, p, 0, &st);
    if (rc == ZOK) {
      if ((uint64_t)st.czxid != l[i].token)
        adv_bad(A, "lease %s: token %llu, czxid %llu", l[i].name,
                (unsigned long long)l[i].token,
                (unsigned long long)st.czxid);
      if (!adv_victim(sess) && st.ephemeralOwner != zkl_session_id(A->s[sess]))
        adv_bad(A, "lease %s: owner 0x%llx, not the acquirer's session 0x%llx",
                l[i].name, (unsigned long long)st.ephemeralOwner,
                (unsigned long long)zkl_session_id(A->s[sess]));
    } else if (rc == ZNONODE) {
      int g = atomic_load(&A->exp_gen[sess]);
      if (!adv_victim(sess) || (g == gen0 && (g & 1) == 0))
        adv_bad(A, "lease %s reported granted (session %d), not on the "
                "server", l[i].name, sess);
    } else {
      adv_bad(A, "exists %s: %s", p, zerror(rc));
    }
  }
  adv_note(A, "granted %u to session %d (0x%llx): %s..., token %llu", qty,
           sess, (unsigned long long)zkl_session_id(A->s[sess]), l[0].name,
           (unsigned long long)l[0].token);
  pthread_mutex_lock(&A->mu);
  A->g = adv_grow(A->g, &A->capg, A->ng, sizeof *A->g);
  A->g[A->ng++] = (adv_grant_t){l[0].token, t0, t1, qty, sess};
  pthread_mutex_unlock(&A->mu);
}

static void adv_tally(adv_t *A, int rc) {
  atomic_int *t = rc == ZKL_ETIMEDOUT    ? &A->f_timedout
                  : rc == ZKL_ECANCELED  ? &A->f_canceled
                  : rc == ZKL_EBUSY      ? &A->f_busy
                  : rc == ZKL_ESUSPENDED ? &A->f_suspended
                  : rc == ZKL_ELOST      ? &A->f_lost
                                         : NULL;
  if (t != NULL) atomic_fetch_add(t, 1);
}

/* The in-use counter of the holders that are never expired. */
static void adv_take(adv_t *A, int sess, unsigned qty) {
  if (adv_victim(sess)) return;
  int v = atomic_fetch_add(&A->in_use, (int)qty) + (int)qty;
  if (v > A->max) {
    atomic_fetch_add(&A->over, 1);
    adv_bad(A, "%d leases in use at once (MAX %d)", v, A->max);
  }
}

static void adv_give(adv_t *A, int sess, unsigned qty) {
  if (!adv_victim(sess)) atomic_fetch_sub(&A->in_use, (int)qty);
}

static void *adv_worker_run(void *arg) {
  adv_worker_t *w = arg;
  adv_t *A = w->A;
  int victim = adv_victim(w->sess);
  unsigned qmax = A->max < 3 ? (unsigned)A->max : 3;
  zkl_lease_t l[3];
  while (!atomic_load(&A->stop)) {
    unsigned qty = 1 + adv_rnd(&w->rng, qmax);
    int64_t to = adv_rnd(&w->rng, 12) == 0
                     ? 0
                     : (int64_t)(50 + adv_rnd(&w->rng, 1500)) * A->slow;
    size_t held0 = zkl_sem_held(w->m);
    int gen0 = atomic_load(&A->exp_gen[w->sess]);
    int64_t t0 = it_now_ms();
    int rc = zkl_sem_acquire(w->m, qty, to, l);
    if (rc == 0) {
      atomic_fetch_add(&A->acq_ok, 1);
      adv_granted(A, w->sess, l, qty, qty, t0, gen0);
      adv_take(A, w->sess, qty);
      int h = zkl_sem_lease_health(w->m, &l[0]);
      if (h != 0 && h != ZKL_ESUSPENDED && !(victim && h == ZKL_ELOST))
        adv_bad(A, "lease_health of a lease just granted: %s", it_code(h));
      if (!w->shared && zkl_sem_held(w->m) != held0 + qty)
        adv_bad(A, "held %zu after a grant of %u (was %zu)",
                zkl_sem_held(w->m), qty, held0);
      it_sleep_ms((int)adv_rnd(&w->rng, 4));
      adv_give(A, w->sess, qty);
      unsigned how = w->shared ? 0 : adv_rnd(&w->rng, 3);
      int r2 = 0;
      if (how == 0) {
        r2 = zkl_sem_release(w->m, l, qty);
      } else if (how == 1) {
        r2 = zkl_sem_release_all(w->m);
      } else {
        for (unsigned i = 0; i < qty; i++) {
          int r = zkl_sem_release(w->m, &l[i], 1);
          if (r != 0 && r2 == 0) r2 = r;
        }
      }
      adv_note(A, "released %s... (way %u): %s", l[0].name, how,
               it_code(r2));
      if (r2 != 0 && r2 != ZKL_ESUSPENDED && !(victim && r2 == ZKL_ELOST))
        adv_bad(A, "release (session %d, way %u): %s: %s", w->sess, how,
                it_code(r2), zkl_last_error());
      if (!w->shared && zkl_sem_held(w->m) != 0)
        adv_bad(A, "held %zu after the release", zkl_sem_held(w->m));
    } else {
      atomic_fetch_add(&A->acq_fail, 1);
      adv_tally(A, rc);
      int ok = rc == ZKL_ETIMEDOUT || rc == ZKL_ECANCELED ||
               rc == ZKL_ESUSPENDED || (rc == ZKL_EBUSY && to == 0) ||
               (victim && rc == ZKL_ELOST);
      if (!ok)
        adv_bad(A, "acquire %u (timeout %lld, session %d): %s: %s", qty,
                (long long)to, w->sess, it_code(rc), zkl_last_error());
      if (!w->shared && zkl_sem_held(w->m) != held0)
        adv_bad(A, "a failed acquire (%s) left %zu held", it_code(rc),
                zkl_sem_held(w->m));
    }
  }
  atomic_store(&w->done, 1);
  return NULL;
}

/* The server's view: never more than MAX lease nodes; and the probe
 * object's count and holders agree. */
static void *adv_sampler_run(void *arg) {
  adv_t *A = arg;
  for (int i = 0; !atomic_load(&A->stop); i++) {
    struct String_vector v = {0, NULL};
    int rc = zoo_get_children(A->ozh, A->leases, 0, &v);
    if (rc == ZOK) {
      if (v.count > atomic_load(&A->sampled_max))
        atomic_store(&A->sampled_max, v.count);
      if (v.count > A->max) {
        char names[1024];
        size_t at = 0;
        names[0] = '\0';
        for (int k = 0; k < v.count && at + 80 < sizeof names; k++)
          at += (size_t)snprintf(names + at, sizeof names - at, " %s",
                                 v.data[k]);
        adv_bad(A, "the server lists %d leases (MAX %d):%s", v.count, A->max,
                names);
      }
      deallocate_String_vector(&v);
    } else if (rc != ZNONODE) {
      adv_bad(A, "sampler: get_children %s: %s", A->leases, zerror(rc));
    }
    atomic_fetch_add(&A->samples, 1);
    if (i % 20 == 0) {
      zkl_sem_holder_t *hv = NULL;
      size_t n = 0;
      rc = zkl_sem_holders(A->probe, &hv, &n);
      if (rc != 0) {
        adv_bad(A, "holders: %s: %s", it_code(rc), zkl_last_error());
      } else {
        if (n > (size_t)A->max)
          adv_bad(A, "holders lists %zu (MAX %d)", n, A->max);
        for (size_t k = 1; k < n; k++)
          if (hv[k - 1].token > hv[k].token)
            adv_bad(A, "holders out of order: %llu before %llu",
                    (unsigned long long)hv[k - 1].token,
                    (unsigned long long)hv[k].token);
        zkl_sem_holders_free(hv, n);
      }
      size_t leased = 0;
      int mx = 0;
      rc = zkl_sem_count(A->probe, &leased, &mx);
      if (rc != 0 || leased > (size_t)A->max || mx != A->max)
        adv_bad(A, "count: %s, %zu leased, max %d (MAX %d)", it_code(rc),
                leased, mx, A->max);
    }
    it_sleep_ms(1);
  }
  atomic_store(&A->sampler_done, 1);
  return NULL;
}

/* A zkl mutex on the gate's path: while it holds (between two writes of
 * ours, z1 and z2, in the server's order), no acquisition may be made. */
static void *adv_mutex_run(void *arg) {
  adv_t *A = arg;
  uint64_t rng = it_mix64(A->seed ^ 0x6d75746578ULL);
  while (!atomic_load(&A->stop)) {
    int rc = zkl_mutex_timedlock(
        A->mx, (int64_t)(200 + adv_rnd(&rng, 1000)) * A->slow);
    if (rc == 0) {
      uint64_t z1 = adv_mark(A->ozh, A->scratch);
      it_sleep_ms((int)adv_rnd(&rng, 4));
      uint64_t z2 = adv_mark(A->ozh, A->scratch);
      if (z1 == 0 || z2 == 0) adv_bad(A, "the scratch writes failed");
      pthread_mutex_lock(&A->mu);
      A->mh = adv_grow(A->mh, &A->capmh, A->nmh, sizeof *A->mh);
      A->mh[A->nmh++] = (adv_hold_t){z1, z2};
      pthread_mutex_unlock(&A->mu);
      atomic_fetch_add(&A->mutex_holds, 1);
      rc = zkl_mutex_unlock(A->mx);
      if (rc != 0 && rc != ZKL_ESUSPENDED)
        adv_bad(A, "mutex unlock: %s: %s", it_code(rc), zkl_last_error());
    } else if (rc != ZKL_ETIMEDOUT && rc != ZKL_ECANCELED &&
               rc != ZKL_ESUSPENDED) {
      adv_bad(A, "mutex lock: %s: %s", it_code(rc), zkl_last_error());
    }
    it_sleep_ms((int)adv_rnd(&rng, 30));
  }
  atomic_store(&A->mutex_done, 1);
  return NULL;
}

static adv_acall_t *adv_call_new(adv_t *A, adv_slot_t *slot, unsigned qty) {
  adv_acall_t *c = calloc(1, sizeof *c);
  if (c == NULL) abort();
  c->A = A;
  c->slot = slot;
  c->qty = qty;
  c->t0 = it_now_ms();
  pthread_mutex_lock(&A->mu);
  A->calls = adv_grow(A->calls, &A->capcalls, A->ncalls, sizeof *A->calls);
  A->calls[A->ncalls++] = c;
  pthread_mutex_unlock(&A->mu);
  return c;
}

static void adv_rel_done(void *obj, int rc, uint64_t token, void *arg) {
  (void)obj;
  (void)token;
  adv_acall_t *c = arg;
  c->rc = rc;
  if (++c->done > 1) {
    adv_bad(c->A, "a release_async completed %d times", c->done);
    return;
  }
  adv_note(c->A, "release_async of %s... completed: %s", c->name,
           it_code(rc));
  if (rc != 0 && rc != ZKL_ESUSPENDED && rc != ZKL_ECANCELED)
    adv_bad(c->A, "release_async completed with %s: %s", it_code(rc),
            zkl_last_error());
  /* not destroyed (rc would say so): now from this completion, sometimes,
   * with an acquire of it maybe underway */
  adv_slot_t *sl = c->rslot;
  if (rc != ZKL_ECANCELED && sl->m == obj && adv_rnd(&c->A->arng, 5) == 0) {
    if (sl->nheld > 0) {
      adv_give(c->A, 2, sl->nheld);
      adv_note(c->A, "destroyed holding %s... (in a release's completion)",
               sl->held[0].name);
    }
    sl->nheld = 0;
    sl->cur = NULL;
    zkl_sem_destroy(sl->m);
    sl->m = NULL;
    atomic_fetch_add(&c->A->cb_destroys, 1);
  }
}

static void adv_slot_release(adv_t *A, adv_slot_t *sl, const zkl_lease_t *l,
                             size_t n) {
  adv_acall_t *c = adv_call_new(A, NULL, 0);
  c->rslot = sl;
  snprintf(c->name, sizeof c->name, "%s", l != NULL ? l[0].name : "(all)");
  int rc = zkl_sem_release_async(sl->m, l, n, adv_rel_done, c);
  if (rc != 0) {
    c->done = 1; /* never runs */
    adv_bad(A, "release_async: %s: %s", it_code(rc), zkl_last_error());
  }
}

static void adv_acq_done(zkl_sem_t *m, int rc, const zkl_lease_t *l,
                         size_t n, void *arg) {
  adv_acall_t *c = arg;
  adv_t *A = c->A;
  adv_slot_t *sl = c->slot;
  c->rc = rc;
  if (++c->done > 1) {
    adv_bad(A, "an acquire_async completed %d times (rc %s)", c->done,
            it_code(rc));
    return;
  }
  int live = sl->cur == c; /* else its object was destroyed: m is gone */
  if (live) sl->cur = NULL;
  if (rc == 0) {
    if (!live) {
      adv_bad(A, "a grant reported for an object destroyed before");
      return;
    }
    atomic_fetch_add(&A->async_ok, 1);
    adv_granted(A, 2, l, n, c->qty, c->t0, 0);
    adv_take(A, 2, c->qty);
    switch (adv_rnd(&A->arng, 6)) {
    case 0:
      adv_give(A, 2, c->qty);
      adv_slot_release(A, sl, l, n);
      break;
    case 1:
      adv_give(A, 2, c->qty);
      adv_slot_release(A, sl, NULL, 0);
      break;
    case 2: /* destroyed from its own completion, holding: the janitor */
      adv_give(A, 2, c->qty);
      adv_note(A, "destroyed holding %s... (in its completion)", l[0].name);
      zkl_sem_destroy(m);
      sl->m = NULL;
      atomic_fetch_add(&A->cb_destroys, 1);
      break;
    case 3: /* released, then destroyed with the release underway */
      adv_give(A, 2, c->qty);
      adv_slot_release(A, sl, l, n);
      zkl_sem_destroy(m);
      sl->m = NULL;
      atomic_fetch_add(&A->cb_destroys, 1);
      break;
    default: /* kept a few rounds */
      memcpy(sl->held, l, n * sizeof *l);
      sl->nheld = (unsigned)n;
      sl->hold_loops = 1 + (int)adv_rnd(&A->arng, 5);
      break;
    }
    return;
  }
  atomic_fetch_add(&A->async_fail, 1);
  adv_tally(A, rc);
  if (rc != ZKL_ETIMEDOUT && rc != ZKL_ECANCELED && rc != ZKL_EBUSY &&
      rc != ZKL_ESUSPENDED)
    adv_bad(A, "acquire_async %u: %s: %s", c->qty, it_code(rc),
            zkl_last_error());
  if (n != 0 || l != NULL) adv_bad(A, "a failed acquire_async gave leases");
  if (adv_rnd(&A->arng, 8) == 0) { /* a cancel from a completion */
    adv_slot_t *o = &A->slot[adv_rnd(&A->arng, ADV_NSLOT)];
    if (o->m != NULL && o->cur != NULL) zkl_sem_cancel(o->m);
  }
  if (live && adv_rnd(&A->arng, 4) == 0) {
    zkl_sem_destroy(m);
    sl->m = NULL;
    atomic_fetch_add(&A->cb_destroys, 1);
  }
}

/* An object of the storm's semaphore; odd k: no local max, the one stored
 * (the shared count, or <path>'s data in kazoo's layout) */
static int adv_sem_of(adv_t *A, zkl_sem_t **m, zkl_session_t *s, int k) {
  zkl_sem_opts_t o;
  zkl_sem_opts_init(&o);
  int stored = (A->flags & (ADV_KAZOO | ADV_COUNT)) != 0;
  o.max = stored && (k & 1) ? 0 : A->max;
  o.format = A->flags & ADV_KAZOO ? ZKL_SEM_KAZOO : ZKL_SEM_CURATOR;
  if (A->flags & ADV_COUNT) o.count_path = A->count;
  return zkl_sem_create(m, s, A->root, &o);
}

static int adv_calls_done(adv_t *A) {
  pthread_mutex_lock(&A->mu);
  int all = 1;
  for (size_t i = 0; i < A->ncalls && all; i++)
    if (A->calls[i]->done == 0) all = 0;
  pthread_mutex_unlock(&A->mu);
  return all;
}

/* One thread, one session (2), its completions dispatched here: acquires
 * of several objects, some released at once, some kept a while, some
 * objects destroyed from their own completion (holding, or with a release
 * underway), some canceled or destroyed while their acquire waits. */
static void *adv_async_run(void *arg) {
  adv_t *A = arg;
  zkl_session_t *s = A->s[2];
  unsigned qmax = A->max < 3 ? (unsigned)A->max : 3;
  while (!atomic_load(&A->stop)) {
    for (int k = 0; k < ADV_NSLOT; k++) {
      adv_slot_t *sl = &A->slot[k];
      if (sl->m == NULL) {
        int rc = adv_sem_of(A, &sl->m, s, (int)adv_rnd(&A->arng, 2));
        if (rc != 0) {
          adv_bad(A, "sem_create: %s", it_code(rc));
          sl->m = NULL;
          continue;
        }
      }
      if (sl->nheld > 0 && --sl->hold_loops <= 0) {
        adv_note(A, "kept %s..., now released", sl->held[0].name);
        adv_give(A, 2, sl->nheld);
        adv_slot_release(A, sl, sl->held, sl->nheld);
        sl->nheld = 0;
      }
      if (sl->cur == NULL && sl->nheld == 0) {
        unsigned qty = 1 + adv_rnd(&A->arng, qmax);
        int64_t to = adv_rnd(&A->arng, 10) == 0
                         ? 0
                         : (int64_t)(50 + adv_rnd(&A->arng, 1500)) * A->slow;
        adv_acall_t *c = adv_call_new(A, sl, qty);
        sl->cur = c;
        int rc = zkl_sem_acquire_async(sl->m, qty, to, adv_acq_done, c);
        if (rc != 0) {
          sl->cur = NULL;
          c->done = 1; /* never runs */
          adv_bad(A, "acquire_async: %s: %s", it_code(rc), zkl_last_error());
        }
      } else if (sl->cur != NULL) {
        unsigned r = adv_rnd(&A->arng, 3000);
        if (r < 2) {
          zkl_sem_cancel(sl->m);
          atomic_fetch_add(&A->cancels, 1);
        } else if (r < 4) { /* destroyed while its acquire waits */
          adv_note(A, "destroyed with an acquire underway");
          sl->cur = NULL;
          zkl_sem_destroy(sl->m);
          sl->m = NULL;
          atomic_fetch_add(&A->pending_destroys, 1);
        }
      }
    }
    zkl_session_dispatch(s);
    it_sleep_ms(1);
  }
  for (int k = 0; k < ADV_NSLOT; k++) {
    adv_slot_t *sl = &A->slot[k];
    if (sl->m == NULL) continue;
    if (sl->nheld > 0) {
      adv_give(A, 2, sl->nheld);
      adv_note(A, "destroyed holding %s... (the end)", sl->held[0].name);
    }
    sl->nheld = 0;
    sl->cur = NULL;
    zkl_sem_destroy(sl->m); /* what it holds: the janitor's */
    sl->m = NULL;
  }
  int64_t end = it_now_ms() + 20000 * A->slow;
  while (!adv_calls_done(A) && it_now_ms() < end) {
    zkl_session_dispatch(s);
    it_sleep_ms(2);
  }
  for (int i = 0; i < 50; i++) { /* a second completion would show now */
    zkl_session_dispatch(s);
    it_sleep_ms(2);
  }
  atomic_store(&A->async_done, 1);
  return NULL;
}

static int adv_cmp_t1(const void *a, const void *b) {
  const adv_grant_t *x = a, *y = b;
  return x->t1 < y->t1 ? -1 : x->t1 > y->t1;
}
static int adv_cmp_t0(const void *a, const void *b) {
  const adv_grant_t *x = a, *y = b;
  return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}
static int adv_cmp_token(const void *a, const void *b) {
  const adv_grant_t *x = a, *y = b;
  return x->token < y->token ? -1 : x->token > y->token;
}

/* One token per acquisition, and larger for every acquisition that began
 * after another had returned. */
static void adv_check_order(adv_t *A) {
  size_t n = A->ng;
  if (n == 0) return;
  adv_grant_t *byt1 = malloc(n * sizeof *byt1);
  adv_grant_t *byt0 = malloc(n * sizeof *byt0);
  ck_assert_ptr_nonnull(byt1);
  ck_assert_ptr_nonnull(byt0);
  memcpy(byt1, A->g, n * sizeof *byt1);
  memcpy(byt0, A->g, n * sizeof *byt0);
  qsort(byt1, n, sizeof *byt1, adv_cmp_token);
  for (size_t i = 1; i < n; i++)
    ck_assert_msg(byt1[i - 1].token != byt1[i].token,
                  "seed %llu: two acquisitions (sessions %d, %d) share token "
                  "%llu",
                  (unsigned long long)A->seed, byt1[i - 1].sess,
                  byt1[i].sess, (unsigned long long)byt1[i].token);
  qsort(byt1, n, sizeof *byt1, adv_cmp_t1);
  qsort(byt0, n, sizeof *byt0, adv_cmp_t0);
  size_t j = 0;
  const adv_grant_t *top = NULL;
  for (size_t i = 0; i < n; i++) {
    while (j < n && byt1[j].t1 < byt0[i].t0) {
      if (top == NULL || byt1[j].token > top->token) top = &byt1[j];
      j++;
    }
    ck_assert_msg(top == NULL || byt0[i].token > top->token,
                  "seed %llu: an acquisition begun at %lld ms (session %d) "
                  "got token %llu, not larger than %llu of one that returned "
                  "at %lld ms (session %d)",
                  (unsigned long long)A->seed, (long long)byt0[i].t0,
                  byt0[i].sess, (unsigned long long)byt0[i].token,
                  (unsigned long long)top->token, (long long)top->t1,
                  top->sess);
  }
  free(byt1);
  free(byt0);
}

/* Nothing left under path once every object is gone, the sessions still
 * open; else the story of what is left: our sessions, and what the notes
 * say of each leftover's acquisition (its name's prefix). */
static void adv_storm_empty(adv_t *A, const char *path, const char *what) {
  if (it_wait_children(A->obs, path, 0, 15000 * A->slow)) return;
  char msg[4096], left[2048];
  adv_leftovers(A->ozh, path, left, sizeof left);
  size_t at = (size_t)snprintf(msg, sizeof msg, "seed %llu: %s %s: left: %s; "
                               "sessions:", (unsigned long long)A->seed,
                               what, path, left);
  for (int k = 0; k < ADV_NS && at < sizeof msg; k++)
    if (A->s[k] != NULL)
      at += (size_t)snprintf(msg + at, sizeof msg - at, " %d=0x%llx(%d)", k,
                             (unsigned long long)zkl_session_id(A->s[k]),
                             zkl_session_state(A->s[k]));
  struct String_vector v = {0, NULL};
  if (zoo_get_children(A->ozh, path, 0, &v) == ZOK) {
    for (int i = 0; i < v.count && at < sizeof msg; i++) {
      const char *mark = strstr(v.data[i], "-lease-");
      size_t pl = mark != NULL ? (size_t)(mark - v.data[i]) : 0;
      if (pl == 0) continue;
      int found = 0;
      for (size_t j = 0; j < A->nnotes && at < sizeof msg; j++)
        if (strstr(A->notes[j], v.data[i]) != NULL ||
            (strncmp(strstr(A->notes[j], "_c_") != NULL
                         ? strstr(A->notes[j], "_c_")
                         : "",
                     v.data[i], pl) == 0)) {
          at += (size_t)snprintf(msg + at, sizeof msg - at, " | %s",
                                 A->notes[j]);
          found = 1;
        }
      if (!found)
        at += (size_t)snprintf(msg + at, sizeof msg - at,
                               " | %s: never reported granted", v.data[i]);
    }
    deallocate_String_vector(&v);
  }
  fprintf(stderr, "%s\n", msg);
  ck_abort_msg("%s", msg);
}

static const int adv_variants[] = {0, ADV_KAZOO, ADV_RO, ADV_MUTEX,
                                   ADV_KAZOO | ADV_MUTEX | ADV_RO,
                                   ADV_COUNT | ADV_MUTEX};

/* Many acquirers (blocking ones on four sessions, two of them expired now
 * and then; two threads sharing one object; an async loop on a fifth),
 * qty 1..3 of MAX 2..4, while the proxies cut connections right after
 * lease multis (their answers lost) and other requests, acquires are
 * canceled, async objects destroyed from their completions; variants:
 * kazoo's layout, gate nodes that refuse the write (gate_ro), a zkl mutex
 * on the gate's path.  Seed: ZKL_SEM_ADV_SEED. */
START_TEST(adv_storm) {
  adv_t *A = calloc(1, sizeof *A);
  ck_assert_ptr_nonnull(A);
  A->flags = adv_variants[_i];
  int kazoo = (A->flags & ADV_KAZOO) != 0, ro = (A->flags & ADV_RO) != 0,
      mutex = (A->flags & ADV_MUTEX) != 0;
  A->slow = adv_slow();
  uint64_t base = it_seed("ZKL_SEM_ADV_SEED");
  A->seed = it_mix64(base + (uint64_t)_i);
  uint64_t rng = A->seed;
  A->arng = it_mix64(A->seed ^ 0xa5a5);
  A->max = 2 + (int)adv_rnd(&rng, 3);
  pthread_mutex_init(&A->mu, NULL);
  it_root(A->root, sizeof A->root, "sem-adv");
  adv_paths(A->root, kazoo, A->leases, A->gate, sizeof A->leases);
  snprintf(A->scratch, sizeof A->scratch, "%s-scratch", A->root);
  snprintf(A->count, sizeof A->count, "%s-max", A->root);
  printf("semaphore-adversarial storm %d (kazoo %d, gate_ro %d, mutex %d, "
         "count %d): ZKL_SEM_ADV_SEED=%llu, MAX %d\n",
         _i, kazoo, ro, mutex, (A->flags & ADV_COUNT) != 0,
         (unsigned long long)base, A->max);
  fflush(stdout);
  A->obs = it_session();
  A->ozh = zkl_session_zhandle(A->obs);
  int zrc = zoo_create(A->ozh, "/zkl-test", NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0,
                       NULL, 0);
  ck_assert(zrc == ZOK || zrc == ZNODEEXISTS);
  ck_assert_int_eq(zoo_create(A->ozh, A->scratch, "", 0, &ZOO_OPEN_ACL_UNSAFE,
                              0, NULL, 0),
                   ZOK);
  if (kazoo) { /* the maximum stored, as kazoo keeps it */
    char text[8];
    int tl = snprintf(text, sizeof text, "%d", A->max);
    ck_assert_int_eq(zoo_create(A->ozh, A->root, text, tl,
                                &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0),
                     ZOK);
  }
  if (A->flags & ADV_COUNT) { /* a shared count: 4 bytes big-endian */
    put_count(A->obs, A->count, A->max);
  }
  for (int k = 0; k < ADV_NS; k++) {
    if (k == 5 && !mutex) continue;
    char hosts[64];
    A->px[k] = it_proxy_start();
    snprintf(hosts, sizeof hosts, "127.0.0.1:%d", it_proxy_port(A->px[k]));
    A->s[k] = adv_open(hosts, 10000, ro);
  }
  ck_assert_int_eq(adv_sem_of(A, &A->probe, A->obs, 0), 0);
  if (mutex) A->mx = it_mutex(A->s[5], A->gate);
  adv_worker_t w[ADV_NW];
  static const int wsess[ADV_NW] = {0, 0, 0, 1, 1, 3, 4};
  zkl_sem_t *shared = NULL;
  for (int k = 0; k < ADV_NW; k++) {
    memset(&w[k], 0, sizeof w[k]);
    w[k].A = A;
    w[k].sess = wsess[k];
    w[k].shared = k == 1 || k == 2;
    w[k].rng = it_mix64(A->seed + 1000 + (uint64_t)k);
    if (w[k].shared && shared != NULL) {
      w[k].m = shared;
      continue;
    }
    ck_assert_int_eq(adv_sem_of(A, &w[k].m, A->s[w[k].sess], k), 0);
    if (w[k].shared) shared = w[k].m;
  }
  pthread_t tw[ADV_NW], ts, ta, tm;
  for (int k = 0; k < ADV_NW; k++)
    ck_assert_int_eq(pthread_create(&tw[k], NULL, adv_worker_run, &w[k]), 0);
  ck_assert_int_eq(pthread_create(&ts, NULL, adv_sampler_run, A), 0);
  ck_assert_int_eq(pthread_create(&ta, NULL, adv_async_run, A), 0);
  if (mutex) ck_assert_int_eq(pthread_create(&tm, NULL, adv_mutex_run, A), 0);

  /* the chaos */
  static const int ops[] = {ZOO_MULTI_OP, ZOO_MULTI_OP,  ZOO_MULTI_OP,
                            ZOO_MULTI_OP, ZOO_MULTI_OP,  ZOO_DELETE_OP,
                            ZOO_SYNC_OP,  ZOO_CREATE2_OP, ZOO_GETCHILDREN_OP,
                            ZOO_EXISTS_OP, ZOO_GETDATA_OP};
  int64_t t_end = it_now_ms() + 8000, last_exp = it_now_ms();
  while (it_now_ms() < t_end) {
    it_sleep_ms(20 + (int)adv_rnd(&rng, 100));
    unsigned r = adv_rnd(&rng, 100);
    if (r < 45) {
      int k = (int)adv_rnd(&rng, ADV_NS);
      if (A->px[k] == NULL) continue;
      it_proxy_cut_after(A->px[k],
                         ops[adv_rnd(&rng, sizeof ops / sizeof ops[0])]);
      atomic_fetch_add(&A->cuts, 1);
    } else if (r < 60) {
      zkl_sem_cancel(w[adv_rnd(&rng, ADV_NW)].m);
      atomic_fetch_add(&A->cancels, 1);
    } else if (r < 68 && it_now_ms() - last_exp > 1200) {
      int v = 3 + (int)adv_rnd(&rng, 2);
      atomic_fetch_add(&A->exp_gen[v], 1);
      it_expire_session(A->s[v]);
      atomic_fetch_add(&A->exp_gen[v], 1);
      atomic_fetch_add(&A->expiries, 1);
      last_exp = it_now_ms();
    } else if (r < 72 && mutex) {
      zkl_mutex_cancel(A->mx);
    }
  }

  /* wind down: every thread ends by itself once canceled */
  atomic_store(&A->stop, 1);
  int64_t end = it_now_ms() + 30000 * A->slow;
  for (;;) {
    int all = 1;
    for (int k = 0; k < ADV_NW; k++)
      if (!atomic_load(&w[k].done)) {
        all = 0;
        zkl_sem_cancel(w[k].m);
      }
    if (mutex && !atomic_load(&A->mutex_done)) {
      all = 0;
      zkl_mutex_cancel(A->mx);
    }
    if (all || it_now_ms() > end) break;
    it_sleep_ms(10);
  }
  for (int k = 0; k < ADV_NW; k++)
    ck_assert_msg(atomic_load(&w[k].done), "worker %d still in a call", k);
  for (int k = 0; k < ADV_NW; k++) pthread_join(tw[k], NULL);
  if (mutex) pthread_join(tm, NULL);
  pthread_join(ts, NULL);
  pthread_join(ta, NULL);
  for (int k = 0; k < ADV_NS; k++)
    if (A->px[k] != NULL) it_proxy_cut_after(A->px[k], 0);
  for (int k = 0; k < ADV_NW; k++)
    if (!(k == 2 && w[k].m == w[1].m)) zkl_sem_destroy(w[k].m);
  zkl_sem_destroy(A->probe);
  if (mutex) zkl_mutex_destroy(A->mx);

  printf("  %d blocking grants, %d failed; %d async grants, %d failed; "
         "%d grants logged; %d mutex holds; %d cuts asked, %d expiries, "
         "%d cancels, %d destroyed in a completion, %d while waiting; "
         "%d samples, at most %d leases seen; failures: %d timed out, "
         "%d canceled, %d busy, %d suspended, %d lost\n",
         atomic_load(&A->acq_ok), atomic_load(&A->acq_fail),
         atomic_load(&A->async_ok), atomic_load(&A->async_fail), (int)A->ng,
         atomic_load(&A->mutex_holds), atomic_load(&A->cuts),
         atomic_load(&A->expiries), atomic_load(&A->cancels),
         atomic_load(&A->cb_destroys), atomic_load(&A->pending_destroys),
         atomic_load(&A->samples), atomic_load(&A->sampled_max),
         atomic_load(&A->f_timedout), atomic_load(&A->f_canceled),
         atomic_load(&A->f_busy), atomic_load(&A->f_suspended),
         atomic_load(&A->f_lost));
  fflush(stdout);

  ck_assert_msg(A->nbad == 0, "ZKL_SEM_ADV_SEED=%llu variant %d: %d "
                "violations; the first: %s",
                (unsigned long long)base, _i, A->nbad, A->bad);
  ck_assert_int_eq(atomic_load(&A->over), 0);
  ck_assert_int_le(atomic_load(&A->sampled_max), A->max);
  ck_assert_int_eq(atomic_load(&A->in_use), 0);
  ck_assert_msg(atomic_load(&A->async_done), "the async loop did not end");
  /* every accepted async call completed, once */
  for (size_t i = 0; i < A->ncalls; i++)
    ck_assert_msg(A->calls[i]->done == 1,
                  "ZKL_SEM_ADV_SEED=%llu: async call %zu (%s) completed %d "
                  "times",
                  (unsigned long long)base, i,
                  A->calls[i]->slot != NULL ? "acquire" : "release",
                  A->calls[i]->done);
  ck_assert_int_ge((int)A->ng, 5); /* not vacuous */
  adv_check_order(A);
  /* no acquisition while the mutex on the gate's path was held */
  for (size_t i = 0; i < A->nmh; i++)
    for (size_t j = 0; j < A->ng; j++)
      ck_assert_msg(A->g[j].token < A->mh[i].z1 ||
                        A->g[j].token > A->mh[i].z2,
                    "ZKL_SEM_ADV_SEED=%llu: lease token %llu made while the "
                    "mutex on the gate was held (%llu..%llu)",
                    (unsigned long long)base,
                    (unsigned long long)A->g[j].token,
                    (unsigned long long)A->mh[i].z1,
                    (unsigned long long)A->mh[i].z2);
  if (mutex) ck_assert_int_ge(atomic_load(&A->mutex_holds), 1);
  /* nothing left behind, the sessions still open */
  adv_storm_empty(A, A->leases, "leases");
  adv_storm_empty(A, A->gate, "gate");

  for (int k = 0; k < ADV_NS; k++) {
    if (A->s[k] != NULL) zkl_session_close(A->s[k]);
    if (A->px[k] != NULL) it_proxy_stop(A->px[k]);
  }
  zoo_delete(A->ozh, A->scratch, -1);
  if (kazoo) zoo_delete(A->ozh, A->root, -1); /* PERSISTENT */
  if (A->flags & ADV_COUNT) zoo_delete(A->ozh, A->count, -1);
  zkl_session_close(A->obs);
  for (size_t i = 0; i < A->ncalls; i++) free(A->calls[i]);
  free(A->calls);
  free(A->g);
  free(A->mh);
  free(A->notes);
  pthread_mutex_destroy(&A->mu);
  free(A);
}
END_TEST

/* ---- a gate holder's lease multi applied, its answer lost ---------------------- */

typedef struct adv_bg {
  zkl_sem_t *m;
  unsigned qty;
  int64_t timeout_ms;
  int rc;
  zkl_lease_t l[3];
  atomic_int done;
  char err[256]; /* zkl_last_error() of a failure */
} adv_bg_t;

static void *adv_bg_run(void *arg) {
  adv_bg_t *b = arg;
  b->rc = zkl_sem_acquire(b->m, b->qty, b->timeout_ms, b->l);
  if (b->rc != 0) snprintf(b->err, sizeof b->err, "%s", zkl_last_error());
  atomic_store(&b->done, 1);
  return NULL;
}

static int adv_wait_flag(atomic_int *f, int timeout_ms) {
  int64_t end = it_now_ms() + timeout_ms;
  while (!atomic_load(f) && it_now_ms() < end) it_sleep_ms(2);
  return atomic_load(f);
}

/* Waits until s is connected on a session other than `old` (re-established
 * after an expiry): a failure reported before would end the process while
 * the new session's threads are being started (valgrind has been seen to
 * hang in that exit). */
static void adv_settle(zkl_session_t *s, int64_t old, int timeout_ms) {
  int64_t end = it_now_ms() + timeout_ms;
  while ((zkl_session_state(s) != ZKL_SESSION_CONNECTED ||
          zkl_session_id(s) == old) &&
         it_now_ms() < end)
    it_sleep_ms(5);
}

typedef struct adv_watchmax {
  zhandle_t *zh;
  const char *path;
  atomic_int stop, most;
} adv_watchmax_t;

static void *adv_watchmax_run(void *arg) {
  adv_watchmax_t *x = arg;
  while (!atomic_load(&x->stop)) {
    int n = 0;
    struct String_vector v = {0, NULL};
    if (zoo_get_children(x->zh, x->path, 0, &v) == ZOK) {
      n = v.count;
      deallocate_String_vector(&v);
    }
    if (n > atomic_load(&x->most)) atomic_store(&x->most, n);
    it_sleep_ms(1);
  }
  return NULL;
}

/* The lease owned by session sid under leases (its name in buf): how many. */
static int adv_leases_of(zhandle_t *zh, const char *leases, int64_t sid,
                         char *buf, size_t len, uint64_t *czxid) {
  struct String_vector v = {0, NULL};
  if (zoo_get_children(zh, leases, 0, &v) != ZOK) return 0;
  int n = 0;
  for (int i = 0; i < v.count; i++) {
    char p[512];
    struct Stat st;
    snprintf(p, sizeof p, "%s/%s", leases, v.data[i]);
    if (zoo_exists(zh, p, 0, &st) != ZOK || st.ephemeralOwner != sid) continue;
    if (n++ == 0) {
      snprintf(buf, len, "%s", v.data[i]);
      if (czxid != NULL) *czxid = (uint64_t)st.czxid;
    }
  }
  deallocate_String_vector(&v);
  return n;
}

/* MAX 2, F holds both.  H (behind the proxy) holds the gate, waiting for
 * room; W waits behind H.  F gives one back: H's lease multi is applied
 * and its answer lost (the proxy cuts right after it), and H is cut off
 * (blackholed).  Curator's layout: W took H's gate write for a release
 * mark: it counts H's lease (full) and, once F gives its other lease
 * back, is granted while H's gate node is still there, with a larger
 * token.  kazoo's layout and a gate_ro H write nothing W takes for a
 * mark: W waits for H's gate node to go.  Then either H's session is
 * ended on the server (H's lease and gate node go with it; H queues
 * again on a new session and is granted a new lease, after W) or H comes
 * back on the same session (it finds its lease by prefix: granted that
 * one, with its czxid, made once).  Never over MAX on the server. */
START_TEST(adv_lost_answer_waiter) {
  int kazoo = _i & 1, expire = (_i >> 1) & 1, ro = (_i >> 2) & 1;
  int early = !kazoo && !ro;
  int slow = adv_slow();
  char root[128], leases[192], gate[192];
  it_root(root, sizeof root, "sem-adv-lost");
  adv_paths(root, kazoo, leases, gate, sizeof leases);
  zkl_session_t *obs = it_session();
  zhandle_t *ozh = zkl_session_zhandle(obs);
  it_proxy_t *px = it_proxy_start();
  char hosts[64];
  snprintf(hosts, sizeof hosts, "127.0.0.1:%d", it_proxy_port(px));
  zkl_session_t *f = adv_open(it_hosts(), 10000, ro),
                *w = adv_open(it_hosts(), 10000, ro),
                *h = adv_open(hosts, 20000, ro); /* outlives its cut */
  zkl_sem_t *F = NULL, *H = NULL, *W = NULL;
  ck_assert_int_eq(adv_sem_new(&F, f, root, 2, kazoo), 0);
  ck_assert_int_eq(adv_sem_new(&H, h, root, 2, kazoo), 0);
  ck_assert_int_eq(adv_sem_new(&W, w, root, 2, kazoo), 0);
  zkl_lease_t lf[2];
  /* each object once through (a gate_ro object learns it so) */
  ck_assert_int_eq(zkl_sem_acquire(H, 1, 5000, lf), 0);
  ck_assert_int_eq(zkl_sem_release_all(H), 0);
  ck_assert_int_eq(zkl_sem_acquire(W, 1, 5000, lf), 0);
  ck_assert_int_eq(zkl_sem_release_all(W), 0);
  ck_assert_int_eq(zkl_sem_acquire(F, 2, 5000, lf), 0);
  adv_watchmax_t wm = {ozh, leases, 0, 0};
  pthread_t tm, th, tw;
  ck_assert_int_eq(pthread_create(&tm, NULL, adv_watchmax_run, &wm), 0);
  int64_t hsid = zkl_session_id(h);
  clientid_t hid = *zoo_client_id(zkl_session_zhandle(h));
  adv_bg_t hb = {.m = H, .qty = 1, .timeout_ms = 40000 * slow, .rc = 99};
  adv_bg_t wb = {.m = W, .qty = 1, .timeout_ms = 40000 * slow, .rc = 99};
  ck_assert_int_eq(pthread_create(&th, NULL, adv_bg_run, &hb), 0);
  ck_assert(it_wait_children(obs, gate, 1, 5000 * slow));
  struct String_vector gv;
  ck_assert_int_eq(it_children(obs, gate, &gv), 1);
  char hnode[512];
  snprintf(hnode, sizeof hnode, "%s/%s", gate, gv.data[0]);
  deallocate_String_vector(&gv);
  ck_assert_int_eq(it_owner_of(obs, hnode), hsid);
  it_sleep_ms(100); /* H holds the gate: it lists the leases, full */
  ck_assert_int_eq(pthread_create(&tw, NULL, adv_bg_run, &wb), 0);
  ck_assert(it_wait_children(obs, gate, 2, 5000 * slow));
  /* W watches H's gate node (not counting H's own watch on it) */
  ck_assert(adv_watched(hnode, hsid, 5000 * slow));

  it_proxy_cut_after(px, ZOO_MULTI_OP);
  ck_assert_int_eq(zkl_sem_release(F, lf, 1), 0);
  int64_t until = it_now_ms() + 5000 * slow;
  while (it_proxy_cuts(px) == 0 && it_now_ms() < until) usleep(200);
  it_proxy_blackhole(px, 1); /* H may not come back yet */
  ck_assert_int_eq(it_proxy_cuts(px), 1);
  /* applied: H's lease is on the server, beside F's */
  char hlease[128] = "";
  uint64_t hczxid = 0;
  until = it_now_ms() + 5000 * slow;
  while (adv_leases_of(ozh, leases, hsid, hlease, sizeof hlease,
                       &hczxid) == 0 &&
         it_now_ms() < until)
    it_sleep_ms(5);
  ck_assert_msg(hlease[0] != '\0', "H's lease multi was not applied");
  ck_assert_msg(!atomic_load(&hb.done),
                "H returned (%s) before it was cut off: the proxy's race",
                it_code(hb.rc));
  ck_assert_int_eq(zkl_sem_release(F, lf + 1, 1), 0); /* room for one more */
  if (early) {
    ck_assert_msg(adv_wait_flag(&wb.done, 8000 * slow),
                  "W did not go on at H's gate write");
    ck_assert_int_eq(wb.rc, 0);
    /* H's gate node still there: W went on at the write, not the delete */
    ck_assert_int_eq(it_owner_of(obs, hnode), hsid);
    ck_assert_uint_gt(wb.l[0].token, hczxid);
  } else {
    it_sleep_ms(700 * slow);
    ck_assert_msg(!atomic_load(&wb.done),
                  "W went on (%s) while H's gate node was there",
                  it_code(wb.rc));
    ck_assert_int_eq(it_children(obs, leases, NULL), 1); /* H's */
  }
  if (expire) adv_kill_session(&hid, 20000);
  it_proxy_blackhole(px, 0);
  ck_assert_msg(adv_wait_flag(&hb.done, 40000 * slow), "H never returned");
  ck_assert_msg(adv_wait_flag(&wb.done, 40000 * slow), "W never returned");
  pthread_join(th, NULL);
  pthread_join(tw, NULL);
  if (expire) adv_settle(h, hsid, 10000 * slow);
  atomic_store(&wm.stop, 1);
  pthread_join(tm, NULL);
  ck_assert_int_le(atomic_load(&wm.most), 2);
  ck_assert_msg(hb.rc == 0, "H: %s: %s", it_code(hb.rc), hb.err);
  ck_assert_msg(wb.rc == 0, "W: %s: %s", it_code(wb.rc), wb.err);
  ck_assert_uint_eq(wb.l[0].token,
                    lease_czxid(obs, root, kazoo ? NULL : "leases",
                                wb.l[0].name));
  char name[128];
  uint64_t cz = 0;
  if (expire) {
    ck_assert_int_ne(zkl_session_id(h), hsid); /* a new session */
    ck_assert_str_ne(hb.l[0].name, hlease);
    ck_assert_int_eq(adv_leases_of(ozh, leases, hsid, name, sizeof name, NULL),
                     0);
    ck_assert_int_eq(adv_leases_of(ozh, leases, zkl_session_id(h), name,
                                   sizeof name, &cz),
                     1);
    ck_assert_str_eq(name, hb.l[0].name);
    ck_assert_uint_eq(hb.l[0].token, cz);
    ck_assert_uint_gt(hb.l[0].token, wb.l[0].token); /* queued after W */
  } else {
    ck_assert_int_eq(zkl_session_id(h), hsid);
    /* the lease its cut multi made: found again, made once */
    ck_assert_str_eq(hb.l[0].name, hlease);
    ck_assert_uint_eq(hb.l[0].token, hczxid);
    ck_assert_int_eq(adv_leases_of(ozh, leases, hsid, name, sizeof name, NULL),
                     1);
    ck_assert_uint_lt(hb.l[0].token, wb.l[0].token);
  }
  ck_assert_int_eq(it_children(obs, leases, NULL), 2);
  ck_assert_int_eq(zkl_sem_release_all(H), 0);
  ck_assert_int_eq(zkl_sem_release_all(W), 0);
  zkl_sem_destroy(F);
  zkl_sem_destroy(H);
  zkl_sem_destroy(W);
  adv_assert_empty(obs, leases, 10000 * slow, "leases");
  adv_assert_empty(obs, gate, 10000 * slow, "gate");
  zkl_session_close(f);
  zkl_session_close(w);
  zkl_session_close(h);
  it_proxy_stop(px);
  if (kazoo) zoo_delete(ozh, root, -1);
  zkl_session_close(obs);
}
END_TEST

/* ---- an acquirer's session expires while it waits in the gate ----------------- */

/* With reestablish on (the default), "calls waiting to acquire keep
 * waiting and queue again on the new session" (zkl/session.h), and an
 * acquire's ZKL_ELOST means "the session was lost and no new one comes"
 * (zkl/semaphore.h).  MAX 1, F holds it; X waits for room as the gate's
 * holder (_i & 2: behind another waiter Y, in the gate's queue), its
 * session is expired on the server, then F gives its lease back: X is
 * granted on its new session, with nothing of the old one left. */
START_TEST(adv_gate_waiter_expired) {
  int kazoo = _i & 1, queued = (_i >> 1) & 1;
  int slow = adv_slow();
  char root[128], leases[192], gate[192];
  it_root(root, sizeof root, "sem-adv-exp");
  adv_paths(root, kazoo, leases, gate, sizeof leases);
  zkl_session_t *obs = it_session(), *f = it_session(), *x = it_session(),
                *y = it_session();
  zkl_sem_t *F = NULL, *X = NULL, *Y = NULL;
  ck_assert_int_eq(adv_sem_new(&F, f, root, 1, kazoo), 0);
  ck_assert_int_eq(adv_sem_new(&X, x, root, 1, kazoo), 0);
  ck_assert_int_eq(adv_sem_new(&Y, y, root, 1, kazoo), 0);
  zkl_lease_t lf;
  ck_assert_int_eq(zkl_sem_acquire(F, 1, 5000 * slow, &lf), 0);
  adv_bg_t xb = {.m = X, .qty = 1, .timeout_ms = 40000 * slow, .rc = 99};
  adv_bg_t yb = {.m = Y, .qty = 1, .timeout_ms = 40000 * slow, .rc = 99};
  pthread_t tx, ty;
  if (queued) {
    ck_assert_int_eq(pthread_create(&ty, NULL, adv_bg_run, &yb), 0);
    ck_assert(it_wait_children(obs, gate, 1, 5000 * slow));
  }
  ck_assert_int_eq(pthread_create(&tx, NULL, adv_bg_run, &xb), 0);
  ck_assert(it_wait_children(obs, gate, 1 + queued, 5000 * slow));
  it_sleep_ms(200); /* the holder lists the leases: full, it waits */
  int64_t old = zkl_session_id(x);
  it_expire_session(x);
  /* X queues again on its new session (its old gate node went) */
  int64_t until = it_now_ms() + 10000 * slow;
  while (!atomic_load(&xb.done) &&
         it_children(obs, gate, NULL) != 1 + queued && it_now_ms() < until)
    it_sleep_ms(5);
  adv_settle(x, old, 10000 * slow);
  ck_assert_msg(!atomic_load(&xb.done),
                "X (%s) returned %s on its session's expiry, 40 s before "
                "its deadline, reestablish on: %s",
                queued ? "queued" : "the gate's holder", it_code(xb.rc),
                xb.err[0] != '\0' ? xb.err : "(no detail)");
  ck_assert(it_wait_children(obs, gate, 1 + queued, 10000 * slow));
  ck_assert_int_eq(zkl_sem_release(F, &lf, 1), 0);
  if (queued) {
    ck_assert(adv_wait_flag(&yb.done, 20000 * slow));
    ck_assert_msg(yb.rc == 0, "Y: %s: %s", it_code(yb.rc), yb.err);
    ck_assert_int_eq(zkl_sem_release_all(Y), 0);
  }
  ck_assert(adv_wait_flag(&xb.done, 40000 * slow));
  ck_assert_msg(xb.rc == 0, "X (%s): %s: %s",
                queued ? "queued" : "the gate's holder", it_code(xb.rc),
                xb.err);
  ck_assert_int_ne(zkl_session_id(x), old);
  ck_assert_uint_eq(xb.l[0].token,
                    lease_czxid(obs, root, kazoo ? NULL : "leases",
                                xb.l[0].name));
  char lp[512];
  snprintf(lp, sizeof lp, "%s/%s", leases, xb.l[0].name);
  ck_assert_int_eq(it_owner_of(obs, lp), zkl_session_id(x));
  pthread_join(tx, NULL);
  if (queued) pthread_join(ty, NULL);
  ck_assert_int_eq(zkl_sem_release_all(X), 0);
  zkl_sem_destroy(F);
  zkl_sem_destroy(X);
  zkl_sem_destroy(Y);
  adv_assert_empty(obs, leases, 10000 * slow, "leases");
  adv_assert_empty(obs, gate, 10000 * slow, "gate");
  zkl_session_close(f);
  zkl_session_close(x);
  zkl_session_close(y);
  if (kazoo) zoo_delete(zkl_session_zhandle(obs), root, -1);
  zkl_session_close(obs);
}
END_TEST

/* ---- an async release whose object is destroyed before its completion ------------ */

/* zkl_sem_release_async(): "the leases are the object's no more as soon as
 * this returns 0", and a lease whose delete's answer did not come goes to
 * the janitor.  The proxy cuts the connection right after the first of
 * the two deletes: the second never reaches the server, and neither
 * answer comes back.  _i & 1: the object is destroyed before the release's
 * completion is dispatched (it then says ZKL_ECANCELED, once); else it is
 * dispatched as usual.  Either way, once the connection is back (the same
 * session, open), no lease may be left behind. */
START_TEST(adv_release_async_orphaned) {
  int destroyed = _i & 1, kazoo = (_i >> 1) & 1;
  int slow = adv_slow();
  char root[128], leases[192], gate[192];
  it_root(root, sizeof root, "sem-adv-rel");
  adv_paths(root, kazoo, leases, gate, sizeof leases);
  zkl_session_t *obs = it_session();
  it_proxy_t *px = it_proxy_start();
  char hosts[64];
  snprintf(hosts, sizeof hosts, "127.0.0.1:%d", it_proxy_port(px));
  zkl_session_t *s = it_session_at(hosts, 10000);
  int64_t sid = zkl_session_id(s);
  zkl_sem_t *m = NULL;
  ck_assert_int_eq(adv_sem_new(&m, s, root, 2, kazoo), 0);
  zkl_lease_t l[2];
  ck_assert_int_eq(zkl_sem_acquire(m, 2, 5000 * slow, l), 0);
  ck_assert_int_eq(it_children(obs, leases, NULL), 2);
  it_proxy_cut_after(px, ZOO_DELETE_OP);
  struct tally r = {0, 99, 0, {{0}}};
  ck_assert_int_eq(zkl_sem_release_async(m, l, 2, released, &r), 0);
  ck_assert_uint_eq(zkl_sem_held(m), 0);
  if (destroyed) {
    zkl_sem_destroy(m); /* waits for the deletes' answers: lost */
    m = NULL;
  } else {
    int64_t end = it_now_ms() + 10000 * slow;
    while (it_proxy_cuts(px) == 0 && it_now_ms() < end) it_sleep_ms(2);
  }
  ck_assert_int_eq(it_proxy_cuts(px), 1);
  dispatch_until(s, &r, 1);
  ck_assert_int_eq(r.last_rc, destroyed ? ZKL_ECANCELED : ZKL_ESUSPENDED);
  /* the same session comes back: whatever is left is the janitor's */
  int64_t end = it_now_ms() + 10000 * slow;
  while (zkl_session_state(s) != ZKL_SESSION_CONNECTED && it_now_ms() < end)
    it_sleep_ms(5);
  ck_assert_int_eq(zkl_session_id(s), sid);
  adv_assert_empty(obs, leases, 10000 * slow, "leases");
  for (int i = 0; i < 20; i++) { /* no second completion */
    zkl_session_dispatch(s);
    it_sleep_ms(2);
  }
  ck_assert_int_eq(r.done, 1);
  zkl_sem_destroy(m);
  adv_assert_empty(obs, gate, 10000 * slow, "gate");
  zkl_session_close(s);
  it_proxy_stop(px);
  if (kazoo) zoo_delete(zkl_session_zhandle(obs), root, -1);
  zkl_session_close(obs);
}
END_TEST

/* ---- a zkl mutex on the gate's path ------------------------------------------ */

typedef struct adv_mlock {
  zkl_mutex_t *mx;
  int64_t timeout_ms;
  int rc, urc;
  atomic_int locked, go, done;
} adv_mlock_t;

static void *adv_mlock_run(void *arg) {
  adv_mlock_t *x = arg;
  x->rc = zkl_mutex_timedlock(x->mx, x->timeout_ms);
  atomic_store(&x->locked, 1);
  if (x->rc == 0) {
    while (!atomic_load(&x->go)) it_sleep_ms(2);
    x->urc = zkl_mutex_unlock(x->mx);
  }
  atomic_store(&x->done, 1);
  return NULL;
}

static void adv_async_tally(zkl_sem_t *m, int rc, const zkl_lease_t *l,
                            size_t n, void *arg) {
  (void)m;
  (void)l;
  (void)n;
  int *t = arg;
  t[0]++;
  t[1] = rc;
}

/* The gate is a mutex queue: a zkl mutex on its path (Curator's layout:
 * <path>/locks; kazoo's: <path>-__lock__) shares it.  A mutex holder
 * keeps the acquirers out (try, timed, async), even with room; a gate
 * holder waiting for room keeps the mutex out; a mutex waiting behind a
 * gate holder is let in once that holder's leases are made (no lease is
 * made while it holds: none with a zxid between two writes of ours made
 * while it held), and the acquirer behind the mutex waits for its
 * unlock, room or not. */
START_TEST(adv_mutex_shares_gate) {
  int kazoo = _i;
  int slow = adv_slow();
  char root[128], leases[192], gate[192], scratch[200];
  it_root(root, sizeof root, "sem-adv-mutex");
  adv_paths(root, kazoo, leases, gate, sizeof leases);
  snprintf(scratch, sizeof scratch, "%s-scratch", root);
  zkl_session_t *obs = it_session(), *s1 = it_session(), *s2 = it_session(),
                *s3 = it_session(), *s4 = it_session();
  zhandle_t *ozh = zkl_session_zhandle(obs);
  int zrc = zoo_create(ozh, "/zkl-test", NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0,
                       NULL, 0);
  ck_assert(zrc == ZOK || zrc == ZNODEEXISTS);
  ck_assert_int_eq(zoo_create(ozh, scratch, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0,
                              NULL, 0),
                   ZOK);
  zkl_mutex_t *mx = it_mutex(s1, gate);
  zkl_sem_t *A = NULL, *F = NULL, *T = NULL;
  ck_assert_int_eq(adv_sem_new(&A, s2, root, 2, kazoo), 0);
  ck_assert_int_eq(adv_sem_new(&F, s3, root, 2, kazoo), 0);
  ck_assert_int_eq(adv_sem_new(&T, s4, root, 2, kazoo), 0);
  zkl_lease_t l[2], lf[2];

  /* a mutex holder keeps the acquirers out, with room for them */
  ck_assert_int_eq(zkl_mutex_lock(mx), 0);
  ck_assert_int_eq(zkl_sem_acquire(A, 1, 0, l), ZKL_EBUSY);
  ck_assert_int_eq(zkl_sem_acquire(A, 1, 400 * slow, l), ZKL_ETIMEDOUT);
  int tally[2] = {0, 99};
  ck_assert_int_eq(zkl_sem_acquire_async(A, 1, 400 * slow, adv_async_tally,
                                         tally),
                   0);
  int64_t end = it_now_ms() + 10000 * slow;
  while (tally[0] == 0 && it_now_ms() < end) {
    zkl_session_dispatch(s2);
    it_sleep_ms(2);
  }
  ck_assert_int_eq(tally[0], 1);
  ck_assert_int_eq(tally[1], ZKL_ETIMEDOUT);
  ck_assert_int_eq(it_children(obs, leases, NULL), 0);
  ck_assert(it_wait_children(obs, gate, 1, 5000 * slow)); /* the mutex's */
  ck_assert_int_eq(zkl_mutex_unlock(mx), 0);
  ck_assert_int_eq(zkl_sem_acquire(A, 1, 5000 * slow, l), 0);
  ck_assert_int_eq(zkl_sem_release_all(A), 0);

  /* a gate holder waiting for room keeps the mutex out */
  ck_assert_int_eq(zkl_sem_acquire(F, 2, 5000 * slow, lf), 0);
  adv_bg_t sb = {.m = A, .qty = 1, .timeout_ms = 40000 * slow, .rc = 99};
  adv_bg_t tb = {.m = T, .qty = 1, .timeout_ms = 40000 * slow, .rc = 99};
  pthread_t ts, tt, tmx;
  ck_assert_int_eq(pthread_create(&ts, NULL, adv_bg_run, &sb), 0);
  ck_assert(it_wait_children(obs, gate, 1, 5000 * slow));
  it_sleep_ms(100); /* A holds the gate: it lists the leases, full */
  ck_assert_int_eq(zkl_mutex_timedlock(mx, 400 * slow), ZKL_ETIMEDOUT);
  ck_assert(it_wait_children(obs, gate, 1, 5000 * slow));
  adv_mlock_t ml = {mx, 40000 * slow, 99, 99, 0, 0, 0};
  ck_assert_int_eq(pthread_create(&tmx, NULL, adv_mlock_run, &ml), 0);
  ck_assert(it_wait_children(obs, gate, 2, 5000 * slow));
  ck_assert_int_eq(pthread_create(&tt, NULL, adv_bg_run, &tb), 0);
  ck_assert(it_wait_children(obs, gate, 3, 5000 * slow));
  it_sleep_ms(200);
  ck_assert(!atomic_load(&ml.locked));
  /* room: the gate holder makes its lease, then the mutex goes in */
  ck_assert_int_eq(zkl_sem_release(F, lf, 1), 0);
  ck_assert(adv_wait_flag(&sb.done, 10000 * slow));
  ck_assert_int_eq(sb.rc, 0);
  ck_assert(adv_wait_flag(&ml.locked, 10000 * slow));
  ck_assert_int_eq(ml.rc, 0);
  uint64_t z1 = adv_mark(ozh, scratch);
  ck_assert_uint_gt(z1, sb.l[0].token);
  /* room for T too, but the mutex holds the gate */
  ck_assert_int_eq(zkl_sem_release(F, lf + 1, 1), 0);
  it_sleep_ms(600 * slow);
  ck_assert_msg(!atomic_load(&tb.done), "T went past the mutex holder (%s)",
                it_code(tb.rc));
  ck_assert_int_eq(it_children(obs, leases, NULL), 1); /* A's */
  uint64_t z2 = adv_mark(ozh, scratch);
  atomic_store(&ml.go, 1);
  ck_assert(adv_wait_flag(&ml.done, 10000 * slow));
  ck_assert_int_eq(ml.urc, 0);
  ck_assert(adv_wait_flag(&tb.done, 10000 * slow));
  ck_assert_int_eq(tb.rc, 0);
  ck_assert_uint_gt(tb.l[0].token, z2);
  ck_assert_uint_eq(tb.l[0].token,
                    lease_czxid(obs, root, kazoo ? NULL : "leases",
                                tb.l[0].name));
  pthread_join(ts, NULL);
  pthread_join(tt, NULL);
  pthread_join(tmx, NULL);
  ck_assert_int_eq(zkl_sem_release_all(A), 0);
  ck_assert_int_eq(zkl_sem_release_all(T), 0);
  zkl_sem_destroy(A);
  zkl_sem_destroy(F);
  zkl_sem_destroy(T);
  zkl_mutex_destroy(mx);
  adv_assert_empty(obs, leases, 10000 * slow, "leases");
  adv_assert_empty(obs, gate, 10000 * slow, "gate");
  zkl_session_close(s1);
  zkl_session_close(s2);
  zkl_session_close(s3);
  zkl_session_close(s4);
  zoo_delete(ozh, scratch, -1);
  if (kazoo) zoo_delete(ozh, root, -1);
  zkl_session_close(obs);
}
END_TEST

/* ==== herd freedom: one watcher of the leases, a queue in the gate ======== *
 *
 * Only the gate's holder watches the leases (their parent's children, and
 * in kazoo's layout <path>'s data, the maximum); every other acquirer
 * waits in the gate's queue watching only its predecessor's gate node.
 * So a release wakes one acquirer, whatever the line behind it.  The
 * server shows it: `wchp`/`wchc` list every data and exists watch by path
 * and by session (each acquirer here has a session of its own, so its
 * watches are its own), and child watches, which they do not list, are
 * counted as mntr's zk_watch_count less wchs's total (data watches only);
 * mntr's zk_sum_node_children_watch_count counts the child watchers each
 * change of children notified. */

#define HERD_W 8   /* acquirers lined up behind a full semaphore */
#define HERD_MAX 2 /* its maximum, held by two others */

/* The sum of the numbers after every `key` in text (every server's). */
static long herd_sum(const char *text, const char *key) {
  long sum = 0;
  for (const char *at = text; (at = strstr(at, key)) != NULL;) {
    at += strlen(key);
    sum += strtol(at, NULL, 10);
  }
  return sum;
}

/* Child watches set on the servers now: every watch less the data and
 * exists watches. */
static long herd_child_watches(void) {
  char *mntr = it_4lw("mntr"), *wchs = it_4lw("wchs");
  long n = herd_sum(mntr, "zk_watch_count\t") -
           herd_sum(wchs, "Total watches:");
  free(mntr);
  free(wchs);
  return n;
}

/* How many child watchers changes of children have notified so far
 * (*events: how many changes notified any). */
static long herd_children_notified(long *events) {
  char *mntr = it_4lw("mntr");
  long n = herd_sum(mntr, "zk_sum_node_children_watch_count\t");
  *events = herd_sum(mntr, "zk_cnt_node_children_watch_count\t");
  free(mntr);
  return n;
}

/* The paths under dir/ that session sid watches per `wchc` (data and
 * exists watches), but `own` (NULL: none left out): how many; the first
 * one into first. */
static int herd_watched_under(const char *wchc, int64_t sid, const char *dir,
                              const char *own, char *first, size_t flen) {
  char head[40], pre[300];
  snprintf(head, sizeof head, "0x%llx\n", (unsigned long long)sid);
  snprintf(pre, sizeof pre, "%s/", dir);
  if (first != NULL && flen > 0) first[0] = '\0';
  int n = 0;
  size_t hl = strlen(head), pl = strlen(pre);
  for (const char *at = wchc; (at = strstr(at, head)) != NULL; at += hl) {
    if (at != wchc && at[-1] != '\n') continue; /* not a session line */
    for (const char *q = at + hl; *q == '\t';) {
      q++;
      size_t len = strcspn(q, "\n");
      int mine = own != NULL && strlen(own) == len &&
                 strncmp(q, own, len) == 0;
      if (!mine && len > pl && strncmp(q, pre, pl) == 0) {
        if (n == 0 && first != NULL)
          snprintf(first, flen, "%.*s", (int)len, q);
        n++;
      }
      q += len;
      if (*q == '\n') q++;
    }
  }
  return n;
}

/* Whether session sid watches exactly path (data or exists), per wchc. */
static int herd_watches(const char *wchc, int64_t sid, const char *path) {
  char head[40];
  snprintf(head, sizeof head, "0x%llx\n", (unsigned long long)sid);
  size_t hl = strlen(head), pl = strlen(path);
  for (const char *at = wchc; (at = strstr(at, head)) != NULL; at += hl) {
    if (at != wchc && at[-1] != '\n') continue; /* not a session line */
    for (const char *q = at + hl; *q == '\t';) {
      q++;
      size_t len = strcspn(q, "\n");
      if (len == pl && strncmp(q, path, pl) == 0) return 1;
      q += len;
      if (*q == '\n') q++;
    }
  }
  return 0;
}

static int herd_by_seq(const void *x, const void *y) {
  const char *a = *(char *const *)x, *b = *(char *const *)y;
  size_t la = strlen(a), lb = strlen(b);
  return strcmp(a + (la > 10 ? la - 10 : 0), b + (lb > 10 ? lb - 10 : 0));
}

typedef struct herd_sem {
  zkl_session_t *obs;
  const char *leases, *gate;
  int kazoo;
  zkl_session_t *ws[HERD_W];
  int64_t wsid[HERD_W];
  int next;        /* the first acquirer not granted yet */
  long child_base; /* child watches before the acquirers came */
  char why[1024];  /* what herd_settled() found wrong last */
} herd_sem_t;

/* The state once every acquirer from h->next on is in line: the gate
 * holds exactly their nodes, in the order they came; the first of them
 * (the gate's holder) watches no other gate node, every other one exactly
 * its predecessor's and nothing else in the gate; nobody but its owner
 * watches a lease node; one child watch more than before the line formed
 * (the gate holder's on the leases; none once the line is empty), and in
 * kazoo's layout the gate holder alone watches <path>'s data (Curator's:
 * nobody watches leases/'s).  1 if so; else 0 and h->why says what. */
static int herd_settled(void *arg) {
  herd_sem_t *h = arg;
  int ok = 0, waiting = HERD_W - h->next;
  char *wchc = it_4lw("wchc"), *wchp = it_4lw("wchp");
  struct String_vector g = {0, NULL}, l = {0, NULL};
  it_children(h->obs, h->gate, &g);
  it_children(h->obs, h->leases, &l);
  if (g.count > 1) /* an empty listing's data is NULL (UBSan: qsort) */
    qsort(g.data, (size_t)g.count, sizeof *g.data, herd_by_seq);
  h->why[0] = '\0';
  if (g.count != waiting) {
    snprintf(h->why, sizeof h->why, "%d gate nodes, %d acquirers waiting",
             g.count, waiting);
    goto out;
  }
  char node[HERD_W][512];
  for (int j = 0; j < waiting; j++) {
    snprintf(node[j], sizeof node[j], "%s/%s", h->gate, g.data[j]);
    int64_t owner = it_owner_of(h->obs, node[j]);
    if (owner != h->wsid[h->next + j]) {
      snprintf(h->why, sizeof h->why, "gate node %d (%.200s) is 0x%llx's, not "
               "acquirer %d's (0x%llx): not the order they came in", j,
               g.data[j], (unsigned long long)owner, h->next + j,
               (unsigned long long)h->wsid[h->next + j]);
      goto out;
    }
  }
  for (int i = 0; i < HERD_W; i++) {
    int j = i - h->next; /* its place in line, < 0: granted */
    char first[512];
    int n = herd_watched_under(wchc, h->wsid[i], h->gate,
                               j >= 0 ? node[j] : NULL, first, sizeof first);
    int want = j > 0 ? 1 : 0;
    if (n != want || (want == 1 && strcmp(first, node[j - 1]) != 0)) {
      snprintf(h->why, sizeof h->why, "acquirer %d (%s) watches %d gate "
               "node(s) besides its own (first: %.300s), not %d%s%.300s", i,
               j > 0 ? "waiting" : j == 0 ? "the gate's holder" : "granted",
               n, first[0] != '\0' ? first : "none", want,
               want ? ": its predecessor " : "", want ? node[j - 1] : "");
      goto out;
    }
  }
  /* each gate node: watched by its successor alone (and its owner) */
  for (int j = 0; j < waiting; j++) {
    int n = it_watchers_of(wchp, node[j], h->wsid[h->next + j]);
    if (n != (j + 1 < waiting ? 1 : 0)) {
      snprintf(h->why, sizeof h->why, "gate node %d (%.300s) is watched by %d "
               "sessions besides its owner", j, node[j], n);
      goto out;
    }
  }
  for (int j = 0; j < l.count; j++) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", h->leases, l.data[j]);
    int n = it_watchers_of(wchp, p, it_owner_of(h->obs, p));
    if (n != 0) {
      snprintf(h->why, sizeof h->why, "lease %.300s is watched by %d sessions "
               "besides its owner", p, n);
      goto out;
    }
  }
  /* the leases' parent's data: in kazoo's layout the maximum, watched by
   * the gate's holder alone of those waiting (one who held the gate once
   * may keep that watch: see below); in Curator's by nobody */
  for (int i = h->kazoo ? h->next : HERD_W; i < HERD_W; i++) {
    int w = herd_watches(wchc, h->wsid[i], h->leases);
    if (w != (i == h->next)) {
      snprintf(h->why, sizeof h->why, "waiting acquirer %d %s %.300s's data "
               "(the gate's holder is %d)", i, w ? "watches" : "does not "
               "watch", h->leases, h->next);
      goto out;
    }
  }
  if (!h->kazoo && it_watchers_of(wchp, h->leases, 0) != 0) {
    snprintf(h->why, sizeof h->why, "%.300s's data is watched by %d "
             "sessions", h->leases, it_watchers_of(wchp, h->leases, 0));
    goto out;
  }
  long child = herd_child_watches() - h->child_base;
  if (child != (waiting > 0 ? 1 : 0)) {
    snprintf(h->why, sizeof h->why, "%ld child watches more than before the "
             "line formed, want %d (the gate holder's on %.300s)", child,
             waiting > 0 ? 1 : 0, h->leases);
    goto out;
  }
  ok = 1;
out:
  deallocate_String_vector(&g);
  deallocate_String_vector(&l);
  if (!ok) {
    size_t at = strlen(h->why);
    snprintf(h->why + at, sizeof h->why - at, "\nwchc:\n%.400s", wchc);
  }
  free(wchc);
  free(wchp);
  return ok;
}

typedef struct herd_acq {
  zkl_sem_t *m;
  zkl_lease_t l;
  int idx, rc;
  int *order, *granted;
  pthread_mutex_t *mu;
} herd_acq_t;

static void *herd_acquire(void *arg) {
  herd_acq_t *a = arg;
  a->rc = zkl_sem_acquire(a->m, 1, 30000 * adv_slow(), &a->l);
  pthread_mutex_lock(a->mu);
  if (a->rc == 0) a->order[(*a->granted)++] = a->idx;
  pthread_mutex_unlock(a->mu);
  return NULL;
}

static int herd_granted(herd_acq_t *a) {
  pthread_mutex_lock(a->mu);
  int n = *a->granted;
  pthread_mutex_unlock(a->mu);
  return n;
}

struct herd_count {
  herd_acq_t *a;
  int want;
};

static int herd_granted_reached(void *arg) {
  struct herd_count *c = arg;
  return herd_granted(c->a) >= c->want;
}

static zkl_sem_t *herd_sem_new(zkl_session_t *s, const char *root, int kazoo,
                               const char *who) {
  zkl_sem_opts_t o;
  zkl_sem_opts_init(&o);
  o.max = HERD_MAX;
  o.format = kazoo ? ZKL_SEM_KAZOO : ZKL_SEM_CURATOR;
  o.data = who;
  o.data_len = strlen(who);
  zkl_sem_t *m = NULL;
  ck_assert_int_eq(zkl_sem_create(&m, s, root, &o), 0);
  return m;
}

/* MAX 2 held by two, then HERD_W acquirers, each on its own session, line
 * up one after the other.  While they wait the server shows no herd (see
 * herd_settled()); each release then notifies exactly one child watcher
 * (the gate holder's watch on the leases) and lets in exactly one
 * acquirer, the next in the order they came, after which the line is
 * herd-free again.  _i: 0 Curator's layout, 1 kazoo's. */
START_TEST(herd_free_line_one_wake_per_release) {
  int kazoo = _i == 1;
  char root[128], leases[256], gate[256];
  it_root(root, sizeof root, kazoo ? "sem-herd-k" : "sem-herd");
  adv_paths(root, kazoo, leases, gate, sizeof leases);
  int slow = adv_slow();
  zkl_session_t *obs = it_session();
  zkl_session_t *hs[HERD_MAX];
  zkl_sem_t *hm[HERD_MAX];
  zkl_lease_t hl[HERD_MAX];
  for (int i = 0; i < HERD_MAX; i++) {
    hs[i] = it_session();
    hm[i] = herd_sem_new(hs[i], root, kazoo, i == 0 ? "h0" : "h1");
    ck_assert_int_eq(zkl_sem_acquire(hm[i], 1, 5000 * slow, &hl[i]), 0);
  }
  ck_assert_int_eq(it_children(obs, leases, NULL), HERD_MAX);
  herd_sem_t h = {.obs = obs, .leases = leases, .gate = gate,
                  .kazoo = kazoo};
  h.child_base = herd_child_watches();
  fprintf(stderr, "semaphore: herd (%s): %ld child watches before the line\n",
          kazoo ? "kazoo" : "curator", h.child_base);
  static herd_acq_t a[HERD_W];
  pthread_t th[HERD_W];
  int order[HERD_W], granted = 0;
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  for (int i = 0; i < HERD_W; i++) {
    char who[8];
    snprintf(who, sizeof who, "w%d", i);
    h.ws[i] = it_session();
    h.wsid[i] = zkl_session_id(h.ws[i]);
    a[i] = (herd_acq_t){.m = herd_sem_new(h.ws[i], root, kazoo, who),
                        .idx = i, .rc = 99, .order = order,
                        .granted = &granted, .mu = &mu};
    ck_assert_int_eq(pthread_create(&th[i], NULL, herd_acquire, &a[i]), 0);
    /* one after the other: the gate's order is the order they came in */
    ck_assert_msg(it_wait_children(obs, gate, i + 1, 5000 * slow),
                  "acquirer %d did not line up in %s", i, gate);
  }
  /* all in line, nobody let in */
  ck_assert_msg(it_wait_until(herd_settled, &h, 10000 * slow),
                "the line of %d behind a full semaphore: %s", HERD_W, h.why);
  it_sleep_ms(200);
  ck_assert_int_eq(herd_granted(&a[0]), 0);
  ck_assert_int_eq(it_children(obs, leases, NULL), HERD_MAX);
  /* release by release: the holders', then those let in, in turn */
  for (int r = 0; r < HERD_W; r++) {
    long events0, heard = herd_children_notified(&events0);
    if (r < HERD_MAX)
      ck_assert_int_eq(zkl_sem_release(hm[r], &hl[r], 1), 0);
    else
      ck_assert_int_eq(zkl_sem_release(a[r - HERD_MAX].m, &a[r - HERD_MAX].l,
                                       1), 0);
    struct herd_count c = {&a[0], r + 1};
    ck_assert_msg(it_wait_until(herd_granted_reached, &c, 10000 * slow),
                  "release %d let nobody in", r);
    it_sleep_ms(300); /* nobody else comes in on this release */
    int n = herd_granted(&a[0]);
    ck_assert_msg(n == r + 1, "release %d let %d acquirers in", r,
                  n - r);
    ck_assert_msg(order[r] == r, "release %d let acquirer %d in, not %d "
                  "(the next in the order they came)", r, order[r], r);
    pthread_join(th[r], NULL);
    ck_assert_msg(a[r].rc == 0, "acquirer %d: %s", r, it_code(a[r].rc));
    ck_assert_int_eq(it_children(obs, leases, NULL), HERD_MAX);
    h.next = r + 1;
    ck_assert_msg(it_wait_until(herd_settled, &h, 10000 * slow),
                  "after release %d: %s", r, h.why);
    /* the changes of children since the release: the lease deleted (the
     * gate's holder hears it) and the one made (its own watch, armed by
     * the listing that found room, may hear that): each change notified
     * one watcher, never more */
    long events1, woke = herd_children_notified(&events1) - heard;
    long changes = events1 - events0;
    fprintf(stderr, "semaphore: herd (%s): release %d: %ld child watchers "
            "notified by %ld changes\n", kazoo ? "kazoo" : "curator", r, woke,
            changes);
    ck_assert_msg(changes >= 1 && changes <= 2 && woke == changes,
                  "release %d: %ld child watchers notified by %ld changes of "
                  "children: a herd", r, woke, changes);
  }
  /* nothing left: no lease, no gate node, no watch */
  for (int i = HERD_W - HERD_MAX; i < HERD_W; i++)
    ck_assert_int_eq(zkl_sem_release(a[i].m, &a[i].l, 1), 0);
  ck_assert_int_eq(it_children(obs, leases, NULL), 0);
  ck_assert_int_eq(it_children(obs, gate, NULL), 0);
  /* in kazoo's layout every session that held the gate keeps its watch on
   * <path>'s data (the maximum), a watch that nothing but a new maximum
   * fires; any other is left behind */
  char left[600] = "";
  for (int64_t end = it_now_ms() + 2000 * slow;; it_sleep_ms(20)) {
    char *wchc = it_4lw("wchc");
    left[0] = '\0';
    for (const char *q = wchc; (q = strchr(q, '\t')) != NULL;) {
      q++;
      size_t len = strcspn(q, "\n");
      int is_root = len == strlen(root) && strncmp(q, root, len) == 0;
      if (memmem(q, len, root, strlen(root)) != NULL && !(kazoo && is_root)) {
        snprintf(left, sizeof left, "%.*s", (int)(len < 500 ? len : 500), q);
        break;
      }
      q += len;
    }
    free(wchc);
    if (left[0] == '\0' || it_now_ms() >= end) break;
  }
  ck_assert_msg(left[0] == '\0', "a watch is left on %s", left);
  for (int i = 0; i < HERD_W; i++) {
    zkl_sem_destroy(a[i].m);
    zkl_session_close(h.ws[i]);
  }
  for (int i = 0; i < HERD_MAX; i++) {
    zkl_sem_destroy(hm[i]);
    zkl_session_close(hs[i]);
  }
  zhandle_t *zh = zkl_session_zhandle(obs);
  it_peer_delete_tree(zh, root);
  if (kazoo) it_peer_delete_tree(zh, gate);
  ck_assert_int_eq(zoo_exists(zh, root, 0, NULL), ZNONODE);
  ck_assert_int_eq(zoo_exists(zh, gate, 0, NULL), ZNONODE);
  zkl_session_close(obs);
}
END_TEST

Suite *semaphore_suite(void) {
  Suite *su = suite_create("semaphore");
  TCase *tc = it_tcase("semaphore");
  tcase_add_test(tc, layout_tokens_and_try);
  tcase_add_test(tc, qty_is_atomic_no_deadlock);
  tcase_add_test(tc, never_more_than_max);
  tcase_add_test(tc, max_from_shared_count);
  tcase_add_test(tc, lost_session_blocks_nobody);
  tcase_add_test(tc, cancel_async_destroy);
  tcase_add_test(tc, sem_bad_input);
  tcase_add_test(tc, holders_listed);
  tcase_add_test(tc, gate_write_refused);
  tcase_add_test(tc, kazoo_layout);
  suite_add_tcase(su, tc);
  TCase *herd = it_tcase("semaphore-herd");
  tcase_add_loop_test(herd, herd_free_line_one_wake_per_release, 0, 2);
  suite_add_tcase(su, herd);
  TCase *adv = it_tcase("semaphore-adversarial");
  tcase_add_loop_test(adv, adv_storm, 0,
                      (int)(sizeof adv_variants / sizeof adv_variants[0]));
  tcase_add_loop_test(adv, adv_lost_answer_waiter, 0, 8);
  tcase_add_loop_test(adv, adv_mutex_shares_gate, 0, 2);
  tcase_add_loop_test(adv, adv_gate_waiter_expired, 0, 4);
  tcase_add_loop_test(adv, adv_release_async_orphaned, 0, 4);
  suite_add_tcase(su, adv);
  return su;
}
