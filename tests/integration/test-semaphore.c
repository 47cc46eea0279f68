/* tests/integration/test-semaphore.c - the counting semaphore against a
 * real server: Curator's layout and names, tokens, try/timed/cancel, qty
 * leases taken atomically (two acquirers wanting 3 of 4, round after
 * round, never deadlock), never more than MAX held under contention, the
 * maximum from a shared count (disagreement refused, a raise lets a
 * waiter in), a lost session's leases block nobody, async forms, destroy
 * giving leases back, bad input, and kazoo's layout (ZKL_SEM_KAZOO). */
#include <pthread.h>
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
  return su;
}
