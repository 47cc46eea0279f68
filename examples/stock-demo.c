/* examples/stock-demo.c - why zkl exists, in one screen.
 *
 * A stock of items lives in a znode.  Several processes sell items with a
 * read-modify-write: read the stock, if some is left write stock-1.  Run
 * once without a lock (they oversell: two buyers read the same count) and
 * once inside zkl_mutex_lock/unlock (exactly the stock is sold).
 *
 *   stock-demo HOSTS [PROCESSES [ITEMS]]      (defaults: 8 and 100)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>
#include <zkl.h>

struct tally {
  int sold;        /* items the buyers believe they sold */
  int final_stock; /* what the znode says at the end     */
  int min_seen;    /* lowest stock any buyer read        */
  double seconds;
  int failed;      /* a buyer process failed             */
};

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int read_stock(zhandle_t *zh, const char *path, int *out) {
  char buf[32];
  int len = sizeof buf - 1;
  int rc = zoo_get(zh, path, 0, buf, &len, NULL);
  if (rc != ZOK || len < 0) return rc != ZOK ? rc : ZNONODE;
  buf[len] = '\0';
  *out = atoi(buf);
  return ZOK;
}

/* One buyer: sells until the stock says none is left. */
static int buyer(const char *hosts, const char *stock, const char *lock,
                 int use_lock, int *sold, int *min_seen) {
  zkl_session_t *s = NULL;
  zkl_mutex_t *m = NULL;
  int rc = zkl_session_open(&s, hosts, NULL);
  if (rc != 0) {
    fprintf(stderr, "buyer: %s: %s\n", zkl_strerror(rc), zkl_last_error());
    return 1;
  }
  if (use_lock && (rc = zkl_mutex_create(&m, s, lock, NULL)) != 0) {
    fprintf(stderr, "buyer: %s\n", zkl_strerror(rc));
    zkl_session_close(s);
    return 1;
  }
  zhandle_t *zh = zkl_session_zhandle(s);
  for (;;) {
    if (use_lock && (rc = zkl_mutex_lock(m)) != 0) break;
    int left = 0;
    rc = read_stock(zh, stock, &left);
    if (rc == ZOK && left < *min_seen) *min_seen = left;
    if (rc == ZOK && left > 0) {
      char buf[32];
      int n = snprintf(buf, sizeof buf, "%d", left - 1);
      usleep(200); /* the time a real sale takes: widens the race */
      rc = zoo_set(zh, stock, buf, n, -1);
      if (rc == ZOK) (*sold)++;
    }
    if (use_lock) zkl_mutex_unlock(m);
    if (rc != ZOK || left <= 0) break;
  }
  zkl_mutex_destroy(m);
  zkl_session_close(s);
  return rc == ZOK || rc == 0 ? 0 : 1;
}

/* One act: fresh stock, `procs` buyer processes, the tally. */
static struct tally act(const char *hosts, int procs, int items,
                        int use_lock) {
  struct tally t = {0, 0, items, 0, 0};
  char stock[128], lock[160], init[32];
  snprintf(stock, sizeof stock, "/zkl-demo/stock-%ld-%s", (long)getpid(),
           use_lock ? "locked" : "unlocked");
  snprintf(lock, sizeof lock, "%s-lock", stock);
  zkl_session_t *s = NULL;
  if (zkl_session_open(&s, hosts, NULL) != 0) {
    fprintf(stderr, "stock-demo: %s\n", zkl_last_error());
    exit(69);
  }
  zhandle_t *zh = zkl_session_zhandle(s);
  zoo_create(zh, "/zkl-demo", NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  int n = snprintf(init, sizeof init, "%d", items);
  zoo_delete(zh, stock, -1);
  zoo_create(zh, stock, init, n, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  zkl_session_close(s); /* a ZooKeeper handle must not cross fork() */

  int *shared = mmap(NULL, sizeof(int) * 2 * (size_t)procs,
                     PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) exit(71);
  double t0 = now_s();
  for (int i = 0; i < procs; i++) {
    shared[2 * i] = 0;
    shared[2 * i + 1] = items;
    pid_t pid = fork();
    if (pid < 0) exit(71);
    if (pid == 0)
      _exit(buyer(hosts, stock, lock, use_lock, &shared[2 * i],
                  &shared[2 * i + 1]));
  }
  for (int i = 0; i < procs; i++) {
    int status;
    wait(&status);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) t.failed = 1;
  }
  t.seconds = now_s() - t0;
  for (int i = 0; i < procs; i++) {
    t.sold += shared[2 * i];
    if (shared[2 * i + 1] < t.min_seen) t.min_seen = shared[2 * i + 1];
  }
  munmap(shared, sizeof(int) * 2 * (size_t)procs);

  if (zkl_session_open(&s, hosts, NULL) == 0) {
    zh = zkl_session_zhandle(s);
    read_stock(zh, stock, &t.final_stock);
    zoo_delete(zh, stock, -1);
    zkl_session_close(s);
  }
  return t;
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 4 || strcmp(argv[1], "--help") == 0) {
    fprintf(stderr, "usage: %s HOSTS [PROCESSES [ITEMS]]\n", argv[0]);
    return 64;
  }
  const char *hosts = argv[1];
  int procs = argc > 2 ? atoi(argv[2]) : 8;
  int items = argc > 3 ? atoi(argv[3]) : 100;
  if (procs < 1 || procs > 64 || items < 1 || items > 100000) {
    fprintf(stderr, "stock-demo: 1..64 processes and 1..100000 items\n");
    return 64;
  }
  printf("%d items in stock, %d buyer processes, ZooKeeper at %s\n\n", items,
         procs, hosts);
  struct tally raw = act(hosts, procs, items, 0);
  struct tally safe = act(hosts, procs, items, 1);

  printf("%-28s %16s %16s\n", "", "without a lock", "with zkl_mutex");
  printf("%-28s %16d %16d\n", "items sold", raw.sold, safe.sold);
  printf("%-28s %16d %16d\n", "stock left in ZooKeeper", raw.final_stock,
         safe.final_stock);
  printf("%-28s %16d %16d\n", "oversold (sold - stock)", raw.sold - items,
         safe.sold - items);
  printf("%-28s %16d %16d\n", "lowest stock any buyer read", raw.min_seen,
         safe.min_seen);
  printf("%-28s %15.2fs %15.2fs\n", "time", raw.seconds, safe.seconds);
  int ok = !safe.failed && safe.sold == items && safe.final_stock == 0 &&
           safe.min_seen >= 0;
  printf("\n%s\n", ok ? "with zkl_mutex: exactly the stock was sold, never "
                        "below zero."
                      : "UNEXPECTED: the locked run did not sell exactly "
                        "the stock");
  if (raw.sold == items)
    printf("(this time the unlocked run got lucky; run it again)\n");
  return ok ? 0 : 1;
}
