/* zkl/log.h - where zkl's messages, and the ZooKeeper client's, go.
 *
 * By default zkl says nothing, and the ZooKeeper client's messages go where
 * each session's log_stream option says (nowhere by default).  A daemon
 * routes both to its own logger (syslog, journald, its own) by installing
 * one handler for the process:
 *
 *   zkl_log_set(zkl_log_syslog, NULL, ZKL_LOG_INFO);   // syslog(3)
 *   zkl_log_set(my_logger, my_ctx, ZKL_LOG_DEBUG);      // your own
 *
 * What zkl says: every change of a session's state (CONNECTED, SUSPENDED,
 * RECONNECTED, LOST with its cause, the opening of a new session after
 * LOST), a session that cannot be opened, a node the janitor deletes for a
 * call that could not wait for its deletion, and a grant given up at
 * dispatch because its session was in doubt or lost by then.  What the
 * ZooKeeper client says: its own messages (connections, timeouts,
 * protocol errors), at the level it gives them.
 *
 * The handler is process-wide, as the ZooKeeper client's log level is: it
 * serves every session, and the ZooKeeper client's messages of every
 * session whose log_stream option is NULL.  A session with a log_stream
 * keeps the ZooKeeper client's messages on that stream; zkl's own go to
 * the handler when one is installed, else to the stream.
 *
 * Thread-safety: zkl_log_set() may be called at any time from any thread,
 * except from inside the handler (ZKL_EDEADLK).  The handler is called
 * from any thread, zkl's and the ZooKeeper client's, possibly from several
 * at once: it must be thread-safe (syslog(3) and sd_journal_print(3) are).
 * It must not block for long (it delays the thread that logs, maybe the
 * session's heartbeats) and should not call zkl: a message that a zkl
 * call inside the handler logs is dropped, not delivered recursively.
 */
#ifndef ZKL_LOG_H
#define ZKL_LOG_H

#include <stdint.h>
#include "zkl/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Levels, most severe first; a handler installed at level L gets every
 * message of level <= L.  The values match ZooKeeper's ZooLogLevel. */
typedef enum zkl_log_level {
  ZKL_LOG_ERROR = 1, /* something failed: a session lost, not opened     */
  ZKL_LOG_WARN = 2,  /* a hold in doubt (SUSPENDED), a grant given up     */
  ZKL_LOG_INFO = 3,  /* states that end well: connected, reconnected      */
  ZKL_LOG_DEBUG = 4  /* the detail of the ZooKeeper client's work         */
} zkl_log_level_t;

/* Who said it. */
typedef enum zkl_log_source {
  ZKL_LOG_ZKL = 0,      /* zkl itself                                      */
  ZKL_LOG_ZOOKEEPER = 1 /* the ZooKeeper C client                          */
} zkl_log_source_t;

/* A message: its level and source, the ZooKeeper session it is about (0
 * when none, or when the ZooKeeper client does not say: its messages
 * carry no session of their own), and its text: one line, no newline, no
 * time stamp (the ZooKeeper client's prefix of time, process and thread is
 * removed; its function and line stay).  The text is valid only during the
 * call. */
typedef void (*zkl_log_fn)(zkl_log_level_t level, zkl_log_source_t source,
                           int64_t session_id, const char *message,
                           void *arg);

/* Installs fn (with arg) as the process's handler for messages of level
 * max_level and more severe, replacing the one before; fn NULL removes it
 * (arg and max_level are then ignored).  With fn, it also sets the
 * ZooKeeper client's process-wide level (zoo_set_debug_level()) to
 * max_level, so that the client does not even format what would be
 * dropped.  When it returns, the handler it replaced is no longer running
 * and will not be called again: its arg may be freed.
 *   0            done.
 *   ZKL_EINVAL   fn is not NULL and max_level is not one of ZKL_LOG_*;
 *                the handler before stays.
 *   ZKL_EDEADLK  called from inside the handler; nothing changed.
 * Thread-safe. */
ZKL_EXTERN int zkl_log_set(zkl_log_fn fn, void *arg,
                           zkl_log_level_t max_level);

/* A ready handler: syslog(3), with LOG_ERR, LOG_WARNING, LOG_INFO and
 * LOG_DEBUG for the four levels (journald receives syslog too).  arg is
 * ignored; the message reads "zkl: [session 0x...] text" or "zookeeper:
 * text".  Call openlog(3) first to choose the ident and facility. */
ZKL_EXTERN void zkl_log_syslog(zkl_log_level_t level, zkl_log_source_t source,
                               int64_t session_id, const char *message,
                               void *arg);

/* A ready handler: one line per message on the stdio stream arg (a FILE *;
 * stderr when NULL), "zkl: warn: [session 0x...] text".  Each line is
 * written with one call, under the stream's lock. */
ZKL_EXTERN void zkl_log_stream(zkl_log_level_t level, zkl_log_source_t source,
                               int64_t session_id, const char *message,
                               void *arg);

/* "error", "warn", "info", "debug", or "?" for another value.  The string
 * is static.  Thread-safe. */
ZKL_EXTERN const char *zkl_log_level_name(int level);

#ifdef __cplusplus
}
#endif

#endif /* ZKL_LOG_H */
