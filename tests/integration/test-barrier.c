/* tests/integration/test-barrier.c - the barrier and the double barrier
 * against a real server: a barrier holds its waiters until removed (and
 * its node made with its parents), deadlines, cancel and async forms; a
 * double barrier lets nobody in before the last member arrives and nobody
 * out before the last one leaves, members counted without `ready`, a
 * member that gives up leaves no node and lets nobody through early
 * (members coming and going around a waiting one), EBUSY/EPERM, destroy
 * while in, and bad input. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"

static zkl_barrier_t *barrier(zkl_session_t *s, const char *path) {
  zkl_barrier_t *b = NULL;
  ck_assert_int_eq(zkl_barrier_create(&b, s, path), 0);
  return b;
}

static zkl_dbarrier_t *dbarrier(zkl_session_t *s, const char *path, int n) {
  zkl_dbarrier_t *d = NULL;
  ck_assert_int_eq(zkl_dbarrier_create(&d, s, path, n, NULL), 0);
  return d;
}

static int node_exists(zkl_session_t *s, const char *path) {
  struct Stat st;
  int rc = zoo_exists(zkl_session_zhandle(s), path, 0, &st);
  ck_assert(rc == ZOK || rc == ZNONODE);
  return rc == ZOK;
}

/* ---- the barrier ---------------------------------------------------------------- */

struct waiter {
  zkl_barrier_t *b;
  int64_t timeout;
  int rc;
  int64_t done_at;
};

static void *wait_run(void *arg) {
  struct waiter *w = arg;
  w->rc = zkl_barrier_wait(w->b, w->timeout);
  w->done_at = it_now_ms();
  return NULL;
}

START_TEST(barrier_holds_until_removed) {
  char root[128], path[200];
  it_root(root, sizeof root, "b-basic");
  snprintf(path, sizeof path, "%s/a/b/gate", root);
  zkl_session_t *s = it_session(), *o = it_session();
  zkl_barrier_t *b = barrier(s, path), *c = barrier(o, path);
  /* open while its node is missing */
  ck_assert_int_eq(zkl_barrier_wait(b, 0), 0);
  ck_assert_int_eq(zkl_barrier_remove(c), ZKL_ENOENT);
  ck_assert_int_eq(zkl_barrier_set(c), 0); /* parents made */
  ck_assert_int_eq(zkl_barrier_set(c), 0); /* closed already: fine */
  ck_assert(node_exists(s, path));
  ck_assert_int_eq(zkl_barrier_wait(b, 0), ZKL_ETIMEDOUT);
  int64_t t0 = it_now_ms();
  ck_assert_int_eq(zkl_barrier_wait(b, 250), ZKL_ETIMEDOUT);
  ck_assert_int_ge(it_now_ms() - t0, 240);
  /* three waiters on two sessions, released by one remove */
  struct waiter w[3] = {{b, 20000, 99, 0}, {barrier(o, path), 20000, 99, 0},
                        {barrier(s, path), -1, 99, 0}};
  pthread_t t[3];
  for (int i = 0; i < 3; i++) pthread_create(&t[i], NULL, wait_run, &w[i]);
  it_sleep_ms(300);
  for (int i = 0; i < 3; i++) ck_assert_int_eq(w[i].rc, 99); /* waiting */
  int64_t removed = it_now_ms();
  ck_assert_int_eq(zkl_barrier_remove(c), 0);
  for (int i = 0; i < 3; i++) {
    pthread_join(t[i], NULL);
    ck_assert_int_eq(w[i].rc, 0);
    ck_assert_int_ge(w[i].done_at, removed);
    ck_assert_int_lt(w[i].done_at - removed, 5000);
  }
  ck_assert(!node_exists(s, path));
  zkl_barrier_destroy(w[1].b);
  zkl_barrier_destroy(w[2].b);
  zkl_barrier_destroy(b);
  zkl_barrier_destroy(c);
  zkl_session_close(s);
  zkl_session_close(o);
}
END_TEST

static void *cancel_later(void *arg) {
  it_sleep_ms(200);
  zkl_barrier_cancel(arg);
  return NULL;
}

struct tally {
  int done, last_rc;
};

static void noted(void *obj, int rc, uint64_t token, void *arg) {
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

START_TEST(barrier_cancel_and_async) {
  char root[128];
  it_root(root, sizeof root, "b-async");
  zkl_session_t *s = it_session();
  zkl_barrier_t *b = barrier(s, root);
  ck_assert_int_eq(zkl_barrier_set(b), 0);
  pthread_t t;
  pthread_create(&t, NULL, cancel_later, b);
  ck_assert_int_eq(zkl_barrier_wait(b, 20000), ZKL_ECANCELED);
  pthread_join(t, NULL);
  struct tally n = {0, 99};
  ck_assert_int_eq(zkl_barrier_wait_async(b, 20000, noted, &n), 0);
  ck_assert_int_eq(zkl_barrier_set_async(b, noted, &n), ZKL_EBUSY);
  it_sleep_ms(200);
  zkl_session_dispatch(s);
  ck_assert_int_eq(n.done, 0); /* still closed */
  zkl_barrier_t *c = barrier(s, root);
  struct tally m = {0, 99};
  ck_assert_int_eq(zkl_barrier_remove_async(c, noted, &m), 0);
  dispatch_until(s, &m, 1);
  ck_assert_int_eq(m.last_rc, 0);
  dispatch_until(s, &n, 1);
  ck_assert_int_eq(n.last_rc, 0);
  ck_assert_int_eq(zkl_barrier_set_async(c, noted, &m), 0);
  dispatch_until(s, &m, 2);
  ck_assert_int_eq(m.last_rc, 0);
  /* destroyed while waiting: ECANCELED */
  ck_assert_int_eq(zkl_barrier_wait_async(b, 60000, noted, &n), 0);
  it_sleep_ms(100);
  zkl_barrier_destroy(b);
  dispatch_until(s, &n, 2);
  ck_assert_int_eq(n.last_rc, ZKL_ECANCELED);
  ck_assert_int_eq(zkl_barrier_remove(c), 0);
  zkl_barrier_destroy(c);
  zkl_session_close(s);
}
END_TEST

/* ---- the double barrier ---------------------------------------------------------- */

#define MEMBERS 4

struct member {
  zkl_session_t *s;
  const char *path;
  int arrive_ms, work_ms;
  int64_t arrived, entered, leaving, left;
  int enter_rc, leave_rc;
};

static void *member_run(void *arg) {
  struct member *m = arg;
  zkl_dbarrier_t *d = NULL;
  if (zkl_dbarrier_create(&d, m->s, m->path, MEMBERS, NULL) != 0) {
    m->enter_rc = -1;
    return NULL;
  }
  it_sleep_ms(m->arrive_ms);
  m->arrived = it_now_ms();
  m->enter_rc = zkl_dbarrier_enter(d, 20000);
  m->entered = it_now_ms();
  if (m->enter_rc == 0) {
    it_sleep_ms(m->work_ms);
    m->leaving = it_now_ms();
    m->leave_rc = zkl_dbarrier_leave(d, 20000);
    m->left = it_now_ms();
  }
  zkl_dbarrier_destroy(d);
  return NULL;
}

START_TEST(dbarrier_together_in_together_out) {
  char root[128];
  it_root(root, sizeof root, "db-basic");
  zkl_session_t *s[2] = {it_session(), it_session()};
  for (int round = 0; round < 2; round++) { /* the path is used again */
    struct member m[MEMBERS];
    pthread_t t[MEMBERS];
    for (int i = 0; i < MEMBERS; i++) {
      m[i] = (struct member){s[i % 2], root, 150 * i,
                             150 * (MEMBERS - i), 0, 0, 0, 0, 99, 99};
      pthread_create(&t[i], NULL, member_run, &m[i]);
    }
    int64_t last_arrival = 0, last_leaving = 0;
    for (int i = 0; i < MEMBERS; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < MEMBERS; i++) {
      ck_assert_int_eq(m[i].enter_rc, 0);
      ck_assert_int_eq(m[i].leave_rc, 0);
      if (m[i].arrived > last_arrival) last_arrival = m[i].arrived;
      if (m[i].leaving > last_leaving) last_leaving = m[i].leaving;
    }
    for (int i = 0; i < MEMBERS; i++) {
      ck_assert_msg(m[i].entered >= last_arrival,
                    "member %d in at %lld, before the last arrival at %lld",
                    i, (long long)m[i].entered, (long long)last_arrival);
      ck_assert_msg(m[i].left >= last_leaving,
                    "member %d out at %lld, before the last leave began at "
                    "%lld", i, (long long)m[i].left, (long long)last_leaving);
    }
    struct String_vector v;
    ck_assert_int_eq(it_children(s[0], root, &v), 0); /* nothing left */
  }
  zkl_session_close(s[0]);
  zkl_session_close(s[1]);
}
END_TEST

START_TEST(dbarrier_giving_up_leaves_nothing) {
  char root[128];
  it_root(root, sizeof root, "db-timeout");
  zkl_session_t *s = it_session();
  zkl_dbarrier_t *a = dbarrier(s, root, 3), *b = dbarrier(s, root, 3);
  ck_assert_int_eq(zkl_dbarrier_enter(a, 0), ZKL_ETIMEDOUT);
  size_t n = 99;
  int ready = 9;
  ck_assert_int_eq(zkl_dbarrier_count(b, &n, &ready), 0);
  ck_assert_uint_eq(n, 0);
  ck_assert_int_eq(ready, 0);
  int64_t t0 = it_now_ms();
  ck_assert_int_eq(zkl_dbarrier_enter(a, 300), ZKL_ETIMEDOUT);
  ck_assert_int_ge(it_now_ms() - t0, 280);
  ck_assert_int_eq(zkl_dbarrier_count(b, &n, &ready), 0);
  ck_assert_uint_eq(n, 0);
  ck_assert_int_eq(zkl_dbarrier_leave(a, 0), ZKL_EPERM); /* not in */
  zkl_dbarrier_destroy(a);
  zkl_dbarrier_destroy(b);
  zkl_session_close(s);
}
END_TEST

struct churn {
  zkl_session_t *s;
  const char *path;
  int stop;
  int gave_up;
};

/* a member that keeps arriving and giving up */
static void *churn_run(void *arg) {
  struct churn *c = arg;
  zkl_dbarrier_t *d = NULL;
  if (zkl_dbarrier_create(&d, c->s, c->path, 3, NULL) != 0) return NULL;
  while (!__atomic_load_n(&c->stop, __ATOMIC_SEQ_CST)) {
    int rc = zkl_dbarrier_enter(d, 40);
    if (rc == ZKL_ETIMEDOUT) c->gave_up++;
    else if (rc == 0) zkl_dbarrier_leave(d, 0);
  }
  zkl_dbarrier_destroy(d);
  return NULL;
}

struct entering {
  zkl_dbarrier_t *d;
  int rc;
};

static void *enter_run(void *arg) {
  struct entering *e = arg;
  e->rc = zkl_dbarrier_enter(e->d, 30000);
  return NULL;
}

/* One member waits; another keeps coming and giving up (each time two of
 * three are there for a moment): the waiting one must not get through,
 * and no `ready` may appear, until a third member really comes. */
START_TEST(dbarrier_no_early_release) {
  char root[128], ready[160];
  it_root(root, sizeof root, "db-early");
  snprintf(ready, sizeof ready, "%s/ready", root);
  zkl_session_t *s = it_session(), *o = it_session();
  struct entering e = {dbarrier(s, root, 3), 99};
  pthread_t t, tc;
  pthread_create(&t, NULL, enter_run, &e);
  struct churn c = {o, root, 0, 0};
  pthread_create(&tc, NULL, churn_run, &c);
  int64_t end = it_now_ms() + 1500;
  while (it_now_ms() < end) {
    ck_assert_int_eq(__atomic_load_n(&e.rc, __ATOMIC_SEQ_CST), 99);
    ck_assert(!node_exists(s, ready));
    it_sleep_ms(10);
  }
  __atomic_store_n(&c.stop, 1, __ATOMIC_SEQ_CST);
  pthread_join(tc, NULL);
  ck_assert_int_gt(c.gave_up, 5);
  ck_assert_int_eq(e.rc, 99);
  /* two real members: now it opens */
  zkl_dbarrier_t *d2 = dbarrier(o, root, 3), *d3 = dbarrier(o, root, 3);
  struct entering e2 = {d2, 99};
  pthread_t t2;
  pthread_create(&t2, NULL, enter_run, &e2);
  ck_assert_int_eq(zkl_dbarrier_enter(d3, 20000), 0);
  pthread_join(t, NULL);
  pthread_join(t2, NULL);
  ck_assert_int_eq(e.rc, 0);
  ck_assert_int_eq(e2.rc, 0);
  size_t n = 0;
  int r = 0;
  ck_assert_int_eq(zkl_dbarrier_count(d3, &n, &r), 0);
  ck_assert_uint_eq(n, 3); /* `ready` not counted */
  ck_assert_int_eq(r, 1);
  ck_assert_int_eq(zkl_dbarrier_enter(d3, 0), ZKL_EBUSY); /* in already */
  /* leaving together: two threads and this one */
  ck_assert_int_eq(zkl_dbarrier_leave_async(e.d, 20000, NULL, NULL),
                   ZKL_EINVAL);
  struct tally a = {0, 99}, b2 = {0, 99};
  ck_assert_int_eq(zkl_dbarrier_leave_async(e.d, 20000, noted, &a), 0);
  ck_assert_int_eq(zkl_dbarrier_leave_async(d2, 20000, noted, &b2), 0);
  ck_assert_int_eq(zkl_dbarrier_leave(d3, 20000), 0);
  dispatch_until(s, &a, 1);
  dispatch_until(o, &b2, 1);
  ck_assert_int_eq(a.last_rc, 0);
  ck_assert_int_eq(b2.last_rc, 0);
  struct String_vector v;
  ck_assert_int_eq(it_children(s, root, &v), 0);
  zkl_dbarrier_destroy(e.d);
  zkl_dbarrier_destroy(d2);
  zkl_dbarrier_destroy(d3);
  zkl_session_close(s);
  zkl_session_close(o);
}
END_TEST

/* A member destroyed while in: its node goes (the janitor), so that the
 * others' leave does not wait for it. */
START_TEST(dbarrier_destroy_while_in) {
  char root[128];
  it_root(root, sizeof root, "db-destroy");
  zkl_session_t *s = it_session();
  zkl_dbarrier_t *a = dbarrier(s, root, 2), *b = dbarrier(s, root, 2);
  struct entering e = {a, 99};
  pthread_t t;
  pthread_create(&t, NULL, enter_run, &e);
  ck_assert_int_eq(zkl_dbarrier_enter(b, 20000), 0);
  pthread_join(t, NULL);
  ck_assert_int_eq(e.rc, 0);
  zkl_dbarrier_destroy(a);
  ck_assert_int_eq(zkl_dbarrier_leave(b, 10000), 0);
  struct String_vector v;
  ck_assert_int_eq(it_children(s, root, &v), 0);
  zkl_dbarrier_destroy(b);
  zkl_session_close(s);
}
END_TEST

START_TEST(barrier_bad_input) {
  zkl_session_t *s = it_session();
  zkl_barrier_t *b = (zkl_barrier_t *)1;
  zkl_dbarrier_t *d = (zkl_dbarrier_t *)1;
  ck_assert_int_eq(zkl_barrier_create(&b, s, "/"), ZKL_EINVAL);
  ck_assert_ptr_null(b);
  ck_assert_int_eq(zkl_barrier_create(&b, NULL, "/x"), ZKL_EINVAL);
  ck_assert_int_eq(zkl_barrier_create(NULL, s, "/x"), ZKL_EINVAL);
  ck_assert_int_eq(zkl_barrier_create(&b, s, "x"), ZKL_EINVAL);
  ck_assert_int_eq(zkl_dbarrier_create(&d, s, "/x", 0, NULL), ZKL_EINVAL);
  ck_assert_ptr_null(d);
  ck_assert_str_ne(zkl_last_error(), "");
  ck_assert_int_eq(zkl_dbarrier_create(&d, s, "/", 2, NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_barrier_wait(NULL, 0), ZKL_EINVAL);
  ck_assert_int_eq(zkl_barrier_set(NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_barrier_cancel(NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_dbarrier_enter(NULL, 0), ZKL_EINVAL);
  ck_assert_int_eq(zkl_dbarrier_leave(NULL, 0), ZKL_EINVAL);
  ck_assert_int_eq(zkl_dbarrier_count(NULL, NULL, NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_dbarrier_cancel(NULL), ZKL_EINVAL);
  zkl_barrier_destroy(NULL);
  zkl_dbarrier_destroy(NULL);
  zkl_session_close(s);
}
END_TEST

Suite *barrier_suite(void) {
  Suite *su = suite_create("barrier");
  TCase *tc = it_tcase("barrier");
  tcase_add_test(tc, barrier_holds_until_removed);
  tcase_add_test(tc, barrier_cancel_and_async);
  tcase_add_test(tc, dbarrier_together_in_together_out);
  tcase_add_test(tc, dbarrier_giving_up_leaves_nothing);
  tcase_add_test(tc, dbarrier_no_early_release);
  tcase_add_test(tc, dbarrier_destroy_while_in);
  tcase_add_test(tc, barrier_bad_input);
  suite_add_tcase(su, tc);
  return su;
}
