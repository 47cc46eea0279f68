/* tests/unit/test-errors.c - error codes, their texts and names
 * (lib/errors.c, zkl/errors.h) and the version string.  zkl's codes are
 * taken from ZKL_ERRNO_MAP itself, so a code added later is covered. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <zookeeper/zookeeper.h>

#include "suites.h"
#include "zkl.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const struct {
  int code;
  const char *name;
  const char *msg;
} zkl_codes[] = {
#define ROW(name, value, msg) {ZKL_##name, "ZKL_" #name, msg},
    ZKL_ERRNO_MAP(ROW)
#undef ROW
};

/* Every ZooKeeper return code of the C client (zookeeper.h, 3.8). */
static const struct {
  int code;
  const char *name;
} zk_codes[] = {
#define ZK(c) {c, #c},
    ZK(ZSYSTEMERROR) ZK(ZRUNTIMEINCONSISTENCY) ZK(ZDATAINCONSISTENCY)
    ZK(ZCONNECTIONLOSS) ZK(ZMARSHALLINGERROR) ZK(ZUNIMPLEMENTED)
    ZK(ZOPERATIONTIMEOUT) ZK(ZBADARGUMENTS) ZK(ZINVALIDSTATE)
    ZK(ZNEWCONFIGNOQUORUM) ZK(ZRECONFIGINPROGRESS) ZK(ZSSLCONNECTIONERROR)
    ZK(ZAPIERROR) ZK(ZNONODE) ZK(ZNOAUTH) ZK(ZBADVERSION)
    ZK(ZNOCHILDRENFOREPHEMERALS) ZK(ZNODEEXISTS) ZK(ZNOTEMPTY)
    ZK(ZSESSIONEXPIRED) ZK(ZINVALIDCALLBACK) ZK(ZINVALIDACL) ZK(ZAUTHFAILED)
    ZK(ZCLOSING) ZK(ZNOTHING) ZK(ZSESSIONMOVED) ZK(ZNOTREADONLY)
    ZK(ZEPHEMERALONLOCALSESSION) ZK(ZNOWATCHER) ZK(ZRECONFIGDISABLED)
    ZK(ZSESSIONCLOSEDREQUIRESASLAUTH) ZK(ZTHROTTLEDOP)
#undef ZK
};

/* ---- zkl's own codes --------------------------------------------------- */

START_TEST(zkl_code_text_and_name) {
  int code = zkl_codes[_i].code;
  const char *msg = zkl_strerror(code);
  ck_assert_ptr_nonnull(msg);
  ck_assert_str_eq(msg, zkl_codes[_i].msg);
  ck_assert_str_ne(msg, "");
  ck_assert_str_ne(msg, "unknown error");
  ck_assert_str_eq(zkl_err_name(code), zkl_codes[_i].name);
}
END_TEST

START_TEST(zkl_codes_in_range) {
  int code = zkl_codes[_i].code;
  ck_assert_msg(code >= -1099 && code <= -1001, "%s = %d, outside -1099..-1001",
                zkl_codes[_i].name, code);
}
END_TEST

START_TEST(zkl_codes_unique) {
  ck_assert_int_gt(COUNT(zkl_codes), 0);
  for (int i = 0; i < COUNT(zkl_codes); i++)
    for (int j = i + 1; j < COUNT(zkl_codes); j++) {
      ck_assert_msg(zkl_codes[i].code != zkl_codes[j].code,
                    "%s and %s share %d", zkl_codes[i].name,
                    zkl_codes[j].name, zkl_codes[i].code);
      ck_assert_msg(strcmp(zkl_codes[i].msg, zkl_codes[j].msg) != 0,
                    "%s and %s share their text", zkl_codes[i].name,
                    zkl_codes[j].name);
    }
}
END_TEST

START_TEST(zkl_named_constants) {
  /* Spot checks that the table makes the constants the header promises. */
  ck_assert_int_eq(ZKL_OK, 0);
  ck_assert_int_eq(ZKL_EINVAL, -1001);
  ck_assert_str_eq(zkl_err_name(ZKL_EINVAL), "ZKL_EINVAL");
  ck_assert_str_eq(zkl_err_name(ZKL_ETIMEDOUT), "ZKL_ETIMEDOUT");
  ck_assert_str_eq(zkl_strerror(ZKL_ETIMEDOUT), "timed out");
}
END_TEST

/* ---- 0 and ZooKeeper's codes ---------------------------------------------- */

START_TEST(zero) {
  const char *msg = zkl_strerror(0);
  ck_assert_ptr_nonnull(msg);
  ck_assert_str_ne(msg, "");
  ck_assert_str_ne(msg, "unknown error");
  ck_assert_str_eq(zkl_err_name(0), "OK");
  ck_assert_str_eq(zkl_err_name(ZOK), "OK");
}
END_TEST

START_TEST(zookeeper_code) {
  int code = zk_codes[_i].code;
  const char *msg = zkl_strerror(code);
  ck_assert_msg(msg != NULL, "zkl_strerror(%s) is NULL", zk_codes[_i].name);
  ck_assert_msg(msg[0] != '\0', "zkl_strerror(%s) is empty",
                zk_codes[_i].name);
  ck_assert_msg(strcmp(msg, "unknown error") != 0,
                "zkl_strerror(%s = %d) is \"unknown error\"",
                zk_codes[_i].name, code);
  ck_assert_str_eq(zkl_err_name(code), zk_codes[_i].name);
}
END_TEST

START_TEST(zookeeper_codes_outside_zkl_range) {
  for (int i = 0; i < COUNT(zk_codes); i++)
    ck_assert_msg(zk_codes[i].code > -1001, "%s = %d collides with zkl's range",
                  zk_codes[i].name, zk_codes[i].code);
}
END_TEST

/* ---- everything else -------------------------------------------------------- */

static const int unknown_codes[] = {
    -5000, 12345, INT_MIN, INT_MAX, 1, -1000, -1100,
};

START_TEST(unknown_code) {
  int code = unknown_codes[_i];
  const char *msg = zkl_strerror(code);
  ck_assert_msg(msg != NULL, "zkl_strerror(%d) is NULL", code);
  ck_assert_str_eq(msg, "unknown error");
  ck_assert_str_eq(zkl_err_name(code), "UNKNOWN");
}
END_TEST

/* ---- version ------------------------------------------------------------------- */

START_TEST(version) {
  ck_assert_ptr_nonnull(zkl_version());
  ck_assert_str_eq(zkl_version(), ZKL_VERSION_STRING);
  char want[32];
  snprintf(want, sizeof want, "%d.%d.%d", ZKL_VERSION_MAJOR, ZKL_VERSION_MINOR,
           ZKL_VERSION_PATCH);
  ck_assert_str_eq(ZKL_VERSION_STRING, want);
}
END_TEST

/* ---- the suite -------------------------------------------------------------------- */

static TCase *tcase(Suite *s, const char *name) {
  TCase *tc = tcase_create(name);
  suite_add_tcase(s, tc);
  return tc;
}

Suite *errors_suite(void) {
  Suite *s = suite_create("errors");
  TCase *tc = tcase(s, "zkl_codes");
  tcase_add_loop_test(tc, zkl_code_text_and_name, 0, COUNT(zkl_codes));
  tcase_add_loop_test(tc, zkl_codes_in_range, 0, COUNT(zkl_codes));
  tcase_add_test(tc, zkl_codes_unique);
  tcase_add_test(tc, zkl_named_constants);
  tcase_add_test(tcase(s, "zero"), zero);
  tc = tcase(s, "zookeeper_codes");
  tcase_add_loop_test(tc, zookeeper_code, 0, COUNT(zk_codes));
  tcase_add_test(tc, zookeeper_codes_outside_zkl_range);
  tcase_add_loop_test(tcase(s, "unknown_codes"), unknown_code, 0,
                      COUNT(unknown_codes));
  tcase_add_test(tcase(s, "version"), version);
  return s;
}
