/* cli/opts.h - PRIVATE to the zkl command-line tool: its command line.
 *
 * Pure logic (no server, no I/O but what getopt_long does to its globals),
 * so tests/cli/unit-tests reaches every rule.  Functions of the tool are
 * named cli_*; nothing here is part of the library.
 */
#ifndef ZKL_CLI_OPTS_H
#define ZKL_CLI_OPTS_H

#include <stddef.h>
#include <stdint.h>

/* Exit statuses of the tool besides CMD's own (sysexits.h values, so that
 * scripts can tell them apart from a command's usual 0/1/2). */
/* How often --stats-file writes the session's counters. */
#define CLI_STATS_FILE_INTERVAL_MS 1000

enum {
  CLI_EX_USAGE = 64,       /* bad command line                             */
  CLI_EX_NOINPUT = 66,     /* status --stats: a FILE missing or unreadable,
                              or no counters file                          */
  CLI_EX_UNAVAILABLE = 69, /* no ZooKeeper server answered                 */
  CLI_EX_SOFTWARE = 70,    /* any other failure                            */
  CLI_EX_LOST = 75,        /* lock or leadership lost (session LOST, node
                              deleted): CMD was stopped                    */
  CLI_EX_NOPERM = 77,      /* credentials refused, or the path's ACL       */
  CLI_EX_CANNOT_EXEC = 126,/* CMD found but not executable                 */
  CLI_EX_NOT_FOUND = 127,  /* CMD not found                                */
  CLI_EX_SIGNAL_BASE = 128 /* + signal number: CMD (or zkl) killed by it   */
};

typedef enum cli_command {
  CLI_CMD_NONE = 0,
  CLI_CMD_LOCK,
  CLI_CMD_ELECT,
  CLI_CMD_STATUS,
  CLI_CMD_QUEUE,
  CLI_CMD_COUNTER,
  CLI_CMD_BARRIER,
  CLI_CMD_SEM
} cli_command_t;

/* What `zkl queue` does (its first operand). */
typedef enum cli_queue_op {
  CLI_QUEUE_NONE = 0,
  CLI_QUEUE_PUT,   /* append DATA, stdin, or each line of stdin         */
  CLI_QUEUE_TAKE,  /* take the head item(s) and print them             */
  CLI_QUEUE_PEEK,  /* print the head item without taking it            */
  CLI_QUEUE_SIZE,  /* print the number of children                      */
  CLI_QUEUE_LS,    /* list the items in queue order                      */
  CLI_QUEUE_RM,    /* remove the item NAME                               */
  CLI_QUEUE_CLAIM  /* claim the head item, run CMD on it, ack or nack    */
} cli_queue_op_t;

/* What `zkl counter` does (its first operand). */
typedef enum cli_counter_op {
  CLI_COUNTER_NONE = 0,
  CLI_COUNTER_GET,  /* print the value                                   */
  CLI_COUNTER_SET,  /* write VALUE whatever the counter holds            */
  CLI_COUNTER_ADD,  /* add DELTA atomically, print the new value         */
  CLI_COUNTER_CAS,  /* write VALUE if the version is still VERSION       */
  CLI_COUNTER_WAIT  /* wait for the next change, print the new value     */
} cli_counter_op_t;

/* What `zkl barrier` does (its first operand). */
typedef enum cli_barrier_op {
  CLI_BARRIER_NONE = 0,
  CLI_BARRIER_SET,    /* make the barrier's node                          */
  CLI_BARRIER_REMOVE, /* delete it (exit 1 if it was not set)             */
  CLI_BARRIER_WAIT,   /* wait until it is gone                            */
  CLI_BARRIER_ENTER   /* the double barrier: enter, run CMD, leave        */
} cli_barrier_op_t;

/* What main() should do once the command line is read. */
typedef enum cli_action {
  CLI_RUN = 0,   /* run the command                                      */
  CLI_HELP,      /* print cli_help(command) on stdout, exit 0            */
  CLI_VERSION    /* print the version on stdout, exit 0                  */
} cli_action_t;

typedef enum cli_lock_mode {
  CLI_LOCK_EXCLUSIVE = 0, /* zkl_mutex                                   */
  CLI_LOCK_READ,          /* zkl_rwlock, shared                          */
  CLI_LOCK_WRITE          /* zkl_rwlock, exclusive                       */
} cli_lock_mode_t;

#define CLI_DEFAULT_HOSTS "127.0.0.1:2181"
#define CLI_DEFAULT_SESSION_TIMEOUT_MS 10000
#define CLI_DEFAULT_CONNECT_TIMEOUT_MS 5000
#define CLI_DEFAULT_GRACE_MS 5000
#define CLI_ID_MAX 1024   /* the library's limit on node data */
#define CLI_QUEUE_BATCH_MAX 1000 /* items of one put or take (queue.h)  */
#define CLI_MAX_ITEMS_MAX 1000000000L /* --max-items at most            */
#define CLI_MEMBERS_MAX 2147483647L /* barrier enter -n: the library's int */
#define CLI_SEM_MAX_MAX 2147483647L /* sem -n: the library's int, and what
                                       a 4-byte shared count holds       */

typedef struct cli_opts {
  cli_action_t action;
  cli_command_t command;
  /* global options */
  const char *hosts;            /* -s, else $ZKL_SERVERS, else default    */
  int32_t session_timeout_ms;   /* --session-timeout MS                   */
  int32_t connect_timeout_ms;   /* --connect-timeout MS                   */
  const char *auth;             /* --auth USER:PASS, or NULL              */
  int verbose;                  /* -v, counted                            */
  int stats;                    /* --stats: the session's counters at the
                                   end, on stderr                         */
  const char *stats_file;       /* --stats-file FILE, or NULL             */
  /* lock, elect, queue claim, barrier enter and sem */
  const char *path;             /* PATH                                   */
  char **cmd;                   /* CMD [ARG...], NULL-terminated (argv's) */
  int64_t grace_ms;             /* --grace SECONDS: TERM to KILL          */
  /* lock (timeout_ms and conflict_exit: barrier enter's and sem's too) */
  cli_lock_mode_t mode;         /* --read / --write                       */
  int all;                      /* --all: the multi-lock of paths[]       */
  char **paths;                 /* --all's PATHs (argv's; not NULL-
                                   terminated: the "--" follows), n_paths
                                   of them, each valid and none twice;
                                   path is paths[0]                      */
  size_t n_paths;               /* 1..ZKL_MULTILOCK_MAX with --all, else 0 */
  int64_t timeout_ms;           /* -1 wait forever; 0 -n; else -t         */
  int conflict_exit;            /* -E N, default 1                        */
  /* elect */
  const char *id;               /* -i ID, or NULL: "host:pid"             */
  int observe;                  /* --observe                              */
  /* status, queue take/peek/ls */
  int json;                     /* --json                                 */
  /* queue (timeout_ms above: take's and claim's -n/-t, put's -t) */
  cli_queue_op_t queue_op;      /* the subcommand                         */
  int format;                   /* --format: a zkl_queue_format_t (claim:
                                   always ZKL_QUEUE_LOCKING)             */
  int priority;                 /* --priority N (kazoo, locking), -1: the
                                   default                               */
  long max_items;               /* --max-items N, -1: the library's       */
  long soft_max;                /* put --soft-max N, 0: none              */
  int nack_tail;                /* claim --nack-tail: a failed item goes
                                   to the end (ZKL_QUEUE_TAIL)           */
  int batch;                    /* put --batch: one item per line         */
  int max;                      /* take --max N, 0 when not given         */
  const char *data;             /* put DATA (argv's), NULL: stdin         */
  const char *name;             /* rm NAME                                */
  /* counter (timeout_ms above: add's and wait's -t; json too); status
     --counter takes counter_format */
  cli_counter_op_t counter_op;  /* the subcommand                         */
  int counter_format;           /* --format: a zkl_counter_format_t       */
  int64_t initial;              /* --initial N, within the format's range */
  int64_t number;               /* set and cas VALUE, add DELTA           */
  int32_t version;              /* cas VERSION (a dataVersion)            */
  int version_none;             /* cas VERSION 'none': still missing      */
  /* barrier (timeout_ms above: wait's -t, enter's -t for entering;
     conflict_exit, grace_ms and cmd: enter's) */
  cli_barrier_op_t barrier_op;  /* the subcommand                         */
  int members;                  /* enter -n MEMBERS, 0 when not given     */
  int64_t leave_timeout_ms;     /* enter: --leave-timeout, else -t's (-1:
                                   wait for ever)                        */
  /* sem (timeout_ms, conflict_exit, grace_ms and cmd above); status
     --sem takes count_path and sem_format */
  int sem_max;                  /* -n MAX, 0 when not given (then the
                                   shared count's, or with --kazoo the
                                   one stored at PATH)                   */
  int qty;                      /* --qty Q: leases taken at once, 1..
                                   ZKL_SEM_QTY_MAX (default 1)           */
  const char *count_path;       /* --count-path P: the shared count, or
                                   NULL                                  */
  int sem_format;               /* --kazoo: ZKL_SEM_KAZOO (kazoo's layout,
                                   MAX stored in PATH's data), else
                                   ZKL_SEM_CURATOR                       */
  /* status */
  int status_counter;           /* --counter: PATH as a counter           */
  int status_barrier;           /* --barrier: PATH as a barrier           */
  int status_sem;               /* --sem: PATH as a semaphore             */
  int status_stats;             /* --stats: files[] as counters files     */
  char **files;                 /* status --stats's FILEs (argv's)        */
  size_t n_files;
  int status_watch;             /* --watch: again at every change         */
} cli_opts_t;

/* Reads argv (argv[argc] must be NULL, as main() gets it).  env_servers is
 * $ZKL_SERVERS (NULL or "" for unset).  Pointers in *o point into argv or
 * at static strings.  Uses and resets getopt_long()'s globals.
 *   0             *o is complete (o->action says what to do).
 *   CLI_EX_USAGE  err holds a one-line hint without trailing newline,
 *                 e.g. "zkl lock: -t needs SECONDS (try 'zkl lock --help')".
 * Not thread-safe (getopt). */
int cli_opts_parse(cli_opts_t *o, int argc, char **argv,
                   const char *env_servers, char *err, size_t errlen);

/* The --help text of a command (CLI_CMD_NONE: the tool's).  Static. */
const char *cli_help(cli_command_t command);

/* The command's name as typed ("lock"), "" for CLI_CMD_NONE. */
const char *cli_command_name(cli_command_t command);

/* The queue subcommand's name as typed ("put"), "" for CLI_QUEUE_NONE. */
const char *cli_queue_op_name(cli_queue_op_t op);

/* The name --format takes for a zkl_queue_format_t ("qn", "kazoo",
 * "locking"), "?" for any other value. */
const char *cli_format_name(int format);

/* The zkl_queue_format_t that --format calls name: 0 and *format, or -1
 * (*format untouched). */
int cli_format_parse(const char *name, int *format);

/* The counter subcommand's name as typed ("add"), "" for
 * CLI_COUNTER_NONE. */
const char *cli_counter_op_name(cli_counter_op_t op);

/* The barrier subcommand's name as typed ("enter"), "" for
 * CLI_BARRIER_NONE. */
const char *cli_barrier_op_name(cli_barrier_op_t op);

/* The name --format takes for a zkl_counter_format_t ("int32", "int64",
 * "text"), "?" for any other value. */
const char *cli_counter_format_name(int format);

/* The zkl_counter_format_t that --format calls name: 0 and *format, or -1
 * (*format untouched). */
int cli_counter_format_parse(const char *name, int *format);

/* The values a counter of format (a zkl_counter_format_t) holds: 0 with
 * *min and *max, or -1 for an unknown format. */
int cli_counter_range(int format, int64_t *min, int64_t *max);

/* What cli_parse_int64() says of a word. */
enum {
  CLI_NUM_OK = 0,
  CLI_NUM_SYNTAX = -1, /* not a decimal integer                          */
  CLI_NUM_RANGE = -2   /* a decimal integer, outside [min, max]          */
};

/* A decimal integer in [min, max]: an optional sign ('-' or '+') and
 * digits, nothing else (no blank, no "0x", no trailing junk).  Numbers of
 * any length are told apart: past int64 is CLI_NUM_RANGE too.
 * CLI_NUM_OK with *out, or CLI_NUM_SYNTAX / CLI_NUM_RANGE (*out
 * untouched). */
int cli_parse_int64(const char *s, int64_t min, int64_t max, int64_t *out);

/* cas's VERSION: a node's data version as get --json shows it (any 32-bit
 * integer: it wraps to negative values), or "none" (the node must still be
 * missing).  0 with *version and *none (1 for "none", *version then 0),
 * or -1 (both untouched). */
int cli_parse_version(const char *s, int32_t *version, int *none);

/* Decimal seconds ("2", "0.5", "1.25") to milliseconds, rounded up to a
 * whole millisecond; at most 10^9 seconds.  0, or -1 for anything else. */
int cli_parse_seconds(const char *s, int64_t *ms);

/* A decimal integer in [min, max] with nothing around it: 0, or -1. */
int cli_parse_int(const char *s, long min, long max, long *out);

#endif /* ZKL_CLI_OPTS_H */
