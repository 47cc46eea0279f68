/* tests/cli/unit.c - the zkl tool's pure logic, no server: the command
 * line (cli/opts.c), queue order and holders for `zkl status`
 * (cli/queue.c), and the escapes of node data (cli/text.c).
 *
 * Exit status 0 when every test passed.  Check's variables apply
 * (CK_FORK=no under valgrind, CK_RUN_CASE, ...). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"
#include "text.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the command line ------------------------------------------------------- */

/* Parses a NULL-terminated list of words (argv[0] = "zkl" is added). */
static char *words[64];
static char err[512];

static int parse_env(cli_opts_t *o, const char *env, const char *const *args) {
  int n = 0;
  words[n++] = "zkl";
  for (size_t i = 0; args[i] != NULL; i++) words[n++] = (char *)args[i];
  words[n] = NULL;
  return cli_opts_parse(o, n, words, env, err, sizeof err);
}

#define PARSE(o, ...) parse_env((o), NULL, (const char *const[]){__VA_ARGS__, NULL})

START_TEST(lock_defaults) {
  cli_opts_t o;
  ck_assert_int_eq(PARSE(&o, "lock", "/locks/a", "true"), 0);
  ck_assert_int_eq(o.action, CLI_RUN);
  ck_assert_int_eq(o.command, CLI_CMD_LOCK);
  ck_assert_str_eq(o.hosts, CLI_DEFAULT_HOSTS);
  ck_assert_int_eq(o.session_timeout_ms, CLI_DEFAULT_SESSION_TIMEOUT_MS);
  ck_assert_int_eq(o.connect_timeout_ms, CLI_DEFAULT_CONNECT_TIMEOUT_MS);
  ck_assert_ptr_null(o.auth);
  ck_assert_int_eq(o.verbose, 0);
  ck_assert_str_eq(o.path, "/locks/a");
  ck_assert_int_eq(o.mode, CLI_LOCK_EXCLUSIVE);
  ck_assert_int_eq(o.timeout_ms, -1);
  ck_assert_int_eq(o.conflict_exit, 1);
  ck_assert_int_eq(o.grace_ms, CLI_DEFAULT_GRACE_MS);
  ck_assert_str_eq(o.cmd[0], "true");
  ck_assert_ptr_null(o.cmd[1]);
  ck_assert_str_eq(err, "");
}
END_TEST

START_TEST(lock_all_options) {
  cli_opts_t o;
  ck_assert_int_eq(PARSE(&o, "-s", "h1:1,h2:2/chroot", "--session-timeout",
                         "2000", "--connect-timeout", "1500", "--auth",
                         "u:p", "-v", "-v", "lock", "--write", "-t", "2.5",
                         "-E", "9", "--grace", "0.25", "/a/b", "--", "cmd",
                         "-x", "--y", "--"),
                   0);
  ck_assert_str_eq(o.hosts, "h1:1,h2:2/chroot");
  ck_assert_int_eq(o.session_timeout_ms, 2000);
  ck_assert_int_eq(o.connect_timeout_ms, 1500);
  ck_assert_str_eq(o.auth, "u:p");
  ck_assert_int_eq(o.verbose, 2);
  ck_assert_int_eq(o.mode, CLI_LOCK_WRITE);
  ck_assert_int_eq(o.timeout_ms, 2500);
  ck_assert_int_eq(o.conflict_exit, 9);
  ck_assert_int_eq(o.grace_ms, 250);
  ck_assert_str_eq(o.path, "/a/b");
  /* everything after PATH [--] is CMD's, options and "--" included */
  ck_assert_str_eq(o.cmd[0], "cmd");
  ck_assert_str_eq(o.cmd[1], "-x");
  ck_assert_str_eq(o.cmd[2], "--y");
  ck_assert_str_eq(o.cmd[3], "--");
  ck_assert_ptr_null(o.cmd[4]);
}
END_TEST

START_TEST(lock_long_and_short_forms) {
  cli_opts_t o;
  ck_assert_int_eq(PARSE(&o, "--servers=x:1", "--verbose", "lock", "--read",
                         "--nonblock", "--conflict-exit-code=0", "/p", "ls",
                         "-l"),
                   0);
  ck_assert_str_eq(o.hosts, "x:1");
  ck_assert_int_eq(o.verbose, 1);
  ck_assert_int_eq(o.mode, CLI_LOCK_READ);
  ck_assert_int_eq(o.timeout_ms, 0);
  ck_assert_int_eq(o.conflict_exit, 0);
  ck_assert_str_eq(o.cmd[0], "ls");
  ck_assert_str_eq(o.cmd[1], "-l");

  ck_assert_int_eq(PARSE(&o, "lock", "-n", "-E", "3", "/p", "x"), 0);
  ck_assert_int_eq(o.timeout_ms, 0);
  ck_assert_int_eq(o.conflict_exit, 3);
  ck_assert_int_eq(PARSE(&o, "lock", "--timeout", "0", "/p", "x"), 0);
  ck_assert_int_eq(o.timeout_ms, 0);
  ck_assert_int_eq(PARSE(&o, "lock", "-t7", "/p", "x"), 0);
  ck_assert_int_eq(o.timeout_ms, 7000);
}
END_TEST

START_TEST(hosts_from_environment) {
  cli_opts_t o;
  const char *const args[] = {"status", "/p", NULL};
  ck_assert_int_eq(parse_env(&o, "env:7", args), 0);
  ck_assert_str_eq(o.hosts, "env:7");
  ck_assert_int_eq(parse_env(&o, "", args), 0); /* empty = unset */
  ck_assert_str_eq(o.hosts, CLI_DEFAULT_HOSTS);
  const char *const with_s[] = {"-s", "cli:1", "status", "/p", NULL};
  ck_assert_int_eq(parse_env(&o, "env:7", with_s), 0); /* -s wins */
  ck_assert_str_eq(o.hosts, "cli:1");
}
END_TEST

START_TEST(elect_forms) {
  cli_opts_t o;
  ck_assert_int_eq(PARSE(&o, "elect", "/e", "run", "it"), 0);
  ck_assert_int_eq(o.command, CLI_CMD_ELECT);
  ck_assert_ptr_null(o.id);
  ck_assert_int_eq(o.observe, 0);
  ck_assert_str_eq(o.cmd[0], "run");
  ck_assert_int_eq(PARSE(&o, "elect", "-i", "node-7", "/e", "--", "run"), 0);
  ck_assert_str_eq(o.id, "node-7");
  ck_assert_int_eq(PARSE(&o, "elect", "--id=n", "--grace", "1", "/e", "r"), 0);
  ck_assert_str_eq(o.id, "n");
  ck_assert_int_eq(o.grace_ms, 1000);
  ck_assert_int_eq(PARSE(&o, "elect", "--observe", "/e"), 0);
  ck_assert_int_eq(o.observe, 1);
  ck_assert_str_eq(o.path, "/e");
  ck_assert_ptr_null(o.cmd);
}
END_TEST

START_TEST(status_forms) {
  cli_opts_t o;
  ck_assert_int_eq(PARSE(&o, "status", "/s"), 0);
  ck_assert_int_eq(o.command, CLI_CMD_STATUS);
  ck_assert_int_eq(o.json, 0);
  ck_assert_int_eq(PARSE(&o, "status", "--json", "/s"), 0);
  ck_assert_int_eq(o.json, 1);
}
END_TEST

START_TEST(help_and_version) {
  cli_opts_t o;
  ck_assert_int_eq(PARSE(&o, "--help"), 0);
  ck_assert_int_eq(o.action, CLI_HELP);
  ck_assert_int_eq(o.command, CLI_CMD_NONE);
  ck_assert_int_eq(PARSE(&o, "-h", "lock"), 0);
  ck_assert_int_eq(o.action, CLI_HELP);
  ck_assert_int_eq(PARSE(&o, "--version"), 0);
  ck_assert_int_eq(o.action, CLI_VERSION);
  ck_assert_int_eq(PARSE(&o, "-V"), 0);
  ck_assert_int_eq(o.action, CLI_VERSION);
  static const char *const cmds[] = {"lock", "elect", "status"};
  static const cli_command_t ids[] = {CLI_CMD_LOCK, CLI_CMD_ELECT,
                                      CLI_CMD_STATUS};
  for (size_t i = 0; i < COUNT(cmds); i++) {
    ck_assert_int_eq(PARSE(&o, cmds[i], "--help"), 0);
    ck_assert_int_eq(o.action, CLI_HELP);
    ck_assert_int_eq(o.command, ids[i]);
    ck_assert_int_eq(PARSE(&o, cmds[i], "-h"), 0);
    ck_assert_int_eq(o.action, CLI_HELP);
    /* each help names its command's usage, and they differ */
    char usage[64];
    snprintf(usage, sizeof usage, "] %s ", cmds[i]);
    ck_assert_ptr_nonnull(strstr(cli_help(ids[i]), usage));
    ck_assert_str_eq(cli_command_name(ids[i]), cmds[i]);
  }
  ck_assert_ptr_nonnull(strstr(cli_help(CLI_CMD_NONE), "Usage: zkl "));
}
END_TEST

/* Every usage error: 64 and one line naming the trouble and the help. */
static const struct {
  const char *const args[12];
  const char *says; /* a piece of the hint */
} bad[] = {
    {{NULL}, "COMMAND is missing"},
    {{"frobnicate", "/p"}, "unknown command 'frobnicate'"},
    {{"-x", "lock"}, "unknown option -x"},
    {{"--bogus", "lock"}, "unknown option --bogus"},
    {{"-s"}, "option -s needs a value"},
    {{"-s", "", "status", "/p"}, "-s needs HOSTS"},
    {{"--session-timeout", "0", "status", "/p"}, "--session-timeout needs"},
    {{"--session-timeout", "abc", "status", "/p"}, "--session-timeout needs"},
    {{"--session-timeout", "-5", "status", "/p"}, "--session-timeout needs"},
    {{"--connect-timeout", "99999999999", "status", "/p"}, "--connect-timeout"},
    {{"--auth", "nocolon", "status", "/p"}, "--auth needs USER:PASS"},
    {{"--auth", ":pass", "status", "/p"}, "--auth needs USER:PASS"},
    {{"--session-timeout"}, "needs a value"},
    {{"lock"}, "PATH is missing"},
    {{"lock", "/p"}, "CMD is missing"},
    {{"lock", "/p", "--"}, "CMD is missing"},
    {{"lock", "relative", "cmd"}, "bad PATH 'relative'"},
    {{"lock", "/trailing/", "cmd"}, "bad PATH"},
    {{"lock", "/a//b", "cmd"}, "bad PATH"},
    {{"lock", "/zookeeper/x", "cmd"}, "bad PATH"},
    {{"lock", "-q", "/p", "cmd"}, "unknown option -q"},
    {{"lock", "--reed", "/p", "cmd"}, "unknown option --reed"},
    {{"lock", "-t"}, "option -t needs a value"},
    {{"lock", "-t", "soon", "/p", "c"}, "-t needs SECONDS, not 'soon'"},
    {{"lock", "-t", "-1", "/p", "c"}, "-t needs SECONDS"},
    {{"lock", "-t", "1.", "/p", "c"}, "-t needs SECONDS"},
    {{"lock", "-t", "1s", "/p", "c"}, "-t needs SECONDS"},
    {{"lock", "-E", "256", "/p", "c"}, "-E needs an exit code"},
    {{"lock", "-E", "-1", "/p", "c"}, "-E needs an exit code"},
    {{"lock", "-E", "x", "/p", "c"}, "-E needs an exit code"},
    {{"lock", "--grace", "x", "/p", "c"}, "--grace needs SECONDS"},
    {{"lock", "--read", "--write", "/p", "c"}, "exclude each other"},
    {{"lock", "-n", "-t", "1", "/p", "c"}, "one of -n and -t"},
    {{"lock", "--help=x", "/p", "c"}, "option --help takes no value"},
    {{"elect", "/e"}, "CMD is missing"},
    {{"elect", "-i", "", "/e", "c"}, "ID must not be empty"},
    {{"elect", "--observe", "/e", "cmd"}, "runs no command"},
    {{"elect", "--observe", "-i", "x", "/e"}, "takes no --id"},
    {{"elect", "--observe"}, "PATH is missing"},
    {{"elect", "--watch", "/e"}, "unknown option --watch"},
    {{"status"}, "PATH is missing"},
    {{"status", "/s", "extra"}, "unexpected 'extra'"},
    {{"status", "--yaml", "/s"}, "unknown option --yaml"},
    {{"status", "-j", "/s"}, "unknown option -j"},
};

START_TEST(usage_errors) {
  cli_opts_t o;
  const char *const *args = bad[_i].args;
  ck_assert_int_eq(parse_env(&o, NULL, args), CLI_EX_USAGE);
  ck_assert_msg(strstr(err, bad[_i].says) != NULL, "case %d: '%s' lacks '%s'",
                _i, err, bad[_i].says);
  ck_assert_msg(strncmp(err, "zkl", 3) == 0, "'%s'", err);
  ck_assert_msg(strstr(err, "--help')") != NULL, "'%s'", err);
  ck_assert_ptr_null(strchr(err, '\n'));
}
END_TEST

START_TEST(usage_error_names_the_command) {
  cli_opts_t o;
  ck_assert_int_eq(PARSE(&o, "lock", "-t", "x", "/p", "c"), CLI_EX_USAGE);
  ck_assert_str_eq(err, "zkl lock: -t needs SECONDS, not 'x' "
                        "(try 'zkl lock --help')");
  ck_assert_int_eq(PARSE(&o, "nope"), CLI_EX_USAGE);
  ck_assert_str_eq(err, "zkl: unknown command 'nope' (try 'zkl --help')");
}
END_TEST

START_TEST(usage_error_long_id) {
  cli_opts_t o;
  char id[CLI_ID_MAX + 2];
  memset(id, 'i', sizeof id - 1);
  id[sizeof id - 1] = '\0';
  ck_assert_int_eq(PARSE(&o, "elect", "-i", id, "/e", "c"), CLI_EX_USAGE);
  ck_assert_ptr_nonnull(strstr(err, "longer than"));
  id[CLI_ID_MAX] = '\0'; /* exactly the limit is fine */
  ck_assert_int_eq(PARSE(&o, "elect", "-i", id, "/e", "c"), 0);
}
END_TEST

START_TEST(small_error_buffer) {
  cli_opts_t o;
  const char *const args[] = {"lock", "-t", "xxxxxxxxxxxxxxxxxxxxxxxx", "/p",
                              "c", NULL};
  int n = 0;
  words[n++] = "zkl";
  for (size_t i = 0; args[i] != NULL; i++) words[n++] = (char *)args[i];
  words[n] = NULL;
  char tiny[12];
  ck_assert_int_eq(cli_opts_parse(&o, n, words, NULL, tiny, sizeof tiny),
                   CLI_EX_USAGE);
  ck_assert_uint_lt(strlen(tiny), sizeof tiny);
}
END_TEST

START_TEST(seconds) {
  static const struct {
    const char *s;
    int64_t ms; /* -1: refused */
  } v[] = {{"0", 0},       {"1", 1000},     {"2.5", 2500},  {"0.001", 1},
           {"0.0001", 1},  {"0.0000", 0},   {"1.2345", 1235}, {"10.10", 10100},
           {"1000000000", 1000000000000LL}, {"1000000001", -1}, {"", -1},
           {".5", -1},     {"1.", -1},      {"-1", -1},     {"+1", -1},
           {"1e3", -1},    {"1 ", -1},      {" 1", -1},     {"0x10", -1}};
  for (size_t i = 0; i < COUNT(v); i++) {
    int64_t ms = -7;
    int rc = cli_parse_seconds(v[i].s, &ms);
    if (v[i].ms < 0) {
      ck_assert_msg(rc == -1, "'%s' accepted", v[i].s);
      ck_assert_int_eq(ms, -7);
    } else {
      ck_assert_msg(rc == 0, "'%s' refused", v[i].s);
      ck_assert_int_eq(ms, v[i].ms);
    }
  }
}
END_TEST

START_TEST(integers) {
  long v = 0;
  ck_assert_int_eq(cli_parse_int("42", 0, 255, &v), 0);
  ck_assert_int_eq(v, 42);
  ck_assert_int_eq(cli_parse_int("-3", -5, 5, &v), 0);
  ck_assert_int_eq(v, -3);
  ck_assert_int_eq(cli_parse_int("256", 0, 255, &v), -1);
  ck_assert_int_eq(cli_parse_int("", 0, 255, &v), -1);
  ck_assert_int_eq(cli_parse_int(" 1", 0, 255, &v), -1);
  ck_assert_int_eq(cli_parse_int("1x", 0, 255, &v), -1);
  ck_assert_int_eq(cli_parse_int("+1", 0, 255, &v), -1);
  ck_assert_int_eq(cli_parse_int("99999999999999999999", 0, 255, &v), -1);
  ck_assert_int_eq(v, -3);
}
END_TEST

/* ---- escapes -------------------------------------------------------------------- */

typedef void (*put_fn)(FILE *, const void *, size_t);

static char *render(put_fn fn, const void *data, size_t len) {
  char *buf = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&buf, &size);
  ck_assert_ptr_nonnull(f);
  fn(f, data, len);
  fclose(f);
  return buf;
}

START_TEST(escape_plain_and_special) {
  char *s = render(cli_put_escaped, "host:42", 7);
  ck_assert_str_eq(s, "host:42");
  free(s);
  s = render(cli_put_escaped, "a\\b\tc\nd\re\x01\x7f\xc3\xa9\0z", 15);
  ck_assert_str_eq(s, "a\\\\b\\tc\\nd\\re\\x01\\x7f\\xc3\\xa9\\x00z");
  free(s);
  s = render(cli_put_escaped, NULL, 0);
  ck_assert_str_eq(s, "");
  free(s);
}
END_TEST

START_TEST(escape_json) {
  char *s = render(cli_put_json_escaped, "q\"\\\n\x02", 5);
  ck_assert_str_eq(s, "\"q\\\"\\\\\\\\\\\\n\\\\x02\"");
  free(s);
  char *buf = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&buf, &size);
  cli_put_json_string(f, "a\"b\\c\x1f\xc3\xa9");
  fclose(f);
  ck_assert_str_eq(buf, "\"a\\\"b\\\\c\\u001f\xc3\xa9\"");
  free(buf);
}
END_TEST

static Suite *cli_suite(void) {
  Suite *s = suite_create("cli");
  TCase *tc = tcase_create("options");
  tcase_add_test(tc, lock_defaults);
  tcase_add_test(tc, lock_all_options);
  tcase_add_test(tc, lock_long_and_short_forms);
  tcase_add_test(tc, hosts_from_environment);
  tcase_add_test(tc, elect_forms);
  tcase_add_test(tc, status_forms);
  tcase_add_test(tc, help_and_version);
  tcase_add_loop_test(tc, usage_errors, 0, (int)COUNT(bad));
  tcase_add_test(tc, usage_error_names_the_command);
  tcase_add_test(tc, usage_error_long_id);
  tcase_add_test(tc, small_error_buffer);
  tcase_add_test(tc, seconds);
  tcase_add_test(tc, integers);
  suite_add_tcase(s, tc);
  tc = tcase_create("escapes");
  tcase_add_test(tc, escape_plain_and_special);
  tcase_add_test(tc, escape_json);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(cli_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
