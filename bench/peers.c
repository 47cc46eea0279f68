/* bench/peers.c - the peers' side of a scenario: kazoo (bench/kazoo_bench.py,
 * Debian's /usr/bin/python3 with python3-kazoo) and Curator
 * (bench/CuratorBench.java, compiled with javac into a temporary directory
 * once per run and run with java against Debian's Curator 5.4), run by
 * zkl-bench against the same server, their rows merged into its own.
 *
 * Two ways:
 *  - After ours (bench_peers_after): the peer runs the whole scenario in a
 *    window of its own, right after zkl-bench's: S6, S9-S13.
 *  - In turns (BENCH_TURN_SCENARIOS: S1, S3, S14, the scenarios whose
 *    targets compare zkl with a peer): the scenario starts the peers
 *    (bench_peers_start) with ZKL_BENCH_TURNS=<S1's block> in their
 *    environment.  Before each unit of its work (a case's setup and
 *    warm-up, one run, one S1 block of cycles, S1's counted window) a peer
 *    prints the line "@zkl-turn" on its stdout and waits for a line on its
 *    stdin.  The scenario gives each peer its turn between runs of its own
 *    (bench_peer_turn), so that the runs of every implementation are spread
 *    over the same minutes: the disk's fsync time and the machine's other
 *    load then weigh on the peers as on the floor and zkl, which already
 *    take turns.  A peer idle at a turn only keeps its sessions alive.
 *    The peer's other stdout lines go to our stderr; its rows come in its
 *    CSV at its end (bench_peers_end), as after ours. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#include "bench.h"

extern char **environ;

#define KAZOO_PYTHON "/usr/bin/python3" /* Debian's, where python3-kazoo is */
#define CURATOR_JAR "/usr/share/java/curator-recipes.jar" /* Debian's */
/* slf4j-nop only silences slf4j's "no binding" warning */
#define CURATOR_CP CURATOR_JAR ":/usr/share/java/slf4j-nop.jar"
#define TURN_LINE "@zkl-turn"
/* A unit of a peer's work never takes longer (S3 at N=128 starts 128
 * kazoo processes; a lock waits 60 s at most). */
#define TURN_TIMEOUT_MS (15 * 60 * 1000)

/* ---- helpers ---------------------------------------------------------------------- */

static void list_arg(char *buf, size_t len, const int *v, int n) {
  size_t at = 0;
  buf[0] = '\0';
  for (int i = 0; i < n && at < len; i++)
    at += (size_t)snprintf(buf + at, len - at, "%s%d", i ? "," : "", v[i]);
}

/* Runs argv (argv[0] looked up in PATH; stdout to our stderr: our stdout
 * is the table; quiet: both to /dev/null); its exit status, or -1. */
static int run_child(char *const argv[], int quiet) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (quiet) {
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
  } else {
    posix_spawn_file_actions_adddup2(&fa, 2, 1);
  }
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int st;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A command line being built: words in buffers of its own. */
#define CMD_MAX 64
typedef struct cmdline {
  char word[CMD_MAX][64]; /* the words made here (numbers, lists) */
  char *argv[CMD_MAX + 1];
  int n, words;
} cmdline_t;

static void cmd_add(cmdline_t *c, const char *s) {
  if (c->n < CMD_MAX) c->argv[c->n++] = (char *)s;
  c->argv[c->n] = NULL;
}

/* A word of its own for the next argument (the last one, should they run
 * out: CMD_MAX is more than any command here has). */
static char *cmd_word(cmdline_t *c) {
  return c->word[c->words < CMD_MAX ? c->words++ : CMD_MAX - 1];
}

static void cmd_int(cmdline_t *c, int v) {
  char *w = cmd_word(c);
  snprintf(w, sizeof c->word[0], "%d", v);
  cmd_add(c, w);
}

static void cmd_seconds(cmdline_t *c, double v) {
  char *w = cmd_word(c);
  snprintf(w, sizeof c->word[0], "%g", v);
  cmd_add(c, w);
}

static void cmd_list(cmdline_t *c, const int *v, int n) {
  char *w = cmd_word(c);
  list_arg(w, sizeof c->word[0], v, n);
  cmd_add(c, w);
}

/* A temporary file for a peer's CSV, in csv.  0 or -1 (reported). */
static int temp_csv(char *csv, size_t len, const char *who) {
  const char *tmp = getenv("TMPDIR");
  snprintf(csv, len, "%s/zkl-bench-%s.XXXXXX",
           tmp != NULL && *tmp != '\0' ? tmp : "/tmp", who);
  int fd = mkstemp(csv);
  if (fd < 0) {
    bench_fail("%s: cannot make a temporary file: %s", who, strerror(errno));
    return -1;
  }
  close(fd);
  return 0;
}

/* Merges a peer's CSV, if it wrote one, and removes it. */
static void merge_csv(const char *csv) {
  struct stat st;
  if (stat(csv, &st) == 0 && st.st_size > 0) results_merge(csv);
  unlink(csv);
}

/* ---- kazoo ------------------------------------------------------------------------ */

/* Whether kazoo can run here: the script, the python, its kazoo.  Once. */
static int kazoo_ready(const bench_opts_t *o) {
  static int ready = -1;
  if (ready >= 0) return ready;
  char *check[] = {KAZOO_PYTHON, "-c", "import kazoo.client", NULL};
  if (o->kazoo_script == NULL || access(o->kazoo_script, R_OK) != 0) {
    bench_note("no kazoo_bench.py (--kazoo-script): kazoo rows stay empty");
    ready = 0;
  } else if (run_child(check, 1) != 0) {
    bench_note("%s has no kazoo (apt-get install python3-kazoo): kazoo rows "
               "stay empty", KAZOO_PYTHON);
    ready = 0;
  } else {
    ready = 1;
  }
  return ready;
}

/* "--flag value" pairs. */
static void opt_int(cmdline_t *c, const char *flag, int v) {
  cmd_add(c, flag);
  cmd_int(c, v);
}

static void opt_seconds(cmdline_t *c, const char *flag, double v) {
  cmd_add(c, flag);
  cmd_seconds(c, v);
}

static void opt_list(cmdline_t *c, const char *flag, const int *v, int n) {
  cmd_add(c, flag);
  cmd_list(c, v, n);
}

/* kazoo_bench.py --only id, with this run's figures. */
static void kazoo_cmd(cmdline_t *c, const bench_opts_t *o, int id,
                      const char *csv) {
  c->n = c->words = 0;
  cmd_add(c, KAZOO_PYTHON);
  cmd_add(c, o->kazoo_script);
  cmd_add(c, "-s");
  cmd_add(c, o->hosts);
  opt_int(c, "--only", id);
  cmd_add(c, "--csv");
  cmd_add(c, csv);
  cmd_add(c, "--no-table");
  opt_int(c, "--iters", o->iters);
  opt_seconds(c, "--duration", o->duration_s);
  opt_int(c, "--reps", o->reps);
  opt_list(c, "--contenders", o->ns, o->n_ns);
  opt_int(c, "--rounds", o->rounds);
  opt_int(c, "--kill-rounds", o->kill_rounds);
  opt_int(c, "--kill-timeout", o->kill_timeout_ms);
  opt_int(c, "--items", o->items);
  opt_int(c, "--batch", o->batch);
  opt_list(c, "--consumers", o->consumers, o->n_consumers);
  opt_int(c, "--puts", o->puts);
  opt_int(c, "--cas-contenders", o->cas_contenders);
  opt_int(c, "--increments", o->increments);
  opt_int(c, "--ml-contenders", o->ml_contenders);
  opt_list(c, "--ml-paths", o->ml_paths, o->n_ml_paths);
  opt_int(c, "--ml-acquisitions", o->ml_acquisitions);
  opt_int(c, "--sem-contenders", o->sem_contenders);
  opt_list(c, "--sem-max", o->sem_max, o->n_sem_max);
  opt_int(c, "--sem-grants", o->sem_grants);
  opt_int(c, "--sem-hold", o->sem_hold_ms);
  opt_list(c, "--agg-threads", o->agg_threads, o->n_agg_threads);
  opt_seconds(c, "--agg-duration", o->agg_duration_s);
}

/* ---- Curator ---------------------------------------------------------------------- */

static char curator_dir[512]; /* CuratorBench.class, "" until compiled */

/* Whether Curator can run here: the source, javac, java, the jars; and
 * CuratorBench compiled into a temporary directory.  Once. */
static int curator_ready(const bench_opts_t *o) {
  static int ready = -1;
  if (ready >= 0) return ready;
  ready = 0;
  char *jv[] = {"java", "-version", NULL}, *jcv[] = {"javac", "-version", NULL};
  if (o->curator_src == NULL || access(o->curator_src, R_OK) != 0) {
    bench_note("no CuratorBench.java (--curator-src): curator rows stay "
               "empty");
  } else if (run_child(jcv, 1) != 0 || run_child(jv, 1) != 0) {
    bench_note("no javac or java (apt-get install default-jdk-headless): "
               "curator rows stay empty");
  } else if (access(CURATOR_JAR, R_OK) != 0) {
    bench_note("no %s (apt-get install libcurator-recipes-java): curator "
               "rows stay empty", CURATOR_JAR);
  } else {
    const char *tmp = getenv("TMPDIR");
    snprintf(curator_dir, sizeof curator_dir, "%s/zkl-bench-curator.XXXXXX",
             tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
    if (mkdtemp(curator_dir) == NULL) {
      bench_fail("curator: cannot make a temporary directory: %s",
                 strerror(errno));
      curator_dir[0] = '\0';
      return ready;
    }
    char *argv[] = {"javac", "-nowarn", "-d", curator_dir, "-cp",
                    CURATOR_JAR, (char *)o->curator_src, NULL};
    int64_t t0 = bench_now_ns();
    int rc = run_child(argv, 0);
    if (rc != 0) bench_fail("javac %s: exit status %d", o->curator_src, rc);
    else
      printf("  CuratorBench.java compiled in %.1f s\n",
             (double)(bench_now_ns() - t0) / 1e9);
    ready = rc == 0;
  }
  return ready;
}

void bench_peers_cleanup(void) {
  if (curator_dir[0] == '\0') return;
  DIR *d = opendir(curator_dir);
  if (d != NULL) {
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
        continue;
      char f[1024];
      snprintf(f, sizeof f, "%s/%s", curator_dir, e->d_name);
      unlink(f);
    }
    closedir(d);
  }
  rmdir(curator_dir);
  curator_dir[0] = '\0';
}

/* java -cp CP CuratorBench [MODE] HOSTS ROOT ARGS... CSV: the mode names
 * the scenario (none: S11), ARGS are its figures. */
static void curator_cmd(cmdline_t *c, char *cp, size_t cp_len,
                        const bench_opts_t *o, int id, const char *csv) {
  snprintf(cp, cp_len, "%s:%s", CURATOR_CP, curator_dir);
  c->n = c->words = 0;
  cmd_add(c, "java");
  cmd_add(c, "-cp");
  cmd_add(c, cp);
  cmd_add(c, "CuratorBench");
  switch (id) {
  case 1: /* cycle HOSTS ROOT ITERS CSV */
    cmd_add(c, "cycle");
    break;
  case 3: cmd_add(c, "handoff"); break;
  case 6: cmd_add(c, "election"); break;
  case 12: cmd_add(c, "multilock"); break;
  case 13: cmd_add(c, "semaphore"); break;
  case 14: cmd_add(c, "aggregate"); break;
  default: break; /* 11 */
  }
  cmd_add(c, o->hosts);
  cmd_add(c, o->root);
  switch (id) {
  case 1: cmd_int(c, o->iters); break;
  case 3: /* handoff NS DURATION REPS */
    cmd_list(c, o->ns, o->n_ns);
    cmd_seconds(c, o->duration_s);
    cmd_int(c, o->reps);
    break;
  case 6: cmd_int(c, o->rounds); break; /* election ROUNDS */
  case 11: /* CONTENDERS INCREMENTS REPS CAP_S */
    cmd_int(c, o->cas_contenders);
    cmd_int(c, o->increments);
    cmd_int(c, o->reps);
    cmd_int(c, BENCH_S11_CAP_S);
    break;
  case 12: /* multilock CONTENDERS ACQUISITIONS REPS CAP_S KS */
    cmd_int(c, o->ml_contenders);
    cmd_int(c, o->ml_acquisitions);
    cmd_int(c, o->reps);
    cmd_int(c, BENCH_S12_CAP_S);
    cmd_list(c, o->ml_paths, o->n_ml_paths);
    break;
  case 13: /* semaphore CONTENDERS GRANTS REPS CAP_S MAXES HOLD_MS */
    cmd_int(c, o->sem_contenders);
    cmd_int(c, o->sem_grants);
    cmd_int(c, o->reps);
    cmd_int(c, BENCH_S13_CAP_S);
    cmd_list(c, o->sem_max, o->n_sem_max);
    cmd_int(c, o->sem_hold_ms);
    break;
  default: /* 14: aggregate THREADS DURATION REPS */
    cmd_list(c, o->agg_threads, o->n_agg_threads);
    cmd_seconds(c, o->agg_duration_s);
    cmd_int(c, o->reps);
  }
  cmd_add(c, csv);
}

/* Whether peer `who` ("kazoo", "curator") takes part in scenario id. */
static int peer_runs(const bench_opts_t *o, const char *who, int id) {
  if (strcmp(who, "kazoo") == 0)
    return (o->kazoo & (1u << id)) && kazoo_ready(o);
  return (CURATOR_SCENARIOS & (1u << id)) && o->curator && curator_ready(o);
}

/* The command of peer `who` for scenario id. */
static void peer_cmd(cmdline_t *c, char *cp, size_t cp_len,
                     const bench_opts_t *o, const char *who, int id,
                     const char *csv) {
  if (strcmp(who, "kazoo") == 0) kazoo_cmd(c, o, id, csv);
  else curator_cmd(c, cp, cp_len, o, id, csv);
}

static const char *const peer_names[] = {"kazoo", "curator"};

/* ---- after ours ------------------------------------------------------------------- */

void bench_peers_after(const bench_opts_t *o, int id) {
  for (size_t k = 0; k < sizeof peer_names / sizeof *peer_names; k++) {
    const char *who = peer_names[k];
    if (!peer_runs(o, who, id)) continue;
    char csv[512], cp[1024];
    if (temp_csv(csv, sizeof csv, who) != 0) continue;
    cmdline_t c;
    peer_cmd(&c, cp, sizeof cp, o, who, id, csv);
    int64_t t0 = bench_now_ns();
    int rc = run_child(c.argv, 0);
    if (rc != 0) bench_fail("%s's S%d: exit status %d", who, id, rc);
    merge_csv(csv);
    printf("  S%d %s done in %.1f s\n", id, who,
           (double)(bench_now_ns() - t0) / 1e9);
  }
}

/* ---- in turns --------------------------------------------------------------------- */

/* Ends p's process (ours): waits for it, or kills it first (kill).  Its
 * exit status, or -1. */
static int peer_reap(bench_peer_t *p, int kill_it) {
  if (p->pid <= 0) return p->status;
  if (kill_it) kill(p->pid, SIGKILL);
  int st;
  pid_t r;
  while ((r = waitpid(p->pid, &st, 0)) < 0 && errno == EINTR) {
  }
  p->status = r < 0                ? -1
              : WIFEXITED(st)      ? WEXITSTATUS(st)
                                   : 128 + WTERMSIG(st);
  p->pid = 0;
  if (p->to >= 0) close(p->to);
  if (p->from >= 0) close(p->from);
  p->to = p->from = -1;
  return p->status;
}

/* Reads p's stdout until it waits at a turn (0), or until its end (-1:
 * EOF, reaped).  Its other lines go to our stderr. */
static int peer_wait_turn(bench_peer_t *p) {
  int64_t deadline = bench_now_ns() + (int64_t)TURN_TIMEOUT_MS * 1000000;
  for (;;) {
    char *nl;
    while ((nl = memchr(p->buf, '\n', p->len)) != NULL) {
      size_t line = (size_t)(nl - p->buf) + 1;
      int turn = line == sizeof TURN_LINE &&
                 memcmp(p->buf, TURN_LINE, sizeof TURN_LINE - 1) == 0;
      if (!turn) fwrite(p->buf, 1, line, stderr);
      memmove(p->buf, p->buf + line, p->len - line);
      p->len -= line;
      if (turn) return 0;
    }
    if (p->len == sizeof p->buf) { /* a line too long: pass it on */
      fwrite(p->buf, 1, p->len, stderr);
      p->len = 0;
    }
    int64_t left_ms = (deadline - bench_now_ns()) / 1000000;
    struct pollfd pfd = {p->from, POLLIN, 0};
    int n = left_ms > 0 ? poll(&pfd, 1, (int)left_ms) : 0;
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) {
      bench_fail("%s's S%d: no turn ended in %d s: killed", p->name, p->id,
                 TURN_TIMEOUT_MS / 1000);
      peer_reap(p, 1);
      return -1;
    }
    ssize_t got = n < 0 ? -1 : read(p->from, p->buf + p->len,
                                    sizeof p->buf - p->len);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) { /* its end (EOF), or a broken pipe: ended for sure */
      if (p->len > 0) fwrite(p->buf, 1, p->len, stderr);
      p->len = 0;
      peer_reap(p, got < 0);
      return -1;
    }
    p->len += (size_t)got;
  }
}

/* Starts peer `who` of scenario id in turn mode, and waits until it waits
 * at its first turn.  0, or -1 (reported). */
static int peer_start(bench_peer_t *p, const bench_opts_t *o, const char *who,
                      int id) {
  memset(p, 0, sizeof *p);
  p->name = who;
  p->id = id;
  p->to = p->from = -1;
  if (temp_csv(p->csv, sizeof p->csv, who) != 0) return -1;
  cmdline_t c;
  char cp[1024];
  peer_cmd(&c, cp, sizeof cp, o, who, id, p->csv);
  /* the environment, and the turns: ZKL_BENCH_TURNS=<S1's block> */
  size_t n_env = 0;
  while (environ[n_env] != NULL) n_env++;
  char **env = calloc(n_env + 2, sizeof *env), turns[64];
  int in[2] = {-1, -1}, out[2] = {-1, -1};
  if (env == NULL || pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
    bench_fail("%s: cannot start: %s", who, strerror(errno));
    goto fail;
  }
  size_t k = 0;
  for (size_t i = 0; i < n_env; i++)
    if (strncmp(environ[i], "ZKL_BENCH_TURNS=", 16) != 0)
      env[k++] = environ[i];
  snprintf(turns, sizeof turns, "ZKL_BENCH_TURNS=%d", BENCH_TURN_BLOCK);
  env[k++] = turns;
  env[k] = NULL;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  int rc = posix_spawnp(&p->pid, c.argv[0], &fa, NULL, c.argv, env);
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(out[1]);
  in[0] = out[1] = -1;
  if (rc != 0) {
    bench_fail("%s: cannot start %s: %s", who, c.argv[0], strerror(rc));
    p->pid = 0;
    goto fail;
  }
  p->to = in[1];
  p->from = out[0];
  in[1] = out[0] = -1;
  free(env);
  p->t0 = bench_now_ns();
  if (peer_wait_turn(p) != 0) {
    bench_fail("%s's S%d ended before its first turn (exit status %d)", who,
               id, p->status);
    unlink(p->csv);
    return -1;
  }
  return 0;
fail:
  for (int i = 0; i < 2; i++) {
    if (in[i] >= 0) close(in[i]);
    if (out[i] >= 0) close(out[i]);
  }
  free(env);
  unlink(p->csv);
  return -1;
}

void bench_peers_start(bench_peers_t *ps, const bench_opts_t *o, int id) {
  memset(ps, 0, sizeof *ps);
  for (size_t k = 0; k < sizeof peer_names / sizeof *peer_names; k++)
    if (peer_runs(o, peer_names[k], id) &&
        peer_start(&ps->p[ps->n], o, peer_names[k], id) == 0)
      ps->n++;
}

void bench_peer_turn(bench_peer_t *p) {
  if (p->pid <= 0) { /* it ended: reported at bench_peers_end */
    p->missed++;
    return;
  }
  static const char go[] = "go\n";
  /* a peer gone meanwhile: EPIPE (SIGPIPE is ignored), then EOF below */
  if (write(p->to, go, sizeof go - 1) == (ssize_t)(sizeof go - 1)) p->turns++;
  peer_wait_turn(p);
}

void bench_peers_turn(bench_peers_t *ps) {
  for (int i = 0; ps != NULL && i < ps->n; i++) bench_peer_turn(&ps->p[i]);
}

/* Ends p: EOF on its stdin, then its exit (it leaves its turn's wait with
 * an error); killed should it not end within a unit's time. */
static void peer_stop(bench_peer_t *p) {
  if (p->to >= 0) close(p->to);
  p->to = -1;
  while (p->pid > 0 && peer_wait_turn(p) == 0) {
  }
}

void bench_peers_stop(bench_peers_t *ps) {
  for (int i = 0; ps != NULL && i < ps->n; i++) {
    bench_peer_t *p = &ps->p[i];
    if (p->stopped) continue;
    p->stopped = 1;
    if (p->pid > 0)
      bench_note("%s's S%d stopped: a run of zkl-bench's own failed", p->name,
                 p->id);
    peer_stop(p);
    unlink(p->csv);
  }
}

void bench_peers_end(bench_peers_t *ps) {
  for (int i = 0; ps != NULL && i < ps->n; i++) {
    bench_peer_t *p = &ps->p[i];
    if (p->stopped) continue;
    if (p->missed > 0)
      bench_fail("%s's S%d ended %d turns early", p->name, p->id, p->missed);
    if (p->pid > 0) {
      /* it still waits at a turn: it counted more units of work than the
       * scenario gave it.  EOF on its stdin ends it. */
      bench_fail("%s's S%d still waits for a turn after %d: its units and "
                 "zkl-bench's do not match", p->name, p->id, p->turns);
      peer_stop(p);
    }
    if (p->status != 0)
      bench_fail("%s's S%d: exit status %d", p->name, p->id, p->status);
    merge_csv(p->csv);
    printf("  S%d %s: %d turns over %.1f s\n", p->id, p->name, p->turns,
           (double)(bench_now_ns() - p->t0) / 1e9);
  }
  if (ps != NULL) ps->n = 0;
}
