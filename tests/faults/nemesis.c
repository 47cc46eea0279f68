/* tests/faults/nemesis.c - a seeded randomized fault schedule (a
 * "nemesis", as Jepsen runs them) over the three recipes at once, on the
 * harness's 3-node ensemble (ZKL_TEST_ENSEMBLE=1 tests/with-zookeeper).
 *
 * Three lanes contend for the whole run, each on its own lock path: 4
 * mutex workers (half lock(), half timedlock()), 4 read/write lock workers
 * (each operation a reader or a writer, blocking or timed) and 3 election
 * candidates.  Each worker is a process that reaches the ensemble through
 * three proxies (tests/integration/proxy.c) of its own, so that its
 * connection alone can be cut.  Every 0.5..2.5 s a seeded PRNG picks one
 * fault: pause a holder or a waiter (SIGSTOP for 0.3..5 s, on both sides
 * of the 2 s session timeout), SIGKILL a worker (a spare process takes its
 * slot as a new incarnation), cut a worker's connection for 0.5..5 s, or
 * kill, pause or restart one ZooKeeper server (one at a time: the quorum
 * stays).  A fault's end is scheduled, not waited for.  At the end every
 * fault is undone, the workers run on fault-free (3 s, and up to 15 s more
 * while a victim has yet to enter again), stop, and the shared log
 * (common.c) is judged per lane: no violation, no node left, every victim
 * entered again after its last fault, enough grants, and the lock can be
 * taken again.  A table row per lane is printed.
 *
 * ZKL_NEMESIS_SECONDS sets the length (default 60), ZKL_NEMESIS_SEED the
 * seed (default: from the time and pid; printed either way).  The seed
 * fixes the sequence of fault kinds, delays and durations; which worker a
 * fault hits also depends on what the workers are doing at that moment.
 * The faults as they fired are printed on a failure (always with
 * ZKL_NEMESIS_TRACE set), and the whole log is written to
 * nemesis-SEED.log in the working directory.
 *
 * Every process is forked before this one opens a session or starts a
 * thread: the workers and, per lane, spares that sit idle until a kill
 * releases one.  Only this process signals and reaps them, by PID; a
 * worker dies with it (PR_SET_PDEATHSIG) should the test abort. */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "faults.h"

#define SESSION_MS 2000
#define LANES 3
#define MAXSLOTS 4
#define MAXSPARES 64
#define SERVERS 3
#define QUIET_MS 3000         /* fault-free at the end, at least */
#define QUIET_MORE_MS 15000   /* and up to this for victims to enter again */
#define STOP_MS 30000         /* a worker taking longer to stop is stuck */
#define MIN_GRANTS 20
#define ACQUIRER (FC_MAXWHO - 1) /* who of this process's own final take */
#define MAXTRACE 4096

static const fc_kind_t lane_kind[LANES] = {K_MUTEX, K_RWLOCK, K_ELECTION};
static const int lane_slots[LANES] = {4, 4, 3};

/* ---- shared with the workers --------------------------------------------- */

/* What a worker is doing, for the faults that pick a holder or a waiter. */
enum { W_IDLE, W_WAITING, W_HOLDING };

/* A spare process: idle until `go`, then the new incarnation in `slot`. */
struct spare {
  pid_t pid;
  int who, slot;
  int go; /* atomic, set after slot */
};

struct lane_sh {
  char path[128];
  int state[MAXSLOTS];            /* atomic: written by the incarnation */
  int64_t cut_until_ms[MAXSLOTS]; /* atomic: set here, obeyed by workers */
  int nspares, used;              /* used: written by the test process */
  struct spare spare[MAXSPARES];
};

struct shared {
  int stop; /* atomic: workers leave after their current operation */
  uint64_t seed;
  struct lane_sh lane[LANES];
};

static struct shared *sh;
static struct fc_log *lg;

static int64_t load64(const int64_t *p) {
  return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}
static void store64(int64_t *p, int64_t v) {
  __atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

/* ---- the worker processes ------------------------------------------------ */

struct worker {
  int lane, slot, who;
  pid_t parent;
  it_proxy_t *px[SERVERS];
  char hosts[128];
  pthread_t ctl;
  int ctl_stop; /* atomic */
};

static int stopping(const struct worker *w) {
  return fc_load(&sh->stop) || getppid() != w->parent;
}

/* The client-side partition: blackholes the worker's three proxies while
 * the test's cut_until_ms for its slot lies ahead. */
static void *cut_control(void *arg) {
  struct worker *w = arg;
  const int64_t *until = &sh->lane[w->lane].cut_until_ms[w->slot];
  int cut = 0;
  while (!fc_load(&w->ctl_stop)) {
    int want = it_now_ms() < load64(until);
    for (int i = 0; i < SERVERS && want != cut; i++)
      it_proxy_blackhole(w->px[i], want);
    cut = want;
    it_sleep_ms(10);
  }
  return NULL;
}

static void proxies_start(struct worker *w) {
  size_t off = 0;
  for (int i = 0; i < SERVERS; i++) {
    w->px[i] = it_proxy_start_to(fc_server_port(i + 1));
    off += (size_t)snprintf(w->hosts + off, sizeof w->hosts - off,
                            "%s127.0.0.1:%d", i > 0 ? "," : "",
                            it_proxy_port(w->px[i]));
  }
  ck_assert_int_eq(pthread_create(&w->ctl, NULL, cut_control, w), 0);
}

static void proxies_stop(struct worker *w) {
  fc_store(&w->ctl_stop, 1);
  pthread_join(w->ctl, NULL);
  for (int i = 0; i < SERVERS; i++) it_proxy_stop(w->px[i]);
}

/* A session and the recipe object on it; 0 (nothing left open) if not. */
static int open_held(struct worker *w, zkl_session_t **s, fc_held_t *h) {
  *s = fc_session(w->hosts, SESSION_MS);
  if (*s == NULL) return 0;
  if (fc_held_make(h, *s, sh->lane[w->lane].path) == 0) return 1;
  fc_held_free(h);
  zkl_session_close(*s);
  *s = NULL;
  return 0;
}

/* Lane 0: even slots block, odd ones time out; the others draw per op. */
static int64_t pick_timeout(const struct worker *w, unsigned *r) {
  int timed = w->lane == 0 ? w->slot % 2 : (int)(rand_r(r) % 2);
  return timed ? 50 + (int64_t)(rand_r(r) % 1451) : -1;
}

/* One take -> critical section -> release; the take's answer. */
static int one_op(struct worker *w, fc_held_t *h, unsigned *r) {
  int *state = &sh->lane[w->lane].state[w->slot];
  int shared = lane_kind[w->lane] == K_RWLOCK && rand_r(r) % 3 != 0;
  int64_t timeout = pick_timeout(w, r);
  fc_store(state, W_WAITING);
  int rc = fc_held_take(h, shared, timeout);
  if (rc == 0) {
    fc_store(state, W_HOLDING);
    fc_held_work(h, shared, 5 + (int)(rand_r(r) % 46));
  }
  fc_store(state, W_IDLE);
  return rc;
}

static int worker_run(struct worker *w) {
  fc_worker_is(lg, w->lane, w->who);
  proxies_start(w);
  fc_held_t h = {.kind = lane_kind[w->lane], .log = lg, .lane = w->lane,
                 .who = w->who};
  zkl_session_t *s = NULL;
  unsigned r = (unsigned)(sh->seed ^ (sh->seed >> 32)) * 31u +
               (unsigned)(w->lane * 1000 + w->who);
  while (!stopping(w)) {
    if (s == NULL && !open_held(w, &s, &h)) {
      it_sleep_ms(100); /* a cut or a server down: try again */
      continue;
    }
    int rc = one_op(w, &h, &r);
    if (rc == ZKL_ELOST) { /* a new session, as an application would */
      fc_held_free(&h);
      zkl_session_close(s);
      s = NULL;
    } else if (rc != 0 && rc != ZKL_ETIMEDOUT) {
      it_sleep_ms(20); /* e.g. the connection is down: do not spin */
    }
  }
  fc_held_free(&h);
  zkl_session_close(s);
  proxies_stop(w);
  return 0;
}

/* A spare waits (no session, no thread) until released into a slot, or
 * leaves when the run stops first. */
static int spare_run(struct worker *w, int k) {
  struct spare *sp = &sh->lane[w->lane].spare[k];
  while (!fc_load(&sp->go)) {
    if (stopping(w)) return 0;
    it_sleep_ms(10);
  }
  w->slot = sp->slot;
  return worker_run(w);
}

/* Forks a worker (spare < 0) or spare number `spare` of the lane. */
static pid_t spawn(int lane, int slot, int who, int spare) {
  pid_t pid = fc_fork();
  if (pid > 0) return pid;
  static struct worker w; /* the proxies' thread reads it */
  w = (struct worker){.lane = lane, .slot = slot, .who = who,
                      .parent = getppid()};
  _exit(spare < 0 ? worker_run(&w) : spare_run(&w, spare));
}

/* ---- the test process's view of the run ---------------------------------- */

typedef enum {
  F_PAUSE_HOLDER,
  F_PAUSE_WAITER,
  F_KILL_WORKER,
  F_CUT,
  F_KILL_SERVER,
  F_PAUSE_SERVER,
  F_RESTART_SERVER,
  F_KINDS
} fault_t;
static const char *fault_names[] = {"pause holder", "pause waiter",
                                    "kill worker",  "cut worker",
                                    "kill server",  "pause server",
                                    "restart server"};

struct slot {
  pid_t pid; /* 0: exited on its own (a failure) */
  int who;
  int64_t resume_at; /* paused until (0: not paused) */
  int64_t lift_at;   /* cut until (0: not cut) */
};

/* An incarnation hit by a fault: it must enter after its last one (log
 * index `last`), unless it was killed; a respawned one must enter. */
struct victim {
  int faulted, killed, respawned, last;
};

enum { SV_UP, SV_DOWN, SV_PAUSED, SV_RESTARTING };
struct server_fault {
  int state, id;
  int64_t undo_at;
  pid_t helper; /* the harness's restart, run in the background */
};

/* A fault drawn but not fired yet: its target may not exist right now
 * (nobody waits, a server fault is still being undone). */
struct armed {
  int on;
  fault_t kind;
  uint64_t pick;
  int dur_ms;
  int64_t until;
};

struct trace {
  int64_t t_us;
  fault_t kind;
  int lane, who, dur_ms; /* server faults: lane -1, who = server id */
};

struct nemesis {
  uint64_t rng;
  struct slot slot[LANES][MAXSLOTS];
  struct victim victim[LANES][FC_MAXWHO];
  struct server_fault srv;
  int faults[LANES][F_KINDS], server_faults[F_KINDS];
  int skipped[F_KINDS], harness_failures, died, stuck;
  int ntrace;
  struct trace trace[MAXTRACE];
};

static struct nemesis nm;
static uint64_t nemesis_seed;
static int nemesis_seconds;

static uint64_t rnd(void) { return fc_xorshift(&nm.rng); }

static int between(uint64_t r, int lo, int hi) {
  return lo + (int)(r % (uint64_t)(hi - lo + 1));
}

static int log_n(void) { return fc_load(&lg->n); }

static void note(fault_t kind, int lane, int who, int dur_ms) {
  if (lane >= 0) nm.faults[lane][kind]++;
  else nm.server_faults[kind]++;
  if (nm.ntrace < MAXTRACE)
    nm.trace[nm.ntrace++] = (struct trace){fc_now_us(), kind, lane, who,
                                           dur_ms};
}

/* ---- the harness, without asserting (a failure is counted) --------------- */

static int harness_now(const char *verb, int id) {
  char cmd[1024];
  fc_harness_cmd(cmd, sizeof cmd, "", verb, id);
  if (system(cmd) == 0) return 1;
  fprintf(stderr, "nemesis: harness %s %d failed\n", verb, id);
  nm.harness_failures++;
  return 0;
}

/* A verb that waits (a restart waits until the server serves), run in a
 * child so the schedule goes on meanwhile. */
static pid_t harness_async(const char *verb, int id) {
  char cmd[1024];
  fc_harness_cmd(cmd, sizeof cmd, "", verb, id);
  pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
  }
  if (pid < 0) nm.harness_failures++;
  return pid;
}

/* ---- the faults on workers ----------------------------------------------- */

typedef int (*eligible_fn)(int lane, int slot, int arg);

/* The pick-th (modulo their number) slot that ok() accepts; 0 if none. */
static int choose(uint64_t pick, eligible_fn ok, int arg, int *lane,
                  int *slot) {
  int cand[LANES * MAXSLOTS], n = 0;
  for (int l = 0; l < LANES; l++)
    for (int s = 0; s < lane_slots[l]; s++)
      if (nm.slot[l][s].pid > 0 && ok(l, s, arg)) cand[n++] = l * MAXSLOTS + s;
  if (n == 0) return 0;
  *lane = cand[pick % (uint64_t)n] / MAXSLOTS;
  *slot = cand[pick % (uint64_t)n] % MAXSLOTS;
  return 1;
}

static int in_state(int l, int s, int st) {
  return nm.slot[l][s].resume_at == 0 && fc_load(&sh->lane[l].state[s]) == st;
}

/* Paused workers are left alone (their resume is pending); a kill needs a
 * spare to take the slot. */
static int killable(int l, int s, int arg) {
  return nm.slot[l][s].resume_at == 0 &&
         sh->lane[l].used < sh->lane[l].nspares;
}

static int cuttable(int l, int s, int arg) {
  return nm.slot[l][s].lift_at == 0;
}

/* A worker that exited on its own (or was stopped by someone else). */
static void lost_worker(int l, int s, int status) {
  fprintf(stderr, "nemesis: lane %d slot %d (w%d) exited by itself, status "
          "%d\n", l, s, nm.slot[l][s].who, status);
  nm.slot[l][s].pid = 0;
  nm.died++;
}

static int pause_worker(const struct armed *a, int state) {
  int l, s, st;
  if (!choose(a->pick, in_state, state, &l, &s)) return 0;
  struct slot *w = &nm.slot[l][s];
  kill(w->pid, SIGSTOP);
  if (waitpid(w->pid, &st, WUNTRACED) != w->pid || !WIFSTOPPED(st)) {
    lost_worker(l, s, st);
    return 1;
  }
  fc_add(lg, R_PAUSE, l, w->who, 0, 0); /* it is stopped now */
  w->resume_at = it_now_ms() + a->dur_ms;
  nm.victim[l][w->who].faulted = 1;
  note(a->kind, l, w->who, a->dur_ms);
  return 1;
}

static void resume_worker(int l, int s) {
  struct slot *w = &nm.slot[l][s];
  int k = log_n();
  fc_add(lg, R_RESUME, l, w->who, 0, 0); /* before it can act again */
  kill(w->pid, SIGCONT);
  w->resume_at = 0;
  nm.victim[l][w->who].last = k;
}

/* SIGKILL, then a spare takes the slot as a new incarnation (a new who). */
static int kill_worker(const struct armed *a) {
  int l, s, st;
  if (!choose(a->pick, killable, 0, &l, &s)) return 0;
  struct slot *w = &nm.slot[l][s];
  struct lane_sh *ln = &sh->lane[l];
  kill(w->pid, SIGKILL);
  fc_add(lg, R_KILLED, l, w->who, 0, 0);
  waitpid(w->pid, &st, 0);
  nm.victim[l][w->who].killed = 1;
  note(a->kind, l, w->who, 0);
  struct spare *sp = &ln->spare[ln->used++];
  fc_store(&ln->state[s], W_IDLE); /* the dead one's word is void */
  sp->slot = s;
  fc_store(&sp->go, 1);
  w->pid = sp->pid;
  w->who = sp->who;
  nm.victim[l][sp->who].respawned = 1;
  nm.victim[l][sp->who].last = log_n() - 1;
  return 1;
}

static int cut_worker(const struct armed *a) {
  int l, s;
  if (!choose(a->pick, cuttable, 0, &l, &s)) return 0;
  struct slot *w = &nm.slot[l][s];
  w->lift_at = it_now_ms() + a->dur_ms;
  store64(&sh->lane[l].cut_until_ms[s], w->lift_at);
  nm.victim[l][w->who].faulted = 1;
  note(a->kind, l, w->who, a->dur_ms);
  return 1;
}

/* The cut ends by itself in the worker; here we note when (early at the
 * end of the run). */
static void lift_cut(int l, int s) {
  struct slot *w = &nm.slot[l][s];
  store64(&sh->lane[l].cut_until_ms[s], 0);
  w->lift_at = 0;
  nm.victim[l][w->who].faulted = 1; /* the slot's incarnation now */
  nm.victim[l][w->who].last = log_n() - 1;
}

/* ---- the faults on servers (one at a time) ------------------------------- */

static int server_fault(const struct armed *a) {
  struct server_fault *sv = &nm.srv;
  if (sv->state != SV_UP) return 0;
  int id = 1 + (int)(a->pick % SERVERS);
  sv->id = id;
  sv->undo_at = it_now_ms() + a->dur_ms;
  switch (a->kind) {
    case F_KILL_SERVER:
      if (harness_now("kill", id)) sv->state = SV_DOWN;
      break;
    case F_PAUSE_SERVER:
      if (harness_now("pause", id)) sv->state = SV_PAUSED;
      break;
    default: /* restart: kill, then start again at once */
      if (harness_now("kill", id) &&
          (sv->helper = harness_async("restart", id)) > 0)
        sv->state = SV_RESTARTING;
      break;
  }
  note(a->kind, -1, id, a->kind == F_RESTART_SERVER ? 0 : a->dur_ms);
  return 1;
}

/* Undoes the server fault if due (now, with `all`); reaps a restart. */
static void server_undo(int64_t now, int all) {
  struct server_fault *sv = &nm.srv;
  int st;
  if (sv->state == SV_DOWN && (all || now >= sv->undo_at)) {
    sv->helper = harness_async("restart", sv->id);
    sv->state = sv->helper > 0 ? SV_RESTARTING : SV_UP;
  } else if (sv->state == SV_PAUSED && (all || now >= sv->undo_at)) {
    harness_now("resume", sv->id);
    sv->state = SV_UP;
  } else if (sv->state == SV_RESTARTING &&
             waitpid(sv->helper, &st, WNOHANG) == sv->helper) {
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      fprintf(stderr, "nemesis: harness restart %d failed\n", sv->id);
      nm.harness_failures++;
    }
    sv->state = SV_UP;
  }
}

/* ---- the schedule -------------------------------------------------------- */

/* Draws the next fault: always three numbers (and the caller one for the
 * delay), so the stream stays the same whatever the workers happen to be
 * doing; only the target depends on them. */
static void arm(struct armed *a, int64_t now) {
  uint64_t k = rnd(), pick = rnd(), d = rnd();
  a->kind = (fault_t)(k % F_KINDS);
  a->pick = pick;
  a->dur_ms = a->kind <= F_PAUSE_WAITER ? between(d, 300, 5000)
                                        : between(d, 500, 5000);
  a->until = now + 300; /* a target may turn up meanwhile */
  a->on = 1;
}

static int fire(const struct armed *a) {
  switch (a->kind) {
    case F_PAUSE_HOLDER: return pause_worker(a, W_HOLDING);
    case F_PAUSE_WAITER: return pause_worker(a, W_WAITING);
    case F_KILL_WORKER: return kill_worker(a);
    case F_CUT: return cut_worker(a);
    default: return server_fault(a);
  }
}

/* Ends the faults that are due (all of them with `all`). */
static void undo_due(int64_t now, int all) {
  for (int l = 0; l < LANES; l++)
    for (int s = 0; s < lane_slots[l]; s++) {
      struct slot *w = &nm.slot[l][s];
      if (w->resume_at != 0 && (all || now >= w->resume_at))
        resume_worker(l, s);
      if (w->lift_at != 0 && (all || now >= w->lift_at)) lift_cut(l, s);
    }
  server_undo(now, all);
}

/* Notices workers that exited although nobody killed them. */
static void reap_unexpected(void) {
  for (int l = 0; l < LANES; l++)
    for (int s = 0; s < lane_slots[l]; s++) {
      int st;
      pid_t pid = nm.slot[l][s].pid;
      if (pid > 0 && waitpid(pid, &st, WNOHANG) == pid) lost_worker(l, s, st);
    }
}

static void run_schedule(int64_t end) {
  struct armed a = {0};
  int64_t next = it_now_ms() + 1500 + between(rnd(), 500, 2500); /* warm-up */
  for (int64_t now = it_now_ms(), tick = 0; now < end;
       now = it_now_ms(), tick++) {
    undo_due(now, 0);
    if (tick % 20 == 0) reap_unexpected();
    if (a.on && fire(&a)) {
      a.on = 0;
    } else if (a.on && now >= a.until) {
      nm.skipped[a.kind]++; /* no target in time */
      a.on = 0;
    }
    if (!a.on && now >= next) {
      arm(&a, now);
      next = now + between(rnd(), 500, 2500);
    }
    if (log_n() > FC_MAXREC / 4 * 3) {
      printf("nemesis: the log is 3/4 full: the schedule ends early\n");
      break;
    }
    it_sleep_ms(5);
  }
}

/* ---- setting up and winding down ----------------------------------------- */

/* About one kill in seven faults, one fault per 1.5 s, over three lanes;
 * a kill with no spare left is skipped. */
static int spares_per_lane(int seconds) {
  int n = 3 + seconds / 15;
  return n < MAXSPARES ? n : MAXSPARES;
}

static void fork_all(int seconds) {
  for (int l = 0; l < LANES; l++) {
    struct lane_sh *ln = &sh->lane[l];
    it_root(ln->path, sizeof ln->path, "nemesis");
    ln->nspares = spares_per_lane(seconds);
    for (int s = 0; s < lane_slots[l]; s++) {
      nm.slot[l][s].who = s;
      nm.slot[l][s].pid = spawn(l, s, s, -1);
    }
    for (int k = 0; k < ln->nspares; k++) {
      ln->spare[k].who = lane_slots[l] + k;
      ln->spare[k].pid = spawn(l, -1, ln->spare[k].who, k);
    }
  }
}

/* Every fault ends now; returns once the ensemble is whole again. */
static void undo_all(void) {
  undo_due(it_now_ms(), 1);
  if (nm.srv.state == SV_RESTARTING) {
    int st = 0;
    if (!fc_reap_by(nm.srv.helper, it_now_ms() + 60000, &st)) {
      kill(nm.srv.helper, SIGKILL);
      waitpid(nm.srv.helper, &st, 0);
      nm.harness_failures++;
    } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      nm.harness_failures++;
    }
    nm.srv.state = SV_UP;
  }
  harness_now("wait-ready", 0);
}

static int is_victim(const struct victim *v) {
  return !v->killed && (v->faulted || v->respawned);
}

static int progressed(int l, int who) {
  return fc_entered_after(lg, l, who, nm.victim[l][who].last);
}

static int pending_victims(void) {
  int n = 0;
  for (int l = 0; l < LANES; l++)
    for (int who = 0; who < FC_MAXWHO; who++)
      n += is_victim(&nm.victim[l][who]) && !progressed(l, who);
  return n;
}

/* Fault-free: QUIET_MS at least, then (bounded) until every victim has
 * entered again, so that a slow but live one is not taken for dead. */
static int64_t quiet_phase(void) {
  int64_t t0 = it_now_ms();
  it_sleep_ms(QUIET_MS);
  while (pending_victims() > 0 &&
         it_now_ms() < t0 + QUIET_MS + QUIET_MORE_MS) {
    reap_unexpected();
    it_sleep_ms(100);
  }
  return it_now_ms() - t0;
}

static void stop_one(pid_t pid, int l, int who, int64_t until) {
  int st = 0;
  if (pid <= 0) return;
  if (!fc_reap_by(pid, until, &st)) {
    fprintf(stderr, "nemesis: lane %d w%d did not stop in %d ms\n", l, who,
            STOP_MS);
    kill(pid, SIGKILL);
    fc_add(lg, R_KILLED, l, who, 0, 0);
    waitpid(pid, &st, 0);
    nm.stuck++;
  } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    fprintf(stderr, "nemesis: lane %d w%d ended with status %d\n", l, who,
            st);
    nm.died++;
  }
}

/* The workers finish their operation and leave; idle spares leave too. */
static void stop_workers(void) {
  fc_store(&sh->stop, 1);
  int64_t until = it_now_ms() + STOP_MS;
  for (int l = 0; l < LANES; l++) {
    struct lane_sh *ln = &sh->lane[l];
    for (int s = 0; s < lane_slots[l]; s++)
      stop_one(nm.slot[l][s].pid, l, nm.slot[l][s].who, until);
    for (int k = ln->used; k < ln->nspares; k++)
      stop_one(ln->spare[k].pid, l, ln->spare[k].who, until);
  }
}

/* ---- the verdict --------------------------------------------------------- */

struct lane_result {
  fc_verdict_t v;
  int told, orphans, again, victims, progressed;
};

/* TOLD records: how often the faults reached a worker's session (an
 * election candidate is also told at each resign, by on_revoked). */
static int told_count(int l) {
  int n = 0, end = log_n() < FC_MAXREC ? log_n() : FC_MAXREC;
  for (int k = 0; k < end; k++)
    n += lg->r[k].lane == l && lg->r[k].type == R_TOLD;
  return n;
}

static void judge_lane(int l, zkl_session_t *s, struct lane_result *r) {
  memset(r, 0, sizeof *r);
  fc_check(lg, l, &r->v);
  r->told = told_count(l);
  for (int who = 0; who < FC_MAXWHO; who++) {
    if (!is_victim(&nm.victim[l][who])) continue;
    r->victims++;
    if (progressed(l, who)) r->progressed++;
    else fprintf(stderr, "nemesis: lane %d w%d never entered after its last "
                 "fault (log index %d)\n", l, who, nm.victim[l][who].last);
  }
  r->orphans = fc_orphans(s, sh->lane[l].path, 15000);
  /* acquirable again, from here */
  fc_held_t h = {.kind = lane_kind[l], .log = lg, .lane = l, .who = ACQUIRER};
  r->again = fc_held_make(&h, s, sh->lane[l].path);
  if (r->again == 0 && (r->again = fc_held_take(&h, 0, 5000)) == 0)
    fc_held_work(&h, 0, 0);
  fc_held_free(&h);
}

static void print_table(const struct lane_result *r, int64_t quiet_ms,
                        int64_t wall_ms) {
  printf("| %-4s | %-8s | %5s | %6s | %5s | %10s | %7s | %5s | %6s | %6s |"
         " %6s | %4s | %10s |\n", "lane", "recipe", "incs", "grants", "told",
         "violations", "orphans", "again", "paus-H", "paus-W", "killed", "cut",
         "progressed");
  printf("|------|----------|-------|--------|-------|------------|---------|"
         "-------|--------|--------|--------|------|------------|\n");
  for (int l = 0; l < LANES; l++)
    printf("| %-4d | %-8s | %5d | %6d | %5d | %10d | %7d | %5s | %6d | %6d |"
           " %6d | %4d | %4d / %-3d |\n", l, fc_kind_names[lane_kind[l]],
           lane_slots[l] + sh->lane[l].used, r[l].v.entries, r[l].told,
           r[l].v.violations, r[l].orphans, r[l].again == 0 ? "yes" : "NO",
           nm.faults[l][F_PAUSE_HOLDER], nm.faults[l][F_PAUSE_WAITER],
           nm.faults[l][F_KILL_WORKER], nm.faults[l][F_CUT], r[l].progressed,
           r[l].victims);
  printf("servers: killed %d, paused %d, restarted %d; quiet phase %.1f s; "
         "wall %.1f s; seed %" PRIu64 "\n", nm.server_faults[F_KILL_SERVER],
         nm.server_faults[F_PAUSE_SERVER], nm.server_faults[F_RESTART_SERVER],
         quiet_ms / 1e3, wall_ms / 1e3, nemesis_seed);
  printf("skipped (no target in time):");
  for (int k = 0; k < F_KINDS; k++)
    if (nm.skipped[k] > 0) printf(" %s %d", fault_names[k], nm.skipped[k]);
  printf("\n");
  for (int l = 0; l < LANES; l++)
    if (r[l].v.violations > 0)
      printf("lane %d (%s), first violation: %s\n", l,
             fc_kind_names[lane_kind[l]], r[l].v.first);
}

/* The faults as they fired, on the checker's clock (+s from the log's
 * first record), to read a violation against. */
static void print_trace(void) {
  int64_t t0 = log_n() > 0 ? lg->r[0].t_us : 0;
  printf("fault trace (seed %" PRIu64 "):\n", nemesis_seed);
  for (int i = 0; i < nm.ntrace; i++) {
    const struct trace *t = &nm.trace[i];
    if (t->lane < 0)
      printf("  +%8.3f s  %-14s server %d  %5d ms\n", (t->t_us - t0) / 1e6,
             fault_names[t->kind], t->who, t->dur_ms);
    else
      printf("  +%8.3f s  %-14s lane %d w%-3d %5d ms\n", (t->t_us - t0) / 1e6,
             fault_names[t->kind], t->lane, t->who, t->dur_ms);
  }
}

/* The whole log as text, on a failure, to read a violation in context:
 * nemesis-SEED.log in the working directory; seconds from the first
 * record, as the checker counts them. */
static void dump_log(void) {
  static const char *types[] = {"?",     "ENTER",  "EXIT",  "TOLD",
                                "PAUSE", "RESUME", "KILLED"};
  char name[64];
  snprintf(name, sizeof name, "nemesis-%" PRIu64 ".log", nemesis_seed);
  FILE *f = fopen(name, "w");
  if (f == NULL) return;
  int n = log_n() < FC_MAXREC ? log_n() : FC_MAXREC;
  int64_t t0 = n > 0 ? lg->r[0].t_us : 0;
  for (int k = 0; k < n; k++) {
    const struct fc_rec *r = &lg->r[k];
    fprintf(f, "%6d %9.3f lane %d w%-3d %-6s %-6s %" PRIu64 "\n", k,
            (r->t_us - t0) / 1e6, r->lane, r->who,
            r->type >= 0 && r->type <= R_KILLED ? types[r->type] : "?",
            r->shared ? "shared" : "excl", r->token);
  }
  fclose(f);
  printf("the log: %s\n", name);
}

/* The failures, in words; 0 if none. */
static int verdict(const struct lane_result *r, char *why, size_t len) {
  int bad = 0;
  snprintf(why, len, "seed %" PRIu64 " (replay: ZKL_NEMESIS_SEED=%" PRIu64
           " ZKL_NEMESIS_SECONDS=%d):", nemesis_seed, nemesis_seed,
           nemesis_seconds);
  for (int l = 0; l < LANES; l++) {
    const char *k = fc_kind_names[lane_kind[l]];
    const struct lane_result *x = &r[l];
    if (x->v.violations > 0 && ++bad)
      fc_appendf(why, len, " %s: %d violations, the first: %s;", k,
                 x->v.violations, x->v.first);
    if (x->orphans != 0 && ++bad)
      fc_appendf(why, len, " %s: %d nodes left;", k, x->orphans);
    if (x->progressed < x->victims && ++bad)
      fc_appendf(why, len, " %s: %d of %d victims never entered again;", k,
                 x->victims - x->progressed, x->victims);
    if (x->v.entries < MIN_GRANTS && ++bad)
      fc_appendf(why, len, " %s: only %d grants;", k, x->v.entries);
    if (x->again != 0 && ++bad)
      fc_appendf(why, len, " %s: not acquirable at the end (%s);", k,
                 zkl_strerror(x->again));
  }
  if (nm.died > 0 && ++bad)
    fc_appendf(why, len, " %d workers exited by themselves;", nm.died);
  if (nm.stuck > 0 && ++bad)
    fc_appendf(why, len, " %d workers stuck after the stop;", nm.stuck);
  if (nm.harness_failures > 0 && ++bad)
    fc_appendf(why, len, " %d harness verbs failed;", nm.harness_failures);
  if (log_n() >= FC_MAXREC && ++bad)
    fc_appendf(why, len, " the log overflowed;");
  return bad;
}

/* ---- the test ------------------------------------------------------------ */

START_TEST(nemesis_run) {
  printf("\nNemesis: %d s of random faults on %d mutex, %d rwlock and %d "
         "election workers, session timeout %d ms\n", nemesis_seconds,
         lane_slots[0], lane_slots[1], lane_slots[2], SESSION_MS);
  printf("nemesis seed %" PRIu64 " (replay: ZKL_NEMESIS_SEED=%" PRIu64 ")\n",
         nemesis_seed, nemesis_seed);
  fflush(stdout);
  int64_t t_start = it_now_ms();
  memset(&nm, 0, sizeof nm);
  nm.rng = it_mix64(nemesis_seed) | 1;
  sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ck_assert(sh != MAP_FAILED);
  memset(sh, 0, sizeof *sh);
  sh->seed = nemesis_seed;
  lg = fc_log_new();

  fork_all(nemesis_seconds); /* before any session or thread here */
  run_schedule(t_start + (int64_t)nemesis_seconds * 1000);
  undo_all();
  int64_t quiet_ms = quiet_phase();
  stop_workers();

  zkl_session_t *s = it_session(); /* every fork is done */
  struct lane_result r[LANES];
  for (int l = 0; l < LANES; l++) judge_lane(l, s, &r[l]);
  zkl_session_close(s);

  print_table(r, quiet_ms, it_now_ms() - t_start);
  char why[4096];
  int bad = verdict(r, why, sizeof why);
  if (bad || getenv("ZKL_NEMESIS_TRACE") != NULL) print_trace();
  if (bad) dump_log();
  fflush(stdout);
  fc_log_free(lg);
  munmap(sh, sizeof *sh);
  ck_assert_msg(!bad, "%s", why);
}
END_TEST

Suite *nemesis_suite(void) {
  nemesis_seconds = fc_env_int("ZKL_NEMESIS_SECONDS", 60);
  nemesis_seed = fc_seed("ZKL_NEMESIS_SEED");
  Suite *su = suite_create("nemesis");
  TCase *tc = tcase_create("nemesis");
  tcase_set_timeout(tc, nemesis_seconds + 120);
  tcase_add_test(tc, nemesis_run);
  suite_add_tcase(su, tc);
  return su;
}
