/* bench/sc-election.c - scenario 6: how long until a new leader leads.
 *
 * resign: three zkl candidates, each on its own session; the leader
 *     resigns (and stands again at the back); the time from the resign
 *     call to the next leader's on_elected.  The floor is one handoff of
 *     the hand-written lock between two sessions: from the holder's delete
 *     to the waiter's listing that shows it lowest.
 * killed: the leader is a child process (zkl-bench --child-leader) killed
 *     with SIGKILL, its session left to expire; the time from the kill to
 *     the next leader's on_elected, against the session timeout, which
 *     bounds it from below (the server must first expire the session). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

extern char **environ;

#define CANDIDATES 3
#define WAIT_MS 10000

/* ---- zkl candidates ---------------------------------------------------------------- */

typedef struct el_state {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int leader;          /* index of the candidate elected last */
  int64_t elected_ns;  /* when                                 */
  long elections;      /* how many on_elected so far           */
} el_state_t;

typedef struct el_cand {
  el_state_t *st;
  int idx;
  zkl_session_t *s;
  zkl_election_t *e;
} el_cand_t;

static void on_elected(zkl_election_t *e, uint64_t token, void *arg) {
  (void)e;
  (void)token;
  el_cand_t *c = arg;
  int64_t t = bench_now_ns();
  pthread_mutex_lock(&c->st->mu);
  c->st->leader = c->idx;
  c->st->elected_ns = t;
  c->st->elections++;
  pthread_cond_broadcast(&c->st->cv);
  pthread_mutex_unlock(&c->st->mu);
}

static void el_state_init(el_state_t *st) {
  memset(st, 0, sizeof *st);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_mutex_init(&st->mu, NULL);
  pthread_cond_init(&st->cv, &ca);
  pthread_condattr_destroy(&ca);
  st->leader = -1;
}

static void el_state_fini(el_state_t *st) {
  pthread_cond_destroy(&st->cv);
  pthread_mutex_destroy(&st->mu);
}

/* Waits until more than `seen` elections happened.  0 or -1 (timeout). */
static int wait_elected(el_state_t *st, long seen, int timeout_ms) {
  int64_t until = bench_now_ns() + (int64_t)timeout_ms * 1000000;
  struct timespec ts = {(time_t)(until / 1000000000),
                        (long)(until % 1000000000)};
  int rc = 0;
  pthread_mutex_lock(&st->mu);
  while (st->elections <= seen && rc == 0)
    if (pthread_cond_timedwait(&st->cv, &st->mu, &ts) == ETIMEDOUT) rc = -1;
  pthread_mutex_unlock(&st->mu);
  return rc;
}

static int cand_open(el_cand_t *c, el_state_t *st, int idx, const char *hosts,
                     const char *path) {
  c->st = st;
  c->idx = idx;
  if ((c->s = bench_zkl_open(hosts, 0)) == NULL) return -1;
  zkl_election_opts_t eo;
  zkl_election_opts_init(&eo);
  eo.on_elected = on_elected;
  eo.arg = c;
  char id[32]; /* "bench-" and any int */
  snprintf(id, sizeof id, "bench-%d", idx);
  return zkl_election_create(&c->e, c->s, path, id, strlen(id), &eo);
}

static void cand_close(el_cand_t *c) {
  zkl_election_destroy(c->e);
  zkl_session_close(c->s);
  c->e = NULL;
  c->s = NULL;
}

/* The full path of the lowest contender under `path` (the leader). */
static int lowest_child(const char *path, char *buf, size_t len) {
  struct String_vector kids = {0, NULL};
  if (zoo_get_children(bench_admin, path, 0, &kids) != ZOK) return -1;
  const char *best = NULL;
  long best_seq = 0;
  for (int i = 0; i < kids.count; i++) {
    size_t n = strlen(kids.data[i]);
    long seq = n >= 10 ? strtol(kids.data[i] + n - 10, NULL, 10) : -1;
    if (seq >= 0 && (best == NULL || seq < best_seq)) {
      best = kids.data[i];
      best_seq = seq;
    }
  }
  if (best != NULL) snprintf(buf, len, "%s/%s", path, best);
  deallocate_String_vector(&kids);
  return best != NULL ? 0 : -1;
}

/* Waits until the leader's node is watched by another session: its
 * successor is queued and waiting. */
static int successor_ready(const bench_opts_t *o, const char *path,
                           int64_t leader_session) {
  char node[512];
  int64_t deadline = bench_now_ns() + (int64_t)WAIT_MS * 1000000;
  while (bench_now_ns() < deadline) {
    if (lowest_child(path, node, sizeof node) == 0 &&
        srv_wait_watched(o->hosts, node, leader_session, 200) == 0)
      return 0;
  }
  return -1;
}

static void zkl_resign_rounds(const bench_opts_t *o, samples_t *lat,
                              srv_counters_t *sum) {
  char path[256];
  bench_path(path, sizeof path, o->root, "s6-zkl", NULL);
  bench_mkpath(bench_admin, path);
  el_state_t st;
  el_state_init(&st);
  el_cand_t c[CANDIDATES];
  memset(c, 0, sizeof c);
  int ok = 1;
  for (int i = 0; i < CANDIDATES && ok; i++)
    ok = cand_open(&c[i], &st, i, o->hosts, path) == 0 &&
         zkl_election_start(c[i].e) == 0;
  if (!ok || wait_elected(&st, 0, WAIT_MS) != 0) {
    bench_fail("S6: no zkl leader");
    ok = 0;
  }
  for (int r = 0; r < o->rounds && ok; r++) {
    pthread_mutex_lock(&st.mu);
    int l = st.leader;
    long seen = st.elections;
    pthread_mutex_unlock(&st.mu);
    if (successor_ready(o, path, zkl_session_id(c[l].s)) != 0) {
      bench_fail("S6: the next zkl candidate never watched the leader");
      break;
    }
    srv_counters_t a, b;
    int counted = srv_sample(o->hosts, &a) == 0;
    int64_t t0 = bench_now_ns();
    zkl_election_resign(c[l].e);
    if (wait_elected(&st, seen, WAIT_MS) != 0) {
      bench_fail("S6: nobody took over after a resign");
      break;
    }
    pthread_mutex_lock(&st.mu);
    int64_t t1 = st.elected_ns;
    pthread_mutex_unlock(&st.mu);
    samples_add(lat, (double)(t1 - t0) / 1e3);
    if (counted && srv_sample(o->hosts, &b) == 0) {
      srv_counters_t d;
      srv_delta(&a, &b, &d);
      srv_add(sum, &d);
    }
    int rc = zkl_election_start(c[l].e); /* stand again, at the back */
    if (rc != 0) {
      bench_fail("S6: start again: %s", zkl_strerror(rc));
      break;
    }
  }
  for (int i = 0; i < CANDIDATES; i++) cand_close(&c[i]);
  el_state_fini(&st);
}

/* ---- the floor: one handoff of the hand-written lock, ping-pong ------------------- */

typedef struct pingpong {
  floor_lock_t fl[2];
  zhandle_t *zh[2];
  pthread_t th[2];
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int holder;           /* who holds now, -1 none (guarded by mu)  */
  int release[2];       /* main asks i to release                  */
  int requeue[2];       /* main lets i queue again                 */
  int quit;
  int64_t acq_ns[2], rel_ns[2];
} pingpong_t;

typedef struct pp_arg {
  pingpong_t *pp;
  int i;
} pp_arg_t;

static void *pp_main(void *arg) {
  pp_arg_t *a = arg;
  pingpong_t *pp = a->pp;
  int i = a->i;
  for (;;) {
    pthread_mutex_lock(&pp->mu);
    int quit = pp->quit;
    pthread_mutex_unlock(&pp->mu);
    if (quit || floor_lock_acquire(&pp->fl[i], WAIT_MS) != 0) break;
    int64_t t = bench_now_ns();
    pthread_mutex_lock(&pp->mu);
    pp->acq_ns[i] = t;
    pp->holder = i;
    pthread_cond_broadcast(&pp->cv);
    while (!pp->release[i] && !pp->quit) pthread_cond_wait(&pp->cv, &pp->mu);
    pp->release[i] = 0;
    pp->holder = -1;
    pp->rel_ns[i] = bench_now_ns();
    pthread_mutex_unlock(&pp->mu);
    floor_lock_release(&pp->fl[i]);
    /* queue again only once main has counted the handoff */
    pthread_mutex_lock(&pp->mu);
    while (!pp->requeue[i] && !pp->quit) pthread_cond_wait(&pp->cv, &pp->mu);
    pp->requeue[i] = 0;
    pthread_mutex_unlock(&pp->mu);
  }
  return NULL;
}

static void floor_resign_rounds(const bench_opts_t *o, samples_t *lat,
                                srv_counters_t *sum) {
  char path[256];
  bench_path(path, sizeof path, o->root, "s6-floor", NULL);
  bench_mkpath(bench_admin, path);
  pingpong_t pp;
  memset(&pp, 0, sizeof pp);
  pthread_mutex_init(&pp.mu, NULL);
  pthread_cond_init(&pp.cv, NULL);
  pp.holder = -1;
  pp_arg_t args[2] = {{&pp, 0}, {&pp, 1}};
  int started = 0;
  for (int i = 0; i < 2; i++) {
    if ((pp.zh[i] = floor_open(o->hosts, 10000)) == NULL) goto out;
    floor_lock_init(&pp.fl[i], pp.zh[i], path, FLOOR_MUTEX);
  }
  for (; started < 2; started++)
    if (pthread_create(&pp.th[started], NULL, pp_main, &args[started]) != 0)
      goto out;
  for (int r = 0; r <= o->rounds; r++) { /* round 0 only sets up */
    int64_t deadline = bench_now_ns() + (int64_t)WAIT_MS * 1000000;
    pthread_mutex_lock(&pp.mu);
    int h;
    /* the holder holds and the other waits with its watch set */
    while ((h = pp.holder) < 0 || !atomic_load(&pp.fl[1 - h].armed)) {
      pthread_mutex_unlock(&pp.mu);
      if (bench_now_ns() > deadline) {
        bench_fail("S6 floor: no holder with a waiter");
        goto out;
      }
      bench_sleep_ms(1);
      pthread_mutex_lock(&pp.mu);
    }
    pthread_mutex_unlock(&pp.mu);
    srv_counters_t a, b;
    int counted = r > 0 && srv_sample(o->hosts, &a) == 0;
    pthread_mutex_lock(&pp.mu);
    pp.release[h] = 1;
    pthread_cond_broadcast(&pp.cv);
    while (pp.holder != 1 - h) pthread_cond_wait(&pp.cv, &pp.mu);
    if (r > 0) samples_add(lat, (double)(pp.acq_ns[1 - h] - pp.rel_ns[h]) / 1e3);
    pthread_mutex_unlock(&pp.mu);
    if (counted && srv_sample(o->hosts, &b) == 0) {
      srv_counters_t d;
      srv_delta(&a, &b, &d);
      srv_add(sum, &d);
    }
    pthread_mutex_lock(&pp.mu);
    pp.requeue[h] = 1;
    pthread_cond_broadcast(&pp.cv);
    pthread_mutex_unlock(&pp.mu);
  }
out:
  pthread_mutex_lock(&pp.mu);
  pp.quit = 1;
  pthread_cond_broadcast(&pp.cv);
  pthread_mutex_unlock(&pp.mu);
  for (int i = 0; i < started; i++) pthread_join(pp.th[i], NULL);
  for (int i = 0; i < 2; i++)
    if (pp.zh[i] != NULL) {
      floor_close(pp.zh[i]);
      floor_lock_fini(&pp.fl[i]);
    }
  pthread_cond_destroy(&pp.cv);
  pthread_mutex_destroy(&pp.mu);
}

/* ---- killed leader --------------------------------------------------------------------- */

int sc_election_child(const char *hosts, const char *path, int timeout_ms) {
  alarm(120); /* whatever happens, this process ends */
  zkl_session_t *s = bench_zkl_open(hosts, timeout_ms);
  zkl_election_t *e = NULL;
  if (s == NULL || zkl_election_create(&e, s, path, "child", 5, NULL) != 0 ||
      zkl_election_start(e) != 0 || zkl_election_await(e, WAIT_MS) != 0)
    return 1;
  printf("elected %d %llx\n", zkl_session_timeout(s),
         (unsigned long long)zkl_session_id(s));
  fflush(stdout);
  char b;
  while (read(0, &b, 1) > 0) { /* until the parent goes */
  }
  _exit(0); /* no close: the session is left to expire, like a crash */
}

/* Reads one line from fd within timeout_ms.  0 or -1. */
static int read_line(int fd, char *buf, size_t len, int timeout_ms) {
  size_t n = 0;
  int64_t deadline = bench_now_ns() + (int64_t)timeout_ms * 1000000;
  while (n + 1 < len) {
    int left = (int)((deadline - bench_now_ns()) / 1000000);
    struct pollfd p = {fd, POLLIN, 0};
    if (left <= 0 || poll(&p, 1, left) <= 0) return -1;
    ssize_t r = read(fd, buf + n, 1);
    if (r <= 0) return -1;
    if (buf[n] == '\n') break;
    n++;
  }
  buf[n] = '\0';
  return 0;
}

/* One killed-leader round: ms from SIGKILL to the next leader, or NAN.
 * *timeout_ms gets the child's negotiated session timeout. */
static double zkl_killed_round(const bench_opts_t *o, const char *path,
                               int *timeout_ms) {
  char self[4096], tmo[16], line[128];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return NAN;
  self[n] = '\0';
  snprintf(tmo, sizeof tmo, "%d", o->kill_timeout_ms);
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0) return NAN;
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]);
    close(in[1]);
    return NAN;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  char *argv[] = {self, "--child-leader", (char *)o->hosts, (char *)path,
                  tmo, NULL};
  pid_t pid;
  int src = posix_spawn(&pid, self, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(out[1]);
  double result = NAN;
  el_state_t st;
  el_state_init(&st);
  el_cand_t c;
  memset(&c, 0, sizeof c);
  unsigned long long child_sid = 0;
  if (src != 0) {
    bench_fail("S6: cannot start %s: %s", self, strerror(src));
    goto out;
  }
  if (read_line(out[0], line, sizeof line, 30000) != 0 ||
      sscanf(line, "elected %d %llx", timeout_ms, &child_sid) != 2) {
    bench_fail("S6: the child leader was not elected");
    goto kill;
  }
  if (cand_open(&c, &st, 0, o->hosts, path) != 0 ||
      zkl_election_start(c.e) != 0 ||
      successor_ready(o, path, (int64_t)child_sid) != 0) {
    bench_fail("S6: the next candidate never watched the child leader");
    goto kill;
  }
  int64_t t0 = bench_now_ns();
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  pid = -1;
  if (wait_elected(&st, 0, 3 * *timeout_ms + WAIT_MS) == 0)
    result = (double)(st.elected_ns - t0) / 1e6;
  else
    bench_fail("S6: nobody took over from the killed leader");
kill:
  if (pid > 0) {
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
  }
out:
  cand_close(&c);
  el_state_fini(&st);
  close(in[1]);
  close(out[0]);
  return result;
}

void sc_election(const bench_opts_t *o) {
  samples_t fl = {0}, zl = {0}, killed = {0};
  srv_counters_t fsum, zsum;
  memset(&fsum, 0, sizeof fsum);
  memset(&zsum, 0, sizeof zsum);
  floor_resign_rounds(o, &fl, &fsum);
  zkl_resign_rounds(o, &zl, &zsum);
  double fn = (double)fl.n, zn = (double)zl.n;
  result_add_samples("6", "resign", "floor", "takeover", "us", &fl);
  result_add_samples("6", "resign", "zkl", "takeover", "us", &zl);
  srv_report("6", "resign", "floor", "takeover", &fsum, fn);
  srv_report("6", "resign", "zkl", "takeover", &zsum, zn);
  char path[256];
  bench_path(path, sizeof path, o->root, "s6-zkl-kill", NULL);
  bench_mkpath(bench_admin, path);
  int timeout_ms = o->kill_timeout_ms;
  for (int r = 0; r < o->kill_rounds; r++) {
    double ms = zkl_killed_round(o, path, &timeout_ms);
    if (isnan(ms)) break;
    samples_add(&killed, ms);
  }
  if (o->kill_rounds > 0) {
    /* nothing can take over before the server expires the session */
    result_add("6", "killed", "floor", "takeover", "ms", timeout_ms, NAN, 1);
    result_add_samples("6", "killed", "zkl", "takeover", "ms", &killed);
  }
}
