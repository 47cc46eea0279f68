/* tests/cli/unit.c - the zkl tool's pure logic, no server: the command
 * line (cli/opts.c) with the names of the queue and counter formats, the
 * strict numbers of `zkl counter`, the options of `zkl barrier`, of `zkl
 * sem` and of `zkl lock --all`, and the escapes of node data
 * (cli/text.c).  Which children are a queue's items, and
 * their order, is the library's (zkl_queue_list()), tested there.
 *
 * Exit status 0 when every test passed.  Check's variables apply
 * (CK_FORK=no under valgrind, CK_RUN_CASE, ...). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"
#include "statsfile.h"
#include "text.h"
#include "zkl.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the command line ------------------------------------------------------- */

/* Parses a NULL-terminated list of words (argv[0] = "zkl" is added). */
static char *words[128];
static char err[512];

static int parse_env(cli_opts_t *o, const char *env, const char *const *args) {
  int n = 0;
  words[n++] = "zkl";
  for (size_t i = 0; args[i] != NULL; i++) words[n++] = (char *)args[i];
  words[n] = NULL;
  return cli_opts_parse(o, n, words, env, err, sizeof err);
}

#define PARSE(o, ...) parse_env((o), NULL, (const char *const[]){__VA_ARGS__, NULL})

/* o->cmd is these words (and nothing after them). */
static void assert_cmd(const cli_opts_t *o, const char *const *want) {
  ck_assert_ptr_nonnull(o->cmd);
  size_t i = 0;
  for (; want[i] != NULL; i++) ck_assert_str_eq(o->cmd[i], want[i]);
  ck_assert_ptr_null(o->cmd[i]);
}

#define ASSERT_CMD(o, ...) assert_cmd((o), (const char *const[]){__VA_ARGS__, NULL})

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
  ck_assert_int_eq(o.stats, 0);
  ck_assert_str_eq(o.path, "/locks/a");
  ck_assert_int_eq(o.mode, CLI_LOCK_EXCLUSIVE);
  ck_assert_int_eq(o.timeout_ms, -1);
  ck_assert_int_eq(o.conflict_exit, 1);
  ck_assert_int_eq(o.grace_ms, CLI_DEFAULT_GRACE_MS);
  ASSERT_CMD(&o, "true");
  ck_assert_str_eq(err, "");
}
END_TEST

START_TEST(lock_all_options) {
  cli_opts_t o;
  ck_assert_int_eq(PARSE(&o, "-s", "h1:1,h2:2/chroot", "--session-timeout",
                         "2000", "--connect-timeout", "1500", "--auth",
                         "u:p", "-v", "-v", "--stats", "lock", "--write",
                         "-t", "2.5",
                         "-E", "9", "--grace", "0.25", "/a/b", "--", "cmd",
                         "-x", "--y", "--"),
                   0);
  ck_assert_str_eq(o.hosts, "h1:1,h2:2/chroot");
  ck_assert_int_eq(o.session_timeout_ms, 2000);
  ck_assert_int_eq(o.connect_timeout_ms, 1500);
  ck_assert_str_eq(o.auth, "u:p");
  ck_assert_int_eq(o.verbose, 2);
  ck_assert_int_eq(o.stats, 1);
  ck_assert_int_eq(o.mode, CLI_LOCK_WRITE);
  ck_assert_int_eq(o.timeout_ms, 2500);
  ck_assert_int_eq(o.conflict_exit, 9);
  ck_assert_int_eq(o.grace_ms, 250);
  ck_assert_str_eq(o.path, "/a/b");
  /* everything after PATH [--] is CMD's, options and "--" included */
  ASSERT_CMD(&o, "cmd", "-x", "--y", "--");
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
  ASSERT_CMD(&o, "ls", "-l");

  ck_assert_int_eq(PARSE(&o, "lock", "-n", "-E", "3", "/p", "x"), 0);
  ck_assert_int_eq(o.timeout_ms, 0);
  ck_assert_int_eq(o.conflict_exit, 3);
  ck_assert_int_eq(PARSE(&o, "lock", "--timeout", "0", "/p", "x"), 0);
  ck_assert_int_eq(o.timeout_ms, 0);
  ck_assert_int_eq(PARSE(&o, "lock", "-t7", "/p", "x"), 0);
  ck_assert_int_eq(o.timeout_ms, 7000);
}
END_TEST

/* o's --all PATHs are these (and o->path the first). */
static void assert_paths(const cli_opts_t *o, const char *const *want) {
  size_t n = 0;
  while (want[n] != NULL) n++;
  ck_assert_int_eq(o->all, 1);
  ck_assert_uint_eq(o->n_paths, n);
  ck_assert_ptr_nonnull(o->paths);
  for (size_t i = 0; i < n; i++) ck_assert_str_eq(o->paths[i], want[i]);
  ck_assert_str_eq(o->path, want[0]);
}

#define ASSERT_PATHS(o, ...) assert_paths((o), (const char *const[]){__VA_ARGS__, NULL})

START_TEST(lock_all_forms) {
  cli_opts_t o;
  ck_assert_int_eq(PARSE(&o, "lock", "--all", "/a", "/b/c", "/d", "--",
                         "cmd", "x"),
                   0);
  ck_assert_int_eq(o.command, CLI_CMD_LOCK);
  ck_assert_int_eq(o.mode, CLI_LOCK_EXCLUSIVE);
  ck_assert_int_eq(o.timeout_ms, -1);
  ck_assert_int_eq(o.conflict_exit, 1);
  ck_assert_int_eq(o.grace_ms, CLI_DEFAULT_GRACE_MS);
  ASSERT_PATHS(&o, "/a", "/b/c", "/d");
  ASSERT_CMD(&o, "cmd", "x");
  ck_assert_str_eq(err, "");
  /* one PATH is a multi-lock too; the order given is kept */
  ck_assert_int_eq(PARSE(&o, "lock", "--all", "/z", "--", "true"), 0);
  ASSERT_PATHS(&o, "/z");
  ck_assert_int_eq(PARSE(&o, "lock", "--all", "/b", "/a", "--", "true"), 0);
  ASSERT_PATHS(&o, "/b", "/a");
  /* the options of lock, in any order around --all */
  ck_assert_int_eq(PARSE(&o, "lock", "-n", "--all", "-E", "7", "--grace",
                         "0.5", "/a", "/b", "--", "cmd"),
                   0);
  ck_assert_int_eq(o.timeout_ms, 0);
  ck_assert_int_eq(o.conflict_exit, 7);
  ck_assert_int_eq(o.grace_ms, 500);
  ASSERT_PATHS(&o, "/a", "/b");
  ck_assert_int_eq(PARSE(&o, "lock", "-t", "2.5", "--all", "/a", "--",
                         "cmd"),
                   0);
  ck_assert_int_eq(o.timeout_ms, 2500);
  /* the first "--" ends the PATHs: CMD keeps its own, and its options */
  ck_assert_int_eq(PARSE(&o, "lock", "--all", "/a", "/b", "--", "-x", "--",
                         "/c", "--y"),
                   0);
  ASSERT_PATHS(&o, "/a", "/b");
  ASSERT_CMD(&o, "-x", "--", "/c", "--y");
  /* a "--" that ends the options comes before the PATHs' own */
  ck_assert_int_eq(PARSE(&o, "lock", "--all", "--", "/a", "/b", "--", "cmd"),
                   0);
  ASSERT_PATHS(&o, "/a", "/b");
  ASSERT_CMD(&o, "cmd");
  /* the most PATHs a multi-lock takes */
  char names[ZKL_MULTILOCK_MAX][16];
  const char *args[ZKL_MULTILOCK_MAX + 6];
  size_t n = 0;
  args[n++] = "lock";
  args[n++] = "--all";
  for (int i = 0; i < ZKL_MULTILOCK_MAX; i++) {
    snprintf(names[i], sizeof names[i], "/p%d", i);
    args[n++] = names[i];
  }
  args[n++] = "--";
  args[n++] = "true";
  args[n] = NULL;
  ck_assert_int_eq(parse_env(&o, NULL, args), 0);
  ck_assert_uint_eq(o.n_paths, ZKL_MULTILOCK_MAX);
  ck_assert_str_eq(o.paths[ZKL_MULTILOCK_MAX - 1],
                   names[ZKL_MULTILOCK_MAX - 1]);
  /* one more is a usage error */
  args[n - 2] = "/one-more";
  args[n - 1] = "--";
  args[n] = "true";
  args[n + 1] = NULL;
  ck_assert_int_eq(parse_env(&o, NULL, args), CLI_EX_USAGE);
  ck_assert_ptr_nonnull(strstr(err, "65 PATHs: --all takes at most 64"));
  /* without --all, nothing of it */
  ck_assert_int_eq(PARSE(&o, "lock", "/a", "true"), 0);
  ck_assert_int_eq(o.all, 0);
  ck_assert_ptr_null(o.paths);
  ck_assert_uint_eq(o.n_paths, 0);
  /* the help tells it */
  ck_assert_ptr_nonnull(strstr(cli_help(CLI_CMD_LOCK), "] lock --all "));
  ck_assert_ptr_nonnull(strstr(cli_help(CLI_CMD_LOCK), "ZKL_FENCING_TOKENS"));
  ck_assert_ptr_nonnull(
      strstr(cli_help(CLI_CMD_NONE), "  lock --all PATH... -- CMD"));
  ck_assert_int_eq(PARSE(&o, "lock", "--all", "--help"), 0);
  ck_assert_int_eq(o.action, CLI_HELP);
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
  ASSERT_CMD(&o, "run", "it");
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

/* zkl status and its kinds: every field they set, whatever the case. */
static const struct {
  const char *const args[8];
  int counter, barrier, sem, json, format;
  const char *count_path, *path;
} status_case[] = {
    {{"status", "/s"}, 0, 0, 0, 0, ZKL_COUNTER_INT32, NULL, "/s"},
    {{"status", "--json", "/s"}, 0, 0, 0, 1, ZKL_COUNTER_INT32, NULL, "/s"},
    {{"status", "--counter", "/s"}, 1, 0, 0, 0, ZKL_COUNTER_INT32, NULL, "/s"},
    {{"status", "--format", "text", "--json", "--counter", "/s"},
     1, 0, 0, 1, ZKL_COUNTER_TEXT, NULL, "/s"},
    {{"status", "--barrier", "/s"}, 0, 1, 0, 0, ZKL_COUNTER_INT32, NULL, "/s"},
    {{"status", "--json", "--barrier", "/s/b"},
     0, 1, 0, 1, ZKL_COUNTER_INT32, NULL, "/s/b"},
    {{"status", "--sem", "/s"}, 0, 0, 1, 0, ZKL_COUNTER_INT32, NULL, "/s"},
    {{"status", "--count-path", "/c", "--json", "--sem", "/s/t"},
     0, 0, 1, 1, ZKL_COUNTER_INT32, "/c", "/s/t"},
    {{"status", "--sem", "--count-path=/c/d", "/s"},
     0, 0, 1, 0, ZKL_COUNTER_INT32, "/c/d", "/s"},
};

START_TEST(status_forms) {
  cli_opts_t o;
  ck_assert_int_eq(parse_env(&o, NULL, status_case[_i].args), 0);
  ck_assert_int_eq(o.action, CLI_RUN);
  ck_assert_int_eq(o.command, CLI_CMD_STATUS);
  ck_assert_int_eq(o.status_counter, status_case[_i].counter);
  ck_assert_int_eq(o.status_barrier, status_case[_i].barrier);
  ck_assert_int_eq(o.status_sem, status_case[_i].sem);
  ck_assert_int_eq(o.json, status_case[_i].json);
  ck_assert_int_eq(o.counter_format, status_case[_i].format);
  if (status_case[_i].count_path == NULL) ck_assert_ptr_null(o.count_path);
  else ck_assert_str_eq(o.count_path, status_case[_i].count_path);
  ck_assert_str_eq(o.path, status_case[_i].path);
}
END_TEST

START_TEST(counter_defaults) {
  cli_opts_t o;
  ck_assert_int_eq(PARSE(&o, "counter", "get", "/c"), 0);
  ck_assert_int_eq(o.action, CLI_RUN);
  ck_assert_int_eq(o.command, CLI_CMD_COUNTER);
  ck_assert_int_eq(o.counter_op, CLI_COUNTER_GET);
  ck_assert_str_eq(o.path, "/c");
  ck_assert_int_eq(o.counter_format, ZKL_COUNTER_INT32);
  ck_assert_int_eq(o.initial, 0);
  ck_assert_int_eq(o.timeout_ms, -1);
  ck_assert_int_eq(o.json, 0);
  ck_assert_int_eq(o.version_none, 0);
  ck_assert_str_eq(err, "");
}
END_TEST

START_TEST(counter_forms) {
  cli_opts_t o;
  ck_assert_int_eq(PARSE(&o, "counter", "get", "--format", "int64",
                         "--initial", "-7", "--json", "/c"),
                   0);
  ck_assert_int_eq(o.counter_format, ZKL_COUNTER_INT64);
  ck_assert_int_eq(o.initial, -7);
  ck_assert_int_eq(o.json, 1);
  /* --initial is checked against the format given after it */
  ck_assert_int_eq(PARSE(&o, "counter", "get", "--initial",
                         "9223372036854775807", "--format=text", "/c"),
                   0);
  ck_assert_int_eq(o.initial, INT64_MAX);
  ck_assert_int_eq(PARSE(&o, "counter", "set", "/c", "-2147483648"), 0);
  ck_assert_int_eq(o.counter_op, CLI_COUNTER_SET);
  ck_assert_int_eq(o.number, INT32_MIN);
  ck_assert_int_eq(PARSE(&o, "counter", "set", "--format", "int64", "/c",
                         "-9223372036854775808"),
                   0);
  ck_assert_int_eq(o.number, INT64_MIN);
  /* DELTA: negative, with '+', and up to what an int32 counter can take */
  ck_assert_int_eq(PARSE(&o, "counter", "add", "/c", "-5"), 0);
  ck_assert_int_eq(o.counter_op, CLI_COUNTER_ADD);
  ck_assert_int_eq(o.number, -5);
  ck_assert_int_eq(PARSE(&o, "counter", "add", "-t", "2.5", "/c", "+12"), 0);
  ck_assert_int_eq(o.number, 12);
  ck_assert_int_eq(o.timeout_ms, 2500);
  ck_assert_int_eq(PARSE(&o, "counter", "add", "--timeout", "0", "/c", "1"),
                   0);
  ck_assert_int_eq(o.timeout_ms, 0);
  ck_assert_int_eq(PARSE(&o, "counter", "add", "/c", "4294967295"), 0);
  ck_assert_int_eq(o.number, 4294967295LL);
  ck_assert_int_eq(PARSE(&o, "counter", "add", "/c", "-4294967295"), 0);
  ck_assert_int_eq(PARSE(&o, "counter", "add", "--format", "int64", "/c",
                         "-9223372036854775808"),
                   0);
  ck_assert_int_eq(o.number, INT64_MIN);
  /* cas: VERSION (negative once it wrapped) or none */
  ck_assert_int_eq(PARSE(&o, "counter", "cas", "/c", "7", "42"), 0);
  ck_assert_int_eq(o.counter_op, CLI_COUNTER_CAS);
  ck_assert_int_eq(o.version, 7);
  ck_assert_int_eq(o.version_none, 0);
  ck_assert_int_eq(o.number, 42);
  ck_assert_int_eq(PARSE(&o, "counter", "cas", "/c", "-2147483648", "-1"), 0);
  ck_assert_int_eq(o.version, INT32_MIN);
  ck_assert_int_eq(o.number, -1);
  ck_assert_int_eq(PARSE(&o, "counter", "cas", "--json", "/c", "none", "3"),
                   0);
  ck_assert_int_eq(o.version_none, 1);
  ck_assert_int_eq(o.version, 0);
  ck_assert_int_eq(o.number, 3);
  ck_assert_int_eq(PARSE(&o, "counter", "wait", "-t", "1", "/c"), 0);
  ck_assert_int_eq(o.counter_op, CLI_COUNTER_WAIT);
  ck_assert_int_eq(o.timeout_ms, 1000);
  ck_assert_int_eq(PARSE(&o, "counter", "add", "--help"), 0);
  ck_assert_int_eq(o.action, CLI_HELP);
  ck_assert_int_eq(o.command, CLI_CMD_COUNTER);
  ck_assert_str_eq(cli_counter_op_name(CLI_COUNTER_NONE), "");
}
END_TEST

START_TEST(barrier_defaults) {
  cli_opts_t o;
  ck_assert_int_eq(PARSE(&o, "barrier", "set", "/b"), 0);
  ck_assert_int_eq(o.action, CLI_RUN);
  ck_assert_int_eq(o.command, CLI_CMD_BARRIER);
  ck_assert_int_eq(o.barrier_op, CLI_BARRIER_SET);
  ck_assert_str_eq(o.path, "/b");
  ck_assert_int_eq(o.timeout_ms, -1);
  ck_assert_int_eq(o.leave_timeout_ms, -1);
  ck_assert_int_eq(o.members, 0);
  ck_assert_ptr_null(o.cmd);
  ck_assert_str_eq(err, "");
  ck_assert_int_eq(PARSE(&o, "barrier", "enter", "-n", "3", "/b", "true"), 0);
  ck_assert_int_eq(o.barrier_op, CLI_BARRIER_ENTER);
  ck_assert_int_eq(o.members, 3);
  ck_assert_int_eq(o.timeout_ms, -1);       /* for ever, */
  ck_assert_int_eq(o.leave_timeout_ms, -1); /* both */
  ck_assert_int_eq(o.conflict_exit, 1);
  ck_assert_int_eq(o.grace_ms, CLI_DEFAULT_GRACE_MS);
  ASSERT_CMD(&o, "true");
}
END_TEST

START_TEST(barrier_forms) {
  cli_opts_t o;
  ck_assert_int_eq(PARSE(&o, "barrier", "remove", "/b/c"), 0);
  ck_assert_int_eq(o.barrier_op, CLI_BARRIER_REMOVE);
  ck_assert_str_eq(o.path, "/b/c");
  ck_assert_int_eq(PARSE(&o, "barrier", "wait", "/b"), 0);
  ck_assert_int_eq(o.barrier_op, CLI_BARRIER_WAIT);
  ck_assert_int_eq(o.timeout_ms, -1);
  ck_assert_int_eq(PARSE(&o, "barrier", "wait", "-t", "2.5", "/b"), 0);
  ck_assert_int_eq(o.timeout_ms, 2500);
  ck_assert_int_eq(PARSE(&o, "barrier", "wait", "--timeout=0", "/b"), 0);
  ck_assert_int_eq(o.timeout_ms, 0);
  /* -t bounds the enter, and the leave unless --leave-timeout says */
  ck_assert_int_eq(PARSE(&o, "barrier", "enter", "-n", "3", "-t", "2", "/b",
                         "--", "cmd", "-x", "--", "y"),
                   0);
  ck_assert_int_eq(o.members, 3);
  ck_assert_int_eq(o.timeout_ms, 2000);
  ck_assert_int_eq(o.leave_timeout_ms, 2000);
  ASSERT_CMD(&o, "cmd", "-x", "--", "y");
  ck_assert_int_eq(PARSE(&o, "barrier", "enter", "--leave-timeout", "0.5",
                         "--members=2147483647", "-t", "10", "-E", "9",
                         "--grace", "0.25", "/b", "cmd"),
                   0);
  ck_assert_int_eq(o.members, 2147483647);
  ck_assert_int_eq(o.timeout_ms, 10000);
  ck_assert_int_eq(o.leave_timeout_ms, 500);
  ck_assert_int_eq(o.conflict_exit, 9);
  ck_assert_int_eq(o.grace_ms, 250);
  ck_assert_int_eq(PARSE(&o, "barrier", "enter", "--members", "1",
                         "--leave-timeout", "0", "--conflict-exit-code=0",
                         "/b", "cmd"),
                   0);
  ck_assert_int_eq(o.members, 1);
  ck_assert_int_eq(o.timeout_ms, -1);
  ck_assert_int_eq(o.leave_timeout_ms, 0);
  ck_assert_int_eq(o.conflict_exit, 0);
  /* a CMD that begins with '-' after an explicit "--" */
  ck_assert_int_eq(PARSE(&o, "barrier", "enter", "-n", "2", "/b", "--", "-c"),
                   0);
  ASSERT_CMD(&o, "-c");
  ck_assert_int_eq(PARSE(&o, "barrier", "enter", "-n", "2", "/b", "-"), 0);
  ASSERT_CMD(&o, "-");
  ck_assert_int_eq(PARSE(&o, "barrier", "enter", "--help"), 0);
  ck_assert_int_eq(o.action, CLI_HELP);
  ck_assert_int_eq(o.command, CLI_CMD_BARRIER);
  ck_assert_int_eq(PARSE(&o, "barrier", "-h"), 0);
  ck_assert_int_eq(o.action, CLI_HELP);
  ck_assert_str_eq(cli_barrier_op_name(CLI_BARRIER_NONE), "");
}
END_TEST

START_TEST(sem_defaults) {
  cli_opts_t o;
  ck_assert_int_eq(PARSE(&o, "sem", "-n", "5", "/s", "true"), 0);
  ck_assert_int_eq(o.action, CLI_RUN);
  ck_assert_int_eq(o.command, CLI_CMD_SEM);
  ck_assert_str_eq(o.path, "/s");
  ck_assert_int_eq(o.sem_max, 5);
  ck_assert_int_eq(o.qty, 1);
  ck_assert_ptr_null(o.count_path);
  ck_assert_int_eq(o.timeout_ms, -1); /* for ever */
  ck_assert_int_eq(o.conflict_exit, 1);
  ck_assert_int_eq(o.grace_ms, CLI_DEFAULT_GRACE_MS);
  ck_assert_int_eq(o.status_sem, 0);
  ASSERT_CMD(&o, "true");
  ck_assert_str_eq(err, "");
  /* -n is not needed with a shared count: MAX is its */
  ck_assert_int_eq(PARSE(&o, "sem", "--count-path", "/c", "/s", "true"), 0);
  ck_assert_int_eq(o.sem_max, 0);
  ck_assert_int_eq(o.qty, 1);
  ck_assert_str_eq(o.count_path, "/c");
}
END_TEST

START_TEST(sem_forms) {
  cli_opts_t o;
  ck_assert_int_eq(PARSE(&o, "sem", "--max=3", "--qty", "3", "--count-path",
                         "/c", "-t", "1.5", "-E", "7", "--grace", "0.25",
                         "/s", "--", "cmd", "-x", "--", "y"),
                   0);
  ck_assert_int_eq(o.sem_max, 3);
  ck_assert_int_eq(o.qty, 3); /* all of MAX */
  ck_assert_str_eq(o.count_path, "/c");
  ck_assert_int_eq(o.timeout_ms, 1500);
  ck_assert_int_eq(o.conflict_exit, 7);
  ck_assert_int_eq(o.grace_ms, 250);
  ASSERT_CMD(&o, "cmd", "-x", "--", "y");
  ck_assert_int_eq(PARSE(&o, "sem", "-n", "2147483647", "--qty=1000",
                         "--timeout=0", "--conflict-exit-code", "0", "/s",
                         "cmd"),
                   0);
  ck_assert_int_eq(o.sem_max, 2147483647);
  ck_assert_int_eq(o.qty, ZKL_SEM_QTY_MAX);
  ck_assert_int_eq(o.timeout_ms, 0);
  ck_assert_int_eq(o.conflict_exit, 0);
  /* --qty is checked against -n only: the shared count is the server's */
  ck_assert_int_eq(PARSE(&o, "sem", "--qty", "1000", "--count-path", "/c",
                         "/s", "cmd"),
                   0);
  ck_assert_int_eq(o.qty, 1000);
  ck_assert_int_eq(o.sem_max, 0);
  /* a CMD that begins with '-' after an explicit "--"; "-" alone is one */
  ck_assert_int_eq(PARSE(&o, "sem", "-n", "1", "/s", "--", "-c"), 0);
  ASSERT_CMD(&o, "-c");
  ck_assert_int_eq(PARSE(&o, "sem", "-n", "1", "/s", "-"), 0);
  ASSERT_CMD(&o, "-");
  ck_assert_int_eq(PARSE(&o, "sem", "--help"), 0);
  ck_assert_int_eq(o.action, CLI_HELP);
  ck_assert_int_eq(o.command, CLI_CMD_SEM);
  ck_assert_int_eq(PARSE(&o, "sem", "-n", "2", "-h"), 0);
  ck_assert_int_eq(o.action, CLI_HELP);
  ck_assert_ptr_nonnull(strstr(cli_help(CLI_CMD_SEM), "] sem -n MAX "));
  ck_assert_ptr_nonnull(strstr(cli_help(CLI_CMD_SEM), "] sem --count-path P "));
  ck_assert_ptr_nonnull(strstr(cli_help(CLI_CMD_NONE), "  sem -n MAX PATH"));
  ck_assert_ptr_nonnull(strstr(cli_help(CLI_CMD_NONE), "status --sem PATH"));
  ck_assert_ptr_nonnull(strstr(cli_help(CLI_CMD_STATUS), "status --sem "));
}
END_TEST

START_TEST(queue_put_forms) {
  cli_opts_t o;
  ck_assert_int_eq(PARSE(&o, "queue", "put", "/q"), 0);
  ck_assert_int_eq(o.command, CLI_CMD_QUEUE);
  ck_assert_int_eq(o.queue_op, CLI_QUEUE_PUT);
  ck_assert_str_eq(o.path, "/q");
  ck_assert_ptr_null(o.data); /* stdin */
  ck_assert_int_eq(o.batch, 0);
  ck_assert_int_eq(o.format, ZKL_QUEUE_QN);
  ck_assert_int_eq(o.priority, -1);
  ck_assert_int_eq(o.max_items, -1);
  ck_assert_int_eq(o.timeout_ms, -1);
  ck_assert_int_eq(o.max, 0);
  ck_assert_int_eq(o.json, 0);
  ck_assert_str_eq(err, "");

  ck_assert_int_eq(PARSE(&o, "queue", "put", "/q", "hello world"), 0);
  ck_assert_str_eq(o.data, "hello world");
  ck_assert_int_eq(PARSE(&o, "queue", "put", "/q", ""), 0);
  ck_assert_str_eq(o.data, ""); /* an empty item, not stdin */
  /* DATA is taken as it is after PATH, a leading '-' too */
  ck_assert_int_eq(PARSE(&o, "queue", "put", "/q", "-n"), 0);
  ck_assert_str_eq(o.data, "-n");
  ck_assert_int_eq(o.timeout_ms, -1);
  ck_assert_int_eq(PARSE(&o, "queue", "put", "--", "/q", "--json"), 0);
  ck_assert_str_eq(o.path, "/q");
  ck_assert_str_eq(o.data, "--json");

  ck_assert_int_eq(PARSE(&o, "-s", "h:1", "queue", "put", "--format", "kazoo",
                         "--priority", "7", "--max-items", "0", "-t", "2.5",
                         "/a/q", "x"),
                   0);
  ck_assert_str_eq(o.hosts, "h:1");
  ck_assert_int_eq(o.format, ZKL_QUEUE_KAZOO);
  ck_assert_int_eq(o.priority, 7);
  ck_assert_int_eq(o.max_items, 0);
  ck_assert_int_eq(o.timeout_ms, 2500);
  ck_assert_str_eq(o.path, "/a/q");
  ck_assert_str_eq(o.data, "x");
  ck_assert_int_eq(PARSE(&o, "queue", "put", "--format=qn", "--timeout=0",
                         "--max-items=1000000000", "/q"), 0);
  ck_assert_int_eq(o.format, ZKL_QUEUE_QN);
  ck_assert_int_eq(o.timeout_ms, 0);
  ck_assert_int_eq(o.max_items, CLI_MAX_ITEMS_MAX);
  ck_assert_int_eq(PARSE(&o, "queue", "put", "--format", "kazoo",
                         "--priority=0", "--batch", "/q"), 0);
  ck_assert_int_eq(o.batch, 1);
  ck_assert_int_eq(o.priority, 0);
  ck_assert_ptr_null(o.data);
  ck_assert_int_eq(PARSE(&o, "queue", "put", "--priority", "999", "--format",
                         "kazoo", "/q"), 0); /* in any order */
  ck_assert_int_eq(o.priority, 999);
  /* the LockingQueue layout: priorities too */
  ck_assert_int_eq(PARSE(&o, "queue", "put", "--format", "locking",
                         "--priority", "3", "/q", "x"), 0);
  ck_assert_int_eq(o.format, ZKL_QUEUE_LOCKING);
  ck_assert_int_eq(o.priority, 3);
}
END_TEST

START_TEST(queue_put_soft_max) {
  cli_opts_t o;
  ck_assert_int_eq(PARSE(&o, "queue", "put", "/q", "x"), 0);
  ck_assert_int_eq(o.soft_max, 0); /* no soft bound */
  ck_assert_int_eq(PARSE(&o, "queue", "put", "--soft-max", "5", "-t", "2",
                         "/q", "x"), 0);
  ck_assert_int_eq(o.soft_max, 5);
  ck_assert_int_eq(o.timeout_ms, 2000);
  ck_assert_int_eq(PARSE(&o, "queue", "put", "--soft-max=0", "--batch",
                         "--max-items", "10", "/q"), 0);
  ck_assert_int_eq(o.soft_max, 0);
  ck_assert_int_eq(o.max_items, 10);
  ck_assert_int_eq(o.batch, 1);
  ck_assert_int_eq(PARSE(&o, "queue", "put", "--soft-max", "1000000000",
                         "/q"), 0);
  ck_assert_int_eq(o.soft_max, CLI_MAX_ITEMS_MAX);
}
END_TEST

START_TEST(queue_claim_forms) {
  cli_opts_t o;
  ck_assert_int_eq(PARSE(&o, "queue", "claim", "/jobs", "./work.sh"), 0);
  ck_assert_int_eq(o.command, CLI_CMD_QUEUE);
  ck_assert_int_eq(o.queue_op, CLI_QUEUE_CLAIM);
  ck_assert_str_eq(o.path, "/jobs");
  ck_assert_int_eq(o.format, ZKL_QUEUE_LOCKING); /* implied */
  ck_assert_int_eq(o.timeout_ms, -1);            /* waits for ever */
  ck_assert_int_eq(o.grace_ms, CLI_DEFAULT_GRACE_MS);
  ck_assert_int_eq(o.nack_tail, 0);
  ASSERT_CMD(&o, "./work.sh");
  ck_assert_ptr_null(o.data);
  ck_assert_str_eq(err, "");
  ck_assert_int_eq(PARSE(&o, "queue", "claim", "--format", "locking", "-n",
                         "--grace", "0.5", "--nack-tail", "/jobs", "--",
                         "sh", "-c", "exit 3"), 0);
  ck_assert_int_eq(o.format, ZKL_QUEUE_LOCKING);
  ck_assert_int_eq(o.timeout_ms, 0);
  ck_assert_int_eq(o.grace_ms, 500);
  ck_assert_int_eq(o.nack_tail, 1);
  ASSERT_CMD(&o, "sh", "-c", "exit 3");
  ck_assert_int_eq(PARSE(&o, "queue", "claim", "-t", "30", "/jobs", "w"), 0);
  ck_assert_int_eq(o.timeout_ms, 30000);
  ck_assert_int_eq(PARSE(&o, "queue", "claim", "--timeout=0.25",
                         "--format=locking", "/jobs", "w"), 0);
  ck_assert_int_eq(o.timeout_ms, 250);
  /* everything after PATH [--] is CMD's: options, "--" and all */
  ck_assert_int_eq(PARSE(&o, "queue", "claim", "/jobs", "-n", "--json"), 0);
  ck_assert_int_eq(o.timeout_ms, -1);
  ASSERT_CMD(&o, "-n", "--json");
  ck_assert_int_eq(PARSE(&o, "queue", "claim", "/jobs", "--", "--", "x"), 0);
  ASSERT_CMD(&o, "--", "x");
  /* global options still go first */
  ck_assert_int_eq(PARSE(&o, "--session-timeout", "2000", "queue", "claim",
                         "/jobs", "w"), 0);
  ck_assert_int_eq(o.session_timeout_ms, 2000);
}
END_TEST

START_TEST(queue_put_data_limit) {
  cli_opts_t o;
  char *data = malloc(ZKL_QUEUE_MAX_BYTES + 2);
  ck_assert_ptr_nonnull(data);
  memset(data, 'd', ZKL_QUEUE_MAX_BYTES + 1);
  data[ZKL_QUEUE_MAX_BYTES + 1] = '\0';
  ck_assert_int_eq(PARSE(&o, "queue", "put", "/q", data), CLI_EX_USAGE);
  ck_assert_ptr_nonnull(strstr(err, "DATA is longer than 1000000 bytes"));
  data[ZKL_QUEUE_MAX_BYTES] = '\0'; /* exactly the limit is fine */
  ck_assert_int_eq(PARSE(&o, "queue", "put", "/q", data), 0);
  ck_assert_uint_eq(strlen(o.data), ZKL_QUEUE_MAX_BYTES);
  free(data);
}
END_TEST

START_TEST(queue_take_forms) {
  cli_opts_t o;
  ck_assert_int_eq(PARSE(&o, "queue", "take", "/q"), 0);
  ck_assert_int_eq(o.queue_op, CLI_QUEUE_TAKE);
  ck_assert_int_eq(o.timeout_ms, -1); /* waits for ever */
  ck_assert_int_eq(o.max, 0);
  ck_assert_int_eq(o.json, 0);
  ck_assert_int_eq(PARSE(&o, "queue", "take", "-n", "/q"), 0);
  ck_assert_int_eq(o.timeout_ms, 0);
  ck_assert_int_eq(PARSE(&o, "queue", "take", "--nonblock", "--json", "/q"), 0);
  ck_assert_int_eq(o.timeout_ms, 0);
  ck_assert_int_eq(o.json, 1);
  ck_assert_int_eq(PARSE(&o, "queue", "take", "-t", "1.5", "--max", "1000",
                         "--format", "kazoo", "/q"), 0);
  ck_assert_int_eq(o.timeout_ms, 1500);
  ck_assert_int_eq(o.max, CLI_QUEUE_BATCH_MAX);
  ck_assert_int_eq(o.format, ZKL_QUEUE_KAZOO);
  ck_assert_int_eq(PARSE(&o, "queue", "take", "-t0.25", "--max=1", "/q"), 0);
  ck_assert_int_eq(o.timeout_ms, 250);
  ck_assert_int_eq(o.max, 1);
}
END_TEST

START_TEST(queue_other_forms) {
  cli_opts_t o;
  ck_assert_int_eq(PARSE(&o, "queue", "peek", "/q"), 0);
  ck_assert_int_eq(o.queue_op, CLI_QUEUE_PEEK);
  ck_assert_int_eq(PARSE(&o, "queue", "peek", "--json", "--format", "kazoo",
                         "/q"), 0);
  ck_assert_int_eq(o.json, 1);
  ck_assert_int_eq(o.format, ZKL_QUEUE_KAZOO);
  ck_assert_int_eq(PARSE(&o, "queue", "size", "/q"), 0);
  ck_assert_int_eq(o.queue_op, CLI_QUEUE_SIZE);
  ck_assert_int_eq(o.format, ZKL_QUEUE_QN);
  ck_assert_int_eq(PARSE(&o, "queue", "size", "--format", "locking", "/q"),
                   0); /* counts PATH/entries */
  ck_assert_int_eq(o.format, ZKL_QUEUE_LOCKING);
  ck_assert_int_eq(PARSE(&o, "queue", "take", "--format", "locking", "/q"),
                   0);
  ck_assert_int_eq(o.format, ZKL_QUEUE_LOCKING);
  ck_assert_int_eq(PARSE(&o, "queue", "peek", "--format", "locking", "/q"),
                   0);
  ck_assert_int_eq(PARSE(&o, "queue", "ls", "--format", "locking", "--json",
                         "/q"), 0);
  ck_assert_int_eq(o.format, ZKL_QUEUE_LOCKING);
  ck_assert_int_eq(PARSE(&o, "queue", "ls", "/q"), 0);
  ck_assert_int_eq(o.queue_op, CLI_QUEUE_LS);
  ck_assert_int_eq(o.json, 0);
  ck_assert_int_eq(PARSE(&o, "queue", "ls", "--json", "/q"), 0);
  ck_assert_int_eq(o.json, 1);
  ck_assert_int_eq(PARSE(&o, "queue", "rm", "/q", "qn-0000000042"), 0);
  ck_assert_int_eq(o.queue_op, CLI_QUEUE_RM);
  ck_assert_str_eq(o.name, "qn-0000000042");
  ck_assert_int_eq(PARSE(&o, "queue", "rm", "/q", "qn--000000005"), 0);
  ck_assert_int_eq(PARSE(&o, "queue", "rm", "--format", "kazoo", "/q",
                         "entry-100-0000000007"), 0);
  ck_assert_str_eq(o.name, "entry-100-0000000007");
  ck_assert_int_eq(PARSE(&o, "queue", "rm", "--format", "locking", "/q",
                         "entry-100-0000000008"), 0);
  ck_assert_int_eq(o.format, ZKL_QUEUE_LOCKING);
  /* whether NAME is an item of the format is the library's to say
   * (zkl_queue_remove(): ZKL_EINVAL, exit 64 too): passed on as it is */
  ck_assert_int_eq(PARSE(&o, "queue", "rm", "/q", "entry-100-0000000001"),
                   0);
  ck_assert_str_eq(o.name, "entry-100-0000000001");
  ck_assert_int_eq(PARSE(&o, "queue", "rm", "/q", "-x"), 0);
  ck_assert_str_eq(o.name, "-x");
  /* help: the queue's, from before or after the subcommand */
  static const char *const helps[][4] = {{"queue", "--help", NULL},
                                         {"queue", "-h", NULL},
                                         {"queue", "put", "--help"},
                                         {"queue", "take", "-h"},
                                         {"queue", "size", "--help"},
                                         {"queue", "claim", "--help"}};
  for (size_t i = 0; i < COUNT(helps); i++) {
    ck_assert_int_eq(parse_env(&o, NULL, helps[i]), 0);
    ck_assert_int_eq(o.action, CLI_HELP);
    ck_assert_int_eq(o.command, CLI_CMD_QUEUE);
  }
  ck_assert_str_eq(cli_queue_op_name(CLI_QUEUE_NONE), "");
}
END_TEST

/* Every subcommand: its help, its name, and its usage in the helps. */
static const struct {
  cli_command_t command;
  int op;
  const char *words[3]; /* COMMAND SUBCOMMAND --help */
} sub_case[] = {
    {CLI_CMD_QUEUE, CLI_QUEUE_PUT, {"queue", "put", "--help"}},
    {CLI_CMD_QUEUE, CLI_QUEUE_TAKE, {"queue", "take", "--help"}},
    {CLI_CMD_QUEUE, CLI_QUEUE_CLAIM, {"queue", "claim", "--help"}},
    {CLI_CMD_QUEUE, CLI_QUEUE_PEEK, {"queue", "peek", "--help"}},
    {CLI_CMD_QUEUE, CLI_QUEUE_SIZE, {"queue", "size", "--help"}},
    {CLI_CMD_QUEUE, CLI_QUEUE_LS, {"queue", "ls", "--help"}},
    {CLI_CMD_QUEUE, CLI_QUEUE_RM, {"queue", "rm", "--help"}},
    {CLI_CMD_COUNTER, CLI_COUNTER_GET, {"counter", "get", "--help"}},
    {CLI_CMD_COUNTER, CLI_COUNTER_SET, {"counter", "set", "--help"}},
    {CLI_CMD_COUNTER, CLI_COUNTER_ADD, {"counter", "add", "--help"}},
    {CLI_CMD_COUNTER, CLI_COUNTER_CAS, {"counter", "cas", "--help"}},
    {CLI_CMD_COUNTER, CLI_COUNTER_WAIT, {"counter", "wait", "--help"}},
    {CLI_CMD_BARRIER, CLI_BARRIER_SET, {"barrier", "set", "--help"}},
    {CLI_CMD_BARRIER, CLI_BARRIER_REMOVE, {"barrier", "remove", "--help"}},
    {CLI_CMD_BARRIER, CLI_BARRIER_WAIT, {"barrier", "wait", "--help"}},
    {CLI_CMD_BARRIER, CLI_BARRIER_ENTER, {"barrier", "enter", "--help"}},
};

START_TEST(subcommand_names) {
  cli_opts_t o;
  const char *const args[] = {sub_case[_i].words[0], sub_case[_i].words[1],
                              sub_case[_i].words[2], NULL};
  const char *sub = args[1];
  ck_assert_int_eq(parse_env(&o, NULL, args), 0);
  ck_assert_int_eq(o.action, CLI_HELP);
  ck_assert_int_eq(o.command, sub_case[_i].command);
  const char *name = "";
  int op = -1;
  switch (o.command) {
  case CLI_CMD_QUEUE:
    name = cli_queue_op_name((cli_queue_op_t)sub_case[_i].op);
    op = (int)o.queue_op;
    break;
  case CLI_CMD_COUNTER:
    name = cli_counter_op_name((cli_counter_op_t)sub_case[_i].op);
    op = (int)o.counter_op;
    break;
  default:
    name = cli_barrier_op_name((cli_barrier_op_t)sub_case[_i].op);
    op = (int)o.barrier_op;
    break;
  }
  ck_assert_str_eq(name, sub);
  ck_assert_int_eq(op, sub_case[_i].op);
  char usage[64]; /* the command's help shows the subcommand's usage */
  snprintf(usage, sizeof usage, "] %s %s ", args[0], sub);
  ck_assert_msg(strstr(cli_help(o.command), usage) != NULL, "%s", usage);
  /* and the tool's help names it */
  ck_assert_msg(strstr(cli_help(CLI_CMD_NONE), sub) != NULL, "%s", sub);
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
  static const char *const cmds[] = {"lock", "elect", "status", "queue",
                                     "counter", "barrier", "sem"};
  static const cli_command_t ids[] = {CLI_CMD_LOCK,    CLI_CMD_ELECT,
                                      CLI_CMD_STATUS,  CLI_CMD_QUEUE,
                                      CLI_CMD_COUNTER, CLI_CMD_BARRIER,
                                      CLI_CMD_SEM};
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
    {{"--stats-file", "", "status", "/p"}, "--stats-file needs FILE"},
    {{"status", "--stats"}, "FILE is missing"},
    {{"status", "--stats", "--sem", "/f"}, "only --json goes with it"},
    {{"status", "--stats", "--watch", "/f"}, "only --json goes with it"},
    {{"status", "--stats", "--count-path", "/c", "/f"}, "--count-path needs --sem"},
    {{"status", "--stats", "/f", ""}, "an empty FILE"},
    {{"--stats-file", "/x", "status", "--stats", "/f"}, "opens no session"},
    {{"--stats", "status", "--stats", "/f"}, "opens no session"},
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
    {{"lock", "--all"}, "PATH is missing (--all takes PATH... -- CMD)"},
    {{"lock", "--all", "--"}, "PATH is missing before '--'"},
    {{"lock", "--all", "--", "cmd"}, "PATH is missing before '--'"},
    {{"lock", "--all", "--", "--", "cmd"}, "PATH is missing before '--'"},
    {{"lock", "--all", "/a", "/b", "cmd"},
     "'--' is missing after the PATHs (--all takes PATH... -- CMD)"},
    {{"lock", "--all", "/a"}, "'--' is missing after the PATHs"},
    {{"lock", "--all", "/a", "/b", "--"}, "CMD is missing"},
    {{"lock", "--all", "/a", "/b", "/a", "--", "c"},
     "PATH '/a' is given twice"},
    {{"lock", "--all", "/a", "rel", "--", "c"}, "bad PATH 'rel'"},
    {{"lock", "--all", "/a", "/b/", "--", "c"}, "bad PATH '/b/'"},
    {{"lock", "--all", "/zookeeper/x", "--", "c"}, "bad PATH"},
    {{"lock", "--all", "/a", "-t", "1", "--", "c"},
     "unexpected '-t' among the PATHs (options go before them)"},
    {{"lock", "--all", "--read", "/a", "--", "c"},
     "--all takes exclusive locks only, not --read"},
    {{"lock", "--write", "--all", "/a", "--", "c"},
     "--all takes exclusive locks only, not --write"},
    {{"lock", "--all", "--all", "/a", "--", "c"}, "give --all once"},
    {{"lock", "--all", "-n", "-t", "1", "/a", "--", "c"}, "one of -n and -t"},
    {{"lock", "--all", "-t", "soon", "/a", "--", "c"}, "-t needs SECONDS"},
    {{"lock", "--all", "-E", "256", "/a", "--", "c"}, "-E needs an exit code"},
    {{"lock", "--all=1", "/a", "--", "c"}, "option --all takes no value"},
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
    {{"queue"}, "SUBCOMMAND is missing"},
    {{"queue", "/q"}, "unknown subcommand '/q'"},
    {{"queue", "pop", "/q"}, "unknown subcommand 'pop'"},
    {{"queue", "claim", "/q"}, "CMD is missing"},
    {{"queue", "claim", "/q", "--"}, "CMD is missing"},
    {{"queue", "claim"}, "PATH is missing"},
    {{"queue", "claim", "q", "cmd"}, "bad PATH 'q'"},
    {{"queue", "claim", "--format", "qn", "/q", "cmd"},
     "claims need --format locking (kazoo's LockingQueue), not 'qn'"},
    {{"queue", "claim", "--format", "kazoo", "/q", "cmd"},
     "claims need --format locking"},
    {{"queue", "claim", "--format", "lock", "/q", "cmd"},
     "--format needs qn, kazoo or locking, not 'lock'"},
    {{"queue", "claim", "-n", "-t", "1", "/q", "cmd"}, "one of -n and -t"},
    {{"queue", "claim", "-t", "x", "/q", "cmd"}, "-t needs SECONDS"},
    {{"queue", "claim", "--grace", "-1", "/q", "cmd"},
     "--grace needs SECONDS, not '-1'"},
    {{"queue", "claim", "--json", "/q", "cmd"},
     "--json does not apply to claim"},
    {{"queue", "claim", "--max", "2", "/q", "cmd"},
     "--max does not apply to claim"},
    {{"queue", "claim", "--batch", "/q", "cmd"},
     "--batch does not apply to claim"},
    {{"queue", "claim", "--priority", "1", "/q", "cmd"},
     "--priority does not apply to claim"},
    {{"queue", "claim", "--soft-max", "1", "/q", "cmd"},
     "--soft-max does not apply to claim"},
    {{"queue", "claim", "--max-items", "1", "/q", "cmd"},
     "--max-items does not apply to claim"},
    {{"queue", "claim", "--nack-tail=1", "/q", "cmd"},
     "option --nack-tail takes no value"},
    {{"queue", "claim", "--ack", "/q", "cmd"}, "unknown option --ack"},
    {{"queue", "take", "--grace", "1", "/q"}, "--grace does not apply to take"},
    {{"queue", "take", "--nack-tail", "/q"},
     "--nack-tail does not apply to take"},
    {{"queue", "put", "--nack-tail", "/q"}, "--nack-tail does not apply to put"},
    {{"queue", "put", "--soft-max", "-1", "/q"}, "--soft-max needs 0.."},
    {{"queue", "put", "--soft-max", "1000000001", "/q"}, "--soft-max needs"},
    {{"queue", "put", "--soft-max", "lots", "/q"},
     "--soft-max needs 0..1000000000, not 'lots'"},
    {{"queue", "put", "--soft-max"}, "option --soft-max needs a value"},
    {{"queue", "take", "--soft-max", "3", "/q"},
     "--soft-max does not apply to take"},
    {{"queue", "ls", "--soft-max", "3", "/q"},
     "--soft-max does not apply to ls"},
    {{"queue", "--json", "take", "/q"}, "unknown option --json"},
    {{"queue", "-n", "take", "/q"}, "unknown option -n"},
    {{"queue", "put"}, "PATH is missing"},
    {{"queue", "put", "rel"}, "bad PATH 'rel'"},
    {{"queue", "put", "/q/"}, "bad PATH"},
    {{"queue", "take", "/zookeeper/q"}, "bad PATH"},
    {{"queue", "put", "/q", "a", "b"}, "unexpected 'b' after DATA"},
    {{"queue", "put", "/q", "a", "-t"}, "options go before PATH"},
    {{"queue", "put", "--batch", "/q", "x"},
     "--batch reads the items from stdin"},
    {{"queue", "put", "-n", "/q"}, "-n does not apply to put"},
    {{"queue", "put", "--nonblock", "/q"}, "-n does not apply to put"},
    {{"queue", "put", "--json", "/q"}, "--json does not apply to put"},
    {{"queue", "put", "--max", "2", "/q"}, "--max does not apply to put"},
    {{"queue", "put", "--format", "json", "/q"},
     "--format needs qn, kazoo or locking, not 'json'"},
    {{"queue", "put", "--format", "", "/q"}, "--format needs qn, kazoo or"},
    {{"queue", "put", "--format", "QN", "/q"}, "--format needs qn, kazoo or"},
    {{"queue", "put", "--format", "Locking", "/q"},
     "--format needs qn, kazoo or"},
    {{"queue", "put", "--format"}, "option --format needs a value"},
    {{"queue", "put", "--priority", "5", "/q"},
     "--priority needs --format kazoo or locking"},
    {{"queue", "put", "--format", "qn", "--priority", "5", "/q"},
     "--priority needs --format kazoo or locking"},
    {{"queue", "put", "--format", "kazoo", "--priority", "1000", "/q"},
     "--priority needs 0..999"},
    {{"queue", "put", "--format", "kazoo", "--priority", "-1", "/q"},
     "--priority needs 0..999"},
    {{"queue", "put", "--format", "kazoo", "--priority", "x", "/q"},
     "--priority needs 0..999, not 'x'"},
    {{"queue", "put", "--max-items", "-1", "/q"}, "--max-items needs 0.."},
    {{"queue", "put", "--max-items", "1000000001", "/q"},
     "--max-items needs"},
    {{"queue", "put", "--max-items", "many", "/q"}, "--max-items needs"},
    {{"queue", "put", "-t", "soon", "/q"}, "-t needs SECONDS, not 'soon'"},
    {{"queue", "put", "--batch=1", "/q"}, "option --batch takes no value"},
    {{"queue", "take"}, "PATH is missing"},
    {{"queue", "take", "/q", "more"}, "unexpected 'more' after PATH"},
    {{"queue", "take", "/q", "--json"}, "options go before PATH"},
    {{"queue", "take", "-n", "-t", "1", "/q"}, "one of -n and -t"},
    {{"queue", "take", "-n", "-n", "/q"}, "one of -n and -t"},
    {{"queue", "take", "-t", "-1", "/q"}, "-t needs SECONDS"},
    {{"queue", "take", "-t"}, "option -t needs a value"},
    {{"queue", "take", "--max", "0", "/q"}, "--max needs 1..1000, not '0'"},
    {{"queue", "take", "--max", "1001", "/q"}, "--max needs 1..1000"},
    {{"queue", "take", "--max", "two", "/q"}, "--max needs 1..1000"},
    {{"queue", "take", "--batch", "/q"}, "--batch does not apply to take"},
    {{"queue", "take", "--priority", "1", "/q"},
     "--priority does not apply to take"},
    {{"queue", "take", "--max-items", "1", "/q"},
     "--max-items does not apply to take"},
    {{"queue", "take", "-x", "/q"}, "unknown option -x"},
    {{"queue", "take", "--wait", "/q"}, "unknown option --wait"},
    {{"queue", "peek", "-n", "/q"}, "-n does not apply to peek"},
    {{"queue", "peek", "-t", "1", "/q"}, "-t does not apply to peek"},
    {{"queue", "peek", "/q", "x"}, "unexpected 'x' after PATH"},
    {{"queue", "size", "--json", "/q"}, "--json does not apply to size"},
    {{"queue", "size", "-n", "/q"}, "-n does not apply to size"},
    {{"queue", "size"}, "PATH is missing"},
    {{"queue", "size", "/q", "/r"}, "unexpected '/r' after PATH"},
    {{"queue", "ls", "--max", "3", "/q"}, "--max does not apply to ls"},
    {{"queue", "ls", "/q", "x"}, "unexpected 'x' after PATH"},
    {{"queue", "rm", "/q"}, "NAME is missing"},
    {{"queue", "rm", "--json", "/q", "qn-1"}, "--json does not apply to rm"},
    {{"queue", "rm", "/q", "qn-1", "qn-2"}, "unexpected 'qn-2' after NAME"},
    {{"status", "--format", "int64", "/s"}, "--format needs --counter"},
    {{"status", "--counter", "--format", "qn", "/s"},
     "--format needs int32, int64 or text, not 'qn'"},
    {{"status", "--counter", "/s", "--json"}, "unexpected '--json'"},
    {{"counter"}, "SUBCOMMAND is missing (get, set, add, cas or wait)"},
    {{"counter", "/c"}, "unknown subcommand '/c'"},
    {{"counter", "inc", "/c"}, "unknown subcommand 'inc'"},
    {{"counter", "--json", "get", "/c"}, "unknown option --json"},
    {{"counter", "get"}, "PATH is missing"},
    {{"counter", "get", "c"}, "bad PATH 'c'"},
    {{"counter", "get", "/c/"}, "bad PATH"},
    {{"counter", "get", "/c", "x"}, "unexpected 'x' after PATH"},
    {{"counter", "get", "/c", "--json"}, "options go before PATH"},
    {{"counter", "get", "-t", "1", "/c"}, "-t does not apply to get"},
    {{"counter", "get", "--timeout", "1", "/c"}, "-t does not apply to get"},
    {{"counter", "get", "--format", "int", "/c"},
     "--format needs int32, int64 or text, not 'int'"},
    {{"counter", "get", "--format", "INT32", "/c"}, "--format needs int32"},
    {{"counter", "get", "--format", "kazoo", "/c"}, "--format needs int32"},
    {{"counter", "get", "--format"}, "option --format needs a value"},
    {{"counter", "get", "--initial", "x", "/c"},
     "--initial needs a decimal integer, not 'x'"},
    {{"counter", "get", "--initial", "2147483648", "/c"},
     "--initial 2147483648 is out of range: an int32 counter holds "
     "(-2147483648..2147483647)"},
    {{"counter", "get", "--initial", "2147483648", "--format", "int32", "/c"},
     "--initial 2147483648 is out of range"},
    {{"counter", "get", "--format", "int64", "--initial",
      "9223372036854775808", "/c"},
     "--initial 9223372036854775808 is out of range: an int64 counter holds"},
    {{"counter", "get", "--initial", "1.0", "/c"}, "--initial needs"},
    {{"counter", "get", "--initial=", "/c"}, "--initial needs"},
    {{"counter", "get", "--nonblock", "/c"}, "unknown option --nonblock"},
    {{"counter", "get", "-n", "/c"}, "unknown option -n"},
    {{"counter", "set", "/c"}, "VALUE is missing"},
    {{"counter", "set", "/c", "12x"},
     "VALUE needs a decimal integer, not '12x'"},
    {{"counter", "set", "/c", ""}, "VALUE needs a decimal integer, not ''"},
    {{"counter", "set", "/c", " 1"}, "VALUE needs a decimal integer"},
    {{"counter", "set", "/c", "1 "}, "VALUE needs a decimal integer"},
    {{"counter", "set", "/c", "0x10"}, "VALUE needs a decimal integer"},
    {{"counter", "set", "/c", "1e3"}, "VALUE needs a decimal integer"},
    {{"counter", "set", "/c", "-"}, "VALUE needs a decimal integer"},
    {{"counter", "set", "/c", "+-1"}, "VALUE needs a decimal integer"},
    {{"counter", "set", "/c", "--json"},
     "VALUE needs a decimal integer, not '--json' (options go before PATH)"},
    {{"counter", "set", "/c", "2147483648"},
     "VALUE 2147483648 is out of range: an int32 counter holds"},
    {{"counter", "set", "/c", "-2147483649"}, "out of range"},
    {{"counter", "set", "--format", "text", "/c",
      "99999999999999999999999"},
     "VALUE 99999999999999999999999 is out of range: a text counter holds"},
    {{"counter", "set", "/c", "1", "2"}, "unexpected '2' after VALUE"},
    {{"counter", "set", "/c", "1", "--json"}, "options go before PATH"},
    {{"counter", "set", "--initial", "1", "/c", "2"},
     "--initial does not apply to set"},
    {{"counter", "set", "-t", "1", "/c", "2"}, "-t does not apply to set"},
    {{"counter", "add", "/c"}, "DELTA is missing"},
    {{"counter", "add", "/c", "one"}, "DELTA needs a decimal integer"},
    {{"counter", "add", "/c", "1.5"}, "DELTA needs a decimal integer"},
    {{"counter", "add", "/c", "4294967296"},
     "DELTA 4294967296 is out of range: no int32 counter could take it "
     "(-4294967295..4294967295)"},
    {{"counter", "add", "/c", "-4294967296"}, "out of range"},
    {{"counter", "add", "--format", "int64", "/c", "9223372036854775808"},
     "out of range"},
    {{"counter", "add", "-t", "soon", "/c", "1"}, "-t needs SECONDS"},
    {{"counter", "add", "-t", "1", "-t", "2", "/c", "1"}, "give -t once"},
    {{"counter", "add", "/c", "1", "2"}, "unexpected '2' after DELTA"},
    {{"counter", "cas", "/c"}, "VERSION is missing"},
    {{"counter", "cas", "/c", "3"}, "VALUE is missing"},
    {{"counter", "cas", "/c", "v3", "1"},
     "VERSION needs a data version (a 32-bit integer, as get --json shows "
     "it) or 'none', not 'v3'"},
    {{"counter", "cas", "/c", "2147483648", "1"}, "VERSION needs"},
    {{"counter", "cas", "/c", "None", "1"}, "VERSION needs"},
    {{"counter", "cas", "/c", "", "1"}, "VERSION needs"},
    {{"counter", "cas", "/c", "none", "x"}, "VALUE needs a decimal integer"},
    {{"counter", "cas", "/c", "1", "2147483648"}, "out of range"},
    {{"counter", "cas", "/c", "1", "2", "3"}, "unexpected '3' after VALUE"},
    {{"counter", "cas", "-t", "1", "/c", "1", "2"},
     "-t does not apply to cas"},
    {{"counter", "wait", "/c", "1"}, "unexpected '1' after PATH"},
    {{"counter", "wait", "-t", "-1", "/c"}, "-t needs SECONDS, not '-1'"},
    {{"counter", "wait", "--json=1", "/c"}, "option --json takes no value"},
    {{"status", "--barrier", "--counter", "/s"},
     "--counter and --barrier exclude each other"},
    {{"status", "--barrier", "--format", "int64", "/s"},
     "--format needs --counter"},
    {{"status", "--barrier", "/s", "x"}, "unexpected 'x' after PATH"},
    {{"barrier"}, "SUBCOMMAND is missing (set, remove, wait or enter)"},
    {{"barrier", "/b"}, "unknown subcommand '/b'"},
    {{"barrier", "leave", "/b"}, "unknown subcommand 'leave'"},
    {{"barrier", "-t", "1", "wait", "/b"}, "unknown option -t"},
    {{"barrier", "set"}, "PATH is missing"},
    {{"barrier", "set", "b"}, "bad PATH 'b'"},
    {{"barrier", "set", "/b/"}, "bad PATH"},
    {{"barrier", "set", "/b", "x"}, "unexpected 'x' after PATH"},
    {{"barrier", "set", "-t", "1", "/b"}, "-t does not apply to set"},
    {{"barrier", "remove", "-n", "2", "/b"}, "-n does not apply to remove"},
    {{"barrier", "remove", "/b", "--json"}, "options go before PATH"},
    {{"barrier", "remove", "--json", "/b"}, "unknown option --json"},
    {{"barrier", "wait", "/b", "-t", "1"},
     "unexpected '-t' after PATH (options go before PATH)"},
    {{"barrier", "wait", "-t", "soon", "/b"}, "-t needs SECONDS, not 'soon'"},
    {{"barrier", "wait", "-t", "-1", "/b"}, "-t needs SECONDS, not '-1'"},
    {{"barrier", "wait", "-t", "1", "-t", "2", "/b"}, "give -t once"},
    {{"barrier", "wait", "--leave-timeout", "1", "/b"},
     "--leave-timeout does not apply to wait"},
    {{"barrier", "wait", "-E", "3", "/b"}, "-E does not apply to wait"},
    {{"barrier", "wait", "--grace", "1", "/b"},
     "--grace does not apply to wait"},
    {{"barrier", "wait", "-t"}, "option -t needs a value"},
    {{"barrier", "enter", "/b", "true"},
     "-n MEMBERS is missing (how many members open the barrier)"},
    {{"barrier", "enter", "-n", "0", "/b", "true"},
     "-n needs MEMBERS, 1..2147483647, not '0'"},
    {{"barrier", "enter", "-n", "-1", "/b", "true"}, "-n needs MEMBERS"},
    {{"barrier", "enter", "-n", "2147483648", "/b", "true"},
     "-n needs MEMBERS"},
    {{"barrier", "enter", "-n", "3x", "/b", "true"}, "-n needs MEMBERS"},
    {{"barrier", "enter", "-n", "", "/b", "true"}, "-n needs MEMBERS"},
    {{"barrier", "enter", "-n", " 3", "/b", "true"}, "-n needs MEMBERS"},
    {{"barrier", "enter", "-n", "2", "-n", "3", "/b", "true"},
     "give -n once"},
    {{"barrier", "enter", "--members"}, "option --members needs a value"},
    {{"barrier", "enter", "-n", "2", "-t", "x", "/b", "true"},
     "-t needs SECONDS"},
    {{"barrier", "enter", "-n", "2", "--leave-timeout", "1ms", "/b", "true"},
     "--leave-timeout needs SECONDS, not '1ms'"},
    {{"barrier", "enter", "-n", "2", "--leave-timeout", "1",
      "--leave-timeout", "2", "/b", "true"},
     "give --leave-timeout once"},
    {{"barrier", "enter", "-n", "2", "-E", "256", "/b", "true"},
     "-E needs an exit code 0..255"},
    {{"barrier", "enter", "-n", "2", "--grace", "x", "/b", "true"},
     "--grace needs SECONDS"},
    {{"barrier", "enter", "-n", "2", "/b"}, "CMD is missing"},
    {{"barrier", "enter", "-n", "2", "/b", "--"}, "CMD is missing"},
    {{"barrier", "enter", "-n", "2", "b", "true"}, "bad PATH 'b'"},
    {{"barrier", "enter", "-n", "2", "/b", "-t", "5", "--", "true"},
     "unexpected '-t' after PATH (options go before PATH; a CMD that begins "
     "with '-' goes after '--')"},
    {{"barrier", "enter", "-n", "2", "/b", "--members=3", "true"},
     "options go before PATH"},
    {{"barrier", "enter", "-n", "2", "--json", "/b", "true"},
     "unknown option --json"},
    {{"status", "--sem", "--counter", "/s"},
     "--counter, --barrier and --sem exclude each other"},
    {{"status", "--barrier", "--sem", "/s"},
     "--counter, --barrier and --sem exclude each other"},
    {{"status", "--count-path", "/c", "/s"}, "--count-path needs --sem"},
    {{"status", "--sem", "--count-path", "c", "/s"}, "bad --count-path 'c'"},
    {{"status", "--sem", "--count-path", "/c", "--count-path", "/d", "/s"},
     "give --count-path once"},
    {{"status", "--sem", "--format", "int32", "/s"},
     "--format needs --counter"},
    {{"status", "--sem", "/s", "--count-path", "/c"},
     "unexpected '--count-path' after PATH"},
    {{"sem"}, "-n MAX is missing (how many leases there are; or "
              "--count-path, where they are counted)"},
    {{"sem", "/s", "true"}, "-n MAX is missing"},
    {{"sem", "--qty", "2", "/s", "true"}, "-n MAX is missing"},
    {{"sem", "-n", "0", "/s", "true"}, "-n needs MAX, 1..2147483647, not '0'"},
    {{"sem", "-n", "-1", "/s", "true"}, "-n needs MAX"},
    {{"sem", "-n", "2147483648", "/s", "true"}, "-n needs MAX"},
    {{"sem", "-n", "3x", "/s", "true"}, "-n needs MAX, 1..2147483647, not "
                                        "'3x'"},
    {{"sem", "-n", "", "/s", "true"}, "-n needs MAX"},
    {{"sem", "-n", " 3", "/s", "true"}, "-n needs MAX"},
    {{"sem", "-n", "0x3", "/s", "true"}, "-n needs MAX"},
    {{"sem", "--max"}, "option --max needs a value"},
    {{"sem", "-n", "2", "-n", "3", "/s", "true"}, "give -n once"},
    {{"sem", "-n", "2", "--qty", "0", "/s", "true"},
     "--qty needs 1..1000, not '0'"},
    {{"sem", "-n", "2", "--qty", "-1", "/s", "true"}, "--qty needs 1..1000"},
    {{"sem", "-n", "2", "--qty", "1.5", "/s", "true"}, "--qty needs 1..1000"},
    {{"sem", "--count-path", "/c", "--qty", "1001", "/s", "true"},
     "--qty needs 1..1000, not '1001'"},
    {{"sem", "-n", "2", "--qty", "1", "--qty", "1", "/s", "true"},
     "give --qty once"},
    {{"sem", "-n", "2", "--qty", "3", "/s", "true"},
     "--qty 3 is more than -n 2: it would never fit"},
    {{"sem", "--qty", "3", "-n", "2", "--count-path", "/c", "/s", "true"},
     "--qty 3 is more than -n 2"},
    {{"sem", "--count-path", "c", "/s", "true"}, "bad --count-path 'c'"},
    {{"sem", "--count-path", "/c/", "/s", "true"}, "bad --count-path"},
    {{"sem", "--count-path", "/c", "--count-path", "/d", "/s", "true"},
     "give --count-path once"},
    {{"sem", "-n", "2", "-t", "soon", "/s", "true"},
     "-t needs SECONDS, not 'soon'"},
    {{"sem", "-n", "2", "-t", "-1", "/s", "true"}, "-t needs SECONDS"},
    {{"sem", "-n", "2", "-t", "1", "--timeout", "2", "/s", "true"},
     "give -t once"},
    {{"sem", "-n", "2", "-E", "256", "/s", "true"},
     "-E needs an exit code 0..255"},
    {{"sem", "-n", "2", "--grace", "x", "/s", "true"},
     "--grace needs SECONDS"},
    {{"sem", "-n", "2"}, "PATH is missing"},
    {{"sem", "-n", "2", "s", "true"}, "bad PATH 's'"},
    {{"sem", "-n", "2", "/", "true"}, "bad PATH '/'"},
    {{"sem", "-n", "2", "/s"}, "CMD is missing"},
    {{"sem", "-n", "2", "/s", "--"}, "CMD is missing"},
    {{"sem", "-n", "2", "/s", "--qty", "2", "true"},
     "unexpected '--qty' after PATH (options go before PATH; a CMD that "
     "begins with '-' goes after '--')"},
    {{"sem", "-n", "2", "/s", "-t", "5", "--", "true"},
     "options go before PATH"},
    {{"sem", "-n", "2", "--json", "/s", "true"}, "unknown option --json"},
    {{"sem", "-n", "2", "-q", "2", "/s", "true"}, "unknown option -q"},
};

START_TEST(usage_errors) {
  cli_opts_t o;
  const char *const *args = bad[_i].args;
  char words_seen[256] = "";
  for (size_t i = 0; args[i] != NULL; i++)
    snprintf(words_seen + strlen(words_seen),
             sizeof words_seen - strlen(words_seen), " %s", args[i]);
  int rc = parse_env(&o, NULL, args);
  ck_assert_msg(rc == CLI_EX_USAGE, "case %d (zkl%s): %d, not 64", _i,
                words_seen, rc);
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
  ck_assert_int_eq(PARSE(&o, "sem", "-n", "1", "--qty", "2", "/s", "c"),
                   CLI_EX_USAGE);
  ck_assert_str_eq(err, "zkl sem: --qty 2 is more than -n 1: it would never "
                        "fit (try 'zkl sem --help')");
  ck_assert_int_eq(PARSE(&o, "lock", "--all", "/a", "/a", "--", "c"),
                   CLI_EX_USAGE);
  ck_assert_str_eq(err, "zkl lock: PATH '/a' is given twice "
                        "(try 'zkl lock --help')");
}
END_TEST

START_TEST(usage_error_names_the_subcommand) {
  cli_opts_t o;
  ck_assert_int_eq(PARSE(&o, "queue", "take", "--max", "0", "/q"),
                   CLI_EX_USAGE);
  ck_assert_str_eq(err, "zkl queue take: --max needs 1..1000, not '0' "
                        "(try 'zkl queue --help')");
  ck_assert_int_eq(PARSE(&o, "queue", "frob"), CLI_EX_USAGE);
  ck_assert_str_eq(err, "zkl queue: unknown subcommand 'frob' "
                        "(try 'zkl queue --help')");
  ck_assert_int_eq(PARSE(&o, "counter", "set", "/c", "1x"), CLI_EX_USAGE);
  ck_assert_str_eq(err, "zkl counter set: VALUE needs a decimal integer, "
                        "not '1x' (try 'zkl counter --help')");
  ck_assert_int_eq(PARSE(&o, "barrier", "enter", "-n", "x", "/b", "c"),
                   CLI_EX_USAGE);
  ck_assert_str_eq(err, "zkl barrier enter: -n needs MEMBERS, 1..2147483647, "
                        "not 'x' (try 'zkl barrier --help')");
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

START_TEST(int64s) {
  static const struct {
    const char *s;
    int64_t min, max;
    int rc;
    int64_t v;
  } v[] = {
      {"0", INT64_MIN, INT64_MAX, CLI_NUM_OK, 0},
      {"-0", INT64_MIN, INT64_MAX, CLI_NUM_OK, 0},
      {"+17", INT64_MIN, INT64_MAX, CLI_NUM_OK, 17},
      {"007", INT64_MIN, INT64_MAX, CLI_NUM_OK, 7},
      {"-42", -42, 0, CLI_NUM_OK, -42},
      {"9223372036854775807", INT64_MIN, INT64_MAX, CLI_NUM_OK, INT64_MAX},
      {"-9223372036854775808", INT64_MIN, INT64_MAX, CLI_NUM_OK, INT64_MIN},
      {"9223372036854775808", INT64_MIN, INT64_MAX, CLI_NUM_RANGE, 0},
      {"-9223372036854775809", INT64_MIN, INT64_MAX, CLI_NUM_RANGE, 0},
      {"123456789012345678901234567890", INT64_MIN, INT64_MAX, CLI_NUM_RANGE,
       0},
      {"2147483647", INT32_MIN, INT32_MAX, CLI_NUM_OK, INT32_MAX},
      {"2147483648", INT32_MIN, INT32_MAX, CLI_NUM_RANGE, 0},
      {"-2147483649", INT32_MIN, INT32_MAX, CLI_NUM_RANGE, 0},
      {"-43", -42, 0, CLI_NUM_RANGE, 0},
      {"", INT64_MIN, INT64_MAX, CLI_NUM_SYNTAX, 0},
      {"-", INT64_MIN, INT64_MAX, CLI_NUM_SYNTAX, 0},
      {"+", INT64_MIN, INT64_MAX, CLI_NUM_SYNTAX, 0},
      {"--1", INT64_MIN, INT64_MAX, CLI_NUM_SYNTAX, 0},
      {"+-1", INT64_MIN, INT64_MAX, CLI_NUM_SYNTAX, 0},
      {" 1", INT64_MIN, INT64_MAX, CLI_NUM_SYNTAX, 0},
      {"1 ", INT64_MIN, INT64_MAX, CLI_NUM_SYNTAX, 0},
      {"1\n", INT64_MIN, INT64_MAX, CLI_NUM_SYNTAX, 0},
      {"12x", INT64_MIN, INT64_MAX, CLI_NUM_SYNTAX, 0},
      {"0x10", INT64_MIN, INT64_MAX, CLI_NUM_SYNTAX, 0},
      {"1e3", INT64_MIN, INT64_MAX, CLI_NUM_SYNTAX, 0},
      {"1.0", INT64_MIN, INT64_MAX, CLI_NUM_SYNTAX, 0},
      {"1_000", INT64_MIN, INT64_MAX, CLI_NUM_SYNTAX, 0},
      {"\xd9\xa1", INT64_MIN, INT64_MAX, CLI_NUM_SYNTAX, 0}, /* Arabic 1 */
      /* junk after a number too long for int64 is junk, not range */
      {"99999999999999999999x", INT64_MIN, INT64_MAX, CLI_NUM_SYNTAX, 0},
  };
  for (size_t i = 0; i < COUNT(v); i++) {
    int64_t out = -77;
    int rc = cli_parse_int64(v[i].s, v[i].min, v[i].max, &out);
    ck_assert_msg(rc == v[i].rc, "'%s': %d, wanted %d", v[i].s, rc, v[i].rc);
    ck_assert_int_eq(out, rc == CLI_NUM_OK ? v[i].v : -77);
  }
  ck_assert_int_eq(cli_parse_int64(NULL, 0, 1, NULL), CLI_NUM_SYNTAX);
}
END_TEST

START_TEST(versions) {
  int32_t v = 5;
  int none = 5;
  ck_assert_int_eq(cli_parse_version("none", &v, &none), 0);
  ck_assert_int_eq(v, 0);
  ck_assert_int_eq(none, 1);
  ck_assert_int_eq(cli_parse_version("0", &v, &none), 0);
  ck_assert_int_eq(v, 0);
  ck_assert_int_eq(none, 0);
  ck_assert_int_eq(cli_parse_version("2147483647", &v, &none), 0);
  ck_assert_int_eq(v, INT32_MAX);
  ck_assert_int_eq(cli_parse_version("-2147483648", &v, &none), 0);
  ck_assert_int_eq(v, INT32_MIN);
  ck_assert_int_eq(cli_parse_version("-1", &v, &none), 0); /* the library's */
  ck_assert_int_eq(v, -1);
  v = 5;
  none = 5;
  static const char *const refused[] = {"2147483648", "-2147483649", "",
                                        "NONE", "none ", "null", "1.", "x1",
                                        "0x1"};
  for (size_t i = 0; i < COUNT(refused); i++) {
    ck_assert_msg(cli_parse_version(refused[i], &v, &none) == -1,
                  "'%s' accepted", refused[i]);
    ck_assert_int_eq(v, 5);
    ck_assert_int_eq(none, 5);
  }
}
END_TEST

/* ---- formats ---------------------------------------------------------------------- */

/* The words of --format, queue's ([0]) and counter's ([1]). */
static const struct format_case {
  int (*parse)(const char *, int *);
  const char *(*name)(int);
  const char *words[3];
  int formats[3];
  const char *refused[8]; /* NULL ends */
  int unknown[2];         /* no format's: named "?" */
} format_case[] = {
    {cli_format_parse, cli_format_name, {"qn", "kazoo", "locking"},
     {ZKL_QUEUE_QN, ZKL_QUEUE_KAZOO, ZKL_QUEUE_LOCKING},
     {"Kazoo", "", "qn ", "lock", "locking-queue"}, {42, -1}},
    {cli_counter_format_parse, cli_counter_format_name,
     {"int32", "int64", "text"},
     {ZKL_COUNTER_INT32, ZKL_COUNTER_INT64, ZKL_COUNTER_TEXT},
     {"Int32", "", "int", "int16", "int32 ", "qn", "decimal"}, {3, -1}},
};

START_TEST(format_names) {
  const struct format_case *fc = &format_case[_i];
  int f = -1;
  for (size_t i = 0; i < COUNT(fc->words); i++) {
    ck_assert_int_eq(fc->parse(fc->words[i], &f), 0);
    ck_assert_int_eq(f, fc->formats[i]);
    ck_assert_str_eq(fc->name(fc->formats[i]), fc->words[i]);
  }
  f = -1;
  for (size_t i = 0; fc->refused[i] != NULL; i++)
    ck_assert_msg(fc->parse(fc->refused[i], &f) == -1, "'%s' accepted",
                  fc->refused[i]);
  ck_assert_int_eq(f, -1);
  for (size_t i = 0; i < COUNT(fc->unknown); i++)
    ck_assert_str_eq(fc->name(fc->unknown[i]), "?");
}
END_TEST

START_TEST(counter_ranges) {
  int64_t min = 1, max = -1;
  ck_assert_int_eq(cli_counter_range(ZKL_COUNTER_INT32, &min, &max), 0);
  ck_assert_int_eq(min, INT32_MIN);
  ck_assert_int_eq(max, INT32_MAX);
  ck_assert_int_eq(cli_counter_range(ZKL_COUNTER_INT64, &min, &max), 0);
  ck_assert_int_eq(min, INT64_MIN);
  ck_assert_int_eq(max, INT64_MAX);
  ck_assert_int_eq(cli_counter_range(ZKL_COUNTER_TEXT, &min, &max), 0);
  ck_assert_int_eq(min, INT64_MIN);
  ck_assert_int_eq(max, INT64_MAX);
  ck_assert_int_eq(cli_counter_range(7, &min, &max), -1);
  /* the tool's defaults are the library's */
  zkl_counter_opts_t co;
  zkl_counter_opts_init(&co);
  cli_opts_t o;
  ck_assert_int_eq(PARSE(&o, "counter", "get", "/c"), 0);
  ck_assert_int_eq(o.counter_format, co.format);
  ck_assert_int_eq(o.initial, co.initial);
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

START_TEST(status_stats_forms) {
  cli_opts_t o;
  ck_assert_int_eq(PARSE(&o, "--stats-file", "/run/x.prom", "lock", "/p",
                         "true"),
                   0);
  ck_assert_str_eq(o.stats_file, "/run/x.prom");
  ck_assert_int_eq(PARSE(&o, "status", "/p"), 0);
  ck_assert_ptr_null(o.stats_file);
  ck_assert_int_eq(o.status_stats, 0);
  /* FILEs need not be paths of ZooKeeper: relative, any name */
  ck_assert_int_eq(PARSE(&o, "status", "--stats", "--json", "a.prom",
                         "/run/b"),
                   0);
  ck_assert_int_eq(o.status_stats, 1);
  ck_assert_int_eq(o.json, 1);
  ck_assert_uint_eq(o.n_files, 2);
  ck_assert_str_eq(o.files[0], "a.prom");
  ck_assert_str_eq(o.files[1], "/run/b");
  ck_assert_ptr_null(o.path);
}
END_TEST

/* A counters file as zkl_session_stats_export() writes one (abridged: HELP
 * lines left out, an unknown metric added, labels in another order). */
static const char stats_text[] =
    "# zkl 0.1.0: the counters of one zkl session\n"
    "# TYPE zkl_session_info gauge\n"
    "zkl_session_info{session=\"0x10000abc\",hosts=\"h:1,\\\"q\\\"\\n\","
    "pid=\"42\",state=\"suspended\"} 1\n"
    "zkl_session_state 2\n"
    "zkl_stats_written_seconds 1000.5\n"
    "zkl_stats_interval_seconds 2\n"
    "\n"
    "zkl_requests_total{kind=\"create\"} 12\n"
    "zkl_requests_total{kind=\"heartbeat\"} 18446744073709551615\n"
    "zkl_requests_total{kind=\"future\"} 7\n"
    "zkl_some_later_metric{x=\"y\"} 3.5\n"
    "zkl_watches_total 5\n"
    "zkl_acquisitions_waiting 1\n"
    "zkl_grant_wait_seconds_bucket{le=\"0.001\"} 1\n"
    "zkl_grant_wait_seconds_bucket{le=\"0.01\"} 3\n"
    "zkl_grant_wait_seconds_bucket{le=\"0.1\"} 3\n"
    "zkl_grant_wait_seconds_bucket{le=\"1\"} 4\n"
    "zkl_grant_wait_seconds_bucket{le=\"10\"} 4\n"
    "zkl_grant_wait_seconds_bucket{le=\"100\"} 4\n"
    "zkl_grant_wait_seconds_bucket{le=\"+Inf\"} 5\n"
    "zkl_grant_wait_seconds_sum 200.25\n"
    "zkl_grant_wait_seconds_count 5\n"
    "zkl_grant_wait_seconds_max 199.5\n"
    "zkl_session_events_total{state=\"lost\"} 2\n";

START_TEST(statsfile_parse) {
  cli_statsfile_t f;
  char why[256] = "";
  ck_assert_int_eq(cli_statsfile_parse(stats_text, &f, why, sizeof why), 0);
  ck_assert_uint_eq(f.session, 0x10000abcULL);
  ck_assert_int_eq(f.pid, 42);
  ck_assert_str_eq(f.hosts, "h:1,\"q\"\n");
  ck_assert_str_eq(f.state, "suspended");
  ck_assert(f.written == 1000.5 && f.interval == 2);
  ck_assert_uint_eq(f.st.creates, 12);
  ck_assert_uint_eq(f.st.heartbeats, UINT64_MAX);
  ck_assert_uint_eq(f.st.deletes, 0);
  ck_assert_uint_eq(f.st.watches, 5);
  ck_assert_uint_eq(f.st.waiting, 1);
  ck_assert_uint_eq(f.st.grants, 5);
  /* cumulative buckets back to the struct's own */
  const uint64_t hist[ZKL_STATS_WAIT_BUCKETS] = {1, 2, 0, 1, 0, 0, 1};
  for (int i = 0; i < ZKL_STATS_WAIT_BUCKETS; i++)
    ck_assert_uint_eq(f.st.wait_hist[i], hist[i]);
  ck_assert_uint_eq(f.st.wait_us_total, 200250000);
  ck_assert_uint_eq(f.st.wait_us_max, 199500000);
  ck_assert_uint_eq(f.st.losses, 2);
  /* fresh within 3 intervals and 2 s, then stale */
  ck_assert_int_eq(cli_statsfile_stale(&f, 1008.4), 0);
  ck_assert_int_eq(cli_statsfile_stale(&f, 1008.6), 1);

  char *buf = NULL;
  size_t size = 0;
  FILE *m = open_memstream(&buf, &size);
  cli_statsfile_print(m, "x.prom", &f, 1001.5);
  fclose(m);
  ck_assert_msg(strstr(buf, "x.prom: pid 42, session 0x10000abc on h:1,\"q\"\\n"
                            ", suspended; written 1.0 s ago (every 2 s)\n") ==
                    buf,
                "%s", buf);
  ck_assert_ptr_nonnull(strstr(buf, "create 12  delete 0"));
  ck_assert_ptr_nonnull(strstr(buf, "heartbeat 18446744073709551615\n"));
  ck_assert_ptr_nonnull(strstr(buf, " <1ms 1  <10ms 2  <100ms 0  <1s 1"));
  ck_assert_ptr_nonnull(strstr(buf, "; mean 40050.000 ms, max 199500.000 ms"));
  ck_assert_ptr_null(strstr(buf, "STALE"));
  free(buf);
  m = open_memstream(&buf, &size);
  cli_statsfile_print(m, "x.prom", &f, 2000);
  fclose(m);
  ck_assert_ptr_nonnull(strstr(buf, "; STALE: its process has probably ended"));
  free(buf);
  m = open_memstream(&buf, &size);
  cli_statsfile_json(m, "x.prom", &f, 1001.5);
  fclose(m);
  ck_assert_msg(strstr(buf, "{\"file\": \"x.prom\", \"pid\": 42, \"session\": "
                            "\"0x10000abc\", \"hosts\": \"h:1,\\\"q\\\"\\u000a\", "
                            "\"state\": \"suspended\", \"written\": 1000.500, "
                            "\"age_s\": 1.000, \"interval_s\": 2, \"stale\": "
                            "false, \"counters\": {\"creates\": 12, ") == buf,
                "%s", buf);
  ck_assert_ptr_nonnull(strstr(buf, "\"wait_hist\": [1, 2, 0, 1, 0, 0, 1], "
                                    "\"wait_us_total\": 200250000, "));
  ck_assert_ptr_nonnull(strstr(buf, "\"losses\": 2}}"));
  ck_assert_int_eq(buf[size - 1], '}');
  free(buf);
}
END_TEST

static const struct {
  const char *text, *err;
} bad_stats[] = {
    {"", "no zkl_session_info line"},
    {"root:x:0:0:root:/root:/bin/bash\n", "line 1: no value"},
    {"zkl_session_info{session=\"0x1\",pid=\"2\",hosts=\"h\",state=\"c\"} 1\n",
     "no counters"},
    {"zkl_session_info{session=\"0x1\",pid=\"2\",hosts=\"h\"} 1\n",
     "line 1: zkl_session_info without"},
    {"zkl_session_info{session=\"zz\",pid=\"2\",hosts=\"h\",state=\"c\"} 1\n",
     "line 1: a bad session id"},
    {"\n\nzkl_watches_total{a=\"b} 1\n", "line 3: an unterminated label"},
    {"zkl_watches_total{a=\"\\x\"} 1\n", "line 1: a bad escape"},
    {"zkl_watches_total{a=b} 1\n", "line 1: a malformed label"},
    {"zkl_watches_total -3\n", "line 1: a bad count"},
    {"zkl_watches_total\n", "line 1: no value"},
    {"zkl_watches_total{a=\"1\",b=\"2\",c=\"3\",d=\"4\",e=\"5\",f=\"6\",g=\"7\","
     "h=\"8\",i=\"9\"} 1\n",
     "line 1: too many labels"},
};

START_TEST(statsfile_bad) {
  cli_statsfile_t f;
  char why[256] = "";
  ck_assert_int_eq(cli_statsfile_parse(bad_stats[_i].text, &f, why, sizeof why),
                   -1);
  ck_assert_msg(strstr(why, bad_stats[_i].err) != NULL, "'%s' for '%s'", why,
                bad_stats[_i].text);
  /* a small error buffer is cut, not overrun */
  char small[8];
  memset(small, 'x', sizeof small);
  ck_assert_int_eq(
      cli_statsfile_parse(bad_stats[_i].text, &f, small, sizeof small), -1);
  ck_assert_uint_eq(strlen(small), sizeof small - 1);
}
END_TEST

static Suite *cli_suite(void) {
  Suite *s = suite_create("cli");
  TCase *tc = tcase_create("options");
  tcase_add_test(tc, lock_defaults);
  tcase_add_test(tc, lock_all_options);
  tcase_add_test(tc, lock_long_and_short_forms);
  tcase_add_test(tc, lock_all_forms);
  tcase_add_test(tc, hosts_from_environment);
  tcase_add_test(tc, elect_forms);
  tcase_add_loop_test(tc, status_forms, 0, (int)COUNT(status_case));
  tcase_add_test(tc, counter_defaults);
  tcase_add_test(tc, counter_forms);
  tcase_add_test(tc, barrier_defaults);
  tcase_add_test(tc, barrier_forms);
  tcase_add_test(tc, sem_defaults);
  tcase_add_test(tc, sem_forms);
  tcase_add_test(tc, status_stats_forms);
  tcase_add_test(tc, queue_put_forms);
  tcase_add_test(tc, queue_put_data_limit);
  tcase_add_test(tc, queue_put_soft_max);
  tcase_add_test(tc, queue_claim_forms);
  tcase_add_test(tc, queue_take_forms);
  tcase_add_test(tc, queue_other_forms);
  tcase_add_loop_test(tc, subcommand_names, 0, (int)COUNT(sub_case));
  tcase_add_test(tc, help_and_version);
  tcase_add_loop_test(tc, usage_errors, 0, (int)COUNT(bad));
  tcase_add_test(tc, usage_error_names_the_command);
  tcase_add_test(tc, usage_error_names_the_subcommand);
  tcase_add_test(tc, usage_error_long_id);
  tcase_add_test(tc, small_error_buffer);
  tcase_add_test(tc, seconds);
  tcase_add_test(tc, integers);
  tcase_add_test(tc, int64s);
  tcase_add_test(tc, versions);
  suite_add_tcase(s, tc);
  tc = tcase_create("counter formats");
  tcase_add_loop_test(tc, format_names, 1, 2);
  tcase_add_test(tc, counter_ranges);
  suite_add_tcase(s, tc);
  tc = tcase_create("queue formats");
  tcase_add_loop_test(tc, format_names, 0, 1);
  suite_add_tcase(s, tc);
  tc = tcase_create("counters files");
  tcase_add_test(tc, statsfile_parse);
  tcase_add_loop_test(tc, statsfile_bad, 0, (int)COUNT(bad_stats));
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
