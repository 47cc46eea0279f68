/* tests/integration/test-session.c - opening, options and closing. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"

START_TEST(open_and_close) {
  zkl_session_t *s = it_session();
  ck_assert_int_eq(zkl_session_state(s), ZKL_SESSION_CONNECTED);
  ck_assert_int_gt(zkl_session_timeout(s), 0);
  ck_assert(zkl_session_id(s) != 0);
  ck_assert_ptr_nonnull(zkl_session_zhandle(s));
  zkl_session_close(s);
}
END_TEST

START_TEST(unreachable_hosts_fail_in_time) {
  zkl_session_opts_t o;
  zkl_session_opts_init(&o);
  o.connect_timeout_ms = 400;
  zkl_session_t *s = (zkl_session_t *)&o; /* must be reset to NULL */
  int64_t t0 = it_now_ms();
  int rc = zkl_session_open(&s, "127.0.0.1:1", &o);
  int64_t took = it_now_ms() - t0;
  ck_assert_int_eq(rc, ZKL_ECONNECT);
  ck_assert_ptr_null(s);
  ck_assert_int_ge(took, 350);
  ck_assert_int_lt(took, 5000);
  ck_assert_msg(strstr(zkl_last_error(), "127.0.0.1:1") != NULL,
                "message must name the hosts: %s", zkl_last_error());
}
END_TEST

START_TEST(unresolvable_host_fails) {
  zkl_session_opts_t o;
  zkl_session_opts_init(&o);
  o.connect_timeout_ms = 300;
  zkl_session_t *s = NULL;
  int rc = zkl_session_open(&s, "no-such-host.invalid:2181", &o);
  ck_assert_int_eq(rc, ZKL_ECONNECT);
  ck_assert_ptr_null(s);
  ck_assert_msg(strstr(zkl_last_error(), "no-such-host.invalid") != NULL,
                "%s", zkl_last_error());
}
END_TEST

/* A creator-only ACL with digest auth: another identity cannot queue. */
START_TEST(digest_auth_and_creator_acl) {
  char root[128], path[160];
  it_root(root, sizeof root, "acl");
  snprintf(path, sizeof path, "%s/l", root);
  /* /zkl-test is shared by every test: make sure it is open before zkl
   * creates the missing parents below it with the creator-only ACL */
  zkl_session_t *setup = it_session();
  zoo_create(zkl_session_zhandle(setup), "/zkl-test", NULL, -1,
             &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  zkl_session_close(setup);
  zkl_session_opts_t o;
  zkl_session_opts_init(&o);
  o.auth = "alice:secret";
  o.acl = ZKL_ACL_CREATOR_ALL;
  zkl_session_t *a = NULL;
  ck_assert_int_eq(zkl_session_open(&a, it_hosts(), &o), 0);
  zkl_mutex_t *m;
  ck_assert_int_eq(zkl_mutex_create(&m, a, path, NULL), 0);
  ck_assert_int_eq(zkl_mutex_lock(m), 0);

  struct ACL_vector acl;
  struct Stat st;
  ck_assert_int_eq(zoo_get_acl(zkl_session_zhandle(a), path, &acl, &st), ZOK);
  ck_assert_int_eq(acl.count, 1);
  ck_assert_str_eq(acl.data[0].id.scheme, "digest");
  ck_assert(strncmp(acl.data[0].id.id, "alice:", 6) == 0);
  deallocate_ACL_vector(&acl);

  zkl_session_t *b = it_session(); /* anonymous */
  zkl_mutex_t *mb;
  ck_assert_int_eq(zkl_mutex_create(&mb, b, path, NULL), 0);
  ck_assert_int_eq(zkl_mutex_timedlock(mb, 200), ZNOAUTH);
  ck_assert_int_eq(zkl_mutex_trylock(mb), ZNOAUTH);
  ck_assert_msg(strstr(zkl_last_error(), "not authorised") != NULL, "%s",
                zkl_last_error());
  /* nor can it take the lock by deleting the holder's node */
  char node[1024];
  ck_assert_int_eq(zkl_mutex_node(m, node, sizeof node), 0);
  ck_assert_int_eq(zoo_delete(zkl_session_zhandle(b), node, -1), ZNOAUTH);
  ck_assert_int_eq(zkl_mutex_holding(m), 1);
  zkl_mutex_destroy(mb);
  zkl_session_close(b);

  ck_assert_int_eq(zkl_mutex_unlock(m), 0);
  zkl_mutex_destroy(m);
  zkl_session_close(a);
}
END_TEST

START_TEST(bad_auth_is_refused) {
  zkl_session_opts_t o;
  zkl_session_opts_init(&o);
  o.auth = ":nouser";
  zkl_session_t *s = NULL;
  ck_assert_int_eq(zkl_session_open(&s, it_hosts(), &o), ZKL_EINVAL);
  ck_assert_ptr_null(s);
}
END_TEST

/* Closing a session with a live mutex defers the close; the object still
 * fails cleanly and its destroy finishes the close. */
START_TEST(close_with_live_mutex_is_deferred) {
  char root[128];
  it_root(root, sizeof root, "defer");
  zkl_session_t *s = it_session();
  zkl_mutex_t *m;
  ck_assert_int_eq(zkl_mutex_create(&m, s, root, NULL), 0);
  ck_assert_int_eq(zkl_mutex_lock(m), 0);
  zkl_session_close(s);
  zkl_session_t *o = it_session();
  ck_assert_int_eq(it_children(o, root, NULL), 0); /* released at once */
  zkl_session_close(o);
  ck_assert_int_eq(zkl_mutex_holding(m), ZKL_ELOST);
  ck_assert_int_eq(zkl_mutex_trylock(m), ZKL_ELOST); /* no recount */
  ck_assert_int_eq(zkl_mutex_unlock(m), ZKL_ELOST);
  ck_assert_int_eq(zkl_mutex_unlock(m), ZKL_EPERM);
  zkl_mutex_destroy(m);
}
END_TEST

/* The server expires a session opened without reestablish: holders learn
 * ELOST, not success, and so does every later call. */
START_TEST(expired_session_reports_lost) {
  char root[128];
  it_root(root, sizeof root, "expire");
  zkl_session_t *s = it_session_final(4000); /* LOST is final */
  zkl_mutex_t *m;
  ck_assert_int_eq(zkl_mutex_create(&m, s, root, NULL), 0);
  ck_assert_int_eq(zkl_mutex_lock(m), 0);
  ck_assert_int_eq(zkl_mutex_holding(m), 1);
  it_expire_session(s);
  ck_assert_int_eq(zkl_session_state(s), ZKL_SESSION_LOST);
  ck_assert_int_eq(zkl_mutex_holding(m), ZKL_ELOST);
  ck_assert_int_eq(zkl_mutex_unlock(m), ZKL_ELOST);
  ck_assert_int_eq(zkl_mutex_lock(m), ZKL_ELOST);
  zkl_mutex_destroy(m);
  zkl_session_close(s);

  zkl_session_t *o = it_session();
  ck_assert_int_eq(it_children(o, root, NULL), 0);
  zkl_session_close(o);
}
END_TEST

/* A lock call queued behind another contender of the same session. */
struct queued {
  zkl_session_t *s;
  zkl_mutex_t *m;
  int rc, holding, unlock_rc;
  uint64_t token;
  int64_t session;
  int release; /* atomic: the test says when to unlock */
};

static void *lock_in_thread(void *arg) {
  struct queued *q = arg;
  q->rc = zkl_mutex_lock(q->m);
  int holding = zkl_mutex_holding(q->m);
  zkl_mutex_token(q->m, &q->token);
  q->session = zkl_session_id(q->s);
  __atomic_store_n(&q->holding, holding, __ATOMIC_SEQ_CST);
  while (!__atomic_load_n(&q->release, __ATOMIC_SEQ_CST)) it_sleep_ms(5);
  q->unlock_rc = zkl_mutex_unlock(q->m); /* ownership is per thread */
  return NULL;
}

/* Default sessions open a new ZooKeeper session after LOST: the holder's
 * hold stays lost, a waiter that was only queued keeps waiting and
 * acquires on the new session, with a larger fencing token. */
START_TEST(expired_session_is_reestablished) {
  char root[128];
  it_root(root, sizeof root, "renew");
  zkl_session_t *s = it_session_timeout(4000);
  zkl_mutex_t *holder = it_mutex(s, root), *waiter = it_mutex(s, root);
  ck_assert_int_eq(zkl_mutex_lock(holder), 0);
  uint64_t old_token;
  ck_assert_int_eq(zkl_mutex_token(holder, &old_token), 0);
  struct queued q = {s, waiter, -1, -1, -1, 0, 0, 0};
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, lock_in_thread, &q), 0);
  ck_assert(it_wait_children(s, root, 2, 5000)); /* it is queued */
  int64_t old_id = zkl_session_id(s);

  it_expire_session(s);
  /* the queued lock goes through on the new session */
  for (int i = 0; i < 2000 && __atomic_load_n(&q.holding, __ATOMIC_SEQ_CST) < 0;
       i++)
    it_sleep_ms(5);
  ck_assert_int_eq(q.rc, 0);
  ck_assert_int_eq(q.holding, 1);
  int64_t now_id = zkl_session_id(s);
  ck_assert_msg(q.session != old_id && q.session == now_id,
                "granted on session 0x%llx; old 0x%llx, now 0x%llx (state %d)",
                (unsigned long long)q.session, (unsigned long long)old_id,
                (unsigned long long)now_id, zkl_session_state(s));
  ck_assert(q.token > old_token);
  ck_assert_int_eq(zkl_session_state(s), ZKL_SESSION_CONNECTED);
  ck_assert_int_eq(zkl_mutex_holding(holder), ZKL_ELOST);
  ck_assert_int_eq(zkl_mutex_unlock(holder), ZKL_ELOST);
  ck_assert_int_eq(zkl_mutex_trylock(holder), ZKL_EBUSY); /* waiter holds */
  ck_assert_int_eq(it_children(s, root, NULL), 1);
  __atomic_store_n(&q.release, 1, __ATOMIC_SEQ_CST);
  pthread_join(t, NULL);
  ck_assert_int_eq(q.unlock_rc, 0);
  ck_assert_int_eq(zkl_mutex_lock(holder), 0); /* acquired again */
  ck_assert_int_eq(zkl_mutex_unlock(holder), 0);
  ck_assert_int_eq(it_children(s, root, NULL), 0);
  zkl_mutex_destroy(holder);
  zkl_mutex_destroy(waiter);
  zkl_session_close(s);
}
END_TEST

Suite *session_suite(void) {
  Suite *su = suite_create("session");
  TCase *tc = it_tcase("open");
  tcase_add_test(tc, open_and_close);
  tcase_add_test(tc, unreachable_hosts_fail_in_time);
  tcase_add_test(tc, unresolvable_host_fails);
  suite_add_tcase(su, tc);
  tc = it_tcase("auth");
  tcase_add_test(tc, digest_auth_and_creator_acl);
  tcase_add_test(tc, bad_auth_is_refused);
  suite_add_tcase(su, tc);
  tc = it_tcase("lifetime");
  tcase_add_test(tc, close_with_live_mutex_is_deferred);
  tcase_add_test(tc, expired_session_reports_lost);
  tcase_add_test(tc, expired_session_is_reestablished);
  suite_add_tcase(su, tc);
  return su;
}
