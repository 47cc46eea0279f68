/* tests/unit/test-drivers.c - the read/write lock's drivers (lib/recipes/rwlock.c):
 * which nodes they queue behind and which one they watch; and the rwlock
 * and election API's argument checks. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "suites.h"
#include "core/contend.h"

#define R(seq) {"_c_r-__READ__" #seq, seq, ZKL__KIND_READ}
#define W(seq) {"_c_w-__WRIT__" #seq, seq, ZKL__KIND_WRITE}
#define KR(seq) {"k__rlock__" #seq, seq, ZKL__KIND_KAZOO_RLOCK}
#define KW(seq) {"k__lock__" #seq, seq, ZKL__KIND_KAZOO_LOCK}

START_TEST(rw_drivers_share_one_queue) {
  const zkl__driver_t *r = &zkl__driver_reader, *w = &zkl__driver_writer;
  ck_assert_str_eq(r->marker, "__READ__");
  ck_assert_str_eq(w->marker, "__WRIT__");
  ck_assert_int_eq(r->kind, ZKL__KIND_READ);
  ck_assert_int_eq(w->kind, ZKL__KIND_WRITE);
  ck_assert_int_eq(r->tells_release, 0); /* a reader's hold proves nothing */
  ck_assert_int_ne(w->tells_release, 0);
  static const zkl__kind_t counted[] = {ZKL__KIND_READ, ZKL__KIND_WRITE,
                                        ZKL__KIND_KAZOO_RLOCK,
                                        ZKL__KIND_KAZOO_LOCK};
  for (size_t i = 0; i < sizeof counted / sizeof counted[0]; i++) {
    ck_assert_int_ne(r->counts(counted[i]), 0);
    ck_assert_int_ne(w->counts(counted[i]), 0);
  }
  ck_assert_int_eq(r->counts(ZKL__KIND_LOCK), 0);
  ck_assert_int_eq(r->counts(ZKL__KIND_LATCH), 0);
  ck_assert_int_eq(r->counts(ZKL__KIND_NONE), 0);
}
END_TEST

/* A waiter takes a change of its predecessor's data for "it left as
 * holder, nothing is below it" only from the kinds whose zkl holders
 * release that way (the mutex's and the writer's): never from a reader,
 * an election candidate (Curator's LeaderLatch behind it wakes only on
 * NodeDeleted, so zkl's latch release is a plain delete), a peer's kazoo
 * node (zkl never creates one) or an unknown name. */
START_TEST(only_mutex_and_writer_kinds_tell_a_release) {
  ck_assert_int_ne(zkl__driver_mutex.tells_release, 0);
  ck_assert_int_ne(zkl__driver_writer.tells_release, 0);
  ck_assert_int_eq(zkl__driver_reader.tells_release, 0);
  ck_assert_int_eq(zkl__driver_latch.tells_release, 0);
  ck_assert_int_ne(zkl__kind_marks_release(ZKL__KIND_LOCK), 0);
  ck_assert_int_ne(zkl__kind_marks_release(ZKL__KIND_WRITE), 0);
  ck_assert_int_eq(zkl__kind_marks_release(ZKL__KIND_LATCH), 0);
  ck_assert_int_eq(zkl__kind_marks_release(ZKL__KIND_READ), 0);
  ck_assert_int_eq(zkl__kind_marks_release(ZKL__KIND_KAZOO_LOCK), 0);
  ck_assert_int_eq(zkl__kind_marks_release(ZKL__KIND_KAZOO_RLOCK), 0);
  ck_assert_int_eq(zkl__kind_marks_release(ZKL__KIND_NONE), 0);
  /* the core's table (names.c) and each recipe's driver agree */
  const zkl__driver_t *all[] = {&zkl__driver_mutex, &zkl__driver_reader,
                                &zkl__driver_writer, &zkl__driver_latch,
                                &zkl__driver_kazoo_lock};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    ck_assert_int_eq(zkl__kind_marks_release(all[i]->kind) != 0,
                     all[i]->tells_release != 0);
}
END_TEST

START_TEST(reader_waits_for_nearest_writer_only) {
  const zkl__driver_t *d = &zkl__driver_reader;
  const zkl__node_t readers[] = {R(1), KR(2), R(3)};
  ck_assert_int_eq(d->blocker(readers, 3), -1); /* readers share */
  ck_assert_int_eq(d->blocker(readers, 0), -1);
  const zkl__node_t mixed[] = {W(1), R(2), KW(3), R(4), KR(5)};
  ck_assert_int_eq(d->blocker(mixed, 5), 2); /* kazoo writer at 3 */
  ck_assert_int_eq(d->blocker(mixed, 2), 0);
  const zkl__node_t writer_last[] = {R(1), R(2), W(3)};
  ck_assert_int_eq(d->blocker(writer_last, 3), 2);
}
END_TEST

START_TEST(writer_waits_for_everyone_ahead) {
  const zkl__driver_t *d = &zkl__driver_writer;
  const zkl__node_t mixed[] = {R(1), W(2), R(3), KR(4)};
  for (size_t n = 1; n <= 4; n++)
    ck_assert_int_eq(d->blocker(mixed, n), (ptrdiff_t)n - 1);
  ck_assert_int_eq(d->blocker(mixed, 0), -1);
}
END_TEST

/* A waiter keeps only the lower nodes its driver says can block it
 * (driver.blocks): dropping the others must never change whether it is
 * blocked, for any queue of any kinds. */
START_TEST(kept_nodes_decide_like_all_nodes) {
  const zkl__driver_t *drivers[] = {&zkl__driver_mutex, &zkl__driver_reader,
                                    &zkl__driver_writer, &zkl__driver_latch,
                                    &zkl__driver_kazoo_lock};
  static const zkl__kind_t kinds[] = {
      ZKL__KIND_LOCK,  ZKL__KIND_KAZOO_LOCK, ZKL__KIND_KAZOO_RLOCK,
      ZKL__KIND_READ,  ZKL__KIND_WRITE,      ZKL__KIND_LATCH};
  enum { NK = sizeof kinds / sizeof kinds[0], LEN = 4 };
  ck_assert_int_eq(zkl__driver_reader.blocks(ZKL__KIND_READ), 0);
  ck_assert_int_eq(zkl__driver_reader.blocks(ZKL__KIND_KAZOO_RLOCK), 0);
  ck_assert_int_ne(zkl__driver_reader.blocks(ZKL__KIND_WRITE), 0);
  for (size_t d = 0; d < sizeof drivers / sizeof drivers[0]; d++) {
    const zkl__driver_t *drv = drivers[d];
    for (size_t k = 0; k < NK; k++) /* blocks only what it counts */
      ck_assert(!drv->blocks(kinds[k]) || drv->counts(kinds[k]));
    /* every queue of LEN counted nodes of any kinds */
    long combos = 1;
    for (int i = 0; i < LEN; i++) combos *= NK;
    for (long code = 0; code < combos; code++) {
      zkl__node_t all[LEN], kept[LEN];
      size_t n = 0, m = 0;
      long rest = code;
      for (int i = 0; i < LEN; i++, rest /= NK) {
        zkl__node_t node = {"x", (int32_t)i, kinds[rest % NK]};
        if (!drv->counts(node.kind)) continue;
        all[n++] = node;
        if (drv->blocks(node.kind)) kept[m++] = node;
      }
      ck_assert_int_eq(drv->blocker(all, n) >= 0, drv->blocker(kept, m) >= 0);
    }
  }
}
END_TEST

START_TEST(own_names_parse_as_own_kind) {
  const zkl__driver_t *ds[] = {&zkl__driver_reader, &zkl__driver_writer,
                               &zkl__driver_mutex, &zkl__driver_latch,
                               &zkl__driver_kazoo_lock};
  char prefix[ZKL__PREFIX_LEN + 1], name[128];
  zkl__prefix_new(prefix);
  for (int i = 0; i < (int)(sizeof ds / sizeof ds[0]); i++) {
    snprintf(name, sizeof name, "%s%s%010" PRId32, prefix, ds[i]->marker,
             (int32_t)-7);
    zkl__node_t n;
    ck_assert_msg(zkl__name_parse(name, &n) == 0, "\"%s\"", name);
    ck_assert_int_eq(n.kind, ds[i]->kind);
    ck_assert_int_eq(n.seq, -7);
    ck_assert(zkl__name_is_mine(name, prefix));
  }
}
END_TEST

/* The semaphore's gate in kazoo's layout: its names end as kazoo's Lock
 * looks for its own, `__lock__` and ten digits (kazoo 2.8's regex
 * "(?:__lock__)(-?\d{10})$"), and it queues with zkl's and kazoo's
 * mutex nodes alike. */
START_TEST(kazoo_gate_names_are_kazoo_locks) {
  const zkl__driver_t *d = &zkl__driver_kazoo_lock;
  char prefix[ZKL__PREFIX_LEN + 1], name[128];
  zkl__prefix_new(prefix);
  snprintf(name, sizeof name, "%s%s%010d", prefix, d->marker, 42);
  size_t len = strlen(name);
  ck_assert_str_eq(name + len - 18, "__lock__0000000042");
  zkl__node_t n;
  ck_assert_int_eq(zkl__name_parse(name, &n), 0);
  ck_assert_int_eq(n.kind, ZKL__KIND_KAZOO_LOCK);
  ck_assert_int_eq(n.kind, d->kind);
  ck_assert_int_ne(d->counts(ZKL__KIND_LOCK), 0);
  ck_assert_int_ne(d->counts(ZKL__KIND_KAZOO_LOCK), 0);
  ck_assert_int_eq(d->counts(ZKL__KIND_KAZOO_RLOCK), 0);
  ck_assert_int_ne(zkl__driver_mutex.counts(d->kind), 0);
  ck_assert(d->blocker == zkl__blocker_exclusive);
}
END_TEST

/* The rwlock and election API refuse NULL cleanly, with no server. */
START_TEST(rwlock_and_election_refuse_null) {
  zkl_rwlock_t *l = (zkl_rwlock_t *)&l;
  ck_assert_int_eq(zkl_rwlock_create(&l, NULL, "/x", NULL), ZKL_EINVAL);
  ck_assert_ptr_null(l);
  ck_assert_int_eq(zkl_rwlock_create(NULL, NULL, "/x", NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_rwlock_rdlock(NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_rwlock_tryrdlock(NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_rwlock_timedrdlock(NULL, 5), ZKL_EINVAL);
  ck_assert_int_eq(zkl_rwlock_wrlock(NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_rwlock_trywrlock(NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_rwlock_timedwrlock(NULL, 5), ZKL_EINVAL);
  ck_assert_int_eq(zkl_rwlock_unlock(NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_rwlock_cancel(NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_rwlock_holding(NULL), ZKL_EINVAL);
  uint64_t t;
  ck_assert_int_eq(zkl_rwlock_token(NULL, &t), ZKL_EINVAL);
  char node[16] = "untouched";
  ck_assert_int_eq(zkl_rwlock_node(NULL, node, sizeof node), ZKL_EINVAL);
  ck_assert_str_eq(node, "untouched");
  zkl_rwlock_destroy(NULL);
  zkl_rwlock_opts_init(NULL);

  zkl_election_t *e = (zkl_election_t *)&e;
  ck_assert_int_eq(zkl_election_create(&e, NULL, "/x", "id", 2, NULL),
                   ZKL_EINVAL);
  ck_assert_ptr_null(e);
  ck_assert_int_eq(zkl_election_start(NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_election_await(NULL, 1), ZKL_EINVAL);
  ck_assert_int_eq(zkl_election_is_leader(NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_election_token(NULL, &t), ZKL_EINVAL);
  ck_assert_int_eq(zkl_election_node(NULL, node, sizeof node), ZKL_EINVAL);
  ck_assert_str_eq(node, "untouched");
  ck_assert_int_eq(zkl_election_resign(NULL), ZKL_EINVAL);
  char buf[4];
  size_t len = sizeof buf;
  ck_assert_int_eq(zkl_election_leader(NULL, buf, &len), ZKL_EINVAL);
  zkl_election_destroy(NULL);
  zkl_election_opts_init(NULL);
}
END_TEST

Suite *drivers_suite(void) {
  Suite *s = suite_create("drivers");
  TCase *tc = tcase_create("rwlock");
  tcase_add_test(tc, rw_drivers_share_one_queue);
  tcase_add_test(tc, only_mutex_and_writer_kinds_tell_a_release);
  tcase_add_test(tc, reader_waits_for_nearest_writer_only);
  tcase_add_test(tc, writer_waits_for_everyone_ahead);
  tcase_add_test(tc, kept_nodes_decide_like_all_nodes);
  tcase_add_test(tc, own_names_parse_as_own_kind);
  tcase_add_test(tc, kazoo_gate_names_are_kazoo_locks);
  suite_add_tcase(s, tc);
  tc = tcase_create("api-null");
  tcase_add_test(tc, rwlock_and_election_refuse_null);
  suite_add_tcase(s, tc);
  return s;
}
