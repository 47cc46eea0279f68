/* tests/integration/test-observe.c - what operators see: the log handler
 * (zkl_log_set) with zkl's and the ZooKeeper client's messages, and a
 * session's counters (zkl_session_stats). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "itest.h"

/* ---- a handler that keeps what it is told --------------------------------- */

#define CAP_MAX 512
typedef struct rec {
  int level, source;
  int64_t sid;
  char text[256];
} rec_t;
static struct {
  pthread_mutex_t mu;
  rec_t r[CAP_MAX];
  int n, dropped;
  int nested_rc;         /* what zkl_log_set() said from inside, 1: untried */
  int try_nested;
} cap = {.mu = PTHREAD_MUTEX_INITIALIZER, .nested_rc = 1};

static void capture(zkl_log_level_t level, zkl_log_source_t source,
                    int64_t sid, const char *message, void *arg) {
  ck_assert_ptr_eq(arg, &cap);
  pthread_mutex_lock(&cap.mu);
  if (cap.try_nested) {
    cap.try_nested = 0;
    cap.nested_rc = zkl_log_set(NULL, NULL, ZKL_LOG_ERROR);
  }
  if (cap.n < CAP_MAX) {
    rec_t *r = &cap.r[cap.n++];
    r->level = level;
    r->source = source;
    r->sid = sid;
    snprintf(r->text, sizeof r->text, "%s", message);
  } else {
    cap.dropped++;
  }
  pthread_mutex_unlock(&cap.mu);
}

static void cap_reset(void) {
  pthread_mutex_lock(&cap.mu);
  cap.n = 0;
  cap.dropped = 0;
  pthread_mutex_unlock(&cap.mu);
}

static int cap_count(void) {
  pthread_mutex_lock(&cap.mu);
  int n = cap.n + cap.dropped;
  pthread_mutex_unlock(&cap.mu);
  return n;
}

/* What a wait looks for: a message of zkl (or the ZooKeeper client) at
 * `level` (0: any), about sid (-1: any), whose text holds `text`. */
typedef struct want {
  int source, level;
  int64_t sid;
  const char *text;
} want_t;

static int cap_has(void *arg) {
  const want_t *w = arg;
  pthread_mutex_lock(&cap.mu);
  int found = 0;
  for (int i = 0; i < cap.n && !found; i++) {
    const rec_t *r = &cap.r[i];
    found = r->source == w->source && (w->level == 0 || r->level == w->level) &&
            (w->sid == -1 || r->sid == w->sid) &&
            strstr(r->text, w->text) != NULL;
  }
  pthread_mutex_unlock(&cap.mu);
  return found;
}

static void cap_print(void) {
  pthread_mutex_lock(&cap.mu);
  for (int i = 0; i < cap.n; i++)
    fprintf(stderr, "  %s %s 0x%llx %s\n",
            cap.r[i].source == ZKL_LOG_ZKL ? "zkl" : "zk",
            zkl_log_level_name(cap.r[i].level),
            (unsigned long long)cap.r[i].sid, cap.r[i].text);
  pthread_mutex_unlock(&cap.mu);
}

static void expect_log(int source, int level, int64_t sid, const char *text,
                       int timeout_ms) {
  want_t w = {source, level, sid, text};
  if (!it_wait_until(cap_has, &w, timeout_ms)) {
    cap_print();
    ck_abort_msg("no %s message at level %s about 0x%llx saying \"%s\"",
                 source == ZKL_LOG_ZKL ? "zkl" : "ZooKeeper",
                 zkl_log_level_name(level), (unsigned long long)sid, text);
  }
}

/* ---- the log ------------------------------------------------------------- */

struct renewed {
  zkl_session_t *s;
  int64_t old;
};
static int renewed(void *arg) {
  const struct renewed *r = arg;
  int64_t id = zkl_session_id(r->s);
  return id != 0 && id != r->old;
}

/* Leaves the ZooKeeper client's process-wide level as main() set it (a
 * handler installed by a test raised it). */
static void log_off(void) {
  ck_assert_int_eq(zkl_log_set(NULL, NULL, 0), 0);
  zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
}

/* A session's states reach the handler from zkl, with its id; the
 * ZooKeeper client's own messages come too, with their level and without
 * the client's time stamp; after zkl_log_set(NULL) nothing more comes. */
START_TEST(log_tells_states_and_the_clients_messages) {
  cap_reset();
  ck_assert_int_eq(zkl_log_set(capture, &cap, ZKL_LOG_INFO), 0);
  zkl_session_t *s = it_session();
  int64_t id = zkl_session_id(s);
  expect_log(ZKL_LOG_ZKL, ZKL_LOG_INFO, id, "connected to", 5000);
  /* the client says where it connects, at INFO */
  expect_log(ZKL_LOG_ZOOKEEPER, ZKL_LOG_INFO, 0, "", 5000);
  pthread_mutex_lock(&cap.mu);
  for (int i = 0; i < cap.n; i++) {
    ck_assert_int_ge(cap.r[i].level, ZKL_LOG_ERROR);
    ck_assert_int_le(cap.r[i].level, ZKL_LOG_INFO); /* nothing past INFO */
    ck_assert_msg(strstr(cap.r[i].text, "):ZOO_") == NULL &&
                      strchr(cap.r[i].text, '\n') == NULL,
                  "a raw client line: %s", cap.r[i].text);
  }
  pthread_mutex_unlock(&cap.mu);

  /* expired on the server: LOST with its cause, then the new session */
  it_expire_session(s);
  expect_log(ZKL_LOG_ZKL, ZKL_LOG_ERROR, id, "LOST (the server expired it)",
             10000);
  expect_log(ZKL_LOG_ZKL, ZKL_LOG_INFO, -1, "opening a new session", 10000);
  struct renewed r = {s, id};
  ck_assert_msg(it_wait_until(renewed, &r, 10000), "no new session");
  expect_log(ZKL_LOG_ZKL, ZKL_LOG_INFO, zkl_session_id(s), "connected to",
             10000);

  log_off();
  int before = cap_count();
  zkl_session_t *t = it_session();
  zkl_session_close(t);
  zkl_session_close(s);
  it_sleep_ms(200);
  ck_assert_int_eq(cap_count(), before);
}
END_TEST

/* The handler's level filters both sources; bad levels are refused; a
 * zkl_log_set() from inside the handler is refused (it would wait for
 * itself) and the handler stays. */
START_TEST(log_level_and_refusals) {
  ck_assert_int_eq(zkl_log_set(capture, &cap, 0), ZKL_EINVAL);
  ck_assert_int_eq(zkl_log_set(capture, &cap, (zkl_log_level_t)5),
                   ZKL_EINVAL);
  ck_assert_str_eq(zkl_log_level_name(ZKL_LOG_WARN), "warn");
  ck_assert_str_eq(zkl_log_level_name(9), "?");

  cap_reset();
  ck_assert_int_eq(zkl_log_set(capture, &cap, ZKL_LOG_WARN), 0);
  zkl_session_t *s = it_session();
  it_sleep_ms(300); /* the CONNECTED message would have come by now */
  zkl_session_close(s);
  pthread_mutex_lock(&cap.mu);
  for (int i = 0; i < cap.n; i++)
    ck_assert_msg(cap.r[i].level <= ZKL_LOG_WARN, "%s past WARN: %s",
                  zkl_log_level_name(cap.r[i].level), cap.r[i].text);
  pthread_mutex_unlock(&cap.mu);

  cap_reset();
  pthread_mutex_lock(&cap.mu);
  cap.try_nested = 1;
  cap.nested_rc = 1;
  pthread_mutex_unlock(&cap.mu);
  ck_assert_int_eq(zkl_log_set(capture, &cap, ZKL_LOG_DEBUG), 0);
  s = it_session();
  expect_log(ZKL_LOG_ZKL, ZKL_LOG_INFO, zkl_session_id(s), "connected to",
             5000);
  pthread_mutex_lock(&cap.mu);
  ck_assert_int_eq(cap.nested_rc, ZKL_EDEADLK);
  pthread_mutex_unlock(&cap.mu);
  /* still installed: DEBUG messages of the client keep coming */
  int n = cap_count();
  zkl_mutex_t *m = it_mutex(s, "/zkl-test/observe-debug");
  ck_assert_int_eq(zkl_mutex_lock(m), 0);
  ck_assert_int_eq(zkl_mutex_unlock(m), 0);
  ck_assert_int_gt(cap_count(), n);
  log_off();
  zkl_mutex_destroy(m);
  zkl_session_close(s);
}
END_TEST

static int suspended(void *arg) {
  return zkl_session_state(arg) == ZKL_SESSION_SUSPENDED;
}
static int connected(void *arg) {
  return zkl_session_state(arg) == ZKL_SESSION_CONNECTED;
}

/* A connection that stops answering: SUSPENDED (warn) and RECONNECTED
 * (info) in the log and in the counters; and without a handler, zkl's
 * messages go to the session's log_stream. */
START_TEST(suspension_is_logged_and_counted) {
  if (strchr(it_hosts(), ',') != NULL) return; /* the proxy: one server */
  cap_reset();
  ck_assert_int_eq(zkl_log_set(capture, &cap, ZKL_LOG_INFO), 0);
  it_proxy_t *x = it_proxy_start();
  char hosts[64];
  snprintf(hosts, sizeof hosts, "127.0.0.1:%d", it_proxy_port(x));
  zkl_session_t *s = it_session_at(hosts, 12000);
  int64_t id = zkl_session_id(s);
  it_proxy_blackhole(x, 1);
  ck_assert_msg(it_wait_until(suspended, s, 12000), "never SUSPENDED");
  expect_log(ZKL_LOG_ZKL, ZKL_LOG_WARN, id, "SUSPENDED", 5000);
  it_proxy_blackhole(x, 0);
  ck_assert_msg(it_wait_until(connected, s, 8000), "not back");
  expect_log(ZKL_LOG_ZKL, ZKL_LOG_INFO, id, "reconnected", 5000);
  zkl_session_stats_t st;
  ck_assert_int_eq(zkl_session_stats(s, &st, sizeof st), 0);
  ck_assert_uint_eq(st.connects, 1);
  ck_assert_uint_eq(st.suspensions, 1);
  ck_assert_uint_eq(st.reconnects, 1);
  ck_assert_uint_eq(st.losses, 0);
  log_off();
  zkl_session_close(s);

  /* no handler: the session's log_stream gets zkl's own messages */
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ck_assert_ptr_nonnull(f);
  zkl_session_opts_t o;
  zkl_session_opts_init(&o);
  o.log_stream = f;
  zkl_session_t *t = NULL;
  ck_assert_int_eq(zkl_session_open(&t, it_hosts(), &o), 0);
  char line[96];
  snprintf(line, sizeof line, "zkl: info: [session 0x%llx] connected to",
           (unsigned long long)zkl_session_id(t));
  int seen = 0;
  for (int i = 0; i < 200 && !seen; i++) { /* the session's thread says it */
    it_sleep_ms(10);
    flockfile(f);
    fflush(f);
    seen = buf != NULL && strstr(buf, line) != NULL;
    funlockfile(f);
  }
  zkl_session_close(t);
  fclose(f);
  ck_assert_msg(seen, "log_stream has no \"%s\": %s", line,
                buf != NULL ? buf : "");
  free(buf);
  it_proxy_stop(x);
}
END_TEST

/* ---- the counters --------------------------------------------------------- */

/* One acquisition waits, and its watch is armed. */
static int one_waits_watching(void *arg) {
  zkl_session_stats_t st;
  if (zkl_session_stats(arg, &st, sizeof st) != 0) return 0;
  return st.waiting == 1 && st.watches >= 1;
}

static uint64_t hist_sum(const zkl_session_stats_t *st) {
  uint64_t n = 0;
  for (int i = 0; i < ZKL_STATS_WAIT_BUCKETS; i++) n += st->wait_hist[i];
  return n;
}

/* A thread that locks m and, if granted, holds it until told to let go
 * (a blocking hold is its thread's). */
struct locker {
  zkl_mutex_t *m;
  int rc, unlock_rc;
  atomic_int go, granted;
  pthread_t th;
};
static void *lock_main(void *arg) {
  struct locker *l = arg;
  l->rc = zkl_mutex_lock(l->m);
  atomic_store(&l->granted, 1);
  if (l->rc != 0) return NULL;
  while (!atomic_load(&l->go)) it_sleep_ms(5);
  l->unlock_rc = zkl_mutex_unlock(l->m);
  return NULL;
}
static void locker_start(struct locker *l, zkl_mutex_t *m) {
  l->m = m;
  l->rc = l->unlock_rc = 1;
  atomic_store(&l->go, 0);
  atomic_store(&l->granted, 0);
  ck_assert_int_eq(pthread_create(&l->th, NULL, lock_main, l), 0);
}
static int locker_granted(void *arg) {
  return atomic_load(&((struct locker *)arg)->granted);
}
/* Lets go (if granted) and joins: the lock's result. */
static int locker_end(struct locker *l) {
  atomic_store(&l->go, 1);
  pthread_join(l->th, NULL);
  if (l->rc == 0) ck_assert_int_eq(l->unlock_rc, 0);
  return l->rc;
}

/* Requests by kind, watches, events and wake-ups, grants with their waits
 * in the histogram, timeouts and cancels, heartbeats and states: each
 * moves when, and as much as, it should. */
START_TEST(stats_count_what_the_session_did) {
  char root[128];
  it_root(root, sizeof root, "stats");
  zkl_session_t *s = it_session_timeout(2000); /* a heartbeat each 400 ms */
  zkl_session_stats_t st = it_stats(s);
  ck_assert_uint_eq(st.connects, 1);
  ck_assert_uint_eq(st.acquisitions, 0);
  ck_assert_uint_eq(st.grants, 0);
  ck_assert_uint_eq(st.waiting, 0);

  zkl_mutex_t *a = it_mutex(s, root), *b = it_mutex(s, root);
  ck_assert_int_eq(zkl_mutex_lock(a), 0);
  st = it_stats(s);
  ck_assert_uint_eq(st.acquisitions, 1);
  ck_assert_uint_eq(st.grants, 1);
  ck_assert_uint_ge(st.creates, 1);
  ck_assert_uint_ge(st.children, 1);
  ck_assert_uint_eq(st.waiting, 0);
  ck_assert_uint_eq(hist_sum(&st), 1);

  /* b waits about 300 ms behind a: a watch, an event, a wake-up */
  struct locker lb, la;
  locker_start(&lb, b);
  ck_assert_msg(it_wait_until(one_waits_watching, s, 10000),
                "b does not wait with a watch");
  st = it_stats(s);
  uint64_t events0 = st.events, wakeups0 = st.wakeups;
  it_sleep_ms(300);
  ck_assert_int_eq(zkl_mutex_unlock(a), 0);
  ck_assert(it_wait_until(locker_granted, &lb, 10000));
  ck_assert_int_eq(lb.rc, 0);
  st = it_stats(s);
  ck_assert_uint_eq(st.grants, 2);
  ck_assert_uint_eq(st.waiting, 0);
  ck_assert_uint_gt(st.events, events0);
  ck_assert_uint_gt(st.wakeups, wakeups0);
  ck_assert_uint_ge(st.multis + st.deletes, 1); /* a's release */
  ck_assert_uint_eq(hist_sum(&st), 2);
  /* 100 ms .. 1 s, or (valgrind, a loaded machine) up to 10 s */
  ck_assert_uint_ge(st.wait_hist[3] + st.wait_hist[4], 1);
  ck_assert_uint_ge(st.wait_us_max, 250000);
  ck_assert_uint_lt(st.wait_us_max, 10000000);
  ck_assert_uint_ge(st.wait_us_total, st.wait_us_max);

  /* a try that finds it taken: a timeout; a wait canceled: a cancel */
  ck_assert_int_eq(zkl_mutex_trylock(a), ZKL_EBUSY);
  locker_start(&la, a);
  ck_assert_msg(it_wait_until(one_waits_watching, s, 10000),
                "a does not wait"); /* its call began: a cancel ends it */
  ck_assert_int_eq(zkl_mutex_cancel(a), 0);
  ck_assert_int_eq(locker_end(&la), ZKL_ECANCELED);
  st = it_stats(s);
  ck_assert_uint_eq(st.timeouts, 1);
  ck_assert_uint_eq(st.cancels, 1);
  ck_assert_uint_eq(st.failures, 0);
  ck_assert_uint_eq(st.acquisitions,
                    st.grants + st.timeouts + st.cancels + st.failures);
  ck_assert_uint_eq(st.waiting, 0);
  ck_assert_int_eq(locker_end(&lb), 0);

  it_sleep_ms(900);
  st = it_stats(s);
  ck_assert_uint_ge(st.heartbeats, 1);
  ck_assert_uint_eq(st.suspensions + st.reconnects + st.losses, 0);

  /* a shorter struct (an older program): only what fits is written */
  uint64_t old[2];
  memset(old, 0xab, sizeof old);
  ck_assert_int_eq(zkl_session_stats(s, (zkl_session_stats_t *)old,
                                     sizeof old[0]), 0);
  ck_assert_uint_eq(old[0], it_stats(s).creates);
  ck_assert_uint_eq(old[1], 0xababababababababull);

  ck_assert_int_eq(zkl_session_stats(NULL, &st, sizeof st), ZKL_EINVAL);
  ck_assert_int_eq(zkl_session_stats(s, NULL, sizeof st), ZKL_EINVAL);
  ck_assert_int_eq(zkl_session_stats(s, &st, 0), ZKL_EINVAL);
  zkl_mutex_destroy(a);
  zkl_mutex_destroy(b);
  zkl_session_close(s);
}
END_TEST

/* A lost session counts as such; its waiting acquisition, queued again on
 * the new session, is still one acquisition underway. */
START_TEST(stats_count_a_loss) {
  char root[128];
  it_root(root, sizeof root, "stats-lost");
  zkl_session_t *s = it_session(), *d = it_session();
  zkl_mutex_t *m = it_mutex(s, root), *dm = it_mutex(d, root);
  ck_assert_int_eq(zkl_mutex_lock(dm), 0);
  struct locker l;
  locker_start(&l, m);
  ck_assert_msg(it_wait_until(one_waits_watching, s, 10000),
                "m does not wait");
  it_expire_session(s);
  zkl_session_stats_t st = it_stats(s);
  ck_assert_uint_eq(st.losses, 1);
  ck_assert_uint_eq(st.waiting, 1);
  ck_assert_int_eq(zkl_mutex_unlock(dm), 0);
  ck_assert(it_wait_until(locker_granted, &l, 20000));
  ck_assert_int_eq(l.rc, 0);
  st = it_stats(s);
  ck_assert_uint_ge(st.connects, 2);
  ck_assert_uint_eq(st.grants, 1);
  ck_assert_uint_eq(st.waiting, 0);
  ck_assert_int_eq(locker_end(&l), 0);
  zkl_mutex_destroy(m);
  zkl_mutex_destroy(dm);
  zkl_session_close(s);
  zkl_session_close(d);
}
END_TEST

/* ---- the counters' file (zkl_session_stats_export) ------------------------ */

/* The file's text (NULL if there is none); free it. */
static char *read_text(const char *path) {
  FILE *f = fopen(path, "r");
  if (f == NULL) return NULL;
  char *buf = calloc(1, 65536);
  ck_assert_ptr_nonnull(buf);
  size_t n = fread(buf, 1, 65535, f);
  fclose(f);
  buf[n] = '\0';
  return buf;
}

/* The value of the sample line that begins with `head` ("name{labels} "),
 * or -1 without one. */
static double sample_of(const char *text, const char *head) {
  for (const char *p = text; p != NULL && *p != '\0';) {
    if (strncmp(p, head, strlen(head)) == 0) return atof(p + strlen(head));
    p = strchr(p, '\n');
    if (p != NULL) p++;
  }
  return -1;
}

/* Every line a comment (HELP and TYPE before a family's samples) or a
 * sample "name[{labels}] value" of a family zkl says it writes: the text
 * format as a collector reads it. */
static void check_format(const char *text) {
  char typed[64][64];
  int n_typed = 0;
  for (const char *p = text; *p != '\0';) {
    const char *end = strchr(p, '\n');
    ck_assert_msg(end != NULL, "the file does not end with a newline");
    char line[1024];
    size_t len = (size_t)(end - p);
    ck_assert_uint_lt(len, sizeof line);
    memcpy(line, p, len);
    line[len] = '\0';
    p = end + 1;
    char fam[64];
    if (strncmp(line, "# TYPE ", 7) == 0) {
      char type[32];
      ck_assert_int_eq(sscanf(line, "# TYPE %63s %31s", fam, type), 2);
      ck_assert_msg(strcmp(type, "counter") == 0 || strcmp(type, "gauge") == 0 ||
                        strcmp(type, "histogram") == 0,
                    "%s", line);
      ck_assert_int_lt(n_typed, 64);
      snprintf(typed[n_typed++], sizeof typed[0], "%s", fam);
      continue;
    }
    if (line[0] == '#') continue;
    ck_assert_msg(line[0] != '\0', "an empty line");
    size_t k = strcspn(line, "{ ");
    ck_assert_msg(k > 0 && k < sizeof fam, "%s", line);
    memcpy(fam, line, k);
    fam[k] = '\0';
    const char *value = strrchr(line, ' ');
    char *vend;
    ck_assert_ptr_nonnull(value);
    strtod(value + 1, &vend);
    ck_assert_msg(*vend == '\0' && vend != value + 1, "no number: %s", line);
    int known = 0;
    for (int i = 0; i < n_typed && !known; i++) {
      size_t fl = strlen(typed[i]);
      known = strcmp(fam, typed[i]) == 0 ||
              (strncmp(fam, typed[i], fl) == 0 &&
               (strcmp(fam + fl, "_bucket") == 0 ||
                strcmp(fam + fl, "_sum") == 0 ||
                strcmp(fam + fl, "_count") == 0));
    }
    ck_assert_msg(known, "a sample before its # TYPE: %s", line);
  }
  ck_assert_int_ge(n_typed, 10);
}

struct file_says {
  const char *path, *head;
  double at_least;
};
static int file_says(void *arg) {
  const struct file_says *w = arg;
  char *t = read_text(w->path);
  double v = t != NULL ? sample_of(t, w->head) : -1;
  free(t);
  return v >= w->at_least;
}
static int file_gone(void *arg) { return access(arg, F_OK) != 0; }

/* The file says what zkl_session_stats() says, in Prometheus's format; it
 * is written again every interval, atomically (no temporary file left);
 * a new call replaces it, NULL and close remove it; bad arguments leave
 * a running export alone; a file that cannot be written is refused at
 * once, and one that stops being writable is logged once, then again when
 * it works. */
START_TEST(stats_export_file) {
  char dir[] = "/tmp/zkl-export.XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char a[128], b[128], sub[128], subf[128], moved[128];
  snprintf(a, sizeof a, "%s/a.prom", dir);
  snprintf(b, sizeof b, "%s/b.prom", dir);
  snprintf(sub, sizeof sub, "%s/sub", dir);
  snprintf(subf, sizeof subf, "%s/sub/c.prom", dir);
  snprintf(moved, sizeof moved, "%s/moved", dir);
  char root[128];
  it_root(root, sizeof root, "stats-export");
  zkl_session_t *s = it_session();

  ck_assert_int_eq(zkl_session_stats_export(s, a, 200), 0);
  char *t = read_text(a);
  ck_assert_msg(t != NULL, "no file at once");
  check_format(t);
  char head[160];
  snprintf(head, sizeof head, "zkl_session_info{file=\"a.prom\",session=\"0x%llx\",hosts=\"",
           (unsigned long long)zkl_session_id(s));
  ck_assert_msg(strstr(t, head) != NULL, "%s", t);
  snprintf(head, sizeof head, ",pid=\"%ld\",state=\"connected\"} 1\n",
           (long)getpid());
  ck_assert_msg(strstr(t, head) != NULL, "%s", t);
  ck_assert(sample_of(t, "zkl_session_state{file=\"a.prom\"} ") == 1);
  ck_assert(sample_of(t, "zkl_stats_interval_seconds{file=\"a.prom\"} ") == 0.2);
  ck_assert(sample_of(t, "zkl_session_events_total{file=\"a.prom\",state=\"connected\"} ") == 1);
  ck_assert(sample_of(t, "zkl_grant_wait_seconds_count{file=\"a.prom\"} ") == 0);
  double written0 = sample_of(t, "zkl_stats_written_seconds{file=\"a.prom\"} ");
  ck_assert(written0 > 1.7e9);
  free(t);

  /* a grant shows within an interval or so; every figure as the API's */
  zkl_mutex_t *m = it_mutex(s, root);
  ck_assert_int_eq(zkl_mutex_lock(m), 0);
  struct file_says granted = {a, "zkl_grant_wait_seconds_count{file=\"a.prom\"} ", 1};
  ck_assert_msg(it_wait_until(file_says, &granted, 5000), "no grant in %s", a);
  zkl_session_stats_t st = it_stats(s);
  t = read_text(a);
  check_format(t);
  char want[128];
  snprintf(want, sizeof want, "zkl_requests_total{file=\"a.prom\",kind=\"create\"} %llu\n",
           (unsigned long long)st.creates);
  ck_assert_msg(strstr(t, want) != NULL, "%s in %s", want, t);
  snprintf(want, sizeof want, "zkl_requests_total{file=\"a.prom\",kind=\"children\"} %llu\n",
           (unsigned long long)st.children);
  ck_assert_msg(strstr(t, want) != NULL, "%s in %s", want, t);
  ck_assert(sample_of(t, "zkl_acquisitions_total{file=\"a.prom\"} ") == 1);
  ck_assert(sample_of(t, "zkl_grant_wait_seconds_bucket{file=\"a.prom\",le=\"+Inf\"} ") == 1);
  ck_assert(sample_of(t, "zkl_grant_wait_seconds_sum{file=\"a.prom\"} ") ==
            sample_of(t, "zkl_grant_wait_seconds_max{file=\"a.prom\"} "));
  ck_assert(sample_of(t, "zkl_acquisitions_waiting{file=\"a.prom\"} ") == 0);
  ck_assert(sample_of(t, "zkl_stats_written_seconds{file=\"a.prom\"} ") > written0);
  free(t);
  ck_assert_int_eq(zkl_mutex_unlock(m), 0);
  zkl_mutex_destroy(m);

  /* bad arguments: refused, the export goes on */
  ck_assert_int_eq(zkl_session_stats_export(NULL, a, 200), ZKL_EINVAL);
  ck_assert_int_eq(zkl_session_stats_export(s, "", 200), ZKL_EINVAL);
  ck_assert_int_eq(zkl_session_stats_export(s, b, 99), ZKL_EINVAL);
  ck_assert_ptr_nonnull(strstr(zkl_last_error(), "out of range"));
  ck_assert_int_eq(zkl_session_stats_export(s, b, 3600001), ZKL_EINVAL);
  ck_assert_int_eq(access(b, F_OK), -1);
  t = read_text(a);
  struct file_says later = {a, "zkl_stats_written_seconds{file=\"a.prom\"} ",
                            sample_of(t, "zkl_stats_written_seconds{file=\"a.prom\"} ") + 0.1};
  free(t);
  ck_assert_msg(it_wait_until(file_says, &later, 5000), "not written again");

  /* a new file: the old one goes; then only the new one is there */
  ck_assert_int_eq(zkl_session_stats_export(s, b, 100), 0);
  ck_assert_int_eq(access(a, F_OK), -1);
  ck_assert_int_eq(access(b, F_OK), 0);
  it_sleep_ms(350); /* a few writes */
  /* the same file again, at another interval (the first write is made
   * before the call returns, the next in 5 s: nothing is being written
   * while the directory is listed) */
  ck_assert_int_eq(zkl_session_stats_export(s, b, 5000), 0);
  t = read_text(b);
  ck_assert(sample_of(t, "zkl_stats_interval_seconds{file=\"b.prom\"} ") == 5);
  free(t);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "test \"$(ls -A '%s')\" = b.prom", dir);
  ck_assert_msg(system(cmd) == 0, "a temporary file stayed in %s", dir);

  /* a file that cannot be written: refused at once; no export runs after */
  snprintf(cmd, sizeof cmd, "%s/none/x.prom", dir);
  ck_assert_int_eq(zkl_session_stats_export(s, cmd, 200), ZKL_ESYSTEM);
  ck_assert_ptr_nonnull(strstr(zkl_last_error(), cmd));
  ck_assert_ptr_nonnull(strstr(zkl_last_error(), "No such file"));
  ck_assert_int_eq(access(b, F_OK), -1);

  /* a directory that goes away: logged once, and once when it is back */
  ck_assert_int_eq(mkdir(sub, 0700), 0);
  cap_reset();
  ck_assert_int_eq(zkl_log_set(capture, &cap, ZKL_LOG_INFO), 0);
  ck_assert_int_eq(zkl_session_stats_export(s, subf, 100), 0);
  ck_assert_int_eq(rename(sub, moved), 0);
  expect_log(ZKL_LOG_ZKL, ZKL_LOG_WARN, zkl_session_id(s),
             "cannot write the counters to", 5000);
  it_sleep_ms(400);
  int warned = 0;
  pthread_mutex_lock(&cap.mu);
  for (int i = 0; i < cap.n; i++)
    warned += strstr(cap.r[i].text, "cannot write the counters") != NULL;
  pthread_mutex_unlock(&cap.mu);
  ck_assert_int_eq(warned, 1);
  ck_assert_int_eq(rename(moved, sub), 0);
  expect_log(ZKL_LOG_ZKL, ZKL_LOG_INFO, zkl_session_id(s),
             "writing the counters to", 5000);
  log_off();

  /* a relative path is the working directory's at the call: a later
   * chdir() does not move the file, and the file goes from there too */
  char cwd[4096], rel[160];
  ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
  snprintf(rel, sizeof rel, "%s/rel.prom", dir);
  ck_assert_int_eq(chdir(dir), 0);
  ck_assert_int_eq(zkl_session_stats_export(s, "rel.prom", 100), 0);
  ck_assert_int_eq(chdir("/"), 0);
  it_sleep_ms(250);
  ck_assert_int_eq(access("/rel.prom", F_OK), -1);
  t = read_text(rel);
  ck_assert_ptr_nonnull(t);
  ck_assert(sample_of(t, "zkl_session_state{file=\"rel.prom\"} ") == 1);
  free(t);
  ck_assert_int_eq(chdir(cwd), 0);

  /* NULL ends it (twice is no error); close ends one too */
  ck_assert_int_eq(zkl_session_stats_export(s, NULL, 0), 0);
  ck_assert_int_eq(access(rel, F_OK), -1);
  ck_assert_int_eq(zkl_session_stats_export(s, NULL, 0), 0);
  ck_assert_int_eq(zkl_session_stats_export(s, a, 100), 0);
  zkl_session_close(s);
  ck_assert_msg(it_wait_until(file_gone, a, 1), "close left %s", a);
  ck_assert_int_eq(rmdir(sub), 0);
  ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

Suite *observe_suite(void) {
  Suite *su = suite_create("observe");
  TCase *tc = it_tcase("log");
  tcase_add_test(tc, log_tells_states_and_the_clients_messages);
  tcase_add_test(tc, log_level_and_refusals);
  tcase_add_test(tc, suspension_is_logged_and_counted);
  suite_add_tcase(su, tc);
  tc = it_tcase("stats");
  tcase_add_test(tc, stats_count_what_the_session_did);
  tcase_add_test(tc, stats_count_a_loss);
  tcase_add_test(tc, stats_export_file);
  suite_add_tcase(su, tc);
  return su;
}
