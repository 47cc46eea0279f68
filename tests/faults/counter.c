/* tests/faults/counter.c - the shared counter (zkl/counter.h) and the
 * double barrier (zkl/barrier.h) under a seeded randomized fault schedule
 * on the harness's 3-node ensemble (ZKL_TEST_ENSEMBLE=1
 * tests/with-zookeeper; ZKL_FAULTS=counter).
 *
 * Both scenarios run a small fleet of worker processes, each with its own
 * 2 s session reaching the ensemble through three proxies of its own
 * (tests/integration/proxy.c), and spare processes that take a killed
 * worker's slot as a new incarnation (a new `who`).  Every 0.5..2.5 s a
 * PRNG seeded from fc_seed() draws one fault: pause a worker (SIGSTOP for
 * 0.3..5 s, on both sides of the session timeout), SIGKILL a worker (a
 * spare takes over), cut a worker's connection (its proxies blackholed for
 * 0.5..5 s), cut a worker's connection right after its next request of one
 * kind is forwarded (the server applies it, the answer is lost), or kill,
 * pause or restart one ZooKeeper server (one at a time: the quorum stays).
 * The first faults of each scenario are fixed (see forced_*), so that the
 * outcomes the invariants talk about happen in every run; the rest are
 * drawn.  A fault's end is scheduled, not waited for.
 *
 * Besides the workers' own log, both scenarios read the servers' own
 * history: the transaction logs of the three servers (DIR/N/data/version-2/
 * log.*, ZooKeeper's on-disk format, parsed here), merged by zxid.  A
 * committed transaction was logged by a quorum and logs are never purged
 * here, so the union holds every one; the zxids are checked to be
 * consecutive within each epoch over the test's span (a gap is reported
 * as an incomplete history, not as a violation).
 *
 * 1. counter_no_lost_update: 4 workers loop zkl_counter_add(+1) on one
 *    counter (the format, and an initial value that crosses a boundary of
 *    it, drawn from the seed: 32-bit near INT32_MAX, 64-bit across 2^32,
 *    text across 0), each add with a deadline of 0.1..3 s or none, logging
 *    every call and its answer.  The connection cut hits the next setData.
 *    At the end, with V the counter's final value less `initial`:
 *      - ok <= V <= ok + unknown, where ok counts the adds that returned
 *        0 and unknown those that returned ZKL_ESUSPENDED (the answer was
 *        lost: may be applied) or whose process was SIGKILLed inside the
 *        call.  Every other answer (ZKL_ETIMEDOUT, ZKL_ELOST, ...) is
 *        documented to leave the counter as it was, and is counted so;
 *      - the values returned by successful adds are distinct, each within
 *        initial+1..initial+V;
 *      - real time: an add that began after another returned 0 returned a
 *        higher value (ZooKeeper's writes are linearizable and the
 *        compare-and-set is on the data version, so a stale read can only
 *        fail its write, never apply it);
 *      - the server's history of the node: the writes, in zxid order, are
 *        initial+1, initial+2, ... initial+V, one each (a lost update would
 *        write a value twice); each successful add's value is the one its
 *        zxid wrote;
 *      - liveness: every worker's incarnation adds again once the faults
 *        are over, and answers were lost (ZKL_ESUSPENDED) at least once.
 *
 * 2. dbarrier_rounds: rounds of a double barrier of M = 4 members, each
 *    round on its own path (<root>/rNNNN), each member (the current
 *    incarnation of each of 4 slots; a spare joins from the next round)
 *    entering after 0..150 ms with a deadline (3..5 s, or 30..600 ms one
 *    time in ten), "working" 20..150 ms (a start and an end stamp
 *    logged) and leaving with a deadline (likewise).  One round in four
 *    is a race: three members come at once with deadlines of 95..120 ms
 *    and the fourth comes at 100 ms, so that give-ups meet the opening
 *    (the `ready` multi's check of a member that just deleted its node,
 *    a give-up that finds `ready` and enters after all).  The member
 *    node's data names the worker ("w<who>"), so the servers' history
 *    says whose node is whose.  The test process starts round r+1 once
 *    every member of round r is done.  The connection cut hits the next
 *    multi (the `ready` create), delete or create.  What is checked, and
 *    why it is the line between a violation and an allowed outcome:
 *      - server: every time <path>/ready was created, at least M member
 *        nodes existed at that zxid (the replay of creates, deletes and
 *        closed sessions).  A member that was killed or paused but whose
 *        session had not expired yet still counts: from the ensemble's
 *        view it is there (its session is alive), and it is the point of
 *        the ephemeral node that its disappearance is what the others
 *        wait for;
 *      - server and client: whoever a `ready` counted is in, or out by
 *        a way the header documents: a member whose node was live when
 *        `ready` was created returned 0 from that enter, or was killed
 *        before it returned, or lost its session (ZKL_ELOST, or its
 *        node's session closed before the return), or returned
 *        ZKL_ESUSPENDED (the delete of its node lost its answer: the
 *        janitor deletes it later, so it may have been counted; counted
 *        apart).  A member counted that returned ZKL_ETIMEDOUT (or any
 *        other code) is the phantom member the header rules out ("nobody
 *        went through counting a member that is not there");
 *      - every answer is one the header lists for the call: enter 0,
 *        ZKL_ETIMEDOUT, ZKL_ELOST, ZKL_ESUSPENDED, ZKL_EPROTO ("the
 *        member's name is another session's node": with a fresh name per
 *        object only its own earlier session's, after a new session;
 *        "not in", so a `ready` must not have counted that node); leave
 *        0, ZKL_ETIMEDOUT, ZKL_ELOST, ZKL_ESUSPENDED (ZooKeeper's codes
 *        are listed too, but none has a cause here);
 *      - client: a member's enter returned 0 only after M distinct
 *        members of the round had called enter (log order), and server:
 *        only after `ready` was created (the create's leader timestamp is
 *        earlier than the return, both on this machine's clock, at ms);
 *      - no member's leave returned 0 while another member of the round
 *        that entered with 0 had not begun its leave yet, unless that
 *        member's session had been closed on the server by then (its
 *        session was lost: it is no member any more, it will hear
 *        ZKL_ELOST; the check uses the closeSession's timestamp, so a
 *        member killed or paused past its session timeout is out only
 *        once the ensemble says so);
 *      - every member node and every `ready` is gone at the end, while the
 *        workers' sessions are still open (so that a node left behind by
 *        a give-up is not hidden by the session's close); a `ready` may
 *        stay only in a round where no member's leave returned 0 (every
 *        member gave up or lost its session: nobody was the last one out,
 *        as the header says "the last one out deletes ready"); such rounds
 *        are counted;
 *      - allowed and counted: enter ZKL_ETIMEDOUT (not enough members by
 *        the deadline: a member was killed, paused or cut before it made
 *        its node, or gave up itself), ZKL_ELOST (the session was lost),
 *        ZKL_ESUSPENDED (a lost answer to a delete: the janitor deletes
 *        the node); leave ZKL_ETIMEDOUT (a member still in at the
 *        deadline), ZKL_ELOST, ZKL_ESUSPENDED;
 *      - liveness: once the faults are undone, 3 rounds in which every
 *        member enters and leaves with 0.
 *
 * ZKL_COUNTER_FAULT_SEED replays a run (the seed is printed before each
 * scenario and in every failure; it fixes the faults' kinds, delays and
 * durations and the workers' draws, while which worker a fault hits also
 * depends on what the workers are doing then); ZKL_COUNTER_FAULT_SECONDS
 * sets each scenario's faulted span (default 25).  A failed run writes
 * its log to counter-SEED.log or dbarrier-SEED.log in the working
 * directory and prints the faults as they fired (always with
 * ZKL_COUNTER_FAULT_TRACE set).
 *
 * Every process is forked before the test process opens a session; a
 * worker dies with it (PR_SET_PDEATHSIG). */
#include <dirent.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "faults.h"

#define SESSION_MS 2000
#define SERVERS 3
#define NSLOTS 4 /* workers at a time; the barrier's M */
#define MAXSPARES 32
#define EV_MAX 400000
#define MAXTRACE 1024
#define STOP_MS 30000
#define MAX_PAUSED 2
#define MAXROUNDS 4000
#define ROUND_CAP_MS 40000 /* a round lasting longer is stuck */
#define QUIET_ROUNDS 3
#define RACE_LAST_MS 100 /* a race round's last member comes then */
#define OP_SETDATA 5
#define OP_DELETE 2
#define OP_MULTI 14
#define OP_CREATE2 15

static uint64_t cf_seed;
static int cf_seconds;

/* ==== the workers' log (shared memory) ====================================*/

enum {
  E_ADD_BEGIN = 1, /* counter: an add is called                          */
  E_ADD_END,       /* its answer: rc, value and zxid (on 0)              */
  E_ENTER_CALL,    /* barrier: enter is called (value: its deadline,
                      aux: the session id)                                */
  E_ENTER_RET,     /* its answer (rc; aux: the session id then)          */
  E_WORK_START,
  E_WORK_END,
  E_LEAVE_CALL,
  E_LEAVE_RET,
  E_PAUSE, /* the test process: SIGSTOPped (it is stopped now)          */
  E_RESUME,
  E_KILLED, /* SIGKILLed and reaped: it wrote all it will write         */
  E_TYPES
};
static const char *ev_names[E_TYPES] = {
    "?",        "ADD",       "ADD_END",  "ENTER",   "ENTER_RET", "WORK",
    "WORK_END", "LEAVE",     "LEAVE_RET", "PAUSE",  "RESUME",    "KILLED"};

struct ev {
  int type; /* 0 while being written */
  int who, round, rc;
  int64_t value;
  uint64_t aux;
  int64_t t_us;      /* monotonic */
  int64_t t_real_us; /* CLOCK_REALTIME: compared with the servers' stamps */
};

struct evlog {
  int n;
  struct ev e[EV_MAX];
};

static struct evlog *elog;

static int64_t real_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void ev_add(int type, int who, int round, int rc, int64_t value,
                   uint64_t aux) {
  int k = __atomic_fetch_add(&elog->n, 1, __ATOMIC_SEQ_CST);
  if (k >= EV_MAX) return;
  struct ev *e = &elog->e[k];
  e->who = who;
  e->round = round;
  e->rc = rc;
  e->value = value;
  e->aux = aux;
  e->t_us = fc_now_us();
  e->t_real_us = real_us();
  __atomic_store_n(&e->type, type, __ATOMIC_SEQ_CST);
}

static int ev_count(void) {
  int n = fc_load(&elog->n);
  return n < EV_MAX ? n : EV_MAX;
}

/* ==== the fleet (shared with the workers) =================================*/

/* W_CALL: in an add, or in a barrier's enter or leave; W_HOLD: a member
 * that is in, at work */
enum { W_IDLE = FC_W_IDLE, W_CALL = FC_W_CALL, W_HOLD = FC_W_HOLD };
enum { S_COUNTER, S_BARRIER };

struct fslot {
  struct fc_slot fc;    /* its state and fault controls                 */
  int first_round;      /* barrier: the incarnation's first round       */
  int done;             /* atomic: the last round it finished           */
  int adds_ok;          /* atomic: counter adds that returned 0         */
};

struct fleet {
  int stop, quiet, round; /* atomic */
  int scenario;
  uint64_t seed;
  char path[160]; /* the counter's node, or the barrier rounds' parent */
  zkl_counter_format_t format;
  int64_t initial;
  struct fslot slot[NSLOTS];
  int nspares, used; /* used: written by the test process */
  struct fc_spare spare[MAXSPARES];
};

static struct fleet *fl;

/* ---- the worker processes ------------------------------------------------*/

static zkl_counter_t *counter_of(zkl_session_t *s) {
  zkl_counter_opts_t o;
  zkl_counter_opts_init(&o);
  o.format = fl->format;
  o.initial = fl->initial;
  zkl_counter_t *c = NULL;
  return zkl_counter_create(&c, s, fl->path, &o) == 0 ? c : NULL;
}

/* Scenario 1: add +1 in a loop, every call and answer logged. */
static int counter_body(struct fc_worker *w) {
  struct fslot *me = &fl->slot[w->slot];
  uint64_t r = it_mix64(fl->seed ^ ((uint64_t)w->who << 24) ^ 0xc0c0) | 1;
  zkl_session_t *s = NULL;
  zkl_counter_t *c = NULL;
  while (!fc_stopping(w)) {
    if (s == NULL) {
      s = fc_session(w->hosts, SESSION_MS);
      if (s == NULL || (c = counter_of(s)) == NULL) {
        zkl_session_close(s);
        s = NULL;
        it_sleep_ms(100); /* a cut or a server down: try again */
        continue;
      }
    }
    uint64_t d = fc_xorshift(&r);
    int64_t timeout = d % 4 == 0 ? -1 : 100 + (int64_t)((d >> 8) % 2901);
    zkl_count_t now;
    memset(&now, 0, sizeof now);
    fc_store(&me->fc.state, W_CALL);
    ev_add(E_ADD_BEGIN, w->who, -1, 0, timeout, 0);
    int rc = zkl_counter_add(c, 1, timeout, &now);
    ev_add(E_ADD_END, w->who, -1, rc, rc == 0 ? now.value : 0,
           rc == 0 ? now.zxid : 0);
    if (rc != 0 && rc != ZKL_ETIMEDOUT && rc != ZKL_ESUSPENDED)
      fprintf(stderr, "counter: w%d: add: %s (%s)\n", w->who,
              zkl_err_name(rc), zkl_last_error());
    fc_store(&me->fc.state, W_IDLE);
    if (rc == 0) __atomic_add_fetch(&me->adds_ok, 1, __ATOMIC_SEQ_CST);
    if (rc == ZKL_ELOST) { /* a new session, as an application would */
      zkl_counter_destroy(c);
      zkl_session_close(s);
      c = NULL;
      s = NULL;
    } else if (rc != 0 && rc != ZKL_ETIMEDOUT && rc != ZKL_ESUSPENDED) {
      it_sleep_ms(20);
    }
  }
  zkl_counter_destroy(c);
  zkl_session_close(s);
  return 0;
}

static void round_path(char *buf, size_t len, int r) {
  snprintf(buf, len, "%s/r%04d", fl->path, r);
}

/* Scenario 2: one member of every round from first_round on. */
static int barrier_body(struct fc_worker *w) {
  struct fslot *me = &fl->slot[w->slot];
  zkl_session_t *s = NULL;
  int next = fc_load(&me->first_round);
  while (!fc_stopping(w)) {
    if (s == NULL && (s = fc_session(w->hosts, SESSION_MS)) == NULL) {
      it_sleep_ms(100);
      continue;
    }
    int r = fc_load(&fl->round);
    if (r < next) {
      it_sleep_ms(2);
      continue;
    }
    uint64_t rr = it_mix64(fl->seed ^ ((uint64_t)r << 20) ^
                           ((uint64_t)w->slot << 8) ^ 0xba77) | 1;
    int quiet = fc_load(&fl->quiet);
    uint64_t d1 = fc_xorshift(&rr), d2 = fc_xorshift(&rr),
             d3 = fc_xorshift(&rr);
    int jitter = (int)(d1 % 151), work = 20 + (int)((d1 >> 16) % 131);
    int64_t enter_to = quiet || d2 % 10 != 0
                           ? 3000 + (int64_t)((d2 >> 8) % 2001)
                           : 30 + (int64_t)((d2 >> 8) % 571);
    int64_t leave_to = quiet || d3 % 10 != 0
                           ? 3000 + (int64_t)((d3 >> 8) % 2001)
                           : 30 + (int64_t)((d3 >> 8) % 571);
    /* a race round (one in four, the same draw for every member): the
     * others give up about when the last one comes and opens it */
    if (!quiet && it_mix64(fl->seed ^ (uint64_t)r ^ 0x7ace) % 4 == 0) {
      if (w->slot == r % NSLOTS) {
        jitter = RACE_LAST_MS;
        enter_to = 300;
      } else {
        jitter = (int)(d1 % 11);
        enter_to = RACE_LAST_MS - 5 + (int64_t)((d2 >> 8) % 26);
      }
    }
    char path[200], data[16];
    round_path(path, sizeof path, r);
    snprintf(data, sizeof data, "w%d", w->who);
    zkl_dbarrier_opts_t o = {data, strlen(data)};
    zkl_dbarrier_t *b = NULL;
    if (zkl_dbarrier_create(&b, s, path, NSLOTS, &o) != 0) return 2;
    it_sleep_ms(jitter);
    fc_store(&me->fc.state, W_CALL);
    ev_add(E_ENTER_CALL, w->who, r, 0, enter_to, (uint64_t)zkl_session_id(s));
    int rc = zkl_dbarrier_enter(b, enter_to);
    ev_add(E_ENTER_RET, w->who, r, rc, 0, (uint64_t)zkl_session_id(s));
    if (rc != 0 && rc != ZKL_ETIMEDOUT && rc != ZKL_ELOST)
      fprintf(stderr, "dbarrier: round %d w%d: enter: %s (%s)\n", r, w->who,
              zkl_err_name(rc), zkl_last_error());
    if (rc == 0) {
      fc_store(&me->fc.state, W_HOLD);
      ev_add(E_WORK_START, w->who, r, 0, 0, 0);
      it_sleep_ms(work);
      ev_add(E_WORK_END, w->who, r, 0, 0, 0);
      fc_store(&me->fc.state, W_CALL);
      ev_add(E_LEAVE_CALL, w->who, r, 0, leave_to,
             (uint64_t)zkl_session_id(s));
      rc = zkl_dbarrier_leave(b, leave_to);
      ev_add(E_LEAVE_RET, w->who, r, rc, 0, (uint64_t)zkl_session_id(s));
      if (rc != 0 && rc != ZKL_ETIMEDOUT && rc != ZKL_ELOST)
        fprintf(stderr, "dbarrier: round %d w%d: leave: %s (%s)\n", r,
                w->who, zkl_err_name(rc), zkl_last_error());
    }
    fc_store(&me->fc.state, W_IDLE);
    zkl_dbarrier_destroy(b);
    fc_store(&me->done, r);
    next = r + 1;
  }
  zkl_session_close(s);
  return 0;
}

static int worker_run(struct fc_worker *w) {
  fc_proxies_start(w, &fl->slot[w->slot].fc);
  int rc = fl->scenario == S_COUNTER ? counter_body(w) : barrier_body(w);
  fc_proxies_stop(w);
  return rc;
}

/* A spare waits (no session, no thread) until released into a slot. */
static int spare_run(struct fc_worker *w, int k) {
  if (!fc_spare_wait(w, &fl->spare[k])) return 0;
  return worker_run(w);
}

/* Forks the worker of a slot (spare < 0) or spare number `spare`. */
static pid_t spawn(int slot, int who, int spare) {
  pid_t pid = fc_fork();
  if (pid > 0) return pid;
  static struct fc_worker w; /* the control thread reads it */
  w = (struct fc_worker){
      .slot = slot, .who = who, .parent = getppid(), .stop = &fl->stop};
  _exit(spare < 0 ? worker_run(&w) : spare_run(&w, spare));
}

/* ==== the fault schedule (the test process; fc_tick()) ===================*/

static struct fc_sched nm;
static const fc_fault_t *forced_list; /* the forced faults, first */
static int nforced;
static const int *cut_ops; /* the cut-after opcodes to draw from */
static int ncut_ops;

static uint64_t rnd(void) { return fc_rnd(&nm); }

static void mark(int what, int who, int state, int dur) {
  int round = fc_load(&fl->round);
  if (what == FC_PAUSE) ev_add(E_PAUSE, who, round, state, dur, 0);
  else if (what == FC_KILL) ev_add(E_KILLED, who, round, state, 0, 0);
  else ev_add(E_RESUME, who, round, 0, 0, 0);
}

/* A spare takes slot s from the next round on. */
static void takeover(int s) {
  fc_store(&fl->slot[s].first_round, fc_load(&fl->round) + 1);
}

/* Draws the next fault: always three numbers, so that the stream stays
 * the same whatever the workers are doing; the forced ones first. */
static void arm(int64_t now) {
  uint64_t k = rnd(), pick = rnd(), d = rnd();
  int forced = nm.forced_i < nforced;
  fc_arm(&nm, now, forced ? forced_list[nm.forced_i++] : (fc_fault_t)(k % FC_KINDS),
         forced, d);
  nm.a_pick = pick;
  nm.a_op = cut_ops[(pick >> 40) % (uint64_t)ncut_ops];
  /* a forced pause outlives the session (2.25..2.5 session timeouts) of
   * a worker inside a call (an add), or of a member that is in */
  if (forced && nm.a_kind == FC_PAUSE)
    nm.a_state = fl->scenario == S_COUNTER ? W_CALL : W_HOLD;
}

/* One step of the schedule (every few ms). */
static void schedule_tick(void) { fc_tick(&nm, arm); }

static void schedule_start(const fc_fault_t *forced, int nf, const int *ops,
                           int nops, uint64_t salt) {
  fc_sched_init(&nm, "counter-faults");
  nm.rng = it_mix64(cf_seed ^ salt) | 1;
  fc_sched_fleet(&nm, NSLOTS, fl->spare, &fl->nspares, &fl->used, SESSION_MS,
                 MAX_PAUSED, MAXTRACE);
  for (int s = 0; s < NSLOTS; s++) nm.ctl[s] = &fl->slot[s].fc;
  nm.mark = mark;
  nm.takeover = takeover;
  forced_list = forced;
  nforced = nf;
  cut_ops = ops;
  ncut_ops = nops;
  nm.next = it_now_ms() + 1000 + fc_between(rnd(), 0, 1000); /* warm-up */
}

/* Every fault ends now; returns once the ensemble is whole again. */
static void undo_all(void) {
  fc_undo_all(&nm);
  it_sleep_ms(50); /* the workers' control threads disarm their cuts */
}

/* Forks the slots' workers and the spares, before any session here. */
static void fork_fleet(int scenario, int seconds) {
  fl = mmap(NULL, sizeof *fl, PROT_READ | PROT_WRITE,
            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ck_assert(fl != MAP_FAILED);
  memset(fl, 0, sizeof *fl);
  fl->scenario = scenario;
  fl->seed = cf_seed;
  fl->nspares = 6 + seconds / 5;
  if (fl->nspares > MAXSPARES) fl->nspares = MAXSPARES;
  for (int s = 0; s < NSLOTS; s++) fl->slot[s].done = -1;
  elog = mmap(NULL, sizeof *elog, PROT_READ | PROT_WRITE,
              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ck_assert(elog != MAP_FAILED);
  elog->n = 0;
}

static void spawn_fleet(void) {
  for (int s = 0; s < NSLOTS; s++) {
    nm.slot[s].who = s;
    nm.slot[s].pid = spawn(s, s, -1);
  }
  for (int k = 0; k < fl->nspares; k++) {
    fl->spare[k].who = NSLOTS + k;
    fl->spare[k].pid = spawn(-1, fl->spare[k].who, k);
  }
}

static void stuck(int who) { ev_add(E_KILLED, who, -1, -1, 0, 0); }

static void stop_fleet(void) { fc_stop_fleet(&nm, &fl->stop, STOP_MS, stuck); }

static void free_fleet(void) {
  munmap(elog, sizeof *elog);
  munmap(fl, sizeof *fl);
}

static void print_faults(void) {
  printf("faults: paused %d (%d past the session timeout), killed %d, cut "
         "%d, cut after a request %d (%d cuts); servers killed %d, paused "
         "%d, restarted %d; skipped (no target):", nm.faults[FC_PAUSE],
         nm.long_pauses, nm.faults[FC_KILL], nm.faults[FC_CUT],
         nm.faults[FC_CUT_OP], fc_op_cuts(&nm), nm.faults[FC_KILL_SERVER],
         nm.faults[FC_PAUSE_SERVER], nm.faults[FC_RESTART_SERVER]);
  int none = 1;
  for (int k = 0; k < FC_KINDS; k++)
    if (nm.skipped[k] > 0) {
      printf(" %s %d", fc_fault_names[k], nm.skipped[k]);
      none = 0;
    }
  printf("%s\n", none ? " none" : "");
}

static void print_trace(const char *what) {
  fc_print_trace(&nm, what, cf_seed, ev_count() > 0 ? elog->e[0].t_us : 0,
                 NULL);
}

/* Extra lines for the log file (the barrier's node history). */
static void (*dump_extra)(FILE *f);

static void dump_log(const char *what) {
  char name[64];
  snprintf(name, sizeof name, "%s-%" PRIu64 ".log", what, cf_seed);
  FILE *f = fopen(name, "w");
  if (f == NULL) return;
  int n = ev_count();
  int64_t t0 = n > 0 ? elog->e[0].t_us : 0;
  for (int k = 0; k < n; k++) {
    const struct ev *e = &elog->e[k];
    fprintf(f, "%6d %9.3f real %" PRId64 ".%06" PRId64 " w%-3d r%-4d %-9s "
            "%-14s %" PRId64 " 0x%" PRIx64 "\n", k, (e->t_us - t0) / 1e6,
            e->t_real_us / 1000000, e->t_real_us % 1000000, e->who, e->round,
            e->type > 0 && e->type < E_TYPES ? ev_names[e->type] : "?",
            e->type == E_ADD_END || e->type == E_ENTER_RET ||
                    e->type == E_LEAVE_RET
                ? zkl_err_name(e->rc)
                : "",
            e->value, e->aux);
  }
  if (dump_extra != NULL) dump_extra(f);
  fclose(f);
  printf("the log: %s\n", name);
}

/* A counter's bytes in fl->format: 0, or -1 if they are not of it. */
static int decode_count(const char *data, int len, int64_t *v) {
  if (fl->format == ZKL_COUNTER_TEXT) {
    char b[32];
    if (len <= 0 || len >= (int)sizeof b) return -1;
    memcpy(b, data, (size_t)len);
    b[len] = '\0';
    char *end;
    *v = strtoll(b, &end, 10);
    return *end == '\0' ? 0 : -1;
  }
  int n = fl->format == ZKL_COUNTER_INT32 ? 4 : 8;
  if (len != n) return -1;
  uint64_t u = 0;
  for (int i = 0; i < n; i++) u = u << 8 | (unsigned char)data[i];
  *v = n == 4 ? (int64_t)(int32_t)(uint32_t)u : (int64_t)u;
  return 0;
}

/* ==== 1. the counter ======================================================*/

static const fc_fault_t forced_counter[] = {FC_CUT_OP, FC_KILL, FC_PAUSE, FC_CUT,
                                         FC_RESTART_SERVER};
static const int counter_ops[] = {OP_SETDATA};

struct okadd {
  int64_t value;
  uint64_t zxid;
  int who, k;
};

static int okadd_by_value(const void *a, const void *b) {
  const struct okadd *x = a, *y = b;
  if (x->value != y->value) return x->value < y->value ? -1 : 1;
  return x->k - y->k;
}

struct cverdict {
  int adds, ok, suspended, killed_in, timedout, lost, other, other_rc;
  int bad;
  char why[4096];
};

static void cbad(struct cverdict *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void cbad(struct cverdict *v, const char *fmt, ...) {
  if (v->bad++ < 4) {
    char b[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    fc_appendf(v->why, sizeof v->why, " %s;", b);
  }
}

START_TEST(counter_no_lost_update) {
  const zkl_counter_format_t formats[] = {ZKL_COUNTER_INT32,
                                          ZKL_COUNTER_INT64, ZKL_COUNTER_TEXT};
  const char *fnames[] = {"int32", "int64", "text"};
  const int64_t initials[] = {INT32_MAX - 2000000, (INT64_C(1) << 32) - 60,
                              -40};
  int fi = (int)(it_mix64(cf_seed ^ 0xf0f0) % 3);
  printf("\nCounter under faults: %d workers adding 1 in a loop on one %s "
         "counter from %" PRId64 ", %d s of faults, session timeout %d ms\n",
         NSLOTS, fnames[fi], initials[fi], cf_seconds, SESSION_MS);
  printf("counter seed %" PRIu64 " (replay: ZKL_COUNTER_FAULT_SEED=%" PRIu64
         ")\n", cf_seed, cf_seed);
  fflush(stdout); /* before the fork: no copy of it in the workers */
  int64_t t_start = it_now_ms();
  fork_fleet(S_COUNTER, cf_seconds);
  fl->format = formats[fi];
  fl->initial = initials[fi];
  char root[128];
  it_root(root, sizeof root, "counter-faults");
  snprintf(fl->path, sizeof fl->path, "%s/count", root);
  schedule_start(forced_counter,
                 (int)(sizeof forced_counter / sizeof forced_counter[0]),
                 counter_ops, 1, 0xc001);
  spawn_fleet();

  int64_t end = it_now_ms() + (int64_t)cf_seconds * 1000;
  while (it_now_ms() < end) {
    schedule_tick();
    if (ev_count() > EV_MAX / 4 * 3) {
      printf("counter: the log is 3/4 full: the schedule ends early\n");
      break;
    }
    it_sleep_ms(5);
  }
  undo_all();
  /* fault-free: every slot's incarnation adds again */
  int base[NSLOTS], progressed = 0;
  for (int s = 0; s < NSLOTS; s++) base[s] = fc_load(&fl->slot[s].adds_ok);
  int64_t quiet0 = it_now_ms();
  it_sleep_ms(2000);
  while (it_now_ms() < quiet0 + 15000) {
    fc_reap_unexpected(&nm);
    progressed = 0;
    for (int s = 0; s < NSLOTS; s++)
      progressed += fc_load(&fl->slot[s].adds_ok) > base[s];
    if (progressed == NSLOTS) break;
    it_sleep_ms(50);
  }
  int64_t quiet_ms = it_now_ms() - quiet0;
  stop_fleet();

  zkl_session_t *s = it_session();
  zkl_counter_t *c = NULL;
  zkl_counter_opts_t o;
  zkl_counter_opts_init(&o);
  o.format = fl->format;
  o.initial = fl->initial;
  ck_assert_int_eq(zkl_counter_create(&c, s, fl->path, &o), 0);
  zkl_count_t fin;
  int grc = zkl_counter_get(c, &fin);
  ck_assert_msg(grc == 0, "get: %s (%s)", zkl_err_name(grc),
                zkl_last_error());
  zkl_counter_destroy(c);
  zkl_session_close(s);

  /* ---- the workers' log ---- */
  struct cverdict v;
  memset(&v, 0, sizeof v);
  snprintf(v.why, sizeof v.why, "seed %" PRIu64 " (replay: "
           "ZKL_COUNTER_FAULT_SEED=%" PRIu64 " ZKL_COUNTER_FAULT_SECONDS=%d):",
           cf_seed, cf_seed, cf_seconds);
  int n = ev_count();
  struct okadd *ok = calloc((size_t)n + 1, sizeof *ok);
  ck_assert_ptr_nonnull(ok);
  static int open_k[FC_MAXWHO];       /* who -> its ADD_BEGIN, or -1 */
  static int64_t floor_v[FC_MAXWHO];  /* the highest value returned before */
  for (int w = 0; w < FC_MAXWHO; w++) open_k[w] = -1;
  int64_t max_done = INT64_MIN;
  int64_t t0 = n > 0 ? elog->e[0].t_us : 0;
  for (int k = 0; k < n; k++) {
    const struct ev *e = &elog->e[k];
    if (e->who < 0 || e->who >= FC_MAXWHO) continue;
    double at = (e->t_us - t0) / 1e6;
    switch (e->type) {
      case E_ADD_BEGIN:
        v.adds++;
        open_k[e->who] = k;
        floor_v[e->who] = max_done;
        break;
      case E_KILLED:
        if (open_k[e->who] >= 0) v.killed_in++;
        open_k[e->who] = -1;
        break;
      case E_ADD_END:
        open_k[e->who] = -1;
        if (e->rc == 0) {
          ok[v.ok++] = (struct okadd){e->value, e->aux, e->who, k};
          if (e->value <= floor_v[e->who])
            cbad(&v, "w%d's add returned %" PRId64 " at +%.3f s, but an add "
                 "that returned before it began had returned %" PRId64,
                 e->who, e->value, at, floor_v[e->who]);
          if (e->value > max_done) max_done = e->value;
        } else if (e->rc == ZKL_ESUSPENDED) {
          v.suspended++;
        } else if (e->rc == ZKL_ETIMEDOUT) {
          v.timedout++;
        } else if (e->rc == ZKL_ELOST) {
          v.lost++;
        } else {
          v.other++;
          v.other_rc = e->rc;
        }
        break;
    }
  }
  int64_t V = fin.value - fl->initial;
  int unknown = v.suspended + v.killed_in;
  if (V < v.ok || V > v.ok + unknown)
    cbad(&v, "the counter is at %" PRId64 " (+%" PRId64 ") after %d adds "
         "that returned 0 and %d of unknown outcome: a %s update",
         fin.value, V, v.ok, unknown, V < v.ok ? "lost" : "phantom");
  qsort(ok, (size_t)v.ok, sizeof *ok, okadd_by_value);
  int dups = 0, out_of_range = 0;
  for (int i = 0; i < v.ok; i++) {
    if (i > 0 && ok[i].value == ok[i - 1].value && dups++ < 2)
      cbad(&v, "two adds returned %" PRId64 ": w%d's (log %d) and w%d's "
           "(log %d)", ok[i].value, ok[i - 1].who, ok[i - 1].k, ok[i].who,
           ok[i].k);
    if ((ok[i].value <= fl->initial || ok[i].value > fin.value) &&
        out_of_range++ < 2)
      cbad(&v, "w%d's add returned %" PRId64 ", outside %" PRId64 "..%" PRId64,
           ok[i].who, ok[i].value, fl->initial + 1, fin.value);
  }

  /* ---- the servers' history of the node ---- */
  struct fc_txhist h;
  int gaps = 0;
  fc_history_read(&h, fl->path, &gaps);
  int writes = 0, hist_bad = 0, matched = 0;
  int64_t prev = fl->initial;
  for (size_t i = 0; i < h.n; i++) {
    const struct fc_txop *x = &h.op[i];
    if (x->kind == FC_T_CLOSE || strcmp(x->path, fl->path) != 0) continue;
    if (x->kind == FC_T_DELETE) {
      if (hist_bad++ < 2) cbad(&v, "the counter's node was deleted (zxid "
                               "0x%" PRIx64 ")", x->zxid);
      continue;
    }
    int64_t val;
    if (decode_count(x->data, x->dlen, &val) != 0) {
      if (hist_bad++ < 2)
        cbad(&v, "zxid 0x%" PRIx64 " wrote %d bytes that are not a counter",
             x->zxid, x->dlen);
      continue;
    }
    writes++;
    if (val != prev + 1 && hist_bad++ < 2)
      cbad(&v, "zxid 0x%" PRIx64 " wrote %" PRId64 " over %" PRId64
           " (the servers' history: not one more)", x->zxid, val, prev);
    prev = val;
    /* the add that says it wrote this value: by this zxid (the values
     * are sorted; a value twice is a violation above) */
    size_t lo = 0, hi = (size_t)v.ok;
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (ok[mid].value < val) lo = mid + 1;
      else hi = mid;
    }
    if (lo < (size_t)v.ok && ok[lo].value == val) {
      matched++;
      if (ok[lo].zxid != x->zxid && hist_bad++ < 2)
        cbad(&v, "w%d's add returned %" PRId64 " with zxid 0x%" PRIx64
             ", but zxid 0x%" PRIx64 " wrote it", ok[lo].who, ok[lo].value,
             ok[lo].zxid, x->zxid);
    }
  }
  if (prev != fin.value && hist_bad++ < 2)
    cbad(&v, "the servers' history ends at %" PRId64 ", the counter reads "
         "%" PRId64, prev, fin.value);
  if (gaps == 0 && matched != v.ok && hist_bad++ < 2)
    cbad(&v, "%d of %d successful adds have no write of theirs in the "
         "servers' history", v.ok - matched, v.ok);
  fc_history_free(&h);
  free(ok);

  printf("| %6s | %5s | %9s | %6s | %8s | %5s | %5s | %8s | %8s | %6s | "
         "%4s |\n", "format", "adds", "ok", "ESUSP", "killed-in", "ETIMED",
         "ELOST", "other", "final +V", "writes", "bad");
  printf("|--------|-------|-----------|--------|-----------|--------|-------|"
         "----------|----------|--------|------|\n");
  printf("| %6s | %5d | %9d | %6d | %9d | %6d | %5d | %8d | %8" PRId64
         " | %6d | %4d |\n", fnames[fi], v.adds, v.ok, v.suspended,
         v.killed_in, v.timedout, v.lost, v.other, V, writes, v.bad);
  printf("ok <= V <= ok + unknown: %d <= %" PRId64 " <= %d; distinct values: "
         "%s; history: %d writes, each one more, %d matched by zxid, %d "
         "zxids missing (%d log files, %zu uncommitted proposals left "
         "out)\n", v.ok, V, v.ok + unknown, dups == 0 ? "yes" : "NO",
         writes, matched, gaps, h.files, h.uncommitted);
  print_faults();
  printf("quiet phase %.1f s, %d of %d slots added again; wall %.1f s; seed "
         "%" PRIu64 "\n", quiet_ms / 1e3, progressed, NSLOTS,
         (it_now_ms() - t_start) / 1e3, cf_seed);

  int fail = v.bad;
  if (v.other > 0 && ++fail)
    fc_appendf(v.why, sizeof v.why, " %d adds returned undocumented codes "
               "(last %s);", v.other, zkl_err_name(v.other_rc));
  if (gaps > 0 && ++fail)
    fc_appendf(v.why, sizeof v.why, " the servers' history has %d zxids "
               "missing (the harness, not the counter);", gaps);
  if (writes != V && ++fail)
    fc_appendf(v.why, sizeof v.why, " %d writes in the history, the counter "
               "moved %" PRId64 ";", writes, V);
  if (progressed < NSLOTS && ++fail)
    fc_appendf(v.why, sizeof v.why, " %d of %d workers never added again "
               "after the faults;", NSLOTS - progressed, NSLOTS);
  if (v.suspended == 0 && ++fail)
    fc_appendf(v.why, sizeof v.why, " no add's answer was lost "
               "(ZKL_ESUSPENDED never seen; %d cuts after a setData);",
               fc_op_cuts(&nm));
  if (nm.faults[FC_KILL] == 0 && ++fail)
    fc_appendf(v.why, sizeof v.why, " no worker was killed;");
  if (v.ok < 100 && ++fail)
    fc_appendf(v.why, sizeof v.why, " only %d adds returned 0;", v.ok);
  if (nm.died > 0 && ++fail)
    fc_appendf(v.why, sizeof v.why, " %d workers failed;", nm.died);
  if (nm.stuck > 0 && ++fail)
    fc_appendf(v.why, sizeof v.why, " %d workers stuck after the stop;",
               nm.stuck);
  if (nm.harness_failures > 0 && ++fail)
    fc_appendf(v.why, sizeof v.why, " %d harness verbs failed;",
               nm.harness_failures);
  if (fc_load(&elog->n) >= EV_MAX && ++fail)
    fc_appendf(v.why, sizeof v.why, " the log overflowed;");
  if (fail || getenv("ZKL_COUNTER_FAULT_TRACE") != NULL) print_trace("counter");
  if (fail) dump_log("counter");
  fflush(stdout);
  free_fleet();
  ck_assert_msg(!fail, "%s", v.why);
}
END_TEST

/* ==== 2. the double barrier ===============================================*/

static const fc_fault_t forced_barrier[] = {FC_PAUSE, FC_KILL, FC_CUT_OP, FC_CUT,
                                         FC_PAUSE_SERVER};
static const int barrier_ops[] = {OP_MULTI, OP_DELETE, OP_CREATE2};

/* A member node (or `ready`) in the servers' history. */
struct bnode {
  int round, who, ready, closed;
  int64_t sid, ct, dt; /* created, deleted (0: never): leader ms */
  uint64_t cz, dz;
  char name[48];
};

/* A member's calls in one round, from the workers' log. */
struct bcalls {
  int who;
  int enter_call, enter_ret, leave_call, leave_ret; /* log index, -1 */
  int enter_rc, leave_rc, killed;
  int64_t enter_ret_ms, leave_ret_ms; /* CLOCK_REALTIME ms */
};

struct bround {
  int nm;
  struct bcalls m[NSLOTS * 2];
  int ready_made, min_at_ready, left0, left0_seen, entered0;
  int ncounted, counted[NSLOTS * 4]; /* nodes live at a `ready` create */
  int64_t ready_ct;
  int stale_ready, leftover_members;
};

static struct bround *rounds;
static int nrounds;
static struct bnode *nodes;
static size_t nn;

/* The servers' history of the rounds' nodes, after the workers' log. */
static void dump_nodes(FILE *f) {
  fprintf(f, "\nthe nodes in the servers' history (ms: the leader's clock, "
          "as the log's real column):\n");
  for (size_t i = 0; i < nn; i++) {
    const struct bnode *b = &nodes[i];
    fprintf(f, "r%-4d %-36s w%-3d session 0x%" PRIx64 " made 0x%" PRIx64
            " at %" PRId64 ".%03d, %s 0x%" PRIx64 " at %" PRId64 ".%03d\n",
            b->round, b->name, b->who, (uint64_t)b->sid, b->cz,
            b->ct / 1000, (int)(b->ct % 1000),
            b->dz == 0 ? "never deleted" : b->closed ? "closed" : "deleted",
            b->dz, b->dt / 1000, (int)(b->dt % 1000));
  }
}

static struct bcalls *bmember(int r, int who) {
  struct bround *b = &rounds[r];
  for (int i = 0; i < b->nm; i++)
    if (b->m[i].who == who) return &b->m[i];
  if (b->nm == NSLOTS * 2) return NULL;
  struct bcalls *m = &b->m[b->nm++];
  *m = (struct bcalls){who, -1, -1, -1, -1, 0, 0, 0, 0, 0};
  return m;
}

struct bverdict {
  int bad, enters, enter_codes[6], leaves, leave_codes[6], excused;
  int stale, leftovers, clean, opened;
  int renewed; /* members in with 0 whose node was made twice (a give-up
                  that met the opening, a new session) */
  int counted_lost, counted_unknown; /* counted at the opening, then out:
                  their session lost (or killed) / ZKL_ESUSPENDED */
  char why[4096];
};

/* 0 ok, 1 ETIMEDOUT, 2 ELOST, 3 ESUSPENDED, 4 EPROTO, 5 other */
static int code_class(int rc) {
  return rc == 0 ? 0 : rc == ZKL_ETIMEDOUT ? 1 : rc == ZKL_ELOST ? 2
         : rc == ZKL_ESUSPENDED ? 3 : rc == ZKL_EPROTO ? 4 : 5;
}

static void bbad(struct bverdict *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void bbad(struct bverdict *v, const char *fmt, ...) {
  if (v->bad++ < 4) {
    char b[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    fc_appendf(v->why, sizeof v->why, " %s;", b);
  }
}

/* A round's path from a node path under the root: the round and the
 * child's name, or -1 (the round's own path, or not ours). */
static int parse_round(const char *path, size_t rootlen, char *name,
                       size_t len) {
  int r, off = 0;
  if (strlen(path) <= rootlen ||
      sscanf(path + rootlen, "/r%d%n", &r, &off) != 1)
    return -1;
  const char *rest = path + rootlen + off;
  if (rest[0] != '/' || strchr(rest + 1, '/') != NULL || r < 0 ||
      r >= MAXROUNDS)
    return -1;
  snprintf(name, len, "%s", rest + 1);
  return r;
}

/* Starts round r and waits until each slot's incarnation is done with it
 * (or joined after it), running the fault schedule meanwhile (faulted).
 * 0, or -1 if it is stuck. */
static int run_round(int r, int faulted) {
  fc_store(&fl->round, r);
  int64_t cap = it_now_ms() + ROUND_CAP_MS;
  for (;;) {
    int done = 0;
    for (int s = 0; s < NSLOTS; s++) /* a dead worker is a failure */
      done += fc_load(&fl->slot[s].done) >= r ||
              fc_load(&fl->slot[s].first_round) > r || nm.slot[s].pid <= 0;
    if (done == NSLOTS) return 0;
    if (it_now_ms() >= cap) return -1;
    if (faulted) schedule_tick();
    else fc_reap_unexpected(&nm);
    it_sleep_ms(2);
  }
}

START_TEST(dbarrier_rounds) {
  printf("\nDouble barrier under faults: rounds of %d members, %d s of "
         "faults, session timeout %d ms\n", NSLOTS, cf_seconds, SESSION_MS);
  printf("counter seed %" PRIu64 " (replay: ZKL_COUNTER_FAULT_SEED=%" PRIu64
         ")\n", cf_seed, cf_seed);
  fflush(stdout);
  int64_t t_start = it_now_ms();
  fork_fleet(S_BARRIER, cf_seconds);
  it_root(fl->path, sizeof fl->path, "dbarrier-faults");
  fl->round = -1;
  schedule_start(forced_barrier,
                 (int)(sizeof forced_barrier / sizeof forced_barrier[0]),
                 barrier_ops, 3, 0xba01);
  spawn_fleet();

  struct bverdict v;
  memset(&v, 0, sizeof v);
  snprintf(v.why, sizeof v.why, "seed %" PRIu64 " (replay: "
           "ZKL_COUNTER_FAULT_SEED=%" PRIu64 " ZKL_COUNTER_FAULT_SECONDS=%d):",
           cf_seed, cf_seed, cf_seconds);
  int stuck_round = -1, r = 0;
  int64_t end = it_now_ms() + (int64_t)cf_seconds * 1000;
  for (; it_now_ms() < end && r < MAXROUNDS - QUIET_ROUNDS - 1; r++)
    if (run_round(r, 1) != 0) {
      stuck_round = r++;
      break;
    }
  int faulted_rounds = r;
  undo_all();
  fc_store(&fl->quiet, 1);
  /* a round begun before the quiet flag may still draw short deadlines:
   * the quiet rounds are those after it */
  int quiet_from = r;
  for (int q = 0; q < QUIET_ROUNDS && stuck_round < 0; q++, r++)
    if (run_round(r, 0) != 0) stuck_round = r;
  nrounds = stuck_round >= 0 ? stuck_round + 1 : r;

  /* the nodes left, with the workers' sessions still open: dead
   * sessions expire, janitors finish, within 15 s.  A `ready` of a round
   * where no leave returned 0 may stay (see above): not waited for */
  zkl_session_t *s = it_session(); /* every fork is done */
  rounds = calloc((size_t)nrounds, sizeof *rounds);
  ck_assert_ptr_nonnull(rounds);
  for (int k = 0; k < ev_count(); k++)
    if (elog->e[k].type == E_LEAVE_RET && elog->e[k].rc == 0 &&
        elog->e[k].round >= 0 && elog->e[k].round < nrounds)
      rounds[elog->e[k].round].left0_seen = 1;
  int64_t until = it_now_ms() + 15000;
  for (int waiting = 1; waiting;) {
    waiting = 0;
    for (int i = 0; i < nrounds; i++) {
      char p[200];
      struct String_vector kids = {0, NULL};
      round_path(p, sizeof p, i);
      it_children(s, p, &kids);
      rounds[i].stale_ready = 0;
      rounds[i].leftover_members = 0;
      for (int k = 0; k < kids.count; k++) {
        if (strcmp(kids.data[k], "ready") == 0) rounds[i].stale_ready = 1;
        else rounds[i].leftover_members++;
      }
      deallocate_String_vector(&kids);
      waiting |= rounds[i].leftover_members > 0 ||
                 (rounds[i].stale_ready && rounds[i].left0_seen);
    }
    if (waiting && it_now_ms() >= until) break;
    if (waiting) it_sleep_ms(200);
  }
  zkl_session_close(s);
  stop_fleet();

  /* ---- the workers' log, per round ---- */
  int n = ev_count();
  int64_t t0 = n > 0 ? elog->e[0].t_us : 0;
  static int killed_who[FC_MAXWHO];
  memset(killed_who, 0, sizeof killed_who);
  for (int k = 0; k < n; k++)
    if (elog->e[k].type == E_KILLED && elog->e[k].who >= 0 &&
        elog->e[k].who < FC_MAXWHO)
      killed_who[elog->e[k].who] = 1;
  for (int k = 0; k < n; k++) {
    const struct ev *e = &elog->e[k];
    if (e->type < E_ENTER_CALL || e->type > E_LEAVE_RET || e->round < 0 ||
        e->round >= nrounds)
      continue;
    struct bcalls *m = bmember(e->round, e->who);
    if (m == NULL) {
      bbad(&v, "round %d has more than %d members", e->round, NSLOTS * 2);
      continue;
    }
    int64_t ms = e->t_real_us / 1000;
    switch (e->type) {
      case E_ENTER_CALL:
        m->enter_call = k;
        m->killed = e->who < FC_MAXWHO && killed_who[e->who];
        break;
      case E_ENTER_RET:
        m->enter_ret = k;
        m->enter_rc = e->rc;
        m->enter_ret_ms = ms;
        v.enters++;
        v.enter_codes[code_class(e->rc)]++;
        if (e->rc == 0) {
          rounds[e->round].entered0++;
          /* M distinct members called enter before (log order) */
          int callers = 0;
          for (int i = 0; i < rounds[e->round].nm; i++)
            callers += rounds[e->round].m[i].enter_call >= 0 &&
                       rounds[e->round].m[i].enter_call < k;
          if (callers < NSLOTS)
            bbad(&v, "round %d: w%d's enter returned 0 at +%.3f s when only "
                 "%d members had called enter", e->round, e->who,
                 (e->t_us - t0) / 1e6, callers);
        } else if (code_class(e->rc) == 5) {
          bbad(&v, "round %d: w%d's enter returned %s", e->round, e->who,
               zkl_err_name(e->rc));
        }
        break;
      case E_LEAVE_CALL: m->leave_call = k; break;
      case E_LEAVE_RET:
        m->leave_ret = k;
        m->leave_rc = e->rc;
        m->leave_ret_ms = ms;
        v.leaves++;
        v.leave_codes[code_class(e->rc)]++;
        if (e->rc == 0) rounds[e->round].left0++;
        else if (code_class(e->rc) >= 4)
          bbad(&v, "round %d: w%d's leave returned %s", e->round, e->who,
               zkl_err_name(e->rc));
        break;
    }
  }

  /* ---- the servers' history of the rounds' nodes ---- */
  struct fc_txhist h;
  int gaps = 0;
  fc_history_read(&h, fl->path, &gaps);
  size_t rootlen = strlen(fl->path), capn = 1024;
  nn = 0;
  nodes = calloc(capn, sizeof *nodes);
  ck_assert_ptr_nonnull(nodes);
  for (size_t i = 0; i < h.n; i++) {
    const struct fc_txop *x = &h.op[i];
    char name[48];
    if (x->kind == FC_T_CLOSE) {
      for (size_t j = 0; j < nn; j++)
        if (nodes[j].dz == 0 && nodes[j].sid == x->sid && nodes[j].sid != 0) {
          nodes[j].dz = x->zxid;
          nodes[j].dt = x->time_ms;
          nodes[j].closed = 1;
        }
      continue;
    }
    int rr = parse_round(x->path, rootlen, name, sizeof name);
    if (rr < 0 || rr >= nrounds) continue;
    if (x->kind == FC_T_CREATE) {
      int is_ready = strcmp(name, "ready") == 0;
      if (is_ready) {
        int live = 0;
        struct bround *b = &rounds[rr];
        for (size_t j = 0; j < nn; j++)
          if (nodes[j].round == rr && !nodes[j].ready && nodes[j].dz == 0) {
            live++;
            if (b->ncounted < NSLOTS * 4) b->counted[b->ncounted++] = (int)j;
          }
        if (b->ready_made++ == 0 || live < b->min_at_ready)
          b->min_at_ready = live;
        if (b->ready_made == 1) b->ready_ct = x->time_ms;
        if (live < NSLOTS)
          bbad(&v, "round %d: `ready` was created (zxid 0x%" PRIx64 ") with "
               "%d member nodes there, not %d", rr, x->zxid, live, NSLOTS);
      }
      if (nn == capn) {
        nodes = realloc(nodes, (capn *= 2) * sizeof *nodes);
        ck_assert_ptr_nonnull(nodes);
      }
      struct bnode *b = &nodes[nn++];
      memset(b, 0, sizeof *b);
      b->round = rr;
      b->ready = is_ready;
      b->who = -1;
      if (!is_ready && x->data != NULL && x->dlen > 1 && x->data[0] == 'w') {
        char d[16];
        snprintf(d, sizeof d, "%.*s", x->dlen < 15 ? x->dlen : 15, x->data);
        b->who = atoi(d + 1);
      }
      b->sid = x->eph ? x->sid : 0;
      b->cz = x->zxid;
      b->ct = x->time_ms;
      snprintf(b->name, sizeof b->name, "%s", name);
    } else if (x->kind == FC_T_DELETE) {
      for (size_t j = 0; j < nn; j++)
        if (nodes[j].dz == 0 && nodes[j].round == rr &&
            strcmp(nodes[j].name, name) == 0) {
          nodes[j].dz = x->zxid;
          nodes[j].dt = x->time_ms;
        }
    }
  }

  /* ---- the rounds ---- */
  for (int i = 0; i < nrounds; i++) {
    struct bround *b = &rounds[i];
    v.opened += b->ready_made > 0;
    int clean = b->nm == NSLOTS;
    for (int j = 0; j < b->nm; j++) {
      struct bcalls *m = &b->m[j];
      clean &= m->enter_rc == 0 && m->enter_ret >= 0 && m->leave_ret >= 0 &&
               m->leave_rc == 0;
      if (m->enter_ret >= 0 && m->enter_rc == 0) {
        int made = 0;
        for (size_t q = 0; q < nn; q++)
          made += nodes[q].round == i && nodes[q].who == m->who;
        v.renewed += made > 1;
      }
      /* in only once `ready` was there (server stamps, ms) */
      if (m->enter_ret >= 0 && m->enter_rc == 0 &&
          (b->ready_made == 0 || m->enter_ret_ms < b->ready_ct))
        bbad(&v, "round %d: w%d's enter returned 0 at %" PRId64 " ms, but "
             "`ready` was %s", i, m->who, m->enter_ret_ms,
             b->ready_made == 0 ? "never created" : "created later");
      /* out only once every member that was in is leaving or lost */
      if (m->leave_ret < 0 || m->leave_rc != 0) continue;
      for (int o = 0; o < b->nm; o++) {
        struct bcalls *p = &b->m[o];
        if (o == j || p->enter_ret < 0 || p->enter_rc != 0) continue;
        if (p->leave_call >= 0 && p->leave_call < m->leave_ret) continue;
        /* p's node when its enter returned, and whether its session had
         * been closed on the server when m's leave returned */
        const struct bnode *pn = NULL;
        for (size_t q = 0; q < nn; q++)
          if (nodes[q].round == i && nodes[q].who == p->who &&
              nodes[q].ct <= p->enter_ret_ms &&
              (pn == NULL || nodes[q].cz > pn->cz))
            pn = &nodes[q];
        if (pn != NULL && pn->closed && pn->dt <= m->leave_ret_ms) {
          v.excused++;
          continue;
        }
        bbad(&v, "round %d: w%d's leave returned 0 at +%.3f s while w%d, in "
             "with 0 at +%.3f s, had %s (its node %s, session 0x%" PRIx64
             ": %s)", i, m->who, (elog->e[m->leave_ret].t_us - t0) / 1e6,
             p->who, (elog->e[p->enter_ret].t_us - t0) / 1e6,
             p->leave_call < 0 ? "never begun its leave"
                               : "not begun its leave yet",
             pn != NULL ? pn->name : "(none in the history)",
             pn != NULL ? (uint64_t)pn->sid : 0,
             pn == NULL      ? "-"
             : pn->dz == 0   ? "the node was never deleted"
             : pn->closed    ? "closed after that"
                             : "the node deleted, the session alive");
      }
    }
    /* whoever `ready` counted is in, or out by a documented way: killed
     * before its enter returned, its session lost (closed before it
     * returned, or ZKL_ELOST), or ZKL_ESUSPENDED (the delete of its node
     * lost its answer: the header leaves the node to the janitor) */
    for (int c = 0; c < b->ncounted; c++) {
      const struct bnode *cn = &nodes[b->counted[c]];
      struct bcalls *m = NULL;
      for (int j = 0; j < b->nm; j++)
        if (b->m[j].who == cn->who) m = &b->m[j];
      if (m != NULL && m->enter_ret >= 0 && m->enter_rc == 0) continue;
      if (m != NULL && m->enter_ret < 0 && m->killed) {
        v.counted_lost++;
        continue;
      }
      if (m != NULL && m->enter_ret >= 0 &&
          (m->enter_rc == ZKL_ELOST ||
           (cn->closed && cn->dt <= m->enter_ret_ms))) {
        v.counted_lost++;
        continue;
      }
      if (m != NULL && m->enter_ret >= 0 && m->enter_rc == ZKL_ESUSPENDED) {
        v.counted_unknown++;
        continue;
      }
      bbad(&v, "round %d: `ready` was created counting w%d's node %s "
           "(session 0x%" PRIx64 "), but that member's enter %s%s", i,
           cn->who, cn->name, (uint64_t)cn->sid,
           m == NULL || m->enter_ret < 0 ? "never returned" : "returned ",
           m == NULL || m->enter_ret < 0 ? "" : zkl_err_name(m->enter_rc));
    }
    if (clean) v.clean++;
    if (b->leftover_members > 0) {
      v.leftovers += b->leftover_members;
      bbad(&v, "round %d: %d member nodes left at the end", i,
           b->leftover_members);
    }
    if (b->stale_ready) {
      v.stale++;
      if (b->left0 > 0)
        bbad(&v, "round %d: `ready` is left although %d members' leave "
             "returned 0", i, b->left0);
    }
  }
  int quiet_clean = 0;
  for (int i = quiet_from; i < nrounds; i++) {
    int c = rounds[i].nm == NSLOTS;
    for (int j = 0; j < rounds[i].nm; j++)
      c &= rounds[i].m[j].enter_rc == 0 && rounds[i].m[j].leave_rc == 0 &&
           rounds[i].m[j].leave_ret >= 0;
    quiet_clean += c;
  }
  int files = h.files;
  fc_history_free(&h);

  printf("| %6s | %6s | %5s | %33s | %27s | %7s | %5s | %5s | %4s |\n",
         "rounds", "opened", "clean", "enter 0/ETIMED/ELOST/ESUSP/EPROTO",
         "leave 0/ETIMED/ELOST/ESUSP", "excused", "stale", "left", "bad");
  printf("|--------|--------|-------|-----------------------------------|"
         "-----------------------------|---------|-------|-------|------|\n");
  char ec[64], lc[64];
  snprintf(ec, sizeof ec, "%d/%d/%d/%d/%d", v.enter_codes[0],
           v.enter_codes[1], v.enter_codes[2], v.enter_codes[3],
           v.enter_codes[4]);
  snprintf(lc, sizeof lc, "%d/%d/%d/%d", v.leave_codes[0], v.leave_codes[1],
           v.leave_codes[2], v.leave_codes[3]);
  printf("| %6d | %6d | %5d | %33s | %27s | %7d | %5d | %5d | %4d |\n",
         nrounds, v.opened, v.clean, ec, lc, v.excused, v.stale, v.leftovers,
         v.bad);
  printf("faulted rounds %d, quiet rounds %d of %d clean; members in whose "
         "node was made twice %d; counted at an opening, then out: session "
         "lost %d, ZKL_ESUSPENDED %d; excused: leaves that returned 0 while "
         "a member in had lost its session; history: %d log files, %d zxids "
         "missing; wall %.1f s; seed %" PRIu64 "\n", faulted_rounds,
         quiet_clean, nrounds - quiet_from, v.renewed, v.counted_lost,
         v.counted_unknown, files, gaps,
         (it_now_ms() - t_start) / 1e3, cf_seed);
  print_faults();

  int fail = v.bad;
  if (stuck_round >= 0 && ++fail)
    fc_appendf(v.why, sizeof v.why, " round %d did not end in %d s;",
               stuck_round, ROUND_CAP_MS / 1000);
  if (quiet_clean < QUIET_ROUNDS && ++fail)
    fc_appendf(v.why, sizeof v.why, " only %d of %d rounds after the faults "
               "had every member in and out with 0;", quiet_clean,
               QUIET_ROUNDS);
  if (gaps > 0 && ++fail)
    fc_appendf(v.why, sizeof v.why, " the servers' history has %d zxids "
               "missing (the harness, not the barrier);", gaps);
  if (v.opened < 5 && ++fail)
    fc_appendf(v.why, sizeof v.why, " only %d rounds opened;", v.opened);
  if (nm.faults[FC_KILL] == 0 && ++fail)
    fc_appendf(v.why, sizeof v.why, " no member was killed;");
  if (nm.long_pauses == 0 && ++fail)
    fc_appendf(v.why, sizeof v.why, " no member was paused past its "
               "session timeout;");
  if (nm.died > 0 && ++fail)
    fc_appendf(v.why, sizeof v.why, " %d workers failed;", nm.died);
  if (nm.stuck > 0 && ++fail)
    fc_appendf(v.why, sizeof v.why, " %d workers stuck after the stop;",
               nm.stuck);
  if (nm.harness_failures > 0 && ++fail)
    fc_appendf(v.why, sizeof v.why, " %d harness verbs failed;",
               nm.harness_failures);
  if (fc_load(&elog->n) >= EV_MAX && ++fail)
    fc_appendf(v.why, sizeof v.why, " the log overflowed;");
  if (fail || getenv("ZKL_COUNTER_FAULT_TRACE") != NULL)
    print_trace("the double barrier");
  dump_extra = dump_nodes;
  if (fail) dump_log("dbarrier");
  dump_extra = NULL;
  free(nodes);
  nodes = NULL;
  fflush(stdout);
  free(rounds);
  free_fleet();
  ck_assert_msg(!fail, "%s", v.why);
}
END_TEST

Suite *counter_faults_suite(void) {
  cf_seconds = fc_env_int("ZKL_COUNTER_FAULT_SECONDS", 25);
  cf_seed = fc_seed("ZKL_COUNTER_FAULT_SEED");
  /* a case each, so that CK_RUN_CASE can pick one */
  Suite *su = suite_create("counter-faults");
  TCase *tc = tcase_create("counter-adds");
  tcase_set_timeout(tc, cf_seconds + 120);
  tcase_add_test(tc, counter_no_lost_update);
  suite_add_tcase(su, tc);
  tc = tcase_create("dbarrier-rounds");
  tcase_set_timeout(tc, cf_seconds + 150);
  tcase_add_test(tc, dbarrier_rounds);
  suite_add_tcase(su, tc);
  return su;
}
