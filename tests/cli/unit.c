/* tests/cli/unit.c - the zkl tool's pure logic, no server: the command
 * line (cli/opts.c) with the names of the queue formats, and the escapes
 * of node data (cli/text.c).  Which children are a queue's items, and
 * their order, is the library's (zkl_queue_list()), tested there.
 *
 * Exit status 0 when every test passed.  Check's variables apply
 * (CK_FORK=no under valgrind, CK_RUN_CASE, ...). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"
#include "text.h"
#include "zkl.h"

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
  ck_assert_str_eq(o.cmd[0], "./work.sh");
  ck_assert_ptr_null(o.cmd[1]);
  ck_assert_ptr_null(o.data);
  ck_assert_str_eq(err, "");
  ck_assert_int_eq(PARSE(&o, "queue", "claim", "--format", "locking", "-n",
                         "--grace", "0.5", "--nack-tail", "/jobs", "--",
                         "sh", "-c", "exit 3"), 0);
  ck_assert_int_eq(o.format, ZKL_QUEUE_LOCKING);
  ck_assert_int_eq(o.timeout_ms, 0);
  ck_assert_int_eq(o.grace_ms, 500);
  ck_assert_int_eq(o.nack_tail, 1);
  ck_assert_str_eq(o.cmd[0], "sh");
  ck_assert_str_eq(o.cmd[1], "-c");
  ck_assert_str_eq(o.cmd[2], "exit 3");
  ck_assert_ptr_null(o.cmd[3]);
  ck_assert_int_eq(PARSE(&o, "queue", "claim", "-t", "30", "/jobs", "w"), 0);
  ck_assert_int_eq(o.timeout_ms, 30000);
  ck_assert_int_eq(PARSE(&o, "queue", "claim", "--timeout=0.25",
                         "--format=locking", "/jobs", "w"), 0);
  ck_assert_int_eq(o.timeout_ms, 250);
  /* everything after PATH [--] is CMD's: options, "--" and all */
  ck_assert_int_eq(PARSE(&o, "queue", "claim", "/jobs", "-n", "--json"), 0);
  ck_assert_int_eq(o.timeout_ms, -1);
  ck_assert_str_eq(o.cmd[0], "-n");
  ck_assert_str_eq(o.cmd[1], "--json");
  ck_assert_int_eq(PARSE(&o, "queue", "claim", "/jobs", "--", "--", "x"), 0);
  ck_assert_str_eq(o.cmd[0], "--");
  ck_assert_str_eq(o.cmd[1], "x");
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
  static const cli_queue_op_t ops[] = {CLI_QUEUE_PUT, CLI_QUEUE_TAKE,
                                       CLI_QUEUE_CLAIM, CLI_QUEUE_PEEK,
                                       CLI_QUEUE_SIZE, CLI_QUEUE_LS,
                                       CLI_QUEUE_RM};
  static const char *const names[] = {"put", "take", "claim", "peek",
                                      "size", "ls", "rm"};
  for (size_t i = 0; i < COUNT(ops); i++) {
    ck_assert_str_eq(cli_queue_op_name(ops[i]), names[i]);
    char usage[64]; /* the help shows each subcommand's usage */
    snprintf(usage, sizeof usage, "] queue %s ", names[i]);
    ck_assert_msg(strstr(cli_help(CLI_CMD_QUEUE), usage) != NULL, "%s",
                  usage);
    ck_assert_msg(strstr(cli_help(CLI_CMD_NONE), names[i]) != NULL, "%s",
                  names[i]); /* and the tool's help names it */
  }
  ck_assert_str_eq(cli_queue_op_name(CLI_QUEUE_NONE), "");
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
  static const char *const cmds[] = {"lock", "elect", "status", "queue"};
  static const cli_command_t ids[] = {CLI_CMD_LOCK, CLI_CMD_ELECT,
                                      CLI_CMD_STATUS, CLI_CMD_QUEUE};
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

/* ---- queue formats ---------------------------------------------------------------- */

START_TEST(format_names) {
  int f = -1;
  ck_assert_int_eq(cli_format_parse("qn", &f), 0);
  ck_assert_int_eq(f, ZKL_QUEUE_QN);
  ck_assert_int_eq(cli_format_parse("kazoo", &f), 0);
  ck_assert_int_eq(f, ZKL_QUEUE_KAZOO);
  ck_assert_int_eq(cli_format_parse("locking", &f), 0);
  ck_assert_int_eq(f, ZKL_QUEUE_LOCKING);
  f = -1;
  ck_assert_int_eq(cli_format_parse("Kazoo", &f), -1);
  ck_assert_int_eq(cli_format_parse("", &f), -1);
  ck_assert_int_eq(cli_format_parse("qn ", &f), -1);
  ck_assert_int_eq(cli_format_parse("lock", &f), -1);
  ck_assert_int_eq(cli_format_parse("locking-queue", &f), -1);
  ck_assert_int_eq(f, -1);
  ck_assert_str_eq(cli_format_name(ZKL_QUEUE_QN), "qn");
  ck_assert_str_eq(cli_format_name(ZKL_QUEUE_KAZOO), "kazoo");
  ck_assert_str_eq(cli_format_name(ZKL_QUEUE_LOCKING), "locking");
  ck_assert_str_eq(cli_format_name(42), "?");
  ck_assert_str_eq(cli_format_name(-1), "?");
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
  tcase_add_test(tc, queue_put_forms);
  tcase_add_test(tc, queue_put_data_limit);
  tcase_add_test(tc, queue_put_soft_max);
  tcase_add_test(tc, queue_claim_forms);
  tcase_add_test(tc, queue_take_forms);
  tcase_add_test(tc, queue_other_forms);
  tcase_add_test(tc, help_and_version);
  tcase_add_loop_test(tc, usage_errors, 0, (int)COUNT(bad));
  tcase_add_test(tc, usage_error_names_the_command);
  tcase_add_test(tc, usage_error_names_the_subcommand);
  tcase_add_test(tc, usage_error_long_id);
  tcase_add_test(tc, small_error_buffer);
  tcase_add_test(tc, seconds);
  tcase_add_test(tc, integers);
  suite_add_tcase(s, tc);
  tc = tcase_create("queue formats");
  tcase_add_test(tc, format_names);
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
