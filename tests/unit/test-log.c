/* tests/unit/test-log.c - the log: the ZooKeeper client's lines read for
 * their level and text, level names, the handler's argument checks, and
 * zkl's own messages reaching the handler or the fallback stream. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zookeeper/zookeeper.h>

#include "core/core.h"
#include "suites.h"

static const struct {
  const char *line;
  int level;
  const char *rest;
} lines[] = {
    {"2026-11-29 00:04:28,482:9596(0x7f9774f78740):ZOO_INFO@log_env@1250: "
     "Client environment:zookeeper.version=zookeeper C client 3.8.0",
     ZKL_LOG_INFO,
     "log_env@1250: Client environment:zookeeper.version=zookeeper C client "
     "3.8.0"},
    {"2026-11-29 00:04:28,483:9596(0x7f97):ZOO_ERROR@handle_socket_error_msg"
     "@1246: Socket [127.0.0.1:1] zk retcode=-4, errno=111(Connection "
     "refused)",
     ZKL_LOG_ERROR,
     "handle_socket_error_msg@1246: Socket [127.0.0.1:1] zk retcode=-4, "
     "errno=111(Connection refused)"},
    {"1:2(0x3):ZOO_WARN@f@9: w", ZKL_LOG_WARN, "f@9: w"},
    {"1:2(0x3):ZOO_DEBUG@f@9: d", ZKL_LOG_DEBUG, "f@9: d"},
    /* shapes it does not know: INFO, the whole line */
    {"no prefix at all", ZKL_LOG_INFO, "no prefix at all"},
    {"1:2(0x3):ZOO_LOUD@f@9: x", ZKL_LOG_INFO, "1:2(0x3):ZOO_LOUD@f@9: x"},
    {"", ZKL_LOG_INFO, ""},
};

START_TEST(zookeeper_line_read) {
  const char *rest = NULL;
  int level = zkl__log_parse_zookeeper(lines[_i].line, &rest);
  ck_assert_int_eq(level, lines[_i].level);
  ck_assert_str_eq(rest, lines[_i].rest);
}
END_TEST

START_TEST(level_names) {
  ck_assert_str_eq(zkl_log_level_name(ZKL_LOG_ERROR), "error");
  ck_assert_str_eq(zkl_log_level_name(ZKL_LOG_WARN), "warn");
  ck_assert_str_eq(zkl_log_level_name(ZKL_LOG_INFO), "info");
  ck_assert_str_eq(zkl_log_level_name(ZKL_LOG_DEBUG), "debug");
  ck_assert_str_eq(zkl_log_level_name(0), "?");
  ck_assert_str_eq(zkl_log_level_name(5), "?");
}
END_TEST

static int seen;
static char seen_text[600];
static void keep(zkl_log_level_t level, zkl_log_source_t source, int64_t sid,
                 const char *message, void *arg) {
  (void)arg;
  seen++;
  snprintf(seen_text, sizeof seen_text, "%d %d %llx %s", (int)level,
           (int)source, (unsigned long long)sid, message);
}

START_TEST(own_messages_routed) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ck_assert_ptr_nonnull(f);
  /* no handler: the fallback stream, up to its level */
  zkl__log(f, ZKL_LOG_WARN, ZKL_LOG_WARN, 0x1f, "w %d", 1);
  zkl__log(f, ZKL_LOG_WARN, ZKL_LOG_INFO, 0x1f, "not past warn");
  zkl__log(NULL, ZKL_LOG_DEBUG, ZKL_LOG_ERROR, 0, "nowhere");
  fflush(f);
  ck_assert_str_eq(buf, "zkl: warn: [session 0x1f] w 1\n");
  /* a handler takes them instead, at its own level */
  seen = 0;
  ck_assert_int_eq(zkl_log_set(keep, NULL, ZKL_LOG_INFO), 0);
  zkl__log(f, ZKL_LOG_WARN, ZKL_LOG_INFO, 0x2a, "i %s", "x");
  ck_assert_int_eq(seen, 1);
  ck_assert_str_eq(seen_text, "3 0 2a i x");
  zkl__log(f, ZKL_LOG_DEBUG, ZKL_LOG_DEBUG, 0x2a, "too verbose");
  ck_assert_int_eq(seen, 1);
  zkl__log_zookeeper("1:2(0x3):ZOO_ERROR@f@9: bad\n");
  ck_assert_int_eq(seen, 2);
  ck_assert_str_eq(seen_text, "1 1 0 f@9: bad");
  /* a long message is cut, not overrun */
  char big[2000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  zkl__log(NULL, 0, ZKL_LOG_ERROR, 0, "%s", big);
  ck_assert_int_eq(seen, 3);
  ck_assert_int_eq(zkl_log_set(NULL, NULL, 0), 0);
  zkl__log_zookeeper("1:2(0x3):ZOO_ERROR@f@9: gone");
  ck_assert_int_eq(seen, 3);
  fflush(f);
  ck_assert_str_eq(buf, "zkl: warn: [session 0x1f] w 1\n"); /* unchanged */
  fclose(f);
  free(buf);
  zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
}
END_TEST

START_TEST(set_checks_its_level) {
  ck_assert_int_eq(zkl_log_set(keep, NULL, (zkl_log_level_t)0), ZKL_EINVAL);
  ck_assert_int_eq(zkl_log_set(keep, NULL, (zkl_log_level_t)5), ZKL_EINVAL);
  ck_assert_str_ne(zkl_last_error(), "");
  ck_assert_int_eq(zkl_log_set(NULL, NULL, (zkl_log_level_t)77), 0);
}
END_TEST

Suite *log_suite(void) {
  Suite *s = suite_create("log");
  TCase *tc = tcase_create("zookeeper_lines");
  tcase_add_loop_test(tc, zookeeper_line_read, 0,
                      (int)(sizeof lines / sizeof lines[0]));
  suite_add_tcase(s, tc);
  tc = tcase_create("handler");
  tcase_add_test(tc, level_names);
  tcase_add_test(tc, own_messages_routed);
  tcase_add_test(tc, set_checks_its_level);
  suite_add_tcase(s, tc);
  return s;
}
