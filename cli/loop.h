/* cli/loop.h - PRIVATE to the zkl tool: the one loop the main thread runs
 * while a command waits for a lock, a queue item, a counter, a barrier or
 * a semaphore's leases, or runs CMD.
 *
 * Everything that happens reaches the main thread as an event, in order:
 * signals (through a self-pipe written by the handlers), and what zkl
 * reports: the session's completion queue (zkl_session_fd()) is polled
 * too and dispatched on this thread, where the completions of the async
 * lock and queue calls, the session states and the election callbacks
 * post their events to a pipe (as a watch on our node does, from
 * ZooKeeper's thread).  Only the main thread has the signals
 * unblocked: every other thread (ZooKeeper's, zkl's, the tool's workers)
 * is started with all signals blocked.
 */
#ifndef ZKL_CLI_LOOP_H
#define ZKL_CLI_LOOP_H

#include <pthread.h>
#include <stdint.h>

#include <zkl.h>

#include "opts.h"

typedef enum cli_event_type {
  CLI_EV_SIGNAL = 1, /* arg: SIGINT, SIGTERM or SIGHUP                    */
  CLI_EV_CHILD,      /* SIGCHLD: a child may have ended                    */
  CLI_EV_STATE,      /* arg: a zkl_session_state_t                         */
  CLI_EV_ACQUIRED,   /* the lock's (or the leases') acquisition ended; arg:
                        its code                                          */
  CLI_EV_RELEASED,   /* the lock's (or the leases') release ended; arg: its
                        code                                              */
  CLI_EV_NODE,       /* the hold is gone (its watch); arg: its code        */
  CLI_EV_ELECTED,    /* token: the leadership's fencing token              */
  CLI_EV_REVOKED,    /* arg: a zkl_election_reason_t                       */
  CLI_EV_LEADER,     /* an observer's news: data/len the id, len -1: none  */
  CLI_EV_TAKEN,      /* a queue take or claim ended; arg: its code         */
  CLI_EV_SETTLED,    /* a queue put, ack or nack ended; arg: its code      */
  CLI_EV_COUNTED,    /* a counter call ended; arg: its code                */
  CLI_EV_BARRIER,    /* a barrier call ended; arg: its code                */
  CLI_EV_CHANGED     /* status --watch: the path's children changed        */
} cli_event_type_t;

typedef struct cli_event {
  cli_event_type_t type;
  int arg;
  int len;
  uint64_t token;
  char data[CLI_ID_MAX];
} cli_event_t;

/* Makes the pipes and installs the handlers for SIGINT, SIGTERM, SIGHUP
 * (each unless it was ignored when zkl started, as a shell leaves it for
 * background jobs: CMD then inherits it ignored) and SIGCHLD.  Until
 * cli_loop_connected() a SIGINT/SIGTERM/SIGHUP ends the process at once
 * with 128+N: nothing is on the server yet.  0, or -1 with errno. */
int cli_loop_init(void);
/* From now on signals become events, and s's completions are dispatched
 * by cli_loop_next() (s may be NULL: none). */
void cli_loop_connected(zkl_session_t *s);
/* Restores the dispositions zkl started with, in a child before exec
 * (async-signal-safe), along with the signal mask zkl started with. */
void cli_loop_child_reset(void);

/* Posts ev from any thread (not from a signal handler); never fails
 * silently: a broken pipe aborts, since the main thread would wait
 * forever. */
void cli_loop_post(const cli_event_t *ev);
/* Shorthand for an event with only a type and an argument. */
void cli_loop_post_arg(cli_event_type_t type, int arg);

/* The next event: 1 and *ev filled, or 0 once the monotonic deadline_ns
 * has passed (INT64_MAX: none). */
int cli_loop_next(cli_event_t *ev, int64_t deadline_ns);

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t cli_now_ns(void);

/* pthread_create() with every signal blocked in the new thread: 0 or an
 * errno value. */
int cli_thread_start(pthread_t *t, void *(*fn)(void *), void *arg);

#endif /* ZKL_CLI_LOOP_H */
