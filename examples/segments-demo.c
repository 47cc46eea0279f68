/* examples/segments-demo.c - act 4 of scripts/demo: the "segmented lock".
 *
 * Act 1's stock (one znode, sold with a read-modify-write inside one
 * zkl_mutex) is split into SEGMENTS znodes, each with its own zkl_mutex,
 * and a zkl semaphore with as many leases as segments admits buyers:
 *
 *   acquire 1 lease  ->  trylock the segments in turn, take a free one
 *   ->  read it, write it - 1  ->  unlock  ->  release the lease
 *
 * What does what: the SEGMENT MUTEXES alone make it correct (each
 * read-modify-write is exclusive on its segment, so no segment is sold
 * below 0 and the total sold is exactly the stock).  The SEMAPHORE is
 * admission control: with no more buyers inside than segments, and a
 * segment unlocked before its lease is released, a lease holder always
 * finds a free segment with trylock (at most SEGMENTS-1 others hold one)
 * and never waits in a segment's lock queue; all waiting is in one line,
 * in arrival order.  It adds ZooKeeper work to every sale (its gate is one
 * more lock queue, and a lease node) -- which is why the third run, the
 * same segments without the semaphore (buyer i queues on segment
 * i % SEGMENTS and moves on once it is empty), is shown too.
 *
 * Three runs, BUYERS processes each, fresh stock each time:
 *   one zkl_mutex        the whole stock in one znode (act 1's way)
 *   segments + sem       as above
 *   segments, no sem     blocking zkl_mutex_timedlock on a fixed segment
 *
 *   segments-demo HOSTS [BUYERS [ITEMS [SEGMENTS]]]   (20, 100, 5)
 *
 * Prints a table and one line "check: ..." per run; exit status 0 when
 * every run sold exactly the stock, no segment was read below 0, no
 * segment had two holders and no more than SEGMENTS leases were held at
 * once (as seen by the buyers); 1 otherwise; 64 usage; 69/71 setup.
 * Every wait is bounded (30 s per lock or lease, 120 s per buyer). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>
#include <zkl.h>

#define MAX_BUYERS 64
#define MAX_SEGS 16
#define WAIT_MS 30000      /* one lock or lease */
#define BUYER_MS 120000.0  /* one buyer, all told */

enum mode { ONE, SEGS_SEM, SEGS };

/* Shared by the buyer processes (MAP_SHARED), updated atomically.  The
 * "in" counters are raised after a lock/lease is granted and lowered
 * before it is given back: a subset of the real hold, so a maximum seen
 * here is at most the real one. */
struct shm {
  int sold[MAX_BUYERS];
  int min_seen[MAX_SEGS]; /* lowest stock read in each segment */
  int in_seg[MAX_SEGS], max_in_seg[MAX_SEGS];
  int in_sem, max_in_sem;
  int in_sell, max_in_sell; /* buyers in a critical section, any segment */
  int no_free;            /* lease held, every segment busy: scan again */
};

struct run {
  enum mode mode;
  int segs;
  int sold, left, min_seen, max_in_seg, max_in_sem, max_in_sell, no_free,
      failed;
  double seconds;
};

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void atomic_max(int *p, int v) {
  int cur = __atomic_load_n(p, __ATOMIC_SEQ_CST);
  while (v > cur && !__atomic_compare_exchange_n(p, &cur, v, 0,
                                                 __ATOMIC_SEQ_CST,
                                                 __ATOMIC_SEQ_CST)) {
  }
}

static void atomic_min(int *p, int v) {
  int cur = __atomic_load_n(p, __ATOMIC_SEQ_CST);
  while (v < cur && !__atomic_compare_exchange_n(p, &cur, v, 0,
                                                 __ATOMIC_SEQ_CST,
                                                 __ATOMIC_SEQ_CST)) {
  }
}

static void enter(int *in, int *max) {
  atomic_max(max, __atomic_add_fetch(in, 1, __ATOMIC_SEQ_CST));
}

static void leave(int *in) { __atomic_sub_fetch(in, 1, __ATOMIC_SEQ_CST); }

static int read_stock(zhandle_t *zh, const char *path, int *out) {
  char buf[32];
  int len = sizeof buf - 1;
  int rc = zoo_get(zh, path, 0, buf, &len, NULL);
  if (rc != ZOK || len < 0) return rc != ZOK ? rc : ZNONODE;
  buf[len] = '\0';
  *out = atoi(buf);
  return ZOK;
}

/* The critical section, as in act 1: read the segment's stock, and if some
 * is left write stock-1.  *empty is set when none was left.  ZOK or
 * ZooKeeper's code. */
static int sell_one(zhandle_t *zh, const char *stock, struct shm *sh, int seg,
                    int *sold, int *empty) {
  int left = 0;
  int rc = read_stock(zh, stock, &left);
  if (rc != ZOK) return rc;
  atomic_min(&sh->min_seen[seg], left);
  if (left <= 0) {
    *empty = 1;
    return ZOK;
  }
  char buf[32];
  int n = snprintf(buf, sizeof buf, "%d", left - 1);
  usleep(200); /* the time a real sale takes, as in act 1 */
  rc = zoo_set(zh, stock, buf, n, -1);
  if (rc == ZOK) (*sold)++;
  return rc;
}

static void names(char *buf, size_t len, const char *base, const char *what,
                  int i) {
  snprintf(buf, len, "%s-%s-%d", base, what, i);
}

/* One buyer process: sells until every segment it knows of is empty. */
static int buyer(const char *hosts, const char *base, enum mode mode,
                 int segs, int idx, struct shm *sh) {
  zkl_session_t *s = NULL;
  zkl_mutex_t *m[MAX_SEGS] = {0};
  zkl_sem_t *sem = NULL;
  char stock[MAX_SEGS][160], path[200];
  int empty[MAX_SEGS] = {0}, nempty = 0, bad = 0, rc;
  if ((rc = zkl_session_open(&s, hosts, NULL)) != 0) {
    fprintf(stderr, "buyer %d: %s: %s\n", idx, zkl_strerror(rc),
            zkl_last_error());
    return 1;
  }
  for (int i = 0; i < segs; i++) {
    names(stock[i], sizeof stock[i], base, "stock", i);
    names(path, sizeof path, base, "lock", i);
    if ((rc = zkl_mutex_create(&m[i], s, path, NULL)) != 0) bad = 1;
  }
  if (!bad && mode == SEGS_SEM) {
    zkl_sem_opts_t o;
    zkl_sem_opts_init(&o);
    o.max = segs; /* one lease per segment */
    snprintf(path, sizeof path, "%s-sem", base);
    if ((rc = zkl_sem_create(&sem, s, path, &o)) != 0) bad = 1;
  }
  zhandle_t *zh = zkl_session_zhandle(s);
  double deadline = now_s() + BUYER_MS / 1000.0;
  int start = idx % segs;
  while (!bad && nempty < segs) {
    if (now_s() > deadline) {
      fprintf(stderr, "buyer %d: still selling after %.0f s\n", idx,
              BUYER_MS / 1000.0);
      bad = 1;
      break;
    }
    int seg = -1, now_empty = 0;
    zkl_lease_t lease;
    if (mode == SEGS_SEM) {
      if ((rc = zkl_sem_acquire(sem, 1, WAIT_MS, &lease)) != 0) {
        fprintf(stderr, "buyer %d: acquire: %s\n", idx, zkl_strerror(rc));
        bad = 1;
        break;
      }
      enter(&sh->in_sem, &sh->max_in_sem);
      /* a free segment: the first the trylock scan gets */
      for (int k = 0; k < segs && seg < 0; k++) {
        int i = (start + k) % segs;
        if (empty[i]) continue;
        rc = zkl_mutex_trylock(m[i]);
        if (rc == 0) seg = i;
        else if (rc != ZKL_EBUSY) {
          fprintf(stderr, "buyer %d: trylock: %s\n", idx, zkl_strerror(rc));
          bad = 1;
          break;
        }
      }
      if (seg < 0) {
        if (!bad) __atomic_add_fetch(&sh->no_free, 1, __ATOMIC_SEQ_CST);
        leave(&sh->in_sem);
        zkl_sem_release(sem, &lease, 1);
        continue;
      }
    } else {
      /* the first segment not known empty, from this buyer's own */
      for (int k = 0; k < segs && seg < 0; k++)
        if (!empty[(start + k) % segs]) seg = (start + k) % segs;
      if ((rc = zkl_mutex_timedlock(m[seg], WAIT_MS)) != 0) {
        fprintf(stderr, "buyer %d: lock: %s\n", idx, zkl_strerror(rc));
        bad = 1;
        break;
      }
    }
    enter(&sh->in_seg[seg], &sh->max_in_seg[seg]);
    enter(&sh->in_sell, &sh->max_in_sell);
    rc = sell_one(zh, stock[seg], sh, seg, &sh->sold[idx], &now_empty);
    leave(&sh->in_sell);
    leave(&sh->in_seg[seg]);
    if (rc != ZOK) {
      fprintf(stderr, "buyer %d: %s: %s\n", idx, stock[seg], zerror(rc));
      bad = 1;
    }
    /* the segment first, then the lease: a lease holder then always
     * finds a segment free */
    if ((rc = zkl_mutex_unlock(m[seg])) != 0) {
      fprintf(stderr, "buyer %d: unlock: %s\n", idx, zkl_strerror(rc));
      bad = 1;
    }
    if (mode == SEGS_SEM) {
      leave(&sh->in_sem);
      if ((rc = zkl_sem_release(sem, &lease, 1)) != 0) {
        fprintf(stderr, "buyer %d: release: %s\n", idx, zkl_strerror(rc));
        bad = 1;
      }
    }
    if (now_empty && !empty[seg]) {
      empty[seg] = 1; /* stock only goes down: empty for good */
      nempty++;
    }
  }
  zkl_sem_destroy(sem);
  for (int i = 0; i < segs; i++) zkl_mutex_destroy(m[i]);
  zkl_session_close(s);
  return bad;
}

static struct run run(const char *hosts, enum mode mode, int buyers,
                      int items, int segs) {
  struct run r = {mode, segs, 0, 0, items, 0, 0, 0, 0, 0, 0};
  static const char *tag[] = {"one", "segs-sem", "segs"};
  char base[128], path[160], init[32];
  snprintf(base, sizeof base, "/zkl-demo/segments-%ld-%s", (long)getpid(),
           tag[mode]);
  zkl_session_t *s = NULL;
  if (zkl_session_open(&s, hosts, NULL) != 0) {
    fprintf(stderr, "segments-demo: %s\n", zkl_last_error());
    exit(69);
  }
  zhandle_t *zh = zkl_session_zhandle(s);
  zoo_create(zh, "/zkl-demo", NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  for (int i = 0; i < segs; i++) { /* items split as evenly as can be */
    int n = snprintf(init, sizeof init, "%d",
                     items / segs + (i < items % segs ? 1 : 0));
    names(path, sizeof path, base, "stock", i);
    zoo_delete(zh, path, -1);
    if (zoo_create(zh, path, init, n, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0) !=
        ZOK) {
      fprintf(stderr, "segments-demo: cannot create %s\n", path);
      exit(69);
    }
  }
  zkl_session_close(s); /* a ZooKeeper handle must not cross fork() */

  struct shm *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED) exit(71);
  memset(sh, 0, sizeof *sh);
  for (int i = 0; i < segs; i++) sh->min_seen[i] = items;
  double t0 = now_s();
  for (int i = 0; i < buyers; i++) {
    pid_t pid = fork();
    if (pid < 0) exit(71);
    if (pid == 0) _exit(buyer(hosts, base, mode, segs, i, sh));
  }
  for (int i = 0; i < buyers; i++) {
    int status;
    wait(&status);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) r.failed = 1;
  }
  r.seconds = now_s() - t0;
  for (int i = 0; i < buyers; i++) r.sold += sh->sold[i];
  for (int i = 0; i < segs; i++) {
    if (sh->min_seen[i] < r.min_seen) r.min_seen = sh->min_seen[i];
    if (sh->max_in_seg[i] > r.max_in_seg) r.max_in_seg = sh->max_in_seg[i];
  }
  r.max_in_sem = sh->max_in_sem;
  r.max_in_sell = sh->max_in_sell;
  r.no_free = sh->no_free;
  munmap(sh, sizeof *sh);

  if (zkl_session_open(&s, hosts, NULL) == 0) {
    zh = zkl_session_zhandle(s);
    for (int i = 0; i < segs; i++) {
      int left = 0;
      names(path, sizeof path, base, "stock", i);
      if (read_stock(zh, path, &left) != ZOK) r.failed = 1;
      if (left < r.min_seen) r.min_seen = left;
      r.left += left;
      zoo_delete(zh, path, -1);
    }
    zkl_session_close(s);
  } else {
    r.failed = 1;
  }
  return r;
}

static int check(const struct run *r, int items, const char *what) {
  int ok = !r->failed && r->sold == items && r->left == 0 &&
           r->min_seen >= 0 && r->max_in_seg <= 1 &&
           r->max_in_sem <= (r->mode == SEGS_SEM ? r->segs : 0);
  printf("check: %s: %s: sold %d of %d, left %d, lowest %d, most holders "
         "of a segment %d, most leases held %d\n",
         what, ok ? "ok" : "FAILED", r->sold, items, r->left, r->min_seen,
         r->max_in_seg, r->max_in_sem);
  return ok;
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 5 || strcmp(argv[1], "--help") == 0) {
    fprintf(stderr, "usage: %s HOSTS [BUYERS [ITEMS [SEGMENTS]]]\n",
            argv[0]);
    return 64;
  }
  const char *hosts = argv[1];
  int buyers = argc > 2 ? atoi(argv[2]) : 20;
  int items = argc > 3 ? atoi(argv[3]) : 100;
  int segs = argc > 4 ? atoi(argv[4]) : 5;
  if (buyers < 1 || buyers > MAX_BUYERS || items < 1 || items > 100000 ||
      segs < 2 || segs > MAX_SEGS || items < segs) {
    fprintf(stderr, "segments-demo: 1..%d buyers, 2..%d segments, "
            "SEGMENTS..100000 items\n", MAX_BUYERS, MAX_SEGS);
    return 64;
  }
  printf("%d items in stock, %d buyer processes, ZooKeeper at %s\n\n", items,
         buyers, hosts);
  fflush(stdout);
  struct run one = run(hosts, ONE, buyers, items, 1);
  struct run sem = run(hosts, SEGS_SEM, buyers, items, segs);
  struct run seg = run(hosts, SEGS, buyers, items, segs);

  char h1[32], h2[32], h3[32];
  snprintf(h1, sizeof h1, "one zkl_mutex");
  snprintf(h2, sizeof h2, "%d segs + sem(%d)", segs, segs);
  snprintf(h3, sizeof h3, "%d segs, no sem", segs);
  printf("%-30s %16s %16s %16s\n", "", h1, h2, h3);
  printf("%-30s %16d %16d %16d\n", "items sold", one.sold, sem.sold,
         seg.sold);
  printf("%-30s %16d %16d %16d\n", "stock left in ZooKeeper", one.left,
         sem.left, seg.left);
  printf("%-30s %16d %16d %16d\n", "lowest stock any buyer read",
         one.min_seen, sem.min_seen, seg.min_seen);
  printf("%-30s %16d %16d %16d\n", "most buyers selling at once",
         one.max_in_sell, sem.max_in_sell, seg.max_in_sell);
  printf("%-30s %16s %16d %16s\n", "leases held at once (most)", "-",
         sem.max_in_sem, "-");
  printf("%-30s %16s %16d %16s\n", "lease but no free segment", "-",
         sem.no_free, "-");
  printf("%-30s %15.2fs %15.2fs %15.2fs\n", "time", one.seconds,
         sem.seconds, seg.seconds);
  printf("%-30s %16.0f %16.0f %16.0f\n", "items/s", one.sold / one.seconds,
         sem.sold / sem.seconds, seg.sold / seg.seconds);
  printf("%-30s %16s %15.2fx %15.2fx\n", "throughput vs one mutex", "1.00x",
         (sem.sold / sem.seconds) / (one.sold / one.seconds),
         (seg.sold / seg.seconds) / (one.sold / one.seconds));
  printf("\n");
  int ok = check(&one, items, "one zkl_mutex");
  ok &= check(&sem, items, "segments + semaphore");
  ok &= check(&seg, items, "segments, no semaphore");
  return ok ? 0 : 1;
}
