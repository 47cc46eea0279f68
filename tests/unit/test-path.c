/* tests/unit/test-path.c - which strings may name a lock root
 * (zkl__path_validate in lib/path.c).  Every rejection must also leave a
 * detail message for zkl_last_error(). */
#include <stdio.h>
#include <string.h>

#include "suites.h"
#include "core/contend.h"

/* The path with bytes outside printable ASCII written as \xNN, for
 * messages (one buffer per call site is enough: used once per assert). */
static const char *shown(const char *path, char *buf, size_t len) {
  if (path == NULL) return "(null)";
  size_t o = 0;
  for (const unsigned char *p = (const unsigned char *)path;
       *p != '\0' && o + 5 < len; p++) {
    if (*p >= 0x20 && *p < 0x7f && *p != '\\')
      buf[o++] = (char)*p;
    else
      o += (size_t)snprintf(buf + o, len - o, "\\x%02x", *p);
  }
  buf[o] = '\0';
  return buf;
}

static void expect_ok(const char *path) {
  char b[256];
  int rc = zkl__path_validate(path);
  ck_assert_msg(rc == 0, "\"%s\" rejected (%d): %s", shown(path, b, sizeof b),
                rc, zkl_last_error());
}

static void expect_rejected(const char *path) {
  char b[256];
  zkl__clear_error();
  int rc = zkl__path_validate(path);
  ck_assert_msg(rc == ZKL_EINVAL, "\"%s\": returned %d, want %d",
                shown(path, b, sizeof b), rc, ZKL_EINVAL);
  ck_assert_msg(zkl_last_error()[0] != '\0', "\"%s\": no detail message",
                shown(path, b, sizeof b));
}

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- accepted ------------------------------------------------------------ */

static const char *const good_paths[] = {
    "/a",
    "/locks",
    "/locks/db",
    "/a/b/c/d/e",
    "/my-lock_1",
    "/a b",
    "/a~b@c:d",
    "/x.y",
    "/.hidden",
    "/a/..b",
    "/a/b..",
    "/...",
    "/a/.../b",
    "/zookeeperx",
    "/zookeeper-locks/x",
    "/app/zookeeper",
};

START_TEST(accepts_normal) { expect_ok(good_paths[_i]); }
END_TEST

static const char *const unicode_paths[] = {
    "/caf\xc3\xa9",                                 /* e-acute          */
    "/\xe6\x97\xa5\xe6\x9c\xac/\xe3\x83\xad", /* CJK / katakana   */
    "/\xd0\xb7\xd0\xb0\xd0\xbc\xd0\xbe\xd0\xba",     /* Cyrillic         */
    "/\xc2\xa0",                                    /* U+00A0           */
    "/\xef\xa4\x80",                                /* U+F900           */
    "/\xef\xbf\xaf",                                /* U+FFEF           */
};

START_TEST(accepts_unicode) { expect_ok(unicode_paths[_i]); }
END_TEST

/* ---- rejected -------------------------------------------------------------- */

START_TEST(rejects_null) { expect_rejected(NULL); }
END_TEST

static const char *const bad_shapes[] = {
    "",  "a",   "a/b", "locks", "./a", "/", "/a/",
    "//", "//a", "/a//b", "/a/b//", "/a/b/",
};

START_TEST(rejects_shape) { expect_rejected(bad_shapes[_i]); }
END_TEST

static const char *const dot_paths[] = {
    "/.", "/..", "/./a", "/../a", "/a/.", "/a/..", "/a/./b", "/a/../b",
};

START_TEST(rejects_dot_components) { expect_rejected(dot_paths[_i]); }
END_TEST

static const char *const control_paths[] = {
    "/a\x01", "/\x01" "a", "/a\x1f" "b", "/a\x7f", "/a\tb", "/a\nb", "/a\r",
    "/a/\x1b[0m",
};

START_TEST(rejects_control_chars) { expect_rejected(control_paths[_i]); }
END_TEST

static const char *const bad_utf8[] = {
    "/\x80",                 /* lone continuation byte          */
    "/a\xbf" "b",
    "/\xc0\xaf",             /* overlong '/'                     */
    "/\xc1\xbf",             /* overlong U+007F                  */
    "/\xe0\x80\xaf",         /* overlong, three bytes            */
    "/\xf0\x80\x80\xaf",     /* overlong, four bytes             */
    "/\xed\xa0\x80",         /* surrogate U+D800                 */
    "/\xed\xbf\xbf",         /* surrogate U+DFFF                 */
    "/\xf4\x90\x80\x80",     /* past U+10FFFF                    */
    "/\xf8\x88\x80\x80\x80", /* five-byte form                   */
    "/\xfe",
    "/\xff",
    "/a\xc3",                /* truncated at the end             */
    "/a\xe6\x97",
    "/a\xf0\x9f\x98",
    "/a\xc3/b",              /* truncated before a '/'           */
    "/a\xe6" "b",
};

START_TEST(rejects_invalid_utf8) { expect_rejected(bad_utf8[_i]); }
END_TEST

/* Characters ZooKeeper itself refuses in paths (its PathUtils: a 3.8.0
 * server answers ZBADARGUMENTS to each of these), so a mutex must not be created on them only to
 * fail at lock time.  ZooKeeper works on UTF-16 code units, so every code
 * point past U+FFFF (a surrogate pair) is refused too. */
static const char *const zk_refused[] = {
    "/a\xc2\x80",         /* U+0080: C1 control   */
    "/a\xc2\x85",         /* U+0085: NEL          */
    "/a\xc2\x9f",         /* U+009F: C1 control   */
    "/a\xee\x80\x80",     /* U+E000: private use  */
    "/a\xef\xa3\xbf",     /* U+F8FF: private use  */
    "/a\xef\xbf\xb0",     /* U+FFF0               */
    "/a\xef\xbf\xbf",     /* U+FFFF               */
    "/a\xf0\x90\x80\x80", /* U+10000              */
    "/a\xf0\x9f\x98\x80", /* U+1F600 (an emoji)   */
};

START_TEST(rejects_zookeeper_refused_chars) { expect_rejected(zk_refused[_i]); }
END_TEST

static const char *const reserved[] = {
    "/zookeeper", "/zookeeper/x", "/zookeeper/quota", "/zookeeper/a/b",
};

START_TEST(rejects_reserved) { expect_rejected(reserved[_i]); }
END_TEST

/* ---- length ---------------------------------------------------------------- */

static void fill_path(char *buf, size_t len) {
  buf[0] = '/';
  for (size_t i = 1; i < len; i++) buf[i] = (i % 64 == 0) ? '/' : 'a';
  buf[len - 1] = 'z'; /* never a trailing slash */
  buf[len] = '\0';
}

START_TEST(length_limit) {
  char p[ZKL__PATH_MAX + 2];
  fill_path(p, ZKL__PATH_MAX);
  ck_assert_uint_eq(strlen(p), ZKL__PATH_MAX);
  expect_ok(p);
  fill_path(p, ZKL__PATH_MAX + 1);
  ck_assert_uint_eq(strlen(p), ZKL__PATH_MAX + 1);
  expect_rejected(p);
}
END_TEST

START_TEST(length_counts_bytes) {
  /* 900 bytes made of two-byte characters is at the limit; one more is not. */
  char p[ZKL__PATH_MAX + 4];
  p[0] = '/';
  size_t o = 1;
  while (o + 2 <= ZKL__PATH_MAX) {
    p[o++] = '\xc3';
    p[o++] = '\xa9';
  }
  p[o++] = 'x';
  p[o] = '\0';
  ck_assert_uint_eq(o, ZKL__PATH_MAX);
  expect_ok(p);
  p[o++] = 'y';
  p[o] = '\0';
  expect_rejected(p);
}
END_TEST

/* ---- the detail message ------------------------------------------------------ */

START_TEST(last_error_set_on_rejection) {
  zkl__clear_error();
  ck_assert_str_eq(zkl_last_error(), "");
  ck_assert_int_eq(zkl__path_validate("relative"), ZKL_EINVAL);
  ck_assert_str_ne(zkl_last_error(), "");
  zkl__clear_error();
  ck_assert_int_eq(zkl__path_validate("/a\x01"), ZKL_EINVAL);
  ck_assert_str_ne(zkl_last_error(), "");
  ck_assert_int_eq(zkl__path_validate("/ok"), 0);
}
END_TEST

/* ---- the suite --------------------------------------------------------------- */

static TCase *tcase(Suite *s, const char *name) {
  TCase *tc = tcase_create(name);
  suite_add_tcase(s, tc);
  return tc;
}

Suite *path_suite(void) {
  Suite *s = suite_create("path");
  tcase_add_loop_test(tcase(s, "accepts_normal"), accepts_normal, 0,
                      COUNT(good_paths));
  tcase_add_loop_test(tcase(s, "accepts_unicode"), accepts_unicode, 0,
                      COUNT(unicode_paths));
  TCase *tc = tcase(s, "rejects_shape");
  tcase_add_test(tc, rejects_null);
  tcase_add_loop_test(tc, rejects_shape, 0, COUNT(bad_shapes));
  tcase_add_loop_test(tcase(s, "rejects_dot_components"),
                      rejects_dot_components, 0, COUNT(dot_paths));
  tcase_add_loop_test(tcase(s, "rejects_control_chars"), rejects_control_chars,
                      0, COUNT(control_paths));
  tcase_add_loop_test(tcase(s, "rejects_invalid_utf8"), rejects_invalid_utf8,
                      0, COUNT(bad_utf8));
  tcase_add_loop_test(tcase(s, "rejects_zookeeper_refused"),
                      rejects_zookeeper_refused_chars, 0, COUNT(zk_refused));
  tcase_add_loop_test(tcase(s, "rejects_reserved"), rejects_reserved, 0,
                      COUNT(reserved));
  tc = tcase(s, "length");
  tcase_add_test(tc, length_limit);
  tcase_add_test(tc, length_counts_bytes);
  tcase_add_test(tcase(s, "last_error"), last_error_set_on_rejection);
  return s;
}
