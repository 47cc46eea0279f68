/* tests/integration/test-inspect.c - zkl_contenders() on a live path: a
 * mutex holder and its waiter, readers and a writer, an election, foreign
 * children, unreadable data, a missing path and bad input. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zookeeper/zookeeper.h>

#include "itest.h"

struct waiter {
  zkl_mutex_t *m;
  int rc;
};

static void *lock_main(void *arg) {
  struct waiter *w = arg;
  w->rc = zkl_mutex_lock(w->m);
  if (w->rc == 0) w->rc = zkl_mutex_unlock(w->m);
  return NULL;
}

static void list(zkl_session_t *s, const char *path, zkl_contender_t **v,
                 size_t *n) {
  int rc = zkl_contenders(s, path, 5000, v, n);
  ck_assert_msg(rc == 0, "zkl_contenders %s: %s", path, zkl_last_error());
}

START_TEST(mutex_holder_waiter_and_foreign_children) {
  char root[128], path[256];
  it_root(root, sizeof root, "inspect-mutex");
  zkl_session_t *a = it_session(), *b = it_session(), *o = it_session();
  zkl_mutex_t *ma = it_mutex(a, root), *mb = it_mutex(b, root);
  ck_assert_int_eq(zkl_mutex_lock(ma), 0);
  uint64_t token;
  ck_assert_int_eq(zkl_mutex_token(ma, &token), 0);
  struct waiter w = {mb, 1};
  pthread_t th;
  pthread_create(&th, NULL, lock_main, &w);
  ck_assert_int_eq(it_wait_children(o, root, 2, 5000), 1);
  /* a foreign persistent child, and one whose data nobody may read */
  zhandle_t *zh = zkl_session_zhandle(o);
  snprintf(path, sizeof path, "%s/config", root);
  ck_assert_int_eq(zoo_create(zh, path, "x", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL,
                              0), ZOK);
  struct ACL none_acl[] = {{ZOO_PERM_DELETE, {"world", "anyone"}}};
  struct ACL_vector none = {1, none_acl};
  snprintf(path, sizeof path, "%s/secret", root);
  ck_assert_int_eq(zoo_create(zh, path, "s", 1, &none, 0, NULL, 0), ZOK);

  zkl_contender_t *v;
  size_t n;
  list(o, root, &v, &n);
  ck_assert_uint_eq(n, 4);
  ck_assert_int_eq(v[0].kind, ZKL_KIND_LOCK);
  ck_assert_int_eq(v[0].position, 1);
  ck_assert_int_eq(v[0].holds, 1);
  ck_assert_uint_eq(v[0].token, token);
  ck_assert_int_eq(v[0].session, zkl_session_id(a));
  char node[1024];
  ck_assert_int_eq(zkl_mutex_node(ma, node, sizeof node), 0);
  ck_assert_str_eq(strrchr(node, '/') + 1, v[0].name);
  ck_assert_ptr_nonnull(v[0].data); /* "host:pid" */
  ck_assert_ptr_nonnull(strchr(v[0].data, ':'));
  ck_assert_uint_eq(strlen(v[0].data), v[0].data_len);
  ck_assert_int_eq(v[1].kind, ZKL_KIND_LOCK);
  ck_assert_int_eq(v[1].position, 2);
  ck_assert_int_eq(v[1].holds, 0);
  ck_assert_int_eq(v[1].session, zkl_session_id(b));
  ck_assert_uint_gt(v[1].token, v[0].token);
  /* created by the server's clock, in order, and lately (same host) */
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  int64_t now_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
  ck_assert_int_ge(v[1].ctime_ms, v[0].ctime_ms);
  ck_assert_int_gt(v[0].ctime_ms, now_ms - 60000);
  ck_assert_int_le(v[1].ctime_ms, now_ms + 1000);
  ck_assert_str_eq(v[2].name, "config");
  ck_assert_int_eq(v[2].kind, ZKL_KIND_FOREIGN);
  ck_assert_int_eq(v[2].position, 0);
  ck_assert_int_eq(v[2].session, 0);
  ck_assert_uint_eq(v[2].data_len, 1);
  ck_assert_str_eq(v[3].name, "secret");
  ck_assert_ptr_null(v[3].data); /* not readable: stat only */
  ck_assert_uint_gt(v[3].token, 0);
  ck_assert_int_ge(v[3].ctime_ms, v[1].ctime_ms);
  zkl_contenders_free(v, n);

  /* the holder leaves: the waiter is the head, and holds */
  ck_assert_int_eq(zkl_mutex_unlock(ma), 0);
  pthread_join(th, NULL);
  ck_assert_int_eq(w.rc, 0);
  list(o, root, &v, &n);
  ck_assert_uint_eq(n, 2); /* both foreign: nobody queues */
  ck_assert_int_eq(v[0].kind, ZKL_KIND_FOREIGN);
  zkl_contenders_free(v, n);
  ck_assert_int_eq(zoo_delete(zh, path, -1), ZOK);
  snprintf(path, sizeof path, "%s/config", root);
  ck_assert_int_eq(zoo_delete(zh, path, -1), ZOK);
  zkl_mutex_destroy(ma);
  zkl_mutex_destroy(mb);
  zkl_session_close(a);
  zkl_session_close(b);
  zkl_session_close(o);
}
END_TEST

START_TEST(readers_writer_and_election) {
  char root[128], eroot[128];
  it_root(root, sizeof root, "inspect-rw");
  it_root(eroot, sizeof eroot, "inspect-election");
  zkl_session_t *s = it_session(), *t = it_session();
  zkl_rwlock_t *r1, *r2;
  ck_assert_int_eq(zkl_rwlock_create(&r1, s, root, NULL), 0);
  ck_assert_int_eq(zkl_rwlock_create(&r2, t, root, NULL), 0);
  ck_assert_int_eq(zkl_rwlock_rdlock(r1), 0);
  ck_assert_int_eq(zkl_rwlock_rdlock(r2), 0);
  zkl_contender_t *v;
  size_t n;
  list(s, root, &v, &n);
  ck_assert_uint_eq(n, 2);
  for (size_t i = 0; i < n; i++) {
    ck_assert_int_eq(v[i].kind, ZKL_KIND_READ);
    ck_assert_int_eq(v[i].holds, 1); /* readers share */
  }
  zkl_contenders_free(v, n);
  ck_assert_int_eq(zkl_rwlock_unlock(r1), 0);
  ck_assert_int_eq(zkl_rwlock_unlock(r2), 0);
  ck_assert_int_eq(zkl_rwlock_wrlock(r1), 0);
  list(s, root, &v, &n);
  ck_assert_uint_eq(n, 1);
  ck_assert_int_eq(v[0].kind, ZKL_KIND_WRITE);
  ck_assert_int_eq(v[0].holds, 1);
  zkl_contenders_free(v, n);
  ck_assert_int_eq(zkl_rwlock_unlock(r1), 0);

  zkl_election_t *e;
  ck_assert_int_eq(zkl_election_create(&e, s, eroot, "cand-1", 6, NULL), 0);
  ck_assert_int_eq(zkl_election_start(e), 0);
  ck_assert_int_eq(zkl_election_await(e, 5000), 0);
  uint64_t token;
  ck_assert_int_eq(zkl_election_token(e, &token), 0);
  list(t, eroot, &v, &n);
  ck_assert_uint_eq(n, 1);
  ck_assert_int_eq(v[0].kind, ZKL_KIND_ELECTION);
  ck_assert_int_eq(v[0].holds, 1);
  ck_assert_uint_eq(v[0].token, token);
  ck_assert_uint_eq(v[0].data_len, 6);
  ck_assert_str_eq(v[0].data, "cand-1"); /* the candidate's id */
  zkl_contenders_free(v, n);
  zkl_election_destroy(e);
  zkl_rwlock_destroy(r1);
  zkl_rwlock_destroy(r2);
  zkl_session_close(s);
  zkl_session_close(t);
}
END_TEST

START_TEST(missing_path_and_bad_input) {
  char root[128];
  it_root(root, sizeof root, "inspect-none");
  zkl_session_t *s = it_session();
  zkl_contender_t *v = (zkl_contender_t *)1;
  size_t n = 7;
  ck_assert_int_eq(zkl_contenders(s, root, -1, &v, &n), 0);
  ck_assert_ptr_null(v);
  ck_assert_uint_eq(n, 0);
  zkl_contenders_free(NULL, 0);
  ck_assert_int_eq(zkl_contenders(NULL, root, -1, &v, &n), ZKL_EINVAL);
  ck_assert_int_eq(zkl_contenders(s, root, -1, NULL, &n), ZKL_EINVAL);
  ck_assert_int_eq(zkl_contenders(s, root, -1, &v, NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_contenders(s, "relative", -1, &v, &n), ZKL_EINVAL);
  ck_assert_ptr_nonnull(strstr(zkl_last_error(), "absolute"));
  ck_assert_int_eq(zkl_contenders(s, NULL, -1, &v, &n), ZKL_EINVAL);
  ck_assert_int_eq(zkl_path_check("/a/b"), 0);
  ck_assert_int_eq(zkl_path_check("/a/"), ZKL_EINVAL);
  ck_assert_int_eq(zkl_path_check("/zookeeper/x"), ZKL_EINVAL);
  ck_assert_int_eq(zkl_path_check(NULL), ZKL_EINVAL);
  zkl_session_close(s);
}
END_TEST

Suite *inspect_suite(void) {
  Suite *s = suite_create("inspect");
  TCase *tc = tcase_create("live");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, mutex_holder_waiter_and_foreign_children);
  tcase_add_test(tc, readers_writer_and_election);
  tcase_add_test(tc, missing_path_and_bad_input);
  suite_add_tcase(s, tc);
  return s;
}
