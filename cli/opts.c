/* cli/opts.c - the zkl tool's command line: global options, then one
 * command and its own options.  Pure logic, unit-tested without a server.
 *
 * Both levels stop at the first operand ('+' in the option strings), so
 * options of CMD are never taken for ours: `zkl lock /p ls -l` runs `ls -l`.
 */
#include "opts.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zkl.h"

/* ---- help texts ------------------------------------------------------------ */

static const char help_top[] =
    "Usage: zkl [OPTIONS] COMMAND [ARGS...]\n"
    "Locks, leader election and queues on Apache ZooKeeper, for shell scripts.\n"
    "\n"
    "Commands:\n"
    "  lock PATH [--] CMD [ARG...]   run CMD while holding the lock at PATH\n"
    "  elect PATH [--] CMD [ARG...]  run CMD while leader of the election at PATH\n"
    "  elect --observe PATH          print the leader's id, then each change\n"
    "  status PATH                   list the contenders at PATH in queue order\n"
    "                                (and the items of a queue there)\n"
    "  queue put|take|claim|peek|size|ls|rm PATH ...\n"
    "                                the FIFO queue at PATH ('zkl queue --help')\n"
    "\n"
    "Options (before COMMAND):\n"
    "  -s, --servers HOSTS       ZooKeeper's \"host:port,...[/chroot]\"\n"
    "                            (default: $ZKL_SERVERS, then " CLI_DEFAULT_HOSTS ")\n"
    "      --session-timeout MS  session timeout asked of the server (default 10000)\n"
    "      --connect-timeout MS  give up connecting after MS (default 5000)\n"
    "      --auth USER:PASS      digest credentials\n"
    "  -v, --verbose             progress on stderr (twice: ZooKeeper's log too)\n"
    "  -h, --help                this help; 'zkl COMMAND --help' for a command\n"
    "  -V, --version             print the version\n"
    "\n"
    "Exit status: CMD's own; 1 queue empty or full (see 'zkl queue --help');\n"
    "64 usage error; 69 no server answered; 70 other failure; 75 lock,\n"
    "leadership, claim or session lost; 77 permission refused; 126/127 CMD\n"
    "not executable/not found; 128+N ended by signal N.  See zkl(1).\n";

static const char help_lock[] =
    "Usage: zkl [OPTIONS] lock [--read | --write] [-n | -t SECONDS] [-E N]\n"
    "                          PATH [--] CMD [ARG...]\n"
    "Run CMD while holding the lock at PATH; exit with CMD's status.\n"
    "\n"
    "      --read               the shared side of the read/write lock\n"
    "      --write              the exclusive side of the read/write lock\n"
    "                           (default: the exclusive lock, which does not\n"
    "                           queue with --read/--write holders)\n"
    "  -n, --nonblock           give up at once if the lock is not free\n"
    "  -t, --timeout SECONDS    give up after SECONDS (decimals allowed)\n"
    "  -E, --conflict-exit-code N\n"
    "                           exit status when -n/-t give up (default 1)\n"
    "      --grace SECONDS      after a loss, SIGTERM to SIGKILL (default 5)\n"
    "  -h, --help               this help\n"
    "\n"
    "CMD gets ZKL_LOCK_PATH, ZKL_LOCK_NODE (the node that holds the lock) and\n"
    "ZKL_FENCING_TOKEN (a number, larger for every new holder) in its\n"
    "environment.  If the lock is lost while CMD runs (session LOST, or the\n"
    "node deleted), CMD gets SIGTERM, SIGKILL after the grace period, and zkl\n"
    "exits 75.  A suspended connection alone does not stop CMD: the session\n"
    "may come back.  SIGINT, SIGTERM and SIGHUP are passed on to CMD; the lock\n"
    "is released once CMD has exited.\n";

static const char help_elect[] =
    "Usage: zkl [OPTIONS] elect [-i ID] PATH [--] CMD [ARG...]\n"
    "       zkl [OPTIONS] elect --observe PATH\n"
    "Run CMD only while leader of the election at PATH; exit with CMD's status.\n"
    "\n"
    "  -i, --id ID              this candidate's id (default: host:pid)\n"
    "      --observe            do not stand: print the leader's id, then one\n"
    "                           line per change (an empty line: nobody leads),\n"
    "                           until SIGINT or SIGTERM (then exit 0); a lost\n"
    "                           session does not end it\n"
    "      --grace SECONDS      after a loss, SIGTERM to SIGKILL (default 5)\n"
    "  -h, --help               this help\n"
    "\n"
    "CMD gets ZKL_ELECTION_PATH, ZKL_ELECTION_ID, ZKL_ELECTION_NODE (the\n"
    "leader's node) and ZKL_FENCING_TOKEN in its environment.  If leadership\n"
    "is lost while CMD runs (session LOST, or the node deleted), CMD gets\n"
    "SIGTERM, SIGKILL after the grace period, and zkl exits 75.\n"
    "A suspended connection alone does not stop CMD: the session may come\n"
    "back.  SIGINT, SIGTERM and SIGHUP are passed on to CMD; zkl resigns\n"
    "once CMD has exited.\n";

static const char help_status[] =
    "Usage: zkl [OPTIONS] status [--json] PATH\n"
    "List the contenders of the lock, read/write lock or election at PATH in\n"
    "queue order: position, kind (lock, read, write, election; foreign for a\n"
    "child that is no contender), whether it holds, fencing token (czxid),\n"
    "session id (ephemeral owner), node name and owner data (escaped).\n"
    "Items of a queue (qn- or kazoo's entry- children, or kazoo's\n"
    "LockingQueue: children entries and taken) are not listed one by one:\n"
    "a line per format gives their number, how many are claimed, and the\n"
    "head item, the next a take or claim gets (JSON: an object of kind\n"
    "\"queue\" with \"format\", \"items\" and \"claimed\").\n"
    "A PATH with no contenders, or none at all, prints \"no contenders\"\n"
    "(JSON: []) and exits 0.\n"
    "\n"
    "      --json               one JSON array of objects instead of a table\n"
    "  -h, --help               this help\n";

static const char help_queue[] =
    "Usage: zkl [OPTIONS] queue put [--format F] [--priority N] [--max-items N]\n"
    "                               [--soft-max N] [-t SECONDS] PATH [DATA]\n"
    "       zkl [OPTIONS] queue put --batch [--format F] [--priority N] ... PATH\n"
    "       zkl [OPTIONS] queue take [--format F] [-n | -t SECONDS] [--max N]\n"
    "                                [--json] PATH\n"
    "       zkl [OPTIONS] queue claim [--format locking] [-n | -t SECONDS]\n"
    "                                 [--grace SECONDS] [--nack-tail]\n"
    "                                 PATH [--] CMD [ARG...]\n"
    "       zkl [OPTIONS] queue peek [--format F] [--json] PATH\n"
    "       zkl [OPTIONS] queue size [--format F] PATH\n"
    "       zkl [OPTIONS] queue ls [--format F] [--json] PATH\n"
    "       zkl [OPTIONS] queue rm [--format F] PATH NAME\n"
    "The FIFO queue at PATH, shared with every program that uses the path.\n"
    "An item is a string of up to 1000000 bytes, any bytes.\n"
    "\n"
    "  put    append DATA, or without it all of stdin (any bytes, NUL too)\n"
    "  take   take the head item, waiting for one, and write its bytes to\n"
    "         stdout as they are (nothing added): at most once\n"
    "  claim  claim the head item nobody has claimed, waiting for one, and run\n"
    "         CMD with the item's bytes on its stdin: at least once.  CMD\n"
    "         exits 0: the item is acked (deleted); CMD fails: it is given\n"
    "         back (nacked) to the head, or with --nack-tail to the end\n"
    "  peek   write the head item's bytes without taking it\n"
    "  size   print how many children PATH (locking: PATH/entries) has\n"
    "  ls     list the items in queue order: position, token, length,\n"
    "         claimed, name and the start of the data (escaped)\n"
    "  rm     remove the item called NAME (as ls and --json show it)\n"
    "\n"
    "      --format F           qn (the default: ZooKeeper's and Curator's\n"
    "                           qn-<seq>), kazoo (kazoo's Queue,\n"
    "                           entry-<prio>-<seq>) or locking (kazoo's\n"
    "                           LockingQueue: PATH/entries and PATH/taken,\n"
    "                           the one format with claims; claim's only)\n"
    "      --priority N         put, kazoo and locking: 0..999, lower is\n"
    "                           taken first (default 100)\n"
    "      --max-items N        put: refuse while PATH holds N children or\n"
    "                           more (default 50000; 0: no bound)\n"
    "      --soft-max N         put: wait while PATH holds N children or\n"
    "                           more (at most -t SECONDS; 0: no bound)\n"
    "      --batch              put: each line of stdin (without its newline)\n"
    "                           is an item, all put at once or none (at most\n"
    "                           1000 lines and 1000000 bytes)\n"
    "  -n, --nonblock           take, claim: do not wait if the queue is empty\n"
    "  -t, --timeout SECONDS    take, claim: wait at most SECONDS (decimals\n"
    "                           allowed); put: give up if not connected, or\n"
    "                           still at --soft-max, after SECONDS\n"
    "      --max N              take: up to N items (1..1000) at once, each\n"
    "                           written followed by a newline\n"
    "      --grace SECONDS      claim: after a loss, SIGTERM to SIGKILL\n"
    "                           (default 5)\n"
    "      --nack-tail          claim: CMD failed: the item goes to the end\n"
    "                           of the queue, not back to the head\n"
    "      --json               take, peek: one JSON object per item and line,\n"
    "                           {\"name\", \"token\", \"len\", \"data\"} with data\n"
    "                           escaped as zkl status does; ls: a JSON array\n"
    "                           (with \"position\" and \"claimed\" too)\n"
    "  -h, --help               this help\n"
    "\n"
    "claim: CMD gets ZKL_QUEUE_PATH, ZKL_ITEM_NAME and ZKL_ITEM_TOKEN (the\n"
    "delivery token, a number larger at every redelivery of the item) in its\n"
    "environment.  If the claim is lost while CMD runs (session LOST), CMD\n"
    "gets SIGTERM, SIGKILL after the grace period, and zkl exits 75: another\n"
    "consumer gets the item.  SIGINT, SIGTERM and SIGHUP are passed on to\n"
    "CMD, and the item is then given back whatever CMD's status.\n"
    "\n"
    "Exit status: 0 done; 1 nothing to take, claim or peek (-n, -t), no item\n"
    "NAME (rm), or the queue is full (put); claim: CMD's status once it ran;\n"
    "69 not connected (put -t); 75 session lost (claim: the claim lost, or\n"
    "the item acked too late: its work may be done twice); 128+N signal N\n"
    "while take or claim waited (nothing taken or claimed), or before a put\n"
    "was sent (nothing put).\n"
    "DATA longer than 1000000 bytes is a usage error (64); stdin longer than\n"
    "that, or --batch past its limits, exits 70 with nothing put.\n";

const char *cli_help(cli_command_t command) {
  switch (command) {
  case CLI_CMD_LOCK: return help_lock;
  case CLI_CMD_ELECT: return help_elect;
  case CLI_CMD_STATUS: return help_status;
  case CLI_CMD_QUEUE: return help_queue;
  case CLI_CMD_NONE: break;
  }
  return help_top;
}

const char *cli_command_name(cli_command_t command) {
  switch (command) {
  case CLI_CMD_LOCK: return "lock";
  case CLI_CMD_ELECT: return "elect";
  case CLI_CMD_STATUS: return "status";
  case CLI_CMD_QUEUE: return "queue";
  case CLI_CMD_NONE: break;
  }
  return "";
}

/* What each queue subcommand takes besides PATH: its options (QO_* bits)
 * and its other operands, checked in parse_queue_sub(). */
enum {
  QO_FORMAT = 1 << 0,
  QO_PRIORITY = 1 << 1,
  QO_MAX_ITEMS = 1 << 2,
  QO_BATCH = 1 << 3,
  QO_NONBLOCK = 1 << 4,
  QO_TIMEOUT = 1 << 5,
  QO_MAX = 1 << 6,
  QO_JSON = 1 << 7,
  QO_SOFT_MAX = 1 << 8,
  QO_GRACE = 1 << 9,
  QO_NACK_TAIL = 1 << 10
};

static const struct queue_sub {
  const char *name;
  cli_queue_op_t op;
  unsigned options;
} queue_subs[] = {
    {"put", CLI_QUEUE_PUT,
     QO_FORMAT | QO_PRIORITY | QO_MAX_ITEMS | QO_SOFT_MAX | QO_BATCH |
         QO_TIMEOUT},
    {"take", CLI_QUEUE_TAKE,
     QO_FORMAT | QO_NONBLOCK | QO_TIMEOUT | QO_MAX | QO_JSON},
    {"claim", CLI_QUEUE_CLAIM,
     QO_FORMAT | QO_NONBLOCK | QO_TIMEOUT | QO_GRACE | QO_NACK_TAIL},
    {"peek", CLI_QUEUE_PEEK, QO_FORMAT | QO_JSON},
    {"size", CLI_QUEUE_SIZE, QO_FORMAT},
    {"ls", CLI_QUEUE_LS, QO_FORMAT | QO_JSON},
    {"rm", CLI_QUEUE_RM, QO_FORMAT}};
#define N_QUEUE_SUBS (sizeof queue_subs / sizeof queue_subs[0])

const char *cli_queue_op_name(cli_queue_op_t op) {
  for (size_t i = 0; i < N_QUEUE_SUBS; i++)
    if (queue_subs[i].op == op) return queue_subs[i].name;
  return "";
}

/* ---- queue formats: the words of --format ----------------------------------- */

const char *cli_format_name(int format) {
  switch (format) {
  case ZKL_QUEUE_QN: return "qn";
  case ZKL_QUEUE_KAZOO: return "kazoo";
  case ZKL_QUEUE_LOCKING: return "locking";
  default: break;
  }
  return "?";
}

int cli_format_parse(const char *name, int *format) {
  static const int formats[] = {ZKL_QUEUE_QN, ZKL_QUEUE_KAZOO,
                                ZKL_QUEUE_LOCKING};
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
    if (strcmp(name, cli_format_name(formats[i])) == 0) {
      *format = formats[i];
      return 0;
    }
  return -1;
}

/* ---- numbers ---------------------------------------------------------------- */

int cli_parse_int(const char *s, long min, long max, long *out) {
  if (s == NULL || *s == '\0' || (*s != '-' && (*s < '0' || *s > '9')))
    return -1;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || *end != '\0' || v < min || v > max) return -1;
  *out = v;
  return 0;
}

#define SECONDS_MAX 1000000000LL

int cli_parse_seconds(const char *s, int64_t *ms) {
  if (s == NULL || *s < '0' || *s > '9') return -1;
  int64_t whole = 0;
  while (*s >= '0' && *s <= '9') {
    whole = whole * 10 + (*s++ - '0');
    if (whole > SECONDS_MAX) return -1;
  }
  int64_t frac_ms = 0; /* thousandths, rounded up past the third digit */
  if (*s == '.') {
    s++;
    if (*s < '0' || *s > '9') return -1;
    int digits = 0, more = 0;
    for (; *s >= '0' && *s <= '9'; s++, digits++) {
      if (digits < 3) frac_ms = frac_ms * 10 + (*s - '0');
      else if (*s != '0') more = 1;
    }
    for (; digits < 3; digits++) frac_ms *= 10;
    frac_ms += more;
  }
  if (*s != '\0') return -1;
  *ms = whole * 1000 + frac_ms;
  return 0;
}

/* ---- parsing -------------------------------------------------------------- */

typedef struct parser {
  cli_opts_t *o;
  char *err;
  size_t errlen;
} parser_t;

/* Formats the one-line hint and returns CLI_EX_USAGE. */
__attribute__((format(printf, 2, 3)))
static int usage_error(parser_t *p, const char *fmt, ...) {
  const char *name = cli_command_name(p->o->command);
  const char *sub = p->o->command == CLI_CMD_QUEUE
                        ? cli_queue_op_name(p->o->queue_op) : "";
  int n = snprintf(p->err, p->errlen, "zkl%s%s%s%s: ", *name ? " " : "",
                   name, *sub ? " " : "", sub);
  if (n < 0 || (size_t)n >= p->errlen) return CLI_EX_USAGE;
  va_list ap;
  va_start(ap, fmt);
  int m = vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
  va_end(ap);
  if (m < 0 || (size_t)(n + m) >= p->errlen) return CLI_EX_USAGE;
  snprintf(p->err + n + m, p->errlen - (size_t)(n + m),
           " (try 'zkl%s%s --help')", *name ? " " : "", name);
  return CLI_EX_USAGE;
}

/* getopt_long() found no valid option in `elem`, the word it was reading:
 * say which and why.  Its own messages are off (opterr = 0): they would not
 * be one line with a hint. */
static int bad_option(parser_t *p, int c, const char *elem) {
  if (strncmp(elem, "--", 2) != 0) {
    if (c == ':') return usage_error(p, "option -%c needs a value", optopt);
    return usage_error(p, "unknown option -%c", optopt);
  }
  int name_len = (int)strcspn(elem, "=");
  if (c == ':') return usage_error(p, "option %s needs a value", elem);
  if (optopt != 0 && elem[name_len] == '=')
    return usage_error(p, "option %.*s takes no value", name_len, elem);
  return usage_error(p, "unknown option %.*s", name_len, elem);
}

/* The word getopt_long() reads next: with '+' nothing is permuted, and
 * optind moves past a group of short options only at its end. */
static const char *current_word(int argc, char **argv) {
  int i = optind < 1 ? 1 : optind;
  return i < argc ? argv[i] : "";
}

/* Calls getopt_long(), remembering the word it read into *word. */
static int next_option(int argc, char **argv, const char *shorts,
                       const struct option *longs, const char **word) {
  *word = current_word(argc, argv);
  return getopt_long(argc, argv, shorts, longs, NULL);
}

/* Resets getopt_long() so that it reads a new vector from argv[1]. */
static void getopt_reset(void) {
  optind = 0; /* glibc: also forgets its internal state */
  opterr = 0;
}

static int take_path(parser_t *p, int argc, char **argv) {
  if (optind >= argc) return usage_error(p, "PATH is missing");
  const char *path = argv[optind++];
  if (zkl_path_check(path) != 0)
    return usage_error(p, "bad PATH '%s': %s", path, zkl_last_error());
  p->o->path = path;
  return 0;
}

/* PATH [--] CMD [ARG...] */
static int take_path_and_cmd(parser_t *p, int argc, char **argv) {
  int rc = take_path(p, argc, argv);
  if (rc != 0) return rc;
  if (optind < argc && strcmp(argv[optind], "--") == 0) optind++;
  if (optind >= argc) return usage_error(p, "CMD is missing");
  p->o->cmd = argv + optind;
  return 0;
}

static int take_grace(parser_t *p, const char *arg) {
  if (cli_parse_seconds(arg, &p->o->grace_ms) != 0)
    return usage_error(p, "--grace needs SECONDS, not '%s'", arg);
  return 0;
}

enum { OPT_READ = 256, OPT_WRITE, OPT_GRACE, OPT_OBSERVE, OPT_JSON,
       OPT_SESSION_TIMEOUT, OPT_CONNECT_TIMEOUT, OPT_AUTH, OPT_FORMAT,
       OPT_PRIORITY, OPT_MAX_ITEMS, OPT_BATCH, OPT_MAX, OPT_SOFT_MAX,
       OPT_NACK_TAIL };

static int parse_lock(parser_t *p, int argc, char **argv) {
  static const struct option longs[] = {
      {"read", no_argument, NULL, OPT_READ},
      {"write", no_argument, NULL, OPT_WRITE},
      {"nonblock", no_argument, NULL, 'n'},
      {"timeout", required_argument, NULL, 't'},
      {"conflict-exit-code", required_argument, NULL, 'E'},
      {"grace", required_argument, NULL, OPT_GRACE},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  cli_opts_t *o = p->o;
  int modes = 0, waits = 0, c, rc;
  long n;
  const char *word;
  while ((c = next_option(argc, argv, "+:nt:E:h", longs, &word)) != -1) {
    switch (c) {
    case OPT_READ: o->mode = CLI_LOCK_READ; modes++; break;
    case OPT_WRITE: o->mode = CLI_LOCK_WRITE; modes++; break;
    case 'n': o->timeout_ms = 0; waits++; break;
    case 't':
      if (cli_parse_seconds(optarg, &o->timeout_ms) != 0)
        return usage_error(p, "-t needs SECONDS, not '%s'", optarg);
      waits++;
      break;
    case 'E':
      if (cli_parse_int(optarg, 0, 255, &n) != 0)
        return usage_error(p, "-E needs an exit code 0..255, not '%s'",
                           optarg);
      o->conflict_exit = (int)n;
      break;
    case OPT_GRACE:
      if ((rc = take_grace(p, optarg)) != 0) return rc;
      break;
    case 'h': o->action = CLI_HELP; return 0;
    default: return bad_option(p, c, word);
    }
  }
  if (modes > 1) return usage_error(p, "--read and --write exclude each other");
  if (waits > 1) return usage_error(p, "give one of -n and -t, once");
  return take_path_and_cmd(p, argc, argv);
}

static int parse_elect(parser_t *p, int argc, char **argv) {
  static const struct option longs[] = {
      {"id", required_argument, NULL, 'i'},
      {"observe", no_argument, NULL, OPT_OBSERVE},
      {"grace", required_argument, NULL, OPT_GRACE},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  cli_opts_t *o = p->o;
  int c, rc;
  const char *word;
  while ((c = next_option(argc, argv, "+:i:h", longs, &word)) != -1) {
    switch (c) {
    case 'i':
      if (optarg[0] == '\0') return usage_error(p, "the ID must not be empty");
      if (strlen(optarg) > CLI_ID_MAX)
        return usage_error(p, "the ID is longer than %d bytes", CLI_ID_MAX);
      o->id = optarg;
      break;
    case OPT_OBSERVE: o->observe = 1; break;
    case OPT_GRACE:
      if ((rc = take_grace(p, optarg)) != 0) return rc;
      break;
    case 'h': o->action = CLI_HELP; return 0;
    default: return bad_option(p, c, word);
    }
  }
  if (!o->observe) return take_path_and_cmd(p, argc, argv);
  if (o->id != NULL) return usage_error(p, "an observer takes no --id");
  if ((rc = take_path(p, argc, argv)) != 0) return rc;
  if (optind < argc)
    return usage_error(p, "an observer runs no command ('%s')", argv[optind]);
  return 0;
}

static int parse_status(parser_t *p, int argc, char **argv) {
  static const struct option longs[] = {
      {"json", no_argument, NULL, OPT_JSON},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  int c, rc;
  const char *word;
  while ((c = next_option(argc, argv, "+:h", longs, &word)) != -1) {
    switch (c) {
    case OPT_JSON: p->o->json = 1; break;
    case 'h': p->o->action = CLI_HELP; return 0;
    default: return bad_option(p, c, word);
    }
  }
  if ((rc = take_path(p, argc, argv)) != 0) return rc;
  if (optind < argc)
    return usage_error(p, "unexpected '%s' after PATH", argv[optind]);
  return 0;
}

/* An operand after the last one: options go before PATH. */
static int unexpected(parser_t *p, const char *word, const char *after) {
  if (word[0] == '-' && word[1] != '\0')
    return usage_error(p, "unexpected '%s' after %s (options go before PATH)",
                       word, after);
  return usage_error(p, "unexpected '%s' after %s", word, after);
}

/* The options of queue subcommands, with the bit that allows each and its
 * name in messages. */
static const struct {
  int c;
  unsigned bit;
  const char *shown;
} queue_options[] = {{OPT_FORMAT, QO_FORMAT, "--format"},
                     {OPT_PRIORITY, QO_PRIORITY, "--priority"},
                     {OPT_MAX_ITEMS, QO_MAX_ITEMS, "--max-items"},
                     {OPT_BATCH, QO_BATCH, "--batch"},
                     {'n', QO_NONBLOCK, "-n"},
                     {'t', QO_TIMEOUT, "-t"},
                     {OPT_MAX, QO_MAX, "--max"},
                     {OPT_JSON, QO_JSON, "--json"},
                     {OPT_SOFT_MAX, QO_SOFT_MAX, "--soft-max"},
                     {OPT_GRACE, QO_GRACE, "--grace"},
                     {OPT_NACK_TAIL, QO_NACK_TAIL, "--nack-tail"}};

/* Refuses an option the subcommand does not take: 0, or the usage error. */
static int queue_option_allowed(parser_t *p, const struct queue_sub *sub,
                                int c) {
  for (size_t i = 0; i < sizeof queue_options / sizeof queue_options[0]; i++)
    if (queue_options[i].c == c && !(sub->options & queue_options[i].bit))
      return usage_error(p, "%s does not apply to %s", queue_options[i].shown,
                         sub->name);
  return 0;
}

/* SUB [OPTIONS] PATH [DATA | NAME | [--] CMD [ARG...]] */
static int parse_queue_sub(parser_t *p, const struct queue_sub *sub,
                           int argc, char **argv) {
  static const struct option longs[] = {
      {"format", required_argument, NULL, OPT_FORMAT},
      {"priority", required_argument, NULL, OPT_PRIORITY},
      {"max-items", required_argument, NULL, OPT_MAX_ITEMS},
      {"batch", no_argument, NULL, OPT_BATCH},
      {"nonblock", no_argument, NULL, 'n'},
      {"timeout", required_argument, NULL, 't'},
      {"max", required_argument, NULL, OPT_MAX},
      {"json", no_argument, NULL, OPT_JSON},
      {"soft-max", required_argument, NULL, OPT_SOFT_MAX},
      {"grace", required_argument, NULL, OPT_GRACE},
      {"nack-tail", no_argument, NULL, OPT_NACK_TAIL},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  cli_opts_t *o = p->o;
  int waits = 0, format_given = 0, c, rc;
  long n;
  const char *word;
  while ((c = next_option(argc, argv, "+:nt:h", longs, &word)) != -1) {
    if (c == 'h') {
      o->action = CLI_HELP;
      return 0;
    }
    if ((rc = queue_option_allowed(p, sub, c)) != 0) return rc;
    switch (c) {
    case OPT_FORMAT:
      if (cli_format_parse(optarg, &o->format) != 0)
        return usage_error(p, "--format needs qn, kazoo or locking, not '%s'",
                           optarg);
      format_given = 1;
      break;
    case OPT_PRIORITY:
      if (cli_parse_int(optarg, 0, 999, &n) != 0)
        return usage_error(p, "--priority needs 0..999, not '%s'", optarg);
      o->priority = (int)n;
      break;
    case OPT_MAX_ITEMS:
      if (cli_parse_int(optarg, 0, CLI_MAX_ITEMS_MAX, &n) != 0)
        return usage_error(p, "--max-items needs 0..%ld, not '%s'",
                           CLI_MAX_ITEMS_MAX, optarg);
      o->max_items = n;
      break;
    case OPT_SOFT_MAX:
      if (cli_parse_int(optarg, 0, CLI_MAX_ITEMS_MAX, &n) != 0)
        return usage_error(p, "--soft-max needs 0..%ld, not '%s'",
                           CLI_MAX_ITEMS_MAX, optarg);
      o->soft_max = n;
      break;
    case OPT_GRACE:
      if ((rc = take_grace(p, optarg)) != 0) return rc;
      break;
    case OPT_NACK_TAIL: o->nack_tail = 1; break;
    case OPT_BATCH: o->batch = 1; break;
    case 'n': o->timeout_ms = 0; waits++; break;
    case 't':
      if (cli_parse_seconds(optarg, &o->timeout_ms) != 0)
        return usage_error(p, "-t needs SECONDS, not '%s'", optarg);
      waits++;
      break;
    case OPT_MAX:
      if (cli_parse_int(optarg, 1, CLI_QUEUE_BATCH_MAX, &n) != 0)
        return usage_error(p, "--max needs 1..%d, not '%s'",
                           CLI_QUEUE_BATCH_MAX, optarg);
      o->max = (int)n;
      break;
    case OPT_JSON: o->json = 1; break;
    default: return bad_option(p, c, word);
    }
  }
  if (waits > 1) return usage_error(p, "give one of -n and -t, once");
  if (o->priority >= 0 && o->format == ZKL_QUEUE_QN)
    return usage_error(p, "--priority needs --format kazoo or locking");
  if (sub->op == CLI_QUEUE_CLAIM) {
    /* claims exist only in the LockingQueue layout: implied, and another
     * format is refused rather than silently changed */
    if (format_given && o->format != ZKL_QUEUE_LOCKING)
      return usage_error(p, "claims need --format locking (kazoo's "
                            "LockingQueue), not '%s'",
                         cli_format_name(o->format));
    o->format = ZKL_QUEUE_LOCKING;
    return take_path_and_cmd(p, argc, argv);
  }
  if ((rc = take_path(p, argc, argv)) != 0) return rc;
  const char *after = "PATH";
  if (sub->op == CLI_QUEUE_PUT && !o->batch && optind < argc) {
    o->data = argv[optind++];
    if (strlen(o->data) > ZKL_QUEUE_MAX_BYTES)
      return usage_error(p, "DATA is longer than %d bytes",
                         ZKL_QUEUE_MAX_BYTES);
    after = "DATA";
  } else if (sub->op == CLI_QUEUE_PUT && optind < argc) {
    return usage_error(p, "--batch reads the items from stdin, not '%s'",
                       argv[optind]);
  } else if (sub->op == CLI_QUEUE_RM) {
    /* whether NAME is an item of the format is the library's to say
     * (zkl_queue_remove(): ZKL_EINVAL, a usage error too) */
    if (optind >= argc) return usage_error(p, "NAME is missing");
    o->name = argv[optind++];
    after = "NAME";
  }
  if (optind < argc) return unexpected(p, argv[optind], after);
  return 0;
}

static int parse_queue(parser_t *p, int argc, char **argv) {
  static const struct option longs[] = {{"help", no_argument, NULL, 'h'},
                                        {NULL, 0, NULL, 0}};
  int c;
  const char *word;
  while ((c = next_option(argc, argv, "+:h", longs, &word)) != -1) {
    if (c != 'h') return bad_option(p, c, word);
    p->o->action = CLI_HELP;
    return 0;
  }
  if (optind >= argc)
    return usage_error(p, "SUBCOMMAND is missing (put, take, claim, peek, "
                          "size, ls or rm)");
  const char *name = argv[optind];
  for (size_t i = 0; i < N_QUEUE_SUBS; i++) {
    if (strcmp(name, queue_subs[i].name) != 0) continue;
    p->o->queue_op = queue_subs[i].op;
    int sub_argc = argc - optind;
    char **sub_argv = argv + optind; /* [0] is the subcommand's name */
    getopt_reset();
    return parse_queue_sub(p, &queue_subs[i], sub_argc, sub_argv);
  }
  return usage_error(p, "unknown subcommand '%s'", name);
}

static int take_ms(parser_t *p, const char *opt, const char *arg,
                   int32_t *out) {
  long v;
  if (cli_parse_int(arg, 1, INT32_MAX, &v) != 0)
    return usage_error(p, "%s needs milliseconds > 0, not '%s'", opt, arg);
  *out = (int32_t)v;
  return 0;
}

static int parse_global(parser_t *p, int argc, char **argv) {
  static const struct option longs[] = {
      {"servers", required_argument, NULL, 's'},
      {"session-timeout", required_argument, NULL, OPT_SESSION_TIMEOUT},
      {"connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT},
      {"auth", required_argument, NULL, OPT_AUTH},
      {"verbose", no_argument, NULL, 'v'},
      {"help", no_argument, NULL, 'h'},
      {"version", no_argument, NULL, 'V'},
      {NULL, 0, NULL, 0}};
  cli_opts_t *o = p->o;
  int c, rc;
  const char *word;
  while ((c = next_option(argc, argv, "+:s:vhV", longs, &word)) != -1) {
    switch (c) {
    case 's':
      if (optarg[0] == '\0') return usage_error(p, "-s needs HOSTS");
      o->hosts = optarg;
      break;
    case OPT_SESSION_TIMEOUT:
      if ((rc = take_ms(p, "--session-timeout", optarg,
                        &o->session_timeout_ms)) != 0)
        return rc;
      break;
    case OPT_CONNECT_TIMEOUT:
      if ((rc = take_ms(p, "--connect-timeout", optarg,
                        &o->connect_timeout_ms)) != 0)
        return rc;
      break;
    case OPT_AUTH:
      if (optarg[0] == ':' || strchr(optarg, ':') == NULL)
        return usage_error(p, "--auth needs USER:PASS");
      o->auth = optarg;
      break;
    case 'v': o->verbose++; break;
    case 'h': o->action = CLI_HELP; return 0;
    case 'V': o->action = CLI_VERSION; return 0;
    default: return bad_option(p, c, word);
    }
  }
  return 0;
}

static void defaults(cli_opts_t *o, const char *env_servers) {
  memset(o, 0, sizeof *o);
  o->action = CLI_RUN;
  o->hosts = env_servers != NULL && env_servers[0] != '\0' ? env_servers
                                                           : CLI_DEFAULT_HOSTS;
  o->session_timeout_ms = CLI_DEFAULT_SESSION_TIMEOUT_MS;
  o->connect_timeout_ms = CLI_DEFAULT_CONNECT_TIMEOUT_MS;
  o->grace_ms = CLI_DEFAULT_GRACE_MS;
  o->mode = CLI_LOCK_EXCLUSIVE;
  o->timeout_ms = -1;
  o->conflict_exit = 1;
  o->format = ZKL_QUEUE_QN;
  o->priority = -1;
  o->max_items = -1;
}

int cli_opts_parse(cli_opts_t *o, int argc, char **argv,
                   const char *env_servers, char *err, size_t errlen) {
  parser_t p = {o, err, errlen};
  defaults(o, env_servers);
  if (errlen > 0) err[0] = '\0';
  getopt_reset();
  int rc = parse_global(&p, argc, argv);
  if (rc != 0 || o->action != CLI_RUN) return rc;
  if (optind >= argc) return usage_error(&p, "COMMAND is missing");

  static const struct {
    const char *name;
    cli_command_t command;
    int (*parse)(parser_t *, int, char **);
  } commands[] = {{"lock", CLI_CMD_LOCK, parse_lock},
                  {"elect", CLI_CMD_ELECT, parse_elect},
                  {"status", CLI_CMD_STATUS, parse_status},
                  {"queue", CLI_CMD_QUEUE, parse_queue}};
  const char *name = argv[optind];
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
    if (strcmp(name, commands[i].name) != 0) continue;
    o->command = commands[i].command;
    int sub_argc = argc - optind;
    char **sub_argv = argv + optind; /* [0] is the command's name */
    getopt_reset();
    return commands[i].parse(&p, sub_argc, sub_argv);
  }
  return usage_error(&p, "unknown command '%s'", name);
}
