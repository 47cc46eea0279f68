/* tests/unit/test-inspect.c - zkl_contenders_order(): queue order, kinds
 * and holders from names alone, as the recipes decide them (the part of
 * zkl_contenders() that needs no server; tests/integration/test-inspect.c
 * reads a live path). */
#include <string.h>

#include "suites.h"
#include "zkl.h"
/* ---- queue order and holders --------------------------------------------------- */

#define U "_c_0b7c6d1e-2f3a-4b5c-8d9e-0f1a2b3c4d5e-"

static void order(zkl_contender_t *v, const char *const *names, size_t n) {
  memset(v, 0, n * sizeof *v);
  for (size_t i = 0; i < n; i++) v[i].name = names[i];
  zkl_contenders_order(v, n);
}

START_TEST(queue_mutex) {
  const char *names[] = {U "lock-0000000012", "config", U "lock-0000000010",
                         "abc__lock__0000000011"};
  zkl_contender_t v[4];
  order(v, names, 4);
  ck_assert_str_eq(v[0].name, U "lock-0000000010");
  ck_assert_str_eq(v[1].name, "abc__lock__0000000011");
  ck_assert_str_eq(v[2].name, U "lock-0000000012");
  ck_assert_str_eq(v[3].name, "config");
  ck_assert_int_eq(v[0].kind, ZKL_KIND_LOCK);
  ck_assert_int_eq(v[1].kind, ZKL_KIND_LOCK); /* kazoo's Lock */
  ck_assert_int_eq(v[3].kind, ZKL_KIND_FOREIGN);
  ck_assert_int_eq(v[0].position, 1);
  ck_assert_int_eq(v[2].position, 3);
  ck_assert_int_eq(v[3].position, 0);
  ck_assert_int_eq(v[0].holds, 1);
  ck_assert_int_eq(v[1].holds, 0);
  ck_assert_int_eq(v[2].holds, 0);
  ck_assert_int_eq(v[3].holds, 0);
}
END_TEST

START_TEST(queue_rwlock) {
  /* readers ahead of the first writer hold; the writer and the reader
   * behind it wait */
  const char *names[] = {U "__WRIT__0000000003", U "__READ__0000000002",
                         U "__READ__0000000001", U "__READ__0000000004",
                         "k__rlock__0000000005"};
  zkl_contender_t v[5];
  order(v, names, 5);
  static const zkl_kind_t kinds[] = {ZKL_KIND_READ, ZKL_KIND_READ,
                                     ZKL_KIND_WRITE, ZKL_KIND_READ,
                                     ZKL_KIND_READ};
  static const int holds[] = {1, 1, 0, 0, 0};
  for (int i = 0; i < 5; i++) {
    ck_assert_int_eq(v[i].position, i + 1);
    ck_assert_int_eq(v[i].kind, kinds[i]);
    ck_assert_int_eq(v[i].holds, holds[i]);
  }
  ck_assert_str_eq(v[2].name, U "__WRIT__0000000003");
}
END_TEST

START_TEST(queue_rwlock_writer_first) {
  const char *names[] = {U "__READ__0000000008", "w__lock__0000000007"};
  zkl_contender_t v[2];
  order(v, names, 2);
  ck_assert_int_eq(v[0].kind, ZKL_KIND_WRITE); /* kazoo's WriteLock */
  ck_assert_int_eq(v[0].holds, 1);
  ck_assert_int_eq(v[1].holds, 0);
}
END_TEST

START_TEST(queue_election_and_wrap) {
  /* the counter wrapped: -2147483648 comes after 2147483647 */
  const char *names[] = {U "latch--2147483648", U "latch-2147483647"};
  zkl_contender_t v[2];
  order(v, names, 2);
  ck_assert_str_eq(v[0].name, U "latch-2147483647");
  ck_assert_int_eq(v[0].kind, ZKL_KIND_ELECTION);
  ck_assert_int_eq(v[0].holds, 1);
  ck_assert_int_eq(v[1].holds, 0);
}
END_TEST

START_TEST(queue_empty_and_names) {
  zkl_contenders_order(NULL, 0);
  ck_assert_str_eq(zkl_kind_name(ZKL_KIND_LOCK), "lock");
  ck_assert_str_eq(zkl_kind_name(ZKL_KIND_READ), "read");
  ck_assert_str_eq(zkl_kind_name(ZKL_KIND_WRITE), "write");
  ck_assert_str_eq(zkl_kind_name(ZKL_KIND_ELECTION), "election");
  ck_assert_str_eq(zkl_kind_name(ZKL_KIND_FOREIGN), "foreign");
}
END_TEST

START_TEST(foreign_children_sort_by_name_after_contenders) {
  const char *names[] = {"zeta", U "lock-0000000001", "alpha",
                         U "lock-bad", "x-lock-"};
  zkl_contender_t v[5];
  order(v, names, 5);
  ck_assert_str_eq(v[0].name, U "lock-0000000001");
  ck_assert_int_eq(v[0].holds, 1);
  for (int i = 1; i < 5; i++) {
    ck_assert_int_eq(v[i].kind, ZKL_KIND_FOREIGN);
    ck_assert_int_eq(v[i].position, 0);
    ck_assert_int_eq(v[i].holds, 0);
  }
  /* byte order: '_' sorts before the letters */
  ck_assert_str_eq(v[1].name, U "lock-bad");
  ck_assert_str_eq(v[2].name, "alpha");
  ck_assert_str_eq(v[3].name, "x-lock-");
  ck_assert_str_eq(v[4].name, "zeta");
}
END_TEST

START_TEST(other_fields_travel_with_their_child) {
  zkl_contender_t v[2];
  memset(v, 0, sizeof v);
  v[0].name = U "lock-0000000009";
  v[0].token = 9;
  v[0].session = 0x99;
  v[1].name = U "lock-0000000003";
  v[1].token = 3;
  v[1].session = 0x33;
  v[1].data = "h:1";
  v[1].data_len = 3;
  zkl_contenders_order(v, 2);
  ck_assert_uint_eq(v[0].token, 3);
  ck_assert_int_eq(v[0].session, 0x33);
  ck_assert_str_eq(v[0].data, "h:1");
  ck_assert_uint_eq(v[1].token, 9);
  ck_assert_ptr_null(v[1].data);
}
END_TEST

START_TEST(kind_names_outside_the_enum) {
  ck_assert_str_eq(zkl_kind_name((zkl_kind_t)42), "foreign");
  ck_assert_str_eq(zkl_kind_name((zkl_kind_t)-1), "foreign");
}
END_TEST

Suite *inspect_suite(void) {
  Suite *s = suite_create("inspect");
  TCase *tc = tcase_create("order");
  tcase_add_test(tc, queue_mutex);
  tcase_add_test(tc, queue_rwlock);
  tcase_add_test(tc, queue_rwlock_writer_first);
  tcase_add_test(tc, queue_election_and_wrap);
  tcase_add_test(tc, queue_empty_and_names);
  tcase_add_test(tc, foreign_children_sort_by_name_after_contenders);
  tcase_add_test(tc, other_fields_travel_with_their_child);
  tcase_add_test(tc, kind_names_outside_the_enum);
  suite_add_tcase(s, tc);
  return s;
}
