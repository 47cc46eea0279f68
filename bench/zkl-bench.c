/* bench/zkl-bench.c - zkl-bench: zkl against the raw ZooKeeper floor (and,
 * merged from bench/kazoo_bench.py, kazoo), scenario by scenario.
 *
 *   zkl-bench [--quick] [--csv FILE] [--merge FILE] [-s HOSTS] ...
 *
 * kazoo's side of a scenario (1, 3, 6, 9 to 14) is run by this program
 * itself against the same server (kazoo_bench.py --only N, Debian's
 * /usr/bin/python3 with python3-kazoo), and its rows merged: one run, side
 * by side.  --merge FILE (rows of an earlier kazoo_bench.py run) or
 * --kazoo none turns that off; without python3-kazoo the kazoo rows stay
 * empty.  Curator's side of S1, S3, S6 and S11-S14 likewise:
 * bench/CuratorBench.java (InterProcessMutex, LeaderLatch,
 * DistributedAtomicInteger, InterProcessMultiLock, InterProcessSemaphoreV2)
 * against Debian's Curator 5.4; not with --quick (the JVM's start and javac
 * take seconds) unless --curator yes; without a JDK or Curator the curator
 * rows stay empty.  In S1, S3 and S14, whose targets compare zkl with the
 * peers, the peers take turns with the floor and zkl, run by run; in the
 * others each runs after ours (bench/peers.c).
 *
 * Every scenario is bounded in time and operations; the run works in a
 * private tree /zkl-bench/<pid>-<time> that it deletes at the end.  Targets
 * are reported (met / MISSED), never asserted: the exit status is 0 when
 * every scenario ran, 1 when one failed, 2 for a usage error. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

zhandle_t *bench_admin;
static atomic_int failures;

void bench_fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "zkl-bench: error: ");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  atomic_fetch_add(&failures, 1);
}

int bench_failures(void) { return atomic_load(&failures); }

void bench_note(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "zkl-bench: ");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* ---- helpers ---------------------------------------------------------------------- */

void bench_path(char *buf, size_t len, const char *root, const char *a,
                const char *b) {
  snprintf(buf, len, "%s%s%s%s%s", root, a ? "/" : "", a ? a : "",
           b ? "/" : "", b ? b : "");
}

int bench_mkpath(zhandle_t *zh, const char *path) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *p = buf + 1;; p++) {
    if (*p != '/' && *p != '\0') continue;
    char c = *p;
    *p = '\0';
    int zrc = zoo_create(zh, buf, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
    *p = c;
    if (zrc != ZOK && zrc != ZNODEEXISTS) return zrc;
    if (c == '\0') return 0;
  }
}

int bench_rmtree(zhandle_t *zh, const char *path) {
  struct String_vector kids = {0, NULL};
  int zrc = zoo_get_children(zh, path, 0, &kids);
  if (zrc == ZNONODE) return 0;
  if (zrc != ZOK) return zrc;
  for (int i = 0; i < kids.count; i++) {
    char child[1024];
    snprintf(child, sizeof child, "%s/%s", path, kids.data[i]);
    bench_rmtree(zh, child);
  }
  deallocate_String_vector(&kids);
  zrc = zoo_delete(zh, path, -1);
  return zrc == ZNONODE ? 0 : zrc;
}

int bench_children(zhandle_t *zh, const char *path) {
  struct Stat st;
  return zoo_exists(zh, path, 0, &st) == ZOK ? st.numChildren : -1;
}

zkl_session_t *bench_zkl_open(const char *hosts, int timeout_ms) {
  zkl_session_opts_t so;
  zkl_session_opts_init(&so);
  if (timeout_ms > 0) so.session_timeout_ms = timeout_ms;
  zkl_session_t *s = NULL;
  int rc = zkl_session_open(&s, hosts, &so);
  if (rc != 0) {
    bench_fail("zkl_session_open(%s): %s: %s", hosts, zkl_strerror(rc),
               zkl_last_error());
    return NULL;
  }
  return s;
}

/* ---- options ---------------------------------------------------------------------- */

static void usage(FILE *f) {
  fprintf(f,
"usage: zkl-bench [options]\n"
"  -s, --hosts HOSTS     ZooKeeper (default $ZKL_TEST_HOSTS, else 127.0.0.1:2181)\n"
"                        ($ZKL_BENCH_SERVERS, when set: the servers whose\n"
"                        counters are read, if not those of HOSTS)\n"
"  -q, --quick           a smoke run of a few seconds: every scenario, small\n"
"      --only LIST       scenarios to run, e.g. 1,3,6 (default all: 1-14)\n"
"      --iters N         S1/S2 operations per variant (default 1000)\n"
"      --duration SEC    S3/S5 seconds per run (default 3)\n"
"      --reps N          S3/S5/S9/S11-S14 runs of floor and zkl, in turns\n"
"                        (default 3)\n"
"      --contenders LIST S3 contender counts (default 2,8,32,128)\n"
"      --queues LIST     S4 queue lengths (default 10,100,1000)\n"
"      --readers N       S5 readers (default 32)\n"
"      --writers N       S5 writers (default 8)\n"
"      --rounds N        S6 clean resign rounds (default 50)\n"
"      --kill-rounds N   S6 killed-leader rounds (default 3)\n"
"      --kill-timeout MS S6 session timeout of the killed leader (default 2000)\n"
"      --waiters N       S7 waiting mutex objects (default 1000)\n"
"      --pending N       S8 pending async acquisitions (default 10000)\n"
"      --items N         S9 items per run (default 2000)\n"
"      --batch N         S9 items per batch put and take (default 100)\n"
"      --consumers LIST  S10 blocked consumer counts (default 1,10,100)\n"
"      --puts N          S10 puts per consumer count (default 100)\n"
"      --cas-contenders N  S11 contenders on one counter (default 8)\n"
"      --increments N    S11 increments per contender per run (default 250)\n"
"      --ml-contenders N S12 contenders taking the multi-lock (default 8)\n"
"      --ml-paths LIST   S12 paths per multi-lock, K (default 2,8; at most 64)\n"
"      --ml-acquisitions N  S12 acquisitions per contender per run (default 50)\n"
"      --sem-contenders N  S13 contenders on one semaphore (default 32)\n"
"      --sem-max LIST    S13 the semaphore's MAX (default 1,5,20)\n"
"      --sem-grants N    S13 grants per contender per run (default 20)\n"
"      --sem-hold MS     S13 how long each lease is held (default 0)\n"
"      --agg-threads LIST  S14 threads of one process, a path each\n"
"                        (default 1,8,32,64)\n"
"      --agg-duration SEC  S14 seconds per run (default 3)\n"
"      --kazoo LIST      scenarios whose kazoo side this run runs itself\n"
"                        (default 1,3,6,9-14 of --only; \"none\" with\n"
"                        --merge)\n"
"      --kazoo-script F  kazoo_bench.py (default: the source tree's)\n"
"      --curator yes|no  run Curator's side of S1, S3, S6, S11-S14\n"
"                        (CuratorBench.java, javac)\n"
"                        (default yes, no with --quick)\n"
"      --curator-src F   CuratorBench.java (default: the source tree's)\n"
"      --config LABEL    server config label for the table and CSV\n"
"      --csv FILE        write every result and target as CSV\n"
"      --merge FILE      add rows of another run (bench/kazoo_bench.py --csv)\n"
"  -h, --help\n");
}

static int parse_list(const char *s, int *out, int max) {
  int n = 0;
  while (*s != '\0' && n < max) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || v <= 0 || v > 100000) return -1;
    out[n++] = (int)v;
    s = *end == ',' ? end + 1 : end;
    if (*end != ',' && *end != '\0') return -1;
  }
  return n;
}

/* A list of at most BENCH_MAX_LIST values, none above hi, into out and
 * *n.  0 or -1. */
static int parse_list_max(const char *s, int *out, int *n, int hi) {
  *n = parse_list(s, out, BENCH_MAX_LIST);
  for (int i = 0; i < *n; i++)
    if (out[i] > hi) return -1;
  return *n > 0 ? 0 : -1;
}

/* Seconds, more than 0 and at most 600.  0 or -1. */
static int parse_seconds(const char *s, double *out) {
  *out = strtod(s, NULL);
  return *out > 0 && *out <= 600 ? 0 : -1;
}

static int parse_int(const char *s, int lo, int hi, int *out) {
  char *end;
  long v = strtol(s, &end, 10);
  if (end == s || *end != '\0' || v < lo || v > hi) return -1;
  *out = (int)v;
  return 0;
}

static void defaults(bench_opts_t *o, int quick) {
  static const int ns[] = {2, 8, 32, 128}, qs[] = {10, 100, 1000};
  static const int qns[] = {2, 8}, qqs[] = {10, 100};
  static const int cs[] = {1, 10, 100}, qcs[] = {1, 4};
  static const int ks[] = {2, 8};
  static const int sms[] = {1, 5, 20}, qsms[] = {1, 5};
  static const int ts[] = {1, 8, 32, 64}, qts[] = {1, 8};
  o->iters = quick ? 100 : 1000;
  o->duration_s = quick ? 0.5 : 3;
  o->reps = quick ? 1 : 3;
  o->n_ns = quick ? 2 : 4;
  memcpy(o->ns, quick ? qns : ns, sizeof(int) * (size_t)o->n_ns);
  o->n_queues = quick ? 2 : 3;
  memcpy(o->queues, quick ? qqs : qs, sizeof(int) * (size_t)o->n_queues);
  o->readers = quick ? 8 : 32;
  o->writers = quick ? 2 : 8;
  o->rounds = quick ? 5 : 50;
  o->kill_rounds = quick ? 1 : 3;
  o->kill_timeout_ms = quick ? 1000 : 2000;
  o->waiters = quick ? 100 : 1000;
  o->pending = quick ? 200 : 10000;
  o->items = quick ? 200 : 2000;
  o->batch = 100;
  o->n_consumers = quick ? 2 : 3;
  memcpy(o->consumers, quick ? qcs : cs, sizeof(int) * (size_t)o->n_consumers);
  o->puts = quick ? 5 : 100;
  o->cas_contenders = 8;
  o->increments = quick ? 10 : 250;
  o->ml_contenders = 8;
  o->n_ml_paths = 2;
  memcpy(o->ml_paths, ks, sizeof ks);
  o->ml_acquisitions = quick ? 5 : 50;
  o->sem_contenders = quick ? 8 : 32;
  o->n_sem_max = quick ? 2 : 3;
  memcpy(o->sem_max, quick ? qsms : sms, sizeof(int) * (size_t)o->n_sem_max);
  o->sem_grants = quick ? 5 : 20;
  o->sem_hold_ms = 0;
  o->n_agg_threads = quick ? 2 : 4;
  memcpy(o->agg_threads, quick ? qts : ts,
         sizeof(int) * (size_t)o->n_agg_threads);
  o->agg_duration_s = quick ? 0.2 : 3;
  o->curator = !quick;
}

enum { OPT_ONLY = 256, OPT_ITERS, OPT_DURATION, OPT_CONTENDERS, OPT_QUEUES,
       OPT_READERS, OPT_WRITERS, OPT_ROUNDS, OPT_KILL_ROUNDS, OPT_KILL_TIMEOUT,
       OPT_WAITERS, OPT_PENDING, OPT_CONFIG, OPT_CSV, OPT_MERGE, OPT_REPS,
       OPT_ITEMS, OPT_BATCH, OPT_CONSUMERS, OPT_PUTS, OPT_KAZOO,
       OPT_KAZOO_SCRIPT, OPT_CAS_CONTENDERS, OPT_INCREMENTS, OPT_CURATOR,
       OPT_CURATOR_SRC, OPT_ML_CONTENDERS, OPT_ML_PATHS, OPT_ML_ACQUISITIONS,
       OPT_SEM_CONTENDERS, OPT_SEM_MAX, OPT_SEM_GRANTS, OPT_SEM_HOLD,
       OPT_AGG_THREADS, OPT_AGG_DURATION };

#define N_SCENARIOS 14
#define ALL_SCENARIOS (((1u << (N_SCENARIOS + 1)) - 1) & ~1u)
static int parse_args(int argc, char **argv, bench_opts_t *o) {
  static const struct option longs[] = {
      {"hosts", required_argument, NULL, 's'},
      {"quick", no_argument, NULL, 'q'},
      {"help", no_argument, NULL, 'h'},
      {"only", required_argument, NULL, OPT_ONLY},
      {"iters", required_argument, NULL, OPT_ITERS},
      {"duration", required_argument, NULL, OPT_DURATION},
      {"reps", required_argument, NULL, OPT_REPS},
      {"contenders", required_argument, NULL, OPT_CONTENDERS},
      {"queues", required_argument, NULL, OPT_QUEUES},
      {"readers", required_argument, NULL, OPT_READERS},
      {"writers", required_argument, NULL, OPT_WRITERS},
      {"rounds", required_argument, NULL, OPT_ROUNDS},
      {"kill-rounds", required_argument, NULL, OPT_KILL_ROUNDS},
      {"kill-timeout", required_argument, NULL, OPT_KILL_TIMEOUT},
      {"waiters", required_argument, NULL, OPT_WAITERS},
      {"pending", required_argument, NULL, OPT_PENDING},
      {"config", required_argument, NULL, OPT_CONFIG},
      {"csv", required_argument, NULL, OPT_CSV},
      {"merge", required_argument, NULL, OPT_MERGE},
      {"items", required_argument, NULL, OPT_ITEMS},
      {"batch", required_argument, NULL, OPT_BATCH},
      {"consumers", required_argument, NULL, OPT_CONSUMERS},
      {"puts", required_argument, NULL, OPT_PUTS},
      {"kazoo", required_argument, NULL, OPT_KAZOO},
      {"kazoo-script", required_argument, NULL, OPT_KAZOO_SCRIPT},
      {"cas-contenders", required_argument, NULL, OPT_CAS_CONTENDERS},
      {"increments", required_argument, NULL, OPT_INCREMENTS},
      {"curator", required_argument, NULL, OPT_CURATOR},
      {"curator-src", required_argument, NULL, OPT_CURATOR_SRC},
      {"ml-contenders", required_argument, NULL, OPT_ML_CONTENDERS},
      {"ml-paths", required_argument, NULL, OPT_ML_PATHS},
      {"ml-acquisitions", required_argument, NULL, OPT_ML_ACQUISITIONS},
      {"sem-contenders", required_argument, NULL, OPT_SEM_CONTENDERS},
      {"sem-max", required_argument, NULL, OPT_SEM_MAX},
      {"sem-grants", required_argument, NULL, OPT_SEM_GRANTS},
      {"sem-hold", required_argument, NULL, OPT_SEM_HOLD},
      {"agg-threads", required_argument, NULL, OPT_AGG_THREADS},
      {"agg-duration", required_argument, NULL, OPT_AGG_DURATION},
      {NULL, 0, NULL, 0}};
  /* --quick first: the other options then override its defaults */
  int quick = 0;
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "-q") == 0 || strcmp(argv[i], "--quick") == 0)
      quick = 1;
  memset(o, 0, sizeof *o);
  defaults(o, quick);
  o->quick = quick;
  o->only = ALL_SCENARIOS;
  int kazoo_set = 0;
#ifdef BENCH_SRCDIR
  o->kazoo_script = BENCH_SRCDIR "/kazoo_bench.py";
  o->curator_src = BENCH_SRCDIR "/CuratorBench.java";
#endif
  o->config = "default";
  o->hosts = getenv("ZKL_TEST_HOSTS");
  if (o->hosts == NULL || *o->hosts == '\0') o->hosts = "127.0.0.1:2181";
  int c, bad = 0;
  while (!bad && (c = getopt_long(argc, argv, "s:qh", longs, NULL)) != -1) {
    int list[BENCH_MAX_LIST], n;
    switch (c) {
    case 's': o->hosts = optarg; break;
    case 'q': break;
    case 'h': usage(stdout); exit(0);
    case OPT_ONLY:
      n = parse_list(optarg, list, BENCH_MAX_LIST);
      o->only = 0;
      for (int i = 0; i < n; i++)
        if (list[i] <= N_SCENARIOS) o->only |= 1u << list[i];
      bad = n <= 0 || o->only == 0;
      break;
    case OPT_ITERS: bad = parse_int(optarg, 1, 1000000, &o->iters); break;
    case OPT_DURATION: bad = parse_seconds(optarg, &o->duration_s); break;
    case OPT_REPS: bad = parse_int(optarg, 1, 100, &o->reps); break;
    case OPT_CONTENDERS:
      bad = (o->n_ns = parse_list(optarg, o->ns, BENCH_MAX_LIST)) <= 0;
      break;
    case OPT_QUEUES:
      bad = (o->n_queues = parse_list(optarg, o->queues, BENCH_MAX_LIST)) <= 0;
      break;
    case OPT_READERS: bad = parse_int(optarg, 1, 1024, &o->readers); break;
    case OPT_WRITERS: bad = parse_int(optarg, 1, 1024, &o->writers); break;
    case OPT_ROUNDS: bad = parse_int(optarg, 1, 100000, &o->rounds); break;
    case OPT_KILL_ROUNDS:
      bad = parse_int(optarg, 0, 100, &o->kill_rounds);
      break;
    case OPT_KILL_TIMEOUT:
      bad = parse_int(optarg, 1000, 60000, &o->kill_timeout_ms);
      break;
    case OPT_WAITERS: bad = parse_int(optarg, 1, 10000, &o->waiters); break;
    case OPT_PENDING: bad = parse_int(optarg, 1, 100000, &o->pending); break;
    case OPT_ITEMS: bad = parse_int(optarg, 1, 20000, &o->items); break;
    case OPT_BATCH: bad = parse_int(optarg, 1, 1000, &o->batch); break;
    case OPT_CONSUMERS:
      bad = parse_list_max(optarg, o->consumers, &o->n_consumers, 1000);
      break;
    case OPT_PUTS: bad = parse_int(optarg, 1, 100000, &o->puts); break;
    case OPT_KAZOO:
      kazoo_set = 1;
      o->kazoo = 0;
      if (strcmp(optarg, "none") == 0) break;
      n = parse_list(optarg, list, BENCH_MAX_LIST);
      for (int i = 0; i < n; i++)
        if (list[i] <= N_SCENARIOS) o->kazoo |= 1u << list[i];
      bad = n <= 0;
      break;
    case OPT_KAZOO_SCRIPT: o->kazoo_script = optarg; break;
    case OPT_CAS_CONTENDERS:
      bad = parse_int(optarg, 1, 256, &o->cas_contenders);
      break;
    case OPT_INCREMENTS:
      bad = parse_int(optarg, 1, 1000000, &o->increments);
      break;
    case OPT_CURATOR:
      o->curator = strcmp(optarg, "yes") == 0;
      bad = !o->curator && strcmp(optarg, "no") != 0;
      break;
    case OPT_CURATOR_SRC: o->curator_src = optarg; break;
    case OPT_ML_CONTENDERS:
      bad = parse_int(optarg, 1, 256, &o->ml_contenders);
      break;
    case OPT_ML_PATHS:
      bad = parse_list_max(optarg, o->ml_paths, &o->n_ml_paths,
                           ZKL_MULTILOCK_MAX);
      break;
    case OPT_ML_ACQUISITIONS:
      bad = parse_int(optarg, 1, 1000000, &o->ml_acquisitions);
      break;
    case OPT_SEM_CONTENDERS:
      bad = parse_int(optarg, 1, 256, &o->sem_contenders);
      break;
    case OPT_SEM_MAX:
      bad = parse_list_max(optarg, o->sem_max, &o->n_sem_max, 1000);
      break;
    case OPT_SEM_GRANTS:
      bad = parse_int(optarg, 1, 1000000, &o->sem_grants);
      break;
    case OPT_SEM_HOLD: bad = parse_int(optarg, 0, 10000, &o->sem_hold_ms); break;
    case OPT_AGG_THREADS:
      bad = parse_list_max(optarg, o->agg_threads, &o->n_agg_threads, 1024);
      break;
    case OPT_AGG_DURATION:
      bad = parse_seconds(optarg, &o->agg_duration_s);
      break;
    case OPT_CONFIG: o->config = optarg; break;
    case OPT_CSV: o->csv_path = optarg; break;
    case OPT_MERGE: o->merge_path = optarg; break;
    default: bad = 1;
    }
  }
  if (bad || optind != argc) {
    usage(stderr);
    return -1;
  }
  /* kazoo's scenarios: what kazoo_bench.py has, unless rows come merged */
  if (!kazoo_set) o->kazoo = o->merge_path != NULL ? 0 : KAZOO_SCENARIOS;
  o->kazoo &= o->only & KAZOO_SCENARIOS;
  return 0;
}

/* ---- the run -------------------------------------------------------------------- */

/* The zkl / curator and zkl / kazoo rows of S1 (latency: below 1 zkl is
 * faster), S3 (handoffs/s: above 1 zkl is faster) and S6 (takeover: below
 * 1 zkl is faster), once the peers' rows are merged. */
static void lock_ratios(const bench_opts_t *o) {
  if (o->only & (1u << 1))
    bench_peer_ratios("1", "cycle", "latency", "latency ratio");
  for (int i = 0; (o->only & (1u << 3)) && i < o->n_ns; i++) {
    char kase[24];
    snprintf(kase, sizeof kase, "N=%d", o->ns[i]);
    bench_peer_ratios("3", kase, "handoffs/s", "handoffs/s ratio");
  }
  if (o->only & (1u << 6))
    bench_peer_ratios("6", "resign", "takeover", "takeover ratio");
}

typedef struct scenario {
  int id;
  void (*run)(const bench_opts_t *o);
} scenario_t;

static const scenario_t scenarios[] = {
    {1, sc_uncontended}, {2, sc_trylock}, {3, sc_contended},
    {4, sc_wake_cost},   {5, sc_rwlock},  {6, sc_election},
    {7, sc_memory}, {8, sc_pending_async}, {9, sc_queue_throughput},
    {10, sc_queue_herd}, {11, sc_counter}, {12, sc_multilock},
    {13, sc_semaphore}, {14, sc_aggregate}};

int main(int argc, char **argv) {
  if (argc == 5 && strcmp(argv[1], "--child-leader") == 0)
    return sc_election_child(argv[2], argv[3], atoi(argv[4]));
  bench_opts_t o;
  if (parse_args(argc, argv, &o) != 0) return 2;
  /* only peers in turns get it (bench/peers.c): one exported by the
   * caller's shell would make the others wait for turns nobody gives */
  unsetenv("ZKL_BENCH_TURNS");
  setvbuf(stdout, NULL, _IOLBF, 0);
  signal(SIGPIPE, SIG_IGN); /* a server closing a 4lw socket early */

  bench_admin = floor_open(o.hosts, 10000);
  if (bench_admin == NULL) {
    fprintf(stderr, "zkl-bench: cannot connect to %s\n", o.hosts);
    return 1;
  }
  if (srv_calibrate(o.hosts) != 0) {
    fprintf(stderr, "zkl-bench: the server at %s does not answer mntr/srvr "
                    "(4lw.commands.whitelist?)\n", o.hosts);
    floor_close(bench_admin);
    return 1;
  }
  snprintf(o.root, sizeof o.root, "/zkl-bench/%ld-%ld", (long)getpid(),
           (long)time(NULL));
  int zrc = bench_mkpath(bench_admin, o.root);
  if (zrc != ZOK) {
    fprintf(stderr, "zkl-bench: cannot create %s: %s\n", o.root, zerror(zrc));
    floor_close(bench_admin);
    return 1;
  }
  printf("zkl-bench %s: server %s, config %s%s\n", zkl_version(), o.hosts,
         o.config, o.quick ? ", quick" : "");

  for (size_t i = 0; i < sizeof scenarios / sizeof *scenarios; i++) {
    if (!(o.only & (1u << scenarios[i].id))) continue;
    int64_t t0 = bench_now_ns();
    printf("running S%d ...\n", scenarios[i].id);
    scenarios[i].run(&o);
    printf("  S%d done in %.1f s\n", scenarios[i].id,
           (double)(bench_now_ns() - t0) / 1e9);
    /* the peers' side, on the same server (S1, S3, S14: in turns, by
     * the scenario itself) */
    if (!(BENCH_TURN_SCENARIOS & (1u << scenarios[i].id)))
      bench_peers_after(&o, scenarios[i].id);
  }
  bench_peers_cleanup();
  if (o.merge_path != NULL) results_merge(o.merge_path);
  lock_ratios(&o); /* after the merge: kazoo's and Curator's rows */
  sc_multilock_ratios(&o);
  sc_semaphore_ratios(&o);
  sc_aggregate_ratios(&o);
  bench_targets(&o); /* after the merge: some need kazoo's rows */

  results_print(stdout, o.config);
  int rc = bench_failures() ? 1 : 0;
  if (o.csv_path != NULL && results_write_csv(o.csv_path, o.config) != 0)
    rc = 1;
  printf("\n%d target(s) missed or not measured; %d error(s)\n",
         targets_missed(), bench_failures());
  bench_rmtree(bench_admin, o.root);
  zoo_delete(bench_admin, "/zkl-bench", -1); /* unless another run uses it */
  floor_close(bench_admin);
  results_free();
  return rc;
}
