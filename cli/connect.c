/* cli/connect.c - the session every command opens, exit codes for zkl's
 * errors, and messages. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <zookeeper/zookeeper.h>

#include "cli.h"
#include "loop.h"

typedef struct connect_job {
  const char *hosts;
  zkl_session_opts_t so;
  zkl_session_t *s;
  int rc;
  char detail[512]; /* zkl_last_error() is per thread: copied here */
} connect_job_t;

/* The options of the command's session, for cli_session_close(). */
static const cli_opts_t *session_opts;

/* -v: zkl's messages on stderr; -vv: the ZooKeeper client's too. */
static void log_to_stderr(zkl_log_level_t level, zkl_log_source_t source,
                          int64_t session_id, const char *message,
                          void *arg) {
  const cli_opts_t *o = arg;
  if (source == ZKL_LOG_ZOOKEEPER && o->verbose < 2) return;
  zkl_log_stream(level, source, session_id, message, stderr);
}

static void *connect_main(void *arg) {
  connect_job_t *job = arg;
  job->rc = zkl_session_open(&job->s, job->hosts, &job->so);
  if (job->rc != 0)
    snprintf(job->detail, sizeof job->detail, "%s", zkl_last_error());
  return NULL;
}

int cli_connect(const cli_opts_t *o, zkl_session_state_fn on_state,
                void *state_arg, zkl_session_t **out) {
  connect_job_t job;
  memset(&job, 0, sizeof job);
  job.hosts = o->hosts;
  zkl_session_opts_init(&job.so);
  job.so.session_timeout_ms = o->session_timeout_ms;
  job.so.connect_timeout_ms = o->connect_timeout_ms;
  job.so.auth = o->auth;
  job.so.on_state = on_state;
  job.so.state_arg = state_arg;
  job.so.on_state_in_dispatch = 1; /* on the main thread's loop */
  if (o->verbose >= 1 && zkl_log_set(log_to_stderr, (void *)o, ZKL_LOG_INFO) != 0)
    fprintf(stderr, "zkl: cannot log: %s\n", zkl_last_error());
  session_opts = o;
  pthread_t t;
  int err = cli_thread_start(&t, connect_main, &job);
  if (err != 0) {
    fprintf(stderr, "zkl: cannot start a thread: %s\n", strerror(err));
    return CLI_EX_SOFTWARE;
  }
  pthread_join(t, NULL);
  *out = job.s;
  if (job.rc == 0) {
    cli_verbose(o, "connected to %s: session 0x%llx, timeout %d ms", o->hosts,
                (unsigned long long)zkl_session_id(job.s),
                zkl_session_timeout(job.s));
    if (o->stats_file != NULL &&
        zkl_session_stats_export(job.s, o->stats_file,
                                 CLI_STATS_FILE_INTERVAL_MS) != 0) {
      fprintf(stderr, "zkl: --stats-file: %s\n", zkl_last_error());
      zkl_session_close(job.s);
      *out = NULL;
      return CLI_EX_SOFTWARE;
    }
    return 0;
  }
  if (job.rc == ZKL_ECONNECT) {
    if (strstr(job.detail, o->hosts) != NULL) /* it names the hosts */
      fprintf(stderr, "zkl: %s\n", job.detail);
    else
      fprintf(stderr, "zkl: cannot connect to ZooKeeper at %s within %ld ms%s%s\n",
              o->hosts, (long)o->connect_timeout_ms, job.detail[0] ? ": " : "",
              job.detail);
    return CLI_EX_UNAVAILABLE;
  }
  fprintf(stderr, "zkl: %s: %s%s%s\n", o->hosts, zkl_strerror(job.rc),
          job.detail[0] ? ": " : "", job.detail);
  return cli_exit_code(job.rc);
}

void cli_session_close(zkl_session_t *s) {
  zkl_session_stats_t st;
  if (s != NULL && session_opts != NULL && session_opts->stats &&
      zkl_session_stats(s, &st, sizeof st) == 0) {
    fprintf(stderr,
            "zkl: stats: session 0x%llx requests: creates %llu deletes %llu "
            "exists %llu gets %llu sets %llu children %llu multis %llu "
            "syncs %llu heartbeats %llu; watches %llu events %llu wakeups "
            "%llu; acquisitions %llu grants %llu timeouts %llu cancels %llu "
            "failures %llu waiting %llu; wait ms <1 %llu <10 %llu <100 %llu "
            "<1000 %llu <10000 %llu <100000 %llu more %llu, total %.3f max "
            "%.3f; connects %llu suspensions %llu reconnects %llu losses "
            "%llu\n",
            (unsigned long long)zkl_session_id(s),
            (unsigned long long)st.creates, (unsigned long long)st.deletes,
            (unsigned long long)st.exists, (unsigned long long)st.gets,
            (unsigned long long)st.sets, (unsigned long long)st.children,
            (unsigned long long)st.multis, (unsigned long long)st.syncs,
            (unsigned long long)st.heartbeats, (unsigned long long)st.watches,
            (unsigned long long)st.events, (unsigned long long)st.wakeups,
            (unsigned long long)st.acquisitions, (unsigned long long)st.grants,
            (unsigned long long)st.timeouts, (unsigned long long)st.cancels,
            (unsigned long long)st.failures, (unsigned long long)st.waiting,
            (unsigned long long)st.wait_hist[0],
            (unsigned long long)st.wait_hist[1],
            (unsigned long long)st.wait_hist[2],
            (unsigned long long)st.wait_hist[3],
            (unsigned long long)st.wait_hist[4],
            (unsigned long long)st.wait_hist[5],
            (unsigned long long)st.wait_hist[6], st.wait_us_total / 1000.0,
            st.wait_us_max / 1000.0, (unsigned long long)st.connects,
            (unsigned long long)st.suspensions,
            (unsigned long long)st.reconnects, (unsigned long long)st.losses);
  }
  zkl_session_close(s);
  if (session_opts != NULL && session_opts->verbose >= 1)
    zkl_log_set(NULL, NULL, ZKL_LOG_INFO);
}

int cli_exit_code(int zkl_rc) {
  switch (zkl_rc) {
  case ZKL_ECONNECT:
  case ZKL_ESUSPENDED:
  case ZCONNECTIONLOSS:
  case ZOPERATIONTIMEOUT:
    return CLI_EX_UNAVAILABLE;
  case ZKL_ELOST:
  case ZSESSIONEXPIRED:
    return CLI_EX_LOST;
  case ZKL_EAUTH:
  case ZNOAUTH:
  case ZAUTHFAILED:
    return CLI_EX_NOPERM;
  default:
    return CLI_EX_SOFTWARE;
  }
}

void cli_verbose(const cli_opts_t *o, const char *fmt, ...) {
  if (o->verbose < 1) return;
  char line[1536];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fprintf(stderr, "zkl: %s\n", line); /* one call: lines stay whole */
}

const char *cli_state_name(int state) {
  switch (state) {
  case ZKL_SESSION_CONNECTING: return "CONNECTING";
  case ZKL_SESSION_CONNECTED: return "CONNECTED";
  case ZKL_SESSION_SUSPENDED: return "SUSPENDED";
  case ZKL_SESSION_LOST: return "LOST";
  case ZKL_SESSION_CLOSED: return "CLOSED";
  case ZKL_SESSION_RECONNECTED: return "RECONNECTED";
  default: return "UNKNOWN";
  }
}
