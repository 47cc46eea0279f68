/* tests/integration/util.c - helpers shared by the integration suites. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"

TCase *it_tcase(const char *name) {
  TCase *tc = tcase_create(name);
  tcase_set_timeout(tc, IT_TIMEOUT);
  return tc;
}

const char *it_hosts(void) {
  const char *h = getenv("ZKL_TEST_HOSTS");
  ck_assert_msg(h != NULL && h[0] != '\0',
                "ZKL_TEST_HOSTS is not set: run through tests/with-zookeeper");
  return h;
}

void it_root(char *buf, size_t len, const char *tag) {
  static int n;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  snprintf(buf, len, "/zkl-test/%s-%ld-%d-%ld%09ld", tag, (long)getpid(), ++n,
           (long)ts.tv_sec, ts.tv_nsec);
}

static zkl_session_t *session_with(const char *hosts, int session_timeout_ms,
                                   int reestablish) {
  zkl_session_opts_t o;
  zkl_session_opts_init(&o);
  o.session_timeout_ms = session_timeout_ms;
  o.reestablish = reestablish;
  zkl_session_t *s = NULL;
  int rc = zkl_session_open(&s, hosts, &o);
  ck_assert_msg(rc == 0, "session_open: %s (%s)", zkl_strerror(rc),
                zkl_last_error());
  return s;
}

zkl_session_t *it_session_at(const char *hosts, int session_timeout_ms) {
  return session_with(hosts, session_timeout_ms, 1);
}

zkl_session_t *it_session_final(int session_timeout_ms) {
  return session_with(it_hosts(), session_timeout_ms, 0);
}

zkl_session_t *it_session_timeout(int session_timeout_ms) {
  return it_session_at(it_hosts(), session_timeout_ms);
}

zkl_session_t *it_session(void) { return it_session_timeout(10000); }

int it_children(zkl_session_t *s, const char *path, struct String_vector *v) {
  struct String_vector kids = {0, NULL};
  int rc = zoo_get_children(zkl_session_zhandle(s), path, 0, &kids);
  if (rc == ZNONODE) return 0;
  ck_assert_msg(rc == ZOK, "get_children %s: %s", path, zerror(rc));
  int n = kids.count;
  if (v != NULL) *v = kids;
  else deallocate_String_vector(&kids);
  return n;
}

zkl_mutex_t *it_mutex(zkl_session_t *s, const char *path) {
  zkl_mutex_t *m = NULL;
  int rc = zkl_mutex_create(&m, s, path, NULL);
  ck_assert_msg(rc == 0, "mutex_create %s: %s", path, zkl_strerror(rc));
  return m;
}

zkl_queue_t *it_queue(zkl_session_t *s, const char *path, int format,
                      int prio) {
  zkl_queue_opts_t o;
  zkl_queue_opts_init(&o);
  o.format = format;
  o.priority = prio;
  zkl_queue_t *q = NULL;
  int rc = zkl_queue_create(&q, s, path, &o);
  ck_assert_msg(rc == 0, "queue_create %s: %s", path, zkl_strerror(rc));
  ck_assert_ptr_nonnull(q);
  return q;
}

void it_harness(const char *verb) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "\"%s\" %s \"%s\" 1 >/dev/null",
           getenv("ZKL_TEST_HARNESS"), verb, getenv("ZKL_TEST_ZKDIR"));
  ck_assert_msg(system(cmd) == 0, "harness %s failed", verb);
}

zkl_session_stats_t it_stats(zkl_session_t *s) {
  zkl_session_stats_t st;
  ck_assert_int_eq(zkl_session_stats(s, &st, sizeof st), 0);
  return st;
}

void it_keep_root(zkl_session_t *s, const char *root) {
  char path[512];
  zhandle_t *zh = zkl_session_zhandle(s);
  snprintf(path, sizeof path, "%s/keeper", root);
  int rc = zoo_create(zh, path, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL,
                      NULL, 0);
  if (rc == ZNONODE) { /* no root yet: a container, as zkl makes it */
    char parent[512];
    snprintf(parent, sizeof parent, "%s", root);
    *strrchr(parent, '/') = '\0';
    zoo_create(zh, parent, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
    zoo_create(zh, root, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, ZOO_CONTAINER, NULL,
               0);
    rc = zoo_create(zh, path, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL,
                    NULL, 0);
  }
  ck_assert_msg(rc == ZOK, "create %s: %s", path, zerror(rc));
}

struct children_arg {
  zkl_session_t *s;
  const char *path;
  int want;
};

static int children_are(void *arg) {
  struct children_arg *c = arg;
  return it_children(c->s, c->path, NULL) == c->want;
}

int it_wait_children(zkl_session_t *s, const char *path, int want,
                     int timeout_ms) {
  struct children_arg c = {s, path, want};
  return it_wait_until(children_are, &c, timeout_ms);
}

int64_t it_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void it_sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

uint64_t it_splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t it_mix64(uint64_t z) { return it_splitmix64(&z); }

uint64_t it_seed(const char *var) {
  const char *env = getenv(var);
  return env != NULL && env[0] != '\0'
             ? strtoull(env, NULL, 10)
             : (uint64_t)time(NULL) * 1000003u + (uint64_t)getpid();
}

const char *it_code(int rc) {
  static _Thread_local char buf[4][64];
  static _Thread_local int i;
  char *b = buf[i++ % 4];
  if (rc >= 0) snprintf(b, 64, "%d", rc);
  else snprintf(b, 64, "%s(%d)", zkl_strerror(rc), rc);
  return b;
}

int it_wait_until(int (*pred)(void *), void *arg, int timeout_ms) {
  int64_t end = it_now_ms() + timeout_ms;
  int v;
  while (!(v = pred(arg)) && it_now_ms() < end) it_sleep_ms(5);
  return v;
}

static void watch_heard(zhandle_t *zh, int type, int state, const char *path,
                        void *ctx) {
  (void)zh, (void)state, (void)path;
  it_watch_t *w = ctx;
  if (type == ZOO_SESSION_EVENT) return;
  __atomic_store_n(&w->type, type, __ATOMIC_SEQ_CST);
  __atomic_add_fetch(&w->count, 1, __ATOMIC_SEQ_CST);
}

void it_watch_node(zkl_session_t *s, const char *node, it_watch_t *w) {
  w->type = w->count = 0;
  char buf[64];
  int len = sizeof buf;
  int rc = zoo_wget(zkl_session_zhandle(s), node, watch_heard, w, buf, &len,
                    NULL);
  ck_assert_msg(rc == ZOK, "watch %s: %s", node, zerror(rc));
}

static int watch_fired(void *arg) {
  return __atomic_load_n(&((it_watch_t *)arg)->count, __ATOMIC_SEQ_CST) > 0;
}

int it_heard(it_watch_t *w, int timeout_ms) {
  if (!it_wait_until(watch_fired, w, timeout_ms)) return 0;
  return __atomic_load_n(&w->type, __ATOMIC_SEQ_CST);
}

/* One server's answer to a four-letter word, appended to *out. */
static void ask_one(const char *hostport, const char *word, char **out,
                    size_t *len, size_t *cap) {
  char host[256];
  snprintf(host, sizeof host, "%s", hostport);
  char *colon = strrchr(host, ':');
  ck_assert_ptr_nonnull(colon);
  *colon = '\0';
  struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM},
                  *ai = NULL;
  ck_assert_int_eq(getaddrinfo(host, colon + 1, &hints, &ai), 0);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ck_assert_int_ge(fd, 0);
  int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
  freeaddrinfo(ai);
  if (rc != 0) { /* a server that is down has no watches to report */
    close(fd);
    return;
  }
  ck_assert_int_eq(write(fd, word, 4), 4);
  ssize_t n;
  for (;;) {
    if (*cap - *len < 1024) *out = realloc(*out, *cap *= 2);
    if ((n = read(fd, *out + *len, *cap - *len - 1)) <= 0) break;
    *len += (size_t)n;
  }
  (*out)[*len] = '\0';
  close(fd);
}

char *it_4lw(const char *word) {
  char hosts[1024];
  snprintf(hosts, sizeof hosts, "%s", it_hosts());
  hosts[strcspn(hosts, "/")] = '\0'; /* no chroot */
  size_t cap = 4096, len = 0;
  char *out = malloc(cap);
  out[0] = '\0';
  char *save = NULL;
  for (char *h = strtok_r(hosts, ",", &save); h != NULL;
       h = strtok_r(NULL, ",", &save))
    ask_one(h, word, &out, &len, &cap);
  return out;
}

char *it_watches_left(const char *root, int within_ms) {
  int64_t end = it_now_ms() + within_ms;
  for (;;) {
    char *out = it_4lw("wchc");
    if (strstr(out, root) == NULL) {
      free(out);
      return NULL;
    }
    if (it_now_ms() >= end) return out;
    free(out);
    it_sleep_ms(20);
  }
}

static void quiet(const char *message) { (void)message; }

/* Context for the second handle's connection. */
static void expire_watcher(zhandle_t *zh, int type, int state,
                           const char *path, void *ctx) {
  (void)zh, (void)type, (void)path;
  if (state == ZOO_CONNECTED_STATE)
    __atomic_store_n((int *)ctx, 1, __ATOMIC_SEQ_CST);
}

void it_expire_session(zkl_session_t *s) {
  zhandle_t *zh = zkl_session_zhandle(s);
  clientid_t copy = *zoo_client_id(zh);
  /* The original handle may win the session back before the second one
   * closes it; then the close ends nothing, so try again. */
  for (int attempt = 0; attempt < 10; attempt++) {
    int connected = 0; /* atomic: set by the handle's watcher thread */
    zhandle_t *other = zookeeper_init2(it_hosts(), expire_watcher,
                                       zoo_recv_timeout(zh), &copy,
                                       &connected, 0, quiet);
    ck_assert_ptr_nonnull(other);
    for (int i = 0; i < 2000 && !__atomic_load_n(&connected, __ATOMIC_SEQ_CST);
         i++)
      it_sleep_ms(5);
    zookeeper_close(other); /* closes the shared session on the server */
    for (int i = 0; i < 400; i++) {
      /* LOST, or already re-established on a new session */
      if (zkl_session_state(s) == ZKL_SESSION_LOST ||
          zkl_session_id(s) != copy.client_id)
        return;
      it_sleep_ms(10);
    }
  }
  ck_abort_msg("could not expire session 0x%llx",
               (unsigned long long)copy.client_id);
}

int it_watchers_of(const char *wchp, const char *path, int64_t except) {
  char line[1024], self[40];
  snprintf(line, sizeof line, "%s\n", path);
  snprintf(self, sizeof self, "0x%llx\n", (unsigned long long)except);
  const char *at = strstr(wchp, line);
  if (at == NULL) return 0;
  int n = 0;
  for (const char *q = at + strlen(line); *q == '\t' || *q == ' ';) {
    while (*q == '\t' || *q == ' ') q++;
    if (except == 0 || strncmp(q, self, strlen(self)) != 0) n++;
    if ((q = strchr(q, '\n')) == NULL) break;
    q++;
  }
  return n;
}

int64_t it_owner_of(zkl_session_t *s, const char *path) {
  struct Stat st;
  return zoo_exists(zkl_session_zhandle(s), path, 0, &st) == ZOK
             ? st.ephemeralOwner
             : 0;
}
