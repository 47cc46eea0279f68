/* lib/core/export.c - a session's counters written to a file, for operators
 * (zkl_session_stats_export): `zkl status --stats FILE` reads it, and it is
 * Prometheus's text format, so node_exporter's textfile collector serves
 * it as it is.
 *
 * A thread of its own writes the file, so that the session's threads never
 * wait for a disk; it reads the counters as zkl_session_stats() does
 * (relaxed atomics) and the state and id under the session's lock,
 * briefly, like any caller.  Numbers are printed with integer arithmetic
 * only: a process whose LC_NUMERIC writes "0,2" must not break the file. */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"

/* One export: the session holds it as a stop hook (export_stop, x), set
 * once its thread runs. */
typedef struct zkl__export zkl__export_t;
struct zkl__export {
  zkl_session_t *s;
  char *path, *tmp;         /* the file (absolute), and where it is
                               written first                            */
  char *file;               /* path's last part: the `file` label       */
  int64_t interval_ns;
  pthread_mutex_t mu;       /* guards stop                              */
  pthread_cond_t cv;
  int stop;
  int failing;              /* the last write failed (logged once); the
                               export's thread's own                    */
  pthread_t thread;
};

/* Label values are quoted: \, " and newline escaped (the text format's
 * rules). */
static void put_label(FILE *f, const char *v) {
  for (; *v != '\0'; v++) {
    if (*v == '\\' || *v == '"') fputc('\\', f);
    if (*v == '\n') {
      fputs("\\n", f);
      continue;
    }
    fputc(*v, f);
  }
}

static void put_family(FILE *f, const char *name, const char *type,
                       const char *help) {
  fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A sample's name and labels: every sample has file="<the file's name>",
 * so that the files of several processes in one collector directory
 * (whose names differ) never make the same series; then label=value if
 * label is not NULL. */
static void put_head(FILE *f, const char *name, const char *file,
                     const char *label, const char *value) {
  fprintf(f, "%s{file=\"", name);
  put_label(f, file);
  if (label != NULL) fprintf(f, "\",%s=\"%s", label, value);
  fputs("\"} ", f);
}

static void put_u64(FILE *f, const char *name, const char *file,
                    const char *label, const char *value, uint64_t v) {
  put_head(f, name, file, label, value);
  fprintf(f, "%llu\n", (unsigned long long)v);
}

/* v / 10^digits as a decimal fraction, with no floating point. */
static void put_fixed(FILE *f, const char *name, const char *file,
                      uint64_t v, int digits) {
  uint64_t scale = 1;
  for (int i = 0; i < digits; i++) scale *= 10;
  put_head(f, name, file, NULL, NULL);
  fprintf(f, "%llu.%0*llu\n", (unsigned long long)(v / scale), digits,
          (unsigned long long)(v % scale));
}

static const char *state_name(int st) {
  switch (st) {
  case ZKL_SESSION_CONNECTING: return "connecting";
  case ZKL_SESSION_CONNECTED: return "connected";
  case ZKL_SESSION_SUSPENDED: return "suspended";
  case ZKL_SESSION_LOST: return "lost";
  case ZKL_SESSION_CLOSED: return "closed";
  default: return "unknown";
  }
}

/* The file's text, into f.  Every family has its HELP and TYPE; counters
 * end in _total, as the format wants. */
static void render(FILE *f, zkl_session_t *s, int64_t interval_ns,
                   const char *hosts, const char *file) {
  zkl_session_stats_t st;
  zkl_session_stats(s, &st, sizeof st);
  int state = zkl_session_state(s);
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);

  fprintf(f, "# zkl %s: the counters of one zkl session "
             "(zkl_session_stats(3)); read it with `zkl status --stats FILE`\n",
          ZKL_VERSION_STRING);
  put_family(f, "zkl_session_info", "gauge",
             "The ZooKeeper session in use now, the hosts and the process.");
  fputs("zkl_session_info{file=\"", f);
  put_label(f, file);
  fprintf(f, "\",session=\"0x%llx\",hosts=\"",
          (unsigned long long)zkl_session_id(s));
  put_label(f, hosts);
  fprintf(f, "\",pid=\"%ld\",state=\"%s\"} 1\n", (long)getpid(),
          state_name(state));
  put_family(f, "zkl_session_state", "gauge",
             "The session's state: 0 connecting, 1 connected, 2 suspended, "
             "3 lost, 4 closed.");
  put_u64(f, "zkl_session_state", file, NULL, NULL, (uint64_t)state);
  put_family(f, "zkl_stats_written_seconds", "gauge",
             "When this file was written (Unix time).");
  put_fixed(f, "zkl_stats_written_seconds", file,
            (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000, 3);
  put_family(f, "zkl_stats_interval_seconds", "gauge",
             "How often the file is written.");
  put_fixed(f, "zkl_stats_interval_seconds", file,
            (uint64_t)(interval_ns / 1000000), 3);

  put_family(f, "zkl_requests_total", "counter",
             "Requests sent to the server, by kind (heartbeat: zkl's "
             "liveness probes).");
  const struct {
    const char *kind;
    uint64_t v;
  } req[] = {{"create", st.creates},  {"delete", st.deletes},
             {"exists", st.exists},   {"get", st.gets},
             {"set", st.sets},        {"children", st.children},
             {"multi", st.multis},    {"sync", st.syncs},
             {"heartbeat", st.heartbeats}};
  for (size_t i = 0; i < sizeof req / sizeof req[0]; i++)
    put_u64(f, "zkl_requests_total", file, "kind", req[i].kind, req[i].v);

  const struct {
    const char *name, *type, *help;
    uint64_t v;
  } plain[] = {
      {"zkl_watches_total", "counter", "Requests that armed a watch.",
       st.watches},
      {"zkl_watch_events_total", "counter",
       "Node events the server delivered for those watches.", st.events},
      {"zkl_wakeups_total", "counter", "Waiting operations those events woke.",
       st.wakeups},
      {"zkl_acquisitions_total", "counter",
       "Turns started in the contention core (locks, leaderships, the lines "
       "inside other recipes).",
       st.acquisitions},
      {"zkl_acquisition_timeouts_total", "counter",
       "Turns that ended at their deadline, or a try that found it taken.",
       st.timeouts},
      {"zkl_acquisition_cancels_total", "counter",
       "Turns ended by a cancel or a destroy.", st.cancels},
      {"zkl_acquisition_failures_total", "counter",
       "Turns that ended otherwise: session lost, node deleted, no memory.",
       st.failures},
      {"zkl_acquisitions_waiting", "gauge", "Turns underway now.",
       st.waiting},
  };
  for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
    put_family(f, plain[i].name, plain[i].type, plain[i].help);
    put_u64(f, plain[i].name, file, NULL, NULL, plain[i].v);
  }

  /* the grants' waits as a histogram: cumulative buckets, sum and count */
  put_family(f, "zkl_grant_wait_seconds", "histogram",
             "How long granted turns took, from the call to the grant.");
  static const char *const le[ZKL_STATS_WAIT_BUCKETS] = {
      "0.001", "0.01", "0.1", "1", "10", "100", "+Inf"};
  uint64_t cum = 0;
  for (int i = 0; i < ZKL_STATS_WAIT_BUCKETS; i++) {
    cum += st.wait_hist[i];
    put_u64(f, "zkl_grant_wait_seconds_bucket", file, "le", le[i], cum);
  }
  put_fixed(f, "zkl_grant_wait_seconds_sum", file, st.wait_us_total, 6);
  put_u64(f, "zkl_grant_wait_seconds_count", file, NULL, NULL, cum);
  put_family(f, "zkl_grant_wait_seconds_max", "gauge",
             "The longest of those waits.");
  put_fixed(f, "zkl_grant_wait_seconds_max", file, st.wait_us_max, 6);

  put_family(f, "zkl_session_events_total", "counter",
             "Session states reported, as on_state reports them.");
  put_u64(f, "zkl_session_events_total", file, "state", "connected",
          st.connects);
  put_u64(f, "zkl_session_events_total", file, "state", "suspended",
          st.suspensions);
  put_u64(f, "zkl_session_events_total", file, "state", "reconnected",
          st.reconnects);
  put_u64(f, "zkl_session_events_total", file, "state", "lost", st.losses);
}

/* Writes the file once: the text into x->tmp, then renamed over x->path,
 * so that a reader never sees half a file.  0, or an errno value. */
static int write_once(zkl__export_t *x) {
  char *text = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&text, &len);
  if (m == NULL) return errno ? errno : ENOMEM;
  render(m, x->s, x->interval_ns, zkl__session_hosts(x->s), x->file);
  if (fclose(m) != 0) {
    free(text);
    return ENOMEM;
  }
  int err = 0;
  FILE *f = fopen(x->tmp, "we");
  if (f == NULL) {
    err = errno;
  } else {
    if (fwrite(text, 1, len, f) != len) err = errno ? errno : EIO;
    if (fclose(f) != 0 && err == 0) err = errno;
    if (err == 0 && rename(x->tmp, x->path) != 0) err = errno;
    if (err != 0) unlink(x->tmp);
  }
  free(text);
  return err;
}

/* Logs a failing write once, and once more when writing works again (on
 * the export's thread). */
static void note_result(zkl__export_t *x, int err) {
  int was = x->failing;
  x->failing = err != 0;
  if (err != 0 && !was)
    zkl__session_log(x->s, ZKL_LOG_WARN,
                     "cannot write the counters to %s: %s (trying again "
                     "every %lld ms)",
                     x->path, strerror(err),
                     (long long)(x->interval_ns / 1000000));
  else if (err == 0 && was)
    zkl__session_log(x->s, ZKL_LOG_INFO, "writing the counters to %s again",
                     x->path);
}

static void *export_main(void *arg) {
  zkl__export_t *x = arg;
  int64_t next = zkl__now_ns() + x->interval_ns;
  pthread_mutex_lock(&x->mu);
  while (!x->stop) {
    if (zkl__cond_wait_until(&x->cv, &x->mu, next) != ETIMEDOUT) continue;
    pthread_mutex_unlock(&x->mu);
    note_result(x, write_once(x));
    next += x->interval_ns;
    int64_t now = zkl__now_ns();
    if (next <= now) next = now + x->interval_ns; /* no catching up */
    pthread_mutex_lock(&x->mu);
  }
  pthread_mutex_unlock(&x->mu);
  return NULL;
}

static void export_free(zkl__export_t *x) {
  pthread_mutex_destroy(&x->mu);
  pthread_cond_destroy(&x->cv);
  free(x->path);
  free(x->tmp);
  free(x);
}

/* path made absolute (a later chdir() of the process must not move the
 * file); malloc'ed, NULL without memory or working directory. */
static char *absolute(const char *path) {
  if (path[0] == '/') return strdup(path);
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd) == NULL) return NULL;
  size_t n = strlen(cwd) + strlen(path) + 2;
  char *abs = malloc(n);
  if (abs != NULL) snprintf(abs, n, "%s/%s", cwd, path);
  return abs;
}

/* Ends an export (arg): its thread joined, its file removed, arg freed.
 * The session's stop hook (zkl__session_export_set), called with no lock
 * held; it cannot fail. */
static void export_stop(void *arg) {
  zkl__export_t *x = arg;
  pthread_mutex_lock(&x->mu);
  x->stop = 1;
  pthread_cond_signal(&x->cv);
  pthread_mutex_unlock(&x->mu);
  pthread_join(x->thread, NULL);
  /* stale counters would mislead: the file goes with its session */
  unlink(x->path);
  export_free(x);
}

/* How often the file may be written: 100 ms to an hour. */
#define EXPORT_INTERVAL_MIN_MS 100
#define EXPORT_INTERVAL_MAX_MS 3600000

/* Starts exporting s's counters to path (the arguments checked). */
static int export_start(zkl_session_t *s, const char *path,
                        int32_t interval_ms) {
  /* a temporary name of each export's own: two sessions of one process
   * writing one file never write into each other's */
  static atomic_uint serial;
  zkl__export_t *x = calloc(1, sizeof *x);
  if (x == NULL) return zkl__fail(ZKL_ENOMEM, "no memory for the export");
  x->s = s;
  x->interval_ns = (int64_t)interval_ms * 1000000;
  x->path = absolute(path);
  if (x->path == NULL) {
    int err = errno;
    free(x);
    if (err == ENOMEM) return zkl__fail(ZKL_ENOMEM, "no memory for the export");
    return zkl__fail(ZKL_ESYSTEM, "no working directory for %s: %s", path,
                     strerror(err));
  }
  size_t tl = strlen(x->path) + 48;
  x->tmp = malloc(tl);
  int rc = 0;
  if (x->tmp == NULL) {
    rc = zkl__fail(ZKL_ENOMEM, "no memory for the export");
  } else if (pthread_mutex_init(&x->mu, NULL) != 0) {
    rc = zkl__fail(ZKL_ESYSTEM, "no mutex for the export");
  } else if (zkl__cond_init(&x->cv) != 0) {
    pthread_mutex_destroy(&x->mu);
    rc = zkl__fail(ZKL_ESYSTEM, "no condition variable for the export");
  }
  if (rc != 0) {
    free(x->path);
    free(x->tmp);
    free(x);
    return rc;
  }
  x->file = strrchr(x->path, '/') + 1;
  /* beside the file (a rename stays in one file system), named apart from
   * what a collector reads (*.prom) */
  snprintf(x->tmp, tl, "%s.%ld.%u.tmp", x->path, (long)getpid(),
           atomic_fetch_add(&serial, 1));
  /* the first write now, so that a file that cannot be written is said at
   * once, to the caller */
  int err = write_once(x);
  if (err != 0) {
    rc = zkl__fail(err == ENOMEM ? ZKL_ENOMEM : ZKL_ESYSTEM,
                       "cannot write the counters to %s: %s", path,
                       strerror(err));
    export_free(x);
    return rc;
  }
  if (zkl__thread_start(&x->thread, export_main, x) != 0) {
    unlink(x->path);
    export_free(x);
    return zkl__fail(ZKL_ESYSTEM, "cannot start the export's thread");
  }
  if (zkl__session_export_set(s, export_stop, x) != 0) {
    /* zkl_session_close() has begun meanwhile (a callback called us) */
    export_stop(x);
    return zkl__fail(ZKL_EINVAL, "the session is closing");
  }
  return 0;
}

int zkl_session_stats_export(zkl_session_t *s, const char *path,
                             int32_t interval_ms) {
  zkl__clear_error();
  if (s == NULL) return zkl__fail(ZKL_EINVAL, "session is NULL");
  if (path != NULL && path[0] == '\0')
    return zkl__fail(ZKL_EINVAL, "the file name is empty");
  if (path != NULL && (interval_ms < EXPORT_INTERVAL_MIN_MS ||
                       interval_ms > EXPORT_INTERVAL_MAX_MS))
    return zkl__fail(ZKL_EINVAL, "interval %ld ms is out of range [%d, %d]",
                     (long)interval_ms, EXPORT_INTERVAL_MIN_MS,
                     EXPORT_INTERVAL_MAX_MS);
  /* one call at a time: the old export ends (its file removed) before the
   * new one writes, even to the same file */
  static pthread_mutex_t calls = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&calls);
  zkl__session_export_end(s);
  int rc = path != NULL ? export_start(s, path, interval_ms) : 0;
  pthread_mutex_unlock(&calls);
  return rc;
}
