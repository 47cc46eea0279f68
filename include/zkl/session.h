/* zkl/session.h - one ZooKeeper connection, shared by any number of recipes.
 *
 * Thread-safety: a session may be used from any number of threads at once,
 * and shared by any number of recipe objects (mutexes, ...).  Every function
 * here is thread-safe except zkl_session_close(), which must be the last call
 * on the session.
 *
 * Threads: besides ZooKeeper's two, a session runs three threads of its
 * own, however many locks wait.  One sends a small request every fifth of
 * the session timeout to know when the server last answered, and declares
 * the session LOST once it has been silent for a whole session timeout.
 * One (the engine) moves every asynchronous call of the session's recipe
 * objects forward (zkl_mutex_lock_async(), ...): a waiting asynchronous
 * call holds no thread.  A blocking call runs the same steps on the
 * caller's thread, which sleeps between them until an answer, a watch or
 * its deadline wakes it.  The third delivers on_state callbacks, deletes
 * nodes whose deletion a caller could not wait for (connection down, or no
 * answer before the caller's deadline) once the server answers again, and
 * after LOST opens the new ZooKeeper session (option reestablish).
 *
 * Event loops: the asynchronous calls (zkl_mutex_lock_async(), ...) report
 * through the session's completion queue.  zkl_session_fd() is readable
 * while completions wait; zkl_session_dispatch() runs them on the calling
 * thread.  Each accepted asynchronous call gets exactly one completion,
 * never from inside the call that started it.  With on_state_in_dispatch
 * the state changes come through the same queue, in order with the
 * completions, so that a loop learns SUSPENDED and LOST there.
 */
#ifndef ZKL_SESSION_H
#define ZKL_SESSION_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "zkl/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ZooKeeper's handle type, declared here so that <zkl.h> does not need
 * <zookeeper/zookeeper.h>; the same typedef as ZooKeeper's own. */
typedef struct _zhandle zhandle_t;
struct ACL_vector;

typedef struct zkl_session zkl_session_t;

/* Which ACL zkl puts on the nodes it creates (lock roots and contenders). */
typedef enum zkl_acl {
  ZKL_ACL_OPEN = 0,        /* world:anyone has every permission (default) */
  ZKL_ACL_CREATOR_ALL = 1, /* only the authenticated creator (needs auth)  */
  ZKL_ACL_READ_ALL = 2,    /* creator has all, world may read              */
  ZKL_ACL_CUSTOM = 3       /* the vector in zkl_session_opts_t.custom_acl  */
} zkl_acl_t;

/* Session states, as zkl_session_state() and the on_state callback report
 * them. */
typedef enum zkl_session_state {
  ZKL_SESSION_CONNECTING = 0, /* not yet connected for the first time       */
  ZKL_SESSION_CONNECTED = 1,  /* connected; holds are valid.  As a callback
                                 after LOST: a NEW session (another
                                 zkl_session_id()); holds of the old one
                                 stay lost                                  */
  ZKL_SESSION_SUSPENDED = 2,  /* connection lost; the session may still be
                                 alive: every hold is in doubt (do not act
                                 on it) until RECONNECTED or LOST           */
  ZKL_SESSION_LOST = 3,       /* the session is gone: the server said it
                                 expired, or zkl declared it lost because it
                                 has not heard from the server for a whole
                                 session timeout (by then the server may
                                 have expired it).  Every hold and queued
                                 node of it is gone.  With the reestablish
                                 option (default) zkl then opens a new
                                 session (CONNECTED follows); without it
                                 LOST is final.                             */
  ZKL_SESSION_CLOSED = 4,     /* zkl_session_close() has begun              */
  ZKL_SESSION_RECONNECTED = 5 /* callback only: the same session is back
                                 after SUSPENDED; holds are valid again.
                                 zkl_session_state() then says CONNECTED.   */
} zkl_session_state_t;

/* Called on the session's own thread for every change of state, in
 * order: CONNECTED (first), SUSPENDED, RECONNECTED, LOST.  May call any
 * zkl function except zkl_session_close() on this session (ignored from
 * there: it would wait for its own thread).  Should return promptly: the
 * session's janitor work waits for it (heartbeats do not). */
typedef void (*zkl_session_state_fn)(zkl_session_t *s,
                                     zkl_session_state_t state, void *arg);

/* How an asynchronous call ends: obj is the object it was made on (a
 * zkl_mutex_t *, a zkl_rwlock_t *), rc its result (the codes of the
 * blocking call it mirrors), token the fencing token of a hold it granted
 * (0 otherwise), arg the caller's.  zkl_last_error() holds rc's detail
 * message while it runs.  Runs on the thread calling
 * zkl_session_dispatch(); it may call any zkl function, including
 * starting, canceling or destroying (the object's destroy included), but
 * not zkl_session_close() on this session nor a blocking call that waits
 * for another completion of it.  When obj was destroyed before the
 * completion was dispatched, rc is ZKL_ECANCELED and obj must not be
 * used (its value only identifies the call). */
typedef void (*zkl_done_fn)(void *obj, int rc, uint64_t token, void *arg);

/* Options for zkl_session_open().  Always start from zkl_session_opts_init()
 * so that fields added in later versions get their defaults. */
typedef struct zkl_session_opts {
  int32_t session_timeout_ms; /* asked of the server; default 10000. The
                                 server clamps it to [2, 20] x its tickTime */
  int32_t connect_timeout_ms; /* how long zkl_session_open() waits for the
                                 first connection; default 10000           */
  const char *auth;           /* digest "user:password", or NULL (default) */
  zkl_acl_t acl;              /* ACL of created nodes; default ZKL_ACL_OPEN */
  const struct ACL_vector *custom_acl; /* used with ZKL_ACL_CUSTOM; copied  */
  FILE *log_stream;           /* where the ZooKeeper client's log goes, and
                                 zkl's own messages about this session when
                                 no zkl_log_set() handler is installed;
                                 NULL (default): both go to that handler if
                                 any, else nowhere (zkl/log.h)             */
  int log_level;              /* 0 (default): leave ZooKeeper's process-wide
                                 level alone; 1..4 = error, warn, info, debug
                                 sets it with zoo_set_debug_level(), and is
                                 the most verbose of zkl's own messages
                                 written to log_stream (info when 0)       */
  zkl_session_state_fn on_state; /* state changes; NULL (default): none    */
  void *state_arg;            /* passed to on_state                         */
  int reestablish;            /* 1 (default): after LOST, open a new
                                 ZooKeeper session on the same hosts (and
                                 credentials), retrying until it connects
                                 or zkl_session_close().  Calls waiting to
                                 acquire keep waiting and queue again on the
                                 new session; an election candidate runs
                                 again; holds of the old session stay lost
                                 (ZKL_ELOST from holding/unlock) until
                                 acquired again.  0: LOST is final, every
                                 later call fails with ZKL_ELOST.           */
  int on_state_in_dispatch;   /* 0 (default): on_state runs on the
                                 session's thread.  1: it runs from
                                 zkl_session_dispatch() on the caller's
                                 thread (an event loop's), in order with
                                 the completions of asynchronous calls.    */
} zkl_session_opts_t;

/* Fills *opts with the defaults above.  Thread-safe. */
ZKL_EXTERN void zkl_session_opts_init(zkl_session_opts_t *opts);

/* Connects to the ZooKeeper ensemble `hosts` ("host:port,host:port[/chroot]")
 * and returns only once the session is established.
 *   0               *out is a connected session; close it with
 *                   zkl_session_close().
 *   ZKL_EINVAL      out or hosts is NULL, hosts is empty, or an option is out
 *                   of range (timeouts <= 0, CREATOR_ALL without auth, CUSTOM
 *                   without custom_acl, auth without a ':').
 *   ZKL_ECONNECT    no server answered within connect_timeout_ms, or the
 *                   host string could not be resolved; the message printed to
 *                   opts->log_stream (if any) names the hosts.
 *   ZKL_EAUTH       the server refused the digest credentials.
 *   ZKL_ENOMEM / ZKL_ESYSTEM  allocation or thread creation failed.
 * On any failure *out is left NULL and nothing is left allocated or running.
 * Ownership: hosts and every option (strings, ACL) are copied. */
ZKL_EXTERN int zkl_session_open(zkl_session_t **out, const char *hosts,
                                const zkl_session_opts_t *opts);

/* Closes the session now (not from one of its completions or on_state
 * callbacks: refused, with zkl_last_error() saying so).  If connected,
 * the server deletes every
 * ephemeral node of the session at once, so every lock held or queued
 * through it is released; if the connection is down, they go when the
 * server expires the session (one session timeout).
 * Recipe objects still alive on the session stay valid as memory: their
 * calls fail with ZKL_ELOST and they must still be destroyed; the session's
 * own memory is freed with the last of them.  NULL-safe.  Must not race
 * with other calls on s or on its recipe objects. */
ZKL_EXTERN void zkl_session_close(zkl_session_t *s);

/* The session's state now (see zkl_session_state_t); ZKL_EINVAL for NULL.
 * Thread-safe. */
ZKL_EXTERN int zkl_session_state(zkl_session_t *s);

/* The negotiated session timeout in milliseconds (0 before connection),
 * ZKL_EINVAL for NULL.  Thread-safe. */
ZKL_EXTERN int zkl_session_timeout(zkl_session_t *s);

/* The ZooKeeper session id (0 if none).  Thread-safe. */
ZKL_EXTERN int64_t zkl_session_id(zkl_session_t *s);

/* A file descriptor that is readable while completions (of asynchronous
 * calls, and state changes with on_state_in_dispatch) wait to be run by
 * zkl_session_dispatch().  Add it to your loop for reading (level
 * triggered); do not read, write or close it.  The same fd for the whole
 * life of the session.  >= 0, or ZKL_EINVAL for NULL.  Thread-safe. */
ZKL_EXTERN int zkl_session_fd(zkl_session_t *s);

/* Runs the completions waiting now, in the order they came, on the calling
 * thread, and clears the fd's readiness; completions queued meanwhile (by
 * the callbacks, say) make the fd readable again for the next call.
 *   >= 0        how many ran (0: none waited).
 *   ZKL_EINVAL  s is NULL.
 * Thread-safe; run it from one thread (your loop's) so that completions
 * come in order.  It may be called from inside a completion (it then runs
 * what came since). */
ZKL_EXTERN int zkl_session_dispatch(zkl_session_t *s);

/* Buckets of zkl_session_stats_t.wait_hist: grants that waited less than
 * 1 ms, 10 ms, 100 ms, 1 s, 10 s, 100 s, and longer. */
#define ZKL_STATS_WAIT_BUCKETS 7

/* What a session has done since zkl_session_open(), for operators: every
 * field counts up from 0 (but `waiting`, a level), across
 * re-establishments.  Fields are added at the end only, and
 * zkl_session_stats() fills as many as the caller's size has room for. */
typedef struct zkl_session_stats {
  /* requests sent to the server, by kind (a request the client refused to
   * send, the connection being closed, is not counted) */
  uint64_t creates;      /* create                                         */
  uint64_t deletes;      /* delete                                         */
  uint64_t exists;       /* exists, heartbeats excepted                    */
  uint64_t gets;         /* getData                                        */
  uint64_t sets;         /* setData                                        */
  uint64_t children;     /* getChildren                                    */
  uint64_t multis;       /* multi (a transaction of several operations)     */
  uint64_t syncs;        /* sync                                           */
  uint64_t heartbeats;   /* zkl's liveness probes: an exists of "/" every
                            fifth of the session timeout                   */
  uint64_t watches;      /* requests above that armed a watch              */
  uint64_t events;       /* node events the server delivered for them      */
  uint64_t wakeups;      /* waiting operations those events woke           */
  /* turns in the contention core: a lock, a read or write lock, a
   * leadership, and the lines inside other recipes (a semaphore's gate,
   * each path of a multi-lock, a queue's line of waiting consumers) */
  uint64_t acquisitions; /* started                                        */
  uint64_t grants;       /* ended granted                                  */
  uint64_t timeouts;     /* ended at their deadline (ZKL_ETIMEDOUT), or a
                            try found them taken (ZKL_EBUSY)               */
  uint64_t cancels;      /* ended by a cancel or a destroy (ZKL_ECANCELED) */
  uint64_t failures;     /* ended otherwise: session lost, node deleted by
                            someone else, no memory, ...                   */
  uint64_t waiting;      /* underway now (a level, not a count)            */
  uint64_t wait_hist[ZKL_STATS_WAIT_BUCKETS]; /* grants by how long they
                            took from the call: see ZKL_STATS_WAIT_BUCKETS */
  uint64_t wait_us_total; /* the time all grants took, microseconds        */
  uint64_t wait_us_max;   /* the longest                                    */
  /* session states, as on_state reports them */
  uint64_t connects;     /* CONNECTED: the first session, and each new one
                            opened after a LOST                            */
  uint64_t suspensions;  /* SUSPENDED                                      */
  uint64_t reconnects;   /* RECONNECTED                                    */
  uint64_t losses;       /* LOST                                           */
} zkl_session_stats_t;

/* Copies s's counters into *out: the first `size` bytes of them (pass
 * sizeof *out; a program built against an older, shorter struct gets what
 * it knows).  Each counter is read atomically, not all of them at one
 * instant.
 *   0           *out filled.
 *   ZKL_EINVAL  s or out is NULL, or size is 0; *out untouched.
 * Thread-safe, also from callbacks; costs no request. */
ZKL_EXTERN int zkl_session_stats(zkl_session_t *s, zkl_session_stats_t *out,
                                 size_t size);

/* Writes s's counters to the file `path` now and then every interval_ms
 * (100 to 3600000), for operators: `zkl status --stats FILE` shows them,
 * and the text is Prometheus's exposition format, so that node_exporter's
 * textfile collector can serve a file named *.prom in its directory as it
 * is (every sample has the label file="<path's last part>", so the files
 * of several processes there never make the same series).  Besides the
 * counters the file says the session's current id, hosts, state, the
 * process's pid, and when it was written.  A relative path is taken from
 * the working directory at the call.  Each write goes to a temporary file
 * beside it (PATH.PID.N.tmp), then renamed over path: a reader never sees
 * half a file.  The first write is made by this call; the later ones by a
 * thread of the export's own, so that the session's threads never wait
 * for a disk (ending an export waits for a write underway).  A later write
 * that fails is logged (zkl/log.h) once, and tried again at each interval.
 * The file is removed when the export ends: zkl_session_close(), a new
 * call (the old export ends first, even for the same path), or path NULL.
 *   0           the file is written and will be again; or (path NULL) no
 *               export runs any more.
 *   ZKL_EINVAL  s is NULL, path is "", or interval_ms is out of range (an
 *               export already running goes on unchanged); or
 *               zkl_session_close() has begun (from a callback).
 *   ZKL_ESYSTEM the first write failed (zkl_last_error() names the file and
 *               the cause), or no thread could be started.
 *   ZKL_ENOMEM  no memory.
 * After ZKL_ESYSTEM or ZKL_ENOMEM no export runs (an earlier one has
 * ended).  Thread-safe, also from callbacks; costs no request.
 * Ownership: path is copied. */
ZKL_EXTERN int zkl_session_stats_export(zkl_session_t *s, const char *path,
                                        int32_t interval_ms);

/* Escape hatch: the underlying ZooKeeper handle, for the caller's own
 * ZooKeeper calls on the same session.  Owned by the session: do not close
 * it, and do not register a global watcher on it.  NULL for NULL.
 * When the session is re-established after LOST the handle is replaced
 * and the old one closed: ask again after the CONNECTED that follows a
 * LOST, and do not use a handle across one. */
ZKL_EXTERN zhandle_t *zkl_session_zhandle(zkl_session_t *s);

#ifdef __cplusplus
}
#endif
#endif /* ZKL_SESSION_H */
