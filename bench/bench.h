/* bench/bench.h - PRIVATE to zkl-bench: not installed, not part of the API.
 *
 * zkl-bench measures zkl against the "floor" (the same protocol written by
 * hand on raw libzookeeper-mt calls, in the same process, on the same
 * server) and prints one table: see docs/performance.md.  This header holds
 * what the scenario files share: options, clocks, samples, results,
 * targets, the server's counters and the raw floor.
 */
#ifndef ZKL_BENCH_H
#define ZKL_BENCH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <zookeeper/zookeeper.h>

#include "zkl.h"

/* ---- options ------------------------------------------------------------ */

#define BENCH_MAX_LIST 8

typedef struct bench_opts {
  const char *hosts;       /* the ensemble, as zookeeper_init() takes it   */
  const char *csv_path;    /* --csv: where the CSV goes (NULL: none)       */
  const char *merge_path;  /* --merge: rows of another run (kazoo_bench.py)*/
  const char *config;      /* --config: label of the server's config       */
  int quick;               /* --quick: a smoke run of a few seconds        */
  unsigned only;           /* bit s set: run scenario s (1..14)            */
  unsigned kazoo;          /* bit s set: run kazoo_bench.py's scenario s
                              right after ours and merge its rows        */
  const char *kazoo_script; /* --kazoo-script: bench/kazoo_bench.py      */
  int curator;             /* S1, S3, S6, S11-S14: run
                              bench/CuratorBench.java
                              (Curator's side) right after ours and merge
                              its rows                                   */
  const char *curator_src; /* --curator-src: bench/CuratorBench.java      */
  int iters;               /* S1, S2: measured operations per variant      */
  double duration_s;       /* S3, S5: seconds per run                       */
  int reps;                /* S3, S5, S9: runs of each implementation, in
                              turns                                         */
  int ns[BENCH_MAX_LIST], n_ns;         /* S3: contender counts        */
  int queues[BENCH_MAX_LIST], n_queues; /* S4: queue lengths           */
  int readers, writers;    /* S5                                            */
  int rounds;              /* S6: clean resign rounds                       */
  int kill_rounds;         /* S6: killed-leader rounds                      */
  int kill_timeout_ms;     /* S6: session timeout of the killed leader      */
  int waiters;             /* S7: waiting mutex objects                     */
  int pending;             /* S8: pending async acquisitions                */
  int items;               /* S9: items per run of each variant             */
  int batch;               /* S9: items per batch put and batch take        */
  int consumers[BENCH_MAX_LIST], n_consumers; /* S10: blocked consumers  */
  int puts;                /* S10: puts per consumer count                  */
  int cas_contenders;      /* S11: contenders incrementing one counter      */
  int increments;          /* S11: increments per contender per run         */
  int ml_contenders;       /* S12: contenders, each a thread and a session  */
  int ml_paths[BENCH_MAX_LIST], n_ml_paths; /* S12: paths per multi-lock (K) */
  int ml_acquisitions;     /* S12: acquisitions per contender per run       */
  int sem_contenders;      /* S13: contenders, each a thread and a session  */
  int sem_max[BENCH_MAX_LIST], n_sem_max; /* S13: the semaphore's MAX      */
  int sem_grants;          /* S13: grants per contender per run             */
  int sem_hold_ms;         /* S13: how long each lease is held (0: ~0)      */
  int agg_threads[BENCH_MAX_LIST], n_agg_threads; /* S14: threads (T)    */
  double agg_duration_s;   /* S14: seconds per run                          */
  char root[128];          /* this run's private tree: /zkl-bench/<id>      */
} bench_opts_t;

/* ---- clocks and samples (stats.c) ----------------------------------------- */

int64_t bench_now_ns(void); /* CLOCK_MONOTONIC */
void bench_sleep_ms(int ms);
/* CPU time of this process so far (every thread, ZooKeeper's included), µs:
 * the client's own cost of a window in which only one implementation ran. */
double bench_cpu_us(void);

/* A growing array of measurements (latencies in µs, mostly). */
typedef struct samples {
  double *v;
  size_t n, cap;
} samples_t;

void samples_add(samples_t *s, double x);
/* The q-quantile (0..1) by nearest rank; sorts s.  NAN when empty. */
double samples_quantile(samples_t *s, double q);
void samples_free(samples_t *s);
/* Thread-safe collector: several threads add to one samples_t. */
typedef struct samples_mt {
  pthread_mutex_t mu;
  samples_t s;
} samples_mt_t;
void samples_mt_init(samples_mt_t *m);
void samples_mt_add(samples_mt_t *m, double x);
void samples_mt_fini(samples_mt_t *m);

/* Resident memory of this process after handing the allocator's free
 * pages back, and the heap in use (every arena; 0 under valgrind):
 * sc-queue.c. */
double bench_rss_bytes(void);
double bench_heap_bytes(void);

/* ---- results and targets (stats.c) ---------------------------------------- */

/* One measured figure: `median` holds the value for single figures (a
 * rate, a ratio, a count), and p99 is NAN then. */
typedef struct result {
  char scenario[4]; /* "1".."14"                                      */
  char kase[24];    /* "cycle", "N=8", "Q=1000", "resign", ...         */
  char impl[16];    /* "floor", "floor-pipe", "zkl", "kazoo", "curator" */
  char metric[24];  /* "latency", "handoffs/s", "bytes/handoff", ...   */
  char unit[8];     /* "us", "ms", "1/s", "B", ""                      */
  double median, p99;
  long n;           /* how many samples (or operations) behind it      */
} result_t;

void result_add(const char *scenario, const char *kase, const char *impl,
                const char *metric, const char *unit, double median,
                double p99, long n);
/* Adds median and p99 of s (in the unit given) and frees s. */
void result_add_samples(const char *scenario, const char *kase,
                        const char *impl, const char *metric,
                        const char *unit, samples_t *s);
const result_t *result_find(const char *scenario, const char *kase,
                            const char *impl, const char *metric);

typedef enum { CMP_LE, CMP_GE } cmp_t;
/* Records a target of the issue: measured `cmp` limit; NAN measured
 * (something missing) is reported as n/a. */
void target_add(const char *scenario, const char *what, double measured,
                cmp_t cmp, double limit);

/* Reads rows written by another run (kazoo_bench.py) in our CSV format.
 * 0, or -1 with a message on stderr. */
int results_merge(const char *path);
/* Prints the results and the targets as two tables. */
void results_print(FILE *f, const char *config);
/* Writes every result and target as CSV.  0 or -1. */
int results_write_csv(const char *path, const char *config);
/* How many targets were missed / not measured. */
int targets_missed(void);
void results_free(void);

/* ---- the server's own counters (server.c) ------------------------------- */

/* What the four-letter words `mntr` and `srvr` say; server-wide figures. */
typedef struct srv_counters {
  double packets_received; /* requests of every client, pings included   */
  double packets_sent;     /* replies and watch notifications            */
  double bytes_received;   /* request bytes                              */
  double response_bytes;   /* reply bytes (notifications not counted)    */
  double reads, writes;    /* requests by kind (read/update latency cnt) */
  double watches;          /* watches set now                            */
  double notifications;    /* watch notifications sent: the watchers each
                              event triggered (zk_sum_node_*_watch_count,
                              ZooKeeper 3.6+; NAN: not counted)         */
  double fsyncs;           /* log fsyncs (0 with forceSync=no; NAN: not
                              counted by this server)                  */
  int64_t zxid;            /* last zxid (srvr), -1 if unknown            */
} srv_counters_t;

/* Samples the counters of the first server in `hosts`.  0 or -1. */
int srv_sample(const char *hosts, srv_counters_t *out);
/* b - a, minus what the sampling itself costs (measured once at start by
 * srv_calibrate()). */
void srv_delta(const srv_counters_t *a, const srv_counters_t *b,
               srv_counters_t *out);
/* The same for a window in which `samples` samples were taken after a
 * (b the last of them): b - a minus what that many samplings cost. */
void srv_delta_n(const srv_counters_t *a, const srv_counters_t *b,
                 int samples, srv_counters_t *out);
int srv_calibrate(const char *hosts);
/* Adds the counts of window d to sum (watches and zxid are left alone). */
void srv_add(srv_counters_t *sum, const srv_counters_t *d);

/* ---- a crew: contender threads let go together (stats.c) ------------------ */

/* S11-S13 run n contender threads at once over one window.  The threads'
 * mains call bench_crew_wait() first and stop after their current
 * operation once `stop` is set. */
typedef struct bench_crew {
  pthread_barrier_t start;
  atomic_int stop;       /* set when the cap passed                       */
  int64_t t0;            /* when the threads were let go (bench_now_ns)   */
  double cpu_us;         /* this process's CPU over the window            */
  srv_counters_t srv;    /* the server's work over it, if srv_ok          */
  int srv_ok;
  double host_us, ctxt;  /* the host's busy CPU and context switches over
                            it (/proc/stat), if host_ok                   */
  int host_ok;
} bench_crew_t;

/* Starts n threads, main(base + i * size), lets them go together, and
 * joins them; past cap_s seconds it sets w->stop and joins the rest.  The
 * window's measurements are in *w.  A thread that cannot be started ends
 * the program (the others would wait for it for ever): `what` names the
 * scenario in that message. */
void bench_crew_run(bench_crew_t *w, const char *what, const char *hosts,
                    int n, void *(*main)(void *), void *base, size_t size,
                    int cap_s);
/* A contender thread's first call: waits until the crew is let go. */
void bench_crew_wait(bench_crew_t *w);
/* Fairness of a crew's runs: the fewest / the most operations of one
 * contender (per[0..n-1]); NAN when none did any. */
double bench_fairness(const long *per, int n);
/* Once the peers' rows are merged: a row "zkl/curator" and "zkl/kazoo"
 * (metric `ratio_metric`, unit "x") of scenario sc, case kase, with the
 * ratio of zkl's median `metric` to the peer's, for each peer measured. */
void bench_peer_ratios(const char *sc, const char *kase, const char *metric,
                       const char *ratio_metric);
/* Before the rates are reported (that sorts them): prints an
 * implementation's rate of each run, in the order run, into the table's
 * log. */
void bench_runs_print(const char *sc, const char *kase, const char *impl,
                      const samples_t *rates, const char *unit);
/* zkl's and the floor's runs paired in the order run (run r of each is in
 * the same round of the rotation, minutes apart at most): the rows
 * "zkl/floor" "<rate> paired" (the median of the per-pair ratios: a drift
 * of the disk or of other load over the scenario cancels out in each pair,
 * where the ratio of two medians can take them from different rounds),
 * "paired lowest" and "paired highest" (none when no pair).  Before the
 * rates are reported (that sorts them). */
void bench_paired(const char *sc, const char *kase, const char *rate,
                  const samples_t *zkl, const samples_t *floor);
/* What an implementation's crew runs of one case add up to (S14; the
 * shape S11-S13 repeat by hand). */
typedef struct bench_tally {
  samples_t rates;      /* operations per second, one per run           */
  long *per;            /* operations of contender i, over the runs     */
  long done;            /* operations, over the runs                    */
  srv_counters_t srv;   /* the server's work over the runs, if srv_ok   */
  int srv_ok;
  double cpu_us;        /* this process's CPU time over the runs        */
} bench_tally_t;
/* Zeroes t[0..n_impls-1] for crews of n contenders.  0 or -1 (memory). */
int bench_tallies_init(bench_tally_t *t, int n_impls, int n);
void bench_tallies_free(bench_tally_t *t, int n_impls);
/* Adds a crew's window: its CPU and server work, and one run's rate of
 * per[0..n-1] operations from w->t0 to t_end (the last one's stop). */
void bench_tally_add(bench_tally_t *t, const bench_crew_t *w, const long *per,
                     int n, int64_t t_end);
/* The rows of a tally that did anything: `rate` (the median run, unit
 * 1/s), fairness, the server's work per `op` and cpu/<op>. */
void bench_tally_report(const bench_tally_t *t, const char *sc,
                        const char *kase, const char *impl, const char *rate,
                        const char *op, int n);
/* o->reps rounds of one run of each of n_impls implementations, the order
 * rotating (floor first, then zkl first, ...), so that load from elsewhere
 * on a shared machine hits them alike; stops at the first run that fails
 * (run() != 0).  0, or -1 when one failed. */
int bench_rotate(int reps, int n_impls, int (*run)(void *arg, int impl),
                 void *arg);
/* How many sessions other than `except` watch `path` (wchp), -1 on
 * failure; and a bounded wait until there is one (0, or -1). */
int srv_watchers(const char *hosts, const char *path, int64_t except);
int srv_wait_watched(const char *hosts, const char *path, int64_t except,
                     int timeout_ms);
/* Adds the per-operation server figures of a measured window to the
 * results: requests/op, reads/op, writes/op, bytes/op. */
void srv_report(const char *scenario, const char *kase, const char *impl,
                const char *per, const srv_counters_t *d, double ops);

/* ---- the raw floor (floor.c) ---------------------------------------------- */

/* A raw session: zookeeper_init and a wait for the connection. */
zhandle_t *floor_open(const char *hosts, int timeout_ms);
void floor_close(zhandle_t *zh);

typedef enum {
  FLOOR_MUTEX,  /* "-lock-" nodes: the lowest holds, watch the predecessor */
  FLOOR_WRITER, /* "__WRIT__": the same, in a read/write queue             */
  FLOOR_READER  /* "__READ__": waits only for the writers below           */
} floor_kind_t;

/* The classic lock protocol by hand: create EPHEMERAL_SEQUENTIAL, list,
 * exists-watch the node to wait for, list again after every wake-up, and
 * at once when the node to watch is already gone. */
typedef struct floor_lock {
  zhandle_t *zh;
  const char *root;
  floor_kind_t kind;
  char marker[16];        /* "lock-", "__READ__", "__WRIT__"         */
  char node[256];         /* our node while queued or holding        */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int fired;              /* watch event since armed (guarded by mu) */
  atomic_int armed;       /* waiting with a watch set on the server  */
} floor_lock_t;

int floor_lock_init(floor_lock_t *l, zhandle_t *zh, const char *root,
                    floor_kind_t kind);
/* Must outlive the zhandle's last watch event: free after floor_close(). */
void floor_lock_fini(floor_lock_t *l);
/* 0 held, or a ZooKeeper code / -1 (timeout). */
int floor_lock_acquire(floor_lock_t *l, int timeout_ms);
int floor_lock_release(floor_lock_t *l);

/* One uncontended cycle: create, getChildren, delete, each after the
 * other's answer.  0 or a ZooKeeper code. */
int floor_cycle_seq(zhandle_t *zh, const char *root);
/* The sequential cycle releasing as zkl does after a contended hold: one
 * multi that changes the node's data, then deletes it (to tell what
 * telling the release costs from the rest). */
int floor_cycle_mark(zhandle_t *zh, const char *root);
/* The same with create and getChildren sent back to back (the server
 * answers a session in order, so the listing already holds the node);
 * released by a delete, as zkl releases a hold nobody contended.  Several
 * threads may run it at once on one zhandle (S14). */
int floor_cycle_pipelined(zhandle_t *zh, const char *root);

/* The queue recipe by hand (S9, S10): ZooKeeper's own (its Java
 * DistributedQueue, the C recipes): PERSISTENT_SEQUENTIAL items under dir,
 * a take reads the head's data and then deletes it; claims in kazoo's
 * LockingQueue layout (taken/<name>, ephemeral).  The listing is kept
 * between takes and read again when it runs out. */
typedef struct floor_queue {
  zhandle_t *zh;
  char dir[256];          /* where the items are                      */
  char prefix[32];        /* "qn-", "entry-100-"                       */
  char taken[256];        /* the claims' dir, "" without claims        */
  struct String_vector kids; /* the listing, in queue order           */
  int next;               /* the next name of it to try                */
  pthread_mutex_t mu;     /* S10: the child watch                      */
  pthread_cond_t cv;
  int fired;
} floor_queue_t;

void floor_queue_init(floor_queue_t *fq, zhandle_t *zh, const char *dir,
                      const char *prefix, const char *taken);
/* After floor_close(): the watcher's context. */
void floor_queue_fini(floor_queue_t *fq);
/* Drops the kept listing: the next take lists afresh. */
void floor_queue_forget(floor_queue_t *fq);
/* One create; a multi of n creates.  0 or a ZooKeeper code. */
int floor_queue_put(floor_queue_t *fq, const void *data, int len);
int floor_queue_put_batch(floor_queue_t *fq, const void *data, int len,
                          int n);
/* One item taken: its data read, then deleted, each after the other's
 * answer (pipelined: both sent together).  0, 1 empty, or a code. */
int floor_queue_take(floor_queue_t *fq, int pipelined);
/* Up to max items: their reads and deletes all sent together (multi:
 * the reads, then one multi deleting them all); *n ours.  0, 1 empty, or
 * a code. */
int floor_queue_take_batch(floor_queue_t *fq, int max, int multi, int *n);
/* One item claimed and acked: create taken/<name> (ephemeral) and read
 * the item, each after the other's answer (pipelined: together), then one
 * multi deletes both.  0, 1 empty, or a code. */
int floor_queue_claim_ack(floor_queue_t *fq, int pipelined);
/* The recipe's blocking take: list with a child watch, take the head as
 * above (list again at once if every listed item went to others), else
 * wait for the watch.  0 and *data (malloc'ed, NUL-terminated), -1 past
 * timeout_ms or once *stop is set, or a code. */
int floor_queue_take_wait(floor_queue_t *fq, int timeout_ms,
                          const atomic_int *stop, char **data, int *len);
/* Wakes a floor_queue_take_wait() to look at its stop flag. */
void floor_queue_stop(floor_queue_t *fq);

/* The counter by hand (S11): a 4-byte big-endian int in one node.  Read:
 * a get (ZBADARGUMENTS: not 4 bytes).  Add: get, then set at the version
 * read, both again while the set answers ZBADVERSION (*conflicts counts
 * those, may be NULL).  0 or a ZooKeeper code. */
/* S11: a run of any implementation stops after this long (CuratorBench
 * and kazoo_bench.py are given or use the same). */
#define BENCH_S11_CAP_S 20
int floor_counter_read(zhandle_t *zh, const char *path, int32_t *value,
                       int32_t *version);
int floor_counter_add(zhandle_t *zh, const char *path, int32_t delta,
                      int *conflicts);

/* The multi-lock by hand (S12): one multi creating an EPHEMERAL_SEQUENTIAL
 * "-lock-" node under every root (in the order given), then the classic
 * wait (floor_lock_acquire's) in each queue in turn; the release is one
 * multi deleting them all. */
typedef struct floor_multilock {
  zhandle_t *zh;
  int n;
  floor_lock_t *l;        /* one per root: its node, its watch           */
} floor_multilock_t;
/* S12: a run of any implementation stops after this long (CuratorBench
 * and kazoo_bench.py are given or use the same). */
#define BENCH_S12_CAP_S 20
int floor_multilock_init(floor_multilock_t *m, zhandle_t *zh,
                         const char *const *roots, int n);
/* After floor_close(): the watchers' contexts. */
void floor_multilock_fini(floor_multilock_t *m);
/* 0 all held, or a ZooKeeper code / -1 (timeout): none held then. */
int floor_multilock_acquire(floor_multilock_t *m, int timeout_ms);
int floor_multilock_release(floor_multilock_t *m);

/* The semaphore by hand (S13), in the layout of Curator's
 * InterProcessSemaphoreV2 and zkl_sem: the gate, the classic lock
 * (floor_lock_acquire()) under <path>/locks; as its holder, list
 * <path>/leases with a child watch until fewer than max are there (again
 * after every event), create one EPHEMERAL_SEQUENTIAL lease node
 * (<path>/leases/_c_<uuid>-lease-), then delete the gate node.  Release:
 * delete the lease node.  Synchronous calls; <path>/locks and
 * <path>/leases must exist. */
typedef struct floor_sem {
  zhandle_t *zh;
  int max;
  char locks[256], leases[256];
  floor_lock_t gate;      /* its root is locks                           */
  char lease[256];        /* our lease node while held                   */
  pthread_mutex_t mu;     /* the leases' child watch                     */
  pthread_cond_t cv;
  int fired;
} floor_sem_t;
/* S13: a run of any implementation stops after this long (CuratorBench
 * and kazoo_bench.py are given or use the same). */
#define BENCH_S13_CAP_S 20
int floor_sem_init(floor_sem_t *fs, zhandle_t *zh, const char *path,
                   int max);
/* After floor_close(): the watchers' contexts. */
void floor_sem_fini(floor_sem_t *fs);
/* 0 one lease held, or a ZooKeeper code / -1 (timeout): none held then. */
int floor_sem_acquire(floor_sem_t *fs, int timeout_ms);
int floor_sem_release(floor_sem_t *fs);

/* S14: a run of any implementation is stopped this long after its
 * duration (CuratorBench and kazoo_bench.py use the same). */
#define BENCH_S14_CAP_S 20

/* ---- helpers shared by the scenarios (zkl-bench.c) -------------------------- */

/* Creates path (and missing parents) as persistent nodes.  0 or a code. */
int bench_mkpath(zhandle_t *zh, const char *path);
/* Deletes path and everything below it.  0 or a code. */
int bench_rmtree(zhandle_t *zh, const char *path);
/* snprintf into a fixed buffer: the path "<root>/<a>/<b>". */
void bench_path(char *buf, size_t len, const char *root, const char *a,
                const char *b);
zkl_session_t *bench_zkl_open(const char *hosts, int timeout_ms);
/* Counts the children of path (-1 on error): the node's numChildren, so
 * that a poll of a path with 10,000 children allocates nothing in the
 * process whose memory is being measured (S8). */
int bench_children(zhandle_t *zh, const char *path);
/* Error reporting: prints and counts a failure of the run. */
void bench_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int bench_failures(void);
void bench_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The admin session of the run (raw): setup, cleanup, listings. */
extern zhandle_t *bench_admin;

/* ---- the peers: kazoo and Curator (peers.c) ------------------------------- */

/* The scenarios bench/kazoo_bench.py has: 1, 3, 6, 9-14. */
#define KAZOO_SCENARIOS ((1u << 1) | (1u << 3) | (1u << 6) | (1u << 9) | \
                         (1u << 10) | (1u << 11) | (1u << 12) | (1u << 13) | \
                         (1u << 14))
/* The scenarios bench/CuratorBench.java has: 1, 3, 6, 11-14. */
#define CURATOR_SCENARIOS ((1u << 1) | (1u << 3) | (1u << 6) | (1u << 11) | \
                           (1u << 12) | (1u << 13) | (1u << 14))

/* The scenarios whose peers take turns with the floor and zkl, run by
 * run (their targets compare zkl with a peer): 1, 3, 14.  The others' peers
 * run after ours, in a window of their own. */
#define BENCH_TURN_SCENARIOS ((1u << 1) | (1u << 3) | (1u << 14))
/* S1: cycles per turn, of every implementation (sc-cycle.c's block; the
 * peers get it in ZKL_BENCH_TURNS) */
#define BENCH_TURN_BLOCK 50

/* A peer's process running a scenario in turns: see peers.c. */
typedef struct bench_peer {
  const char *name;   /* "kazoo", "curator": its rows' impl            */
  int id;             /* the scenario                                  */
  pid_t pid;          /* 0 once it ended (reaped)                      */
  int status;         /* its exit status once it ended, -1 unknown     */
  int to, from;       /* its stdin, its stdout                         */
  char buf[1024];     /* its stdout, up to a line                      */
  size_t len;
  int turns;          /* turns it was given                            */
  int missed;         /* turns it could not take: it had ended         */
  int stopped;        /* stopped by bench_peers_stop()                 */
  char csv[512];      /* where it writes its rows                      */
  int64_t t0;
} bench_peer_t;

typedef struct bench_peers {
  bench_peer_t p[2];
  int n;
} bench_peers_t;

/* The peers of scenario id that run here (--kazoo, --curator), started
 * in turn mode; each waits at its first turn when this returns (ps->n
 * may be 0). */
void bench_peers_start(bench_peers_t *ps, const bench_opts_t *o, int id);
/* One unit of p's work (see peers.c); returns when it is done.  A peer
 * that ended or failed is skipped (reported once, at bench_peers_end). */
void bench_peer_turn(bench_peer_t *p);
/* Each peer's turn, in order (ps may be NULL). */
void bench_peers_turn(bench_peers_t *ps);
/* Waits for the peers' end and merges their rows (ps may be NULL). */
void bench_peers_end(bench_peers_t *ps);
/* Ends the peers at once, their rows dropped: the scenario's own run
 * failed and will not give them the rest of their turns (ps may be
 * NULL).  bench_peers_end() then has nothing left to do. */
void bench_peers_stop(bench_peers_t *ps);
/* Scenario id's peers, each its whole run after ours, rows merged. */
void bench_peers_after(const bench_opts_t *o, int id);
/* Removes what the peers left (CuratorBench's classes). */
void bench_peers_cleanup(void);

/* ---- the scenarios ------------------------------------------------------------ */

void sc_uncontended(const bench_opts_t *o); /* 1  sc-cycle.c    */
void sc_trylock(const bench_opts_t *o);     /* 2  sc-cycle.c    */
void sc_contended(const bench_opts_t *o);   /* 3  sc-handoff.c  */
void sc_wake_cost(const bench_opts_t *o);   /* 4  sc-queue.c    */
void sc_rwlock(const bench_opts_t *o);      /* 5  sc-handoff.c  */
void sc_election(const bench_opts_t *o);    /* 6  sc-election.c */
void sc_memory(const bench_opts_t *o);      /* 7  sc-queue.c    */
void sc_pending_async(const bench_opts_t *o); /* 8  sc-async.c  */
void sc_queue_throughput(const bench_opts_t *o); /* 9  sc-dqueue.c */
void sc_queue_herd(const bench_opts_t *o);    /* 10 sc-dqueue.c  */
void sc_counter(const bench_opts_t *o);       /* 11 sc-counter.c */
void sc_multilock(const bench_opts_t *o);     /* 12 sc-multilock.c */
/* S12's zkl / curator and zkl / kazoo rows, once their rows are merged. */
void sc_multilock_ratios(const bench_opts_t *o);
void sc_semaphore(const bench_opts_t *o);     /* 13 sc-semaphore.c */
/* S13's zkl / curator and zkl / kazoo rows, once their rows are merged. */
void sc_semaphore_ratios(const bench_opts_t *o);
void sc_aggregate(const bench_opts_t *o);     /* 14 sc-aggregate.c */
/* S14's zkl / curator and zkl / kazoo rows, once their rows are merged. */
void sc_aggregate_ratios(const bench_opts_t *o);
/* The targets, from the results (and merged rows): targets.c. */
void bench_targets(const bench_opts_t *o);
/* The killed leader's process: zkl-bench --child-leader HOSTS PATH MS. */
int sc_election_child(const char *hosts, const char *path, int timeout_ms);

#endif /* ZKL_BENCH_H */
