/* cli/cli.h - PRIVATE to the zkl tool: its commands and what they share. */
#ifndef ZKL_CLI_H
#define ZKL_CLI_H

#include <stdint.h>
#include <zkl.h>

#include "opts.h"

/* Each command returns the tool's exit status. */
int cli_lock_run(const cli_opts_t *o);
int cli_elect_run(const cli_opts_t *o);
int cli_observe_run(const cli_opts_t *o);
int cli_status_run(const cli_opts_t *o);
int cli_queue_run(const cli_opts_t *o);
int cli_counter_run(const cli_opts_t *o);
/* `zkl status --counter PATH` (cli/counter.c). */
int cli_counter_status_run(const cli_opts_t *o);
int cli_barrier_run(const cli_opts_t *o);
/* `zkl status --barrier PATH` (cli/barrier.c). */
int cli_barrier_status_run(const cli_opts_t *o);
int cli_sem_run(const cli_opts_t *o);
/* `zkl status --sem PATH` (cli/sem.c). */
int cli_sem_status_run(const cli_opts_t *o);

/* Every item of the queue of format (a zkl_queue_format_t) at path, in
 * queue order, through a queue object made for the call and
 * zkl_queue_list(): 0 with *items (free with zkl_items_free()) and *n, or
 * the zkl code with zkl_last_error()'s message in detail (nothing
 * printed). */
int cli_queue_list(zkl_session_t *s, const char *path, int format,
                   zkl_item_t **items, size_t *n, char *detail,
                   size_t detail_len);

/* Opens the session as the options say, on a thread with every signal
 * blocked (so that ZooKeeper's threads, started by it, block them too).
 * on_state may be NULL.
 *   0                   *out connected.
 *   CLI_EX_UNAVAILABLE  no server answered in time (message names hosts).
 *   CLI_EX_NOPERM       the credentials were refused.
 *   CLI_EX_SOFTWARE     anything else (message printed). */
int cli_connect(const cli_opts_t *o, zkl_session_state_fn on_state,
                void *state_arg, zkl_session_t **out);

/* Closes the session cli_connect() opened, first printing its counters
 * (zkl_session_stats) on stderr if --stats was given.  NULL-safe. */
void cli_session_close(zkl_session_t *s);

/* The tool's exit status for a failed zkl call (after "zkl: ..." has been
 * printed by the caller). */
int cli_exit_code(int zkl_rc);

/* "zkl: <message>" on stderr, when -v was given. */
void cli_verbose(const cli_opts_t *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The session state's name, for messages. */
const char *cli_state_name(int state);

#endif /* ZKL_CLI_H */
