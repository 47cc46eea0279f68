/* cli/child.h - PRIVATE to the zkl tool: CMD's process. */
#ifndef ZKL_CLI_CHILD_H
#define ZKL_CLI_CHILD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct cli_child {
  pid_t pid;        /* 0 until started                                   */
  int running;      /* started and not yet reaped                        */
  int code;         /* once reaped: its status as a shell reports it
                       (exit status, or 128 + the signal that ended it)  */
  int64_t kill_at;  /* monotonic ns when SIGKILL is due; INT64_MAX none  */
} cli_child_t;

/* Remembers the descriptors zkl was started with: CMD inherits those and
 * no others (not ZooKeeper's sockets).  Call first thing in main(). */
void cli_child_fds_init(void);
void cli_child_fds_fini(void);

/* Looks name up as execvp() would: a name with a '/' as it is, otherwise
 * in each directory of path_env (NULL: the system's default path; an empty
 * entry is the current directory).  0 and the file's path in out; or
 * CLI_EX_NOT_FOUND (no such file) or CLI_EX_CANNOT_EXEC (only files that
 * cannot be executed, or out is too small). */
int cli_child_find(const char *name, const char *path_env, char *out,
                   size_t outlen);

/* Starts argv with zkl's environment, in which every "NAME=value" of env
 * (NULL-terminated) replaces NAME.
 *   0                   started: c->running.
 *   CLI_EX_NOT_FOUND / CLI_EX_CANNOT_EXEC  argv[0] could not be run, as a
 *                       shell says it (a message is printed).
 *   CLI_EX_SOFTWARE     fork, pipe or memory failed (message printed). */
int cli_child_start(cli_child_t *c, char *const argv[], char *const env[]);

/* As cli_child_start(), with in_fd as CMD's standard input (-1: zkl's
 * own).  in_fd should be close-on-exec: CMD gets it as descriptor 0 only.
 * A failure to set it up is told as an exec failure (CLI_EX_CANNOT_EXEC,
 * message printed). */
int cli_child_start_in(cli_child_t *c, char *const argv[], char *const env[],
                       int in_fd);

/* Reaps the child if it has ended: 1 (c->code set), 0 still running. */
int cli_child_reap(cli_child_t *c);

/* Sends sig to the running child. */
void cli_child_signal(cli_child_t *c, int sig);

/* SIGTERM now and SIGKILL grace_ms later (see cli_child_tick()); a second
 * call does not postpone the SIGKILL. */
void cli_child_stop(cli_child_t *c, int64_t grace_ms);

/* Sends the SIGKILL if it is due. */
void cli_child_tick(cli_child_t *c);

#endif /* ZKL_CLI_CHILD_H */
