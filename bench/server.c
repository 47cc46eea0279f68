/* bench/server.c - the server's own counters, read with the four-letter
 * words `mntr` and `srvr` (the harness whitelists them): requests, reads,
 * writes, bytes and watches, server-wide; for an ensemble, summed over
 * every server of the host list (each server counts the requests of the
 * clients connected to it; every server fsyncs every transaction), the
 * zxid the highest of them.  A measured window is the difference of two
 * samples minus what one sample itself costs. */
#include <math.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "bench.h"

/* The cost of one srv_sample() in the counters, measured at start. */
static srv_counters_t overhead;

/* The i-th host:port (from 0) of a host list "h1:p1,h2:p2/chroot": 0, or
 * -1 when there is none (or it does not fit). */
static int nth_host(const char *hosts, int i, char *host, size_t hlen,
                    char *port, size_t plen) {
  for (; i > 0; i--) {
    size_t skip = strcspn(hosts, ",/");
    if (hosts[skip] != ',') return -1;
    hosts += skip + 1;
  }
  size_t n = strcspn(hosts, ",/");
  const char *colon = memchr(hosts, ':', n);
  if (colon == NULL || (size_t)(colon - hosts) >= hlen) return -1;
  size_t pl = n - (size_t)(colon - hosts) - 1;
  if (pl == 0 || pl >= plen) return -1;
  memcpy(host, hosts, (size_t)(colon - hosts));
  host[colon - hosts] = '\0';
  memcpy(port, colon + 1, pl);
  port[pl] = '\0';
  return 0;
}

/* Sends a four-letter word to the i-th server of hosts and reads the whole
 * answer into a malloc'd string.  NULL on failure (or no such server). */
static char *four_letters(const char *hosts, int i, const char *word) {
  char host[256], port[16];
  if (nth_host(hosts, i, host, sizeof host, port, sizeof port) != 0)
    return NULL;
  struct addrinfo hints, *ai = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(host, port, &hints, &ai) != 0) return NULL;
  int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
  struct timeval tv = {2, 0};
  char *buf = NULL;
  size_t len = 0, cap = 0;
  if (fd < 0) goto out;
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 ||
      send(fd, word, strlen(word), MSG_NOSIGNAL) != (ssize_t)strlen(word))
    goto out;
  for (;;) {
    if (cap - len < 4096) {
      char *nb = realloc(buf, cap + 16384);
      if (nb == NULL) break;
      buf = nb;
      cap += 16384;
    }
    ssize_t r = read(fd, buf + len, cap - len - 1);
    if (r <= 0) break;
    len += (size_t)r;
  }
  if (buf != NULL) buf[len] = '\0';
out:
  if (fd >= 0) close(fd);
  freeaddrinfo(ai);
  if (buf != NULL && len == 0) {
    free(buf);
    buf = NULL;
  }
  return buf;
}

/* The value of "key<TAB>value" in a mntr answer, NAN if absent. */
static double mntr_value(const char *text, const char *key) {
  size_t kl = strlen(key);
  for (const char *p = text; p != NULL && *p != '\0';) {
    if (strncmp(p, key, kl) == 0 && p[kl] == '\t') return strtod(p + kl + 1, NULL);
    p = strchr(p, '\n');
    if (p != NULL) p++;
  }
  return NAN;
}

/* One server's counters (the i-th of hosts): 0, or -1 (none there, or
 * no answer). */
static int sample_one(const char *hosts, int i, srv_counters_t *out) {
  memset(out, 0, sizeof *out);
  out->zxid = -1;
  char *m = four_letters(hosts, i, "mntr");
  if (m == NULL) return -1;
  out->packets_received = mntr_value(m, "zk_packets_received");
  out->packets_sent = mntr_value(m, "zk_packets_sent");
  out->bytes_received = mntr_value(m, "zk_bytes_received_count");
  out->response_bytes = mntr_value(m, "zk_response_bytes");
  out->reads = mntr_value(m, "zk_cnt_readlatency");
  out->writes = mntr_value(m, "zk_cnt_updatelatency");
  out->watches = mntr_value(m, "zk_watch_count");
  out->fsyncs = mntr_value(m, "zk_cnt_fsynctime"); /* NAN if not counted */
  /* not zk_packets_sent, which counts a 4lw answer in chunks of varying
   * number: the watchers each kind of event triggered, summed */
  out->notifications = mntr_value(m, "zk_sum_node_created_watch_count") +
                       mntr_value(m, "zk_sum_node_deleted_watch_count") +
                       mntr_value(m, "zk_sum_node_changed_watch_count") +
                       mntr_value(m, "zk_sum_node_children_watch_count");
  free(m);
  char *s = four_letters(hosts, i, "srvr");
  if (s != NULL) {
    const char *z = strstr(s, "Zxid: ");
    if (z != NULL) out->zxid = strtoll(z + 6, NULL, 16);
    free(s);
  }
  return isnan(out->packets_received) ? -1 : 0;
}

/* How many servers a host list names (the part before a chroot). */
static int host_count(const char *hosts) {
  int n = 1;
  for (const char *p = hosts; *p != '\0' && *p != '/'; p++) n += *p == ',';
  return n;
}

/* The servers to sample: ZKL_BENCH_SERVERS when set (run-bench.sh's
 * ensemble connects the clients to the followers only, and samples all
 * three), else the clients' own hosts. */
static const char *servers_of(const char *hosts) {
  const char *env = getenv("ZKL_BENCH_SERVERS");
  return env != NULL && *env != '\0' ? env : hosts;
}

int srv_sample(const char *hosts, srv_counters_t *out) {
  hosts = servers_of(hosts);
  if (sample_one(hosts, 0, out) != 0) return -1;
  srv_counters_t one;
  for (int i = 1, n = host_count(hosts); i < n; i++) {
    if (sample_one(hosts, i, &one) != 0) return -1; /* a partial sum lies */
    srv_add(out, &one);
    out->watches += one.watches;
    if (one.zxid > out->zxid) out->zxid = one.zxid;
  }
  return 0;
}

static void raw_delta(const srv_counters_t *a, const srv_counters_t *b,
                      srv_counters_t *d) {
  d->packets_received = b->packets_received - a->packets_received;
  d->packets_sent = b->packets_sent - a->packets_sent;
  d->bytes_received = b->bytes_received - a->bytes_received;
  d->response_bytes = b->response_bytes - a->response_bytes;
  d->reads = b->reads - a->reads;
  d->writes = b->writes - a->writes;
  d->watches = b->watches - a->watches;
  d->fsyncs = b->fsyncs - a->fsyncs;
  d->notifications = b->notifications - a->notifications;
  d->zxid = a->zxid >= 0 && b->zxid >= 0 ? b->zxid - a->zxid : -1;
}

void srv_delta_n(const srv_counters_t *a, const srv_counters_t *b,
                 int samples, srv_counters_t *out) {
  raw_delta(a, b, out);
  out->packets_received -= samples * overhead.packets_received;
  out->packets_sent -= samples * overhead.packets_sent;
  out->bytes_received -= samples * overhead.bytes_received;
  out->response_bytes -= samples * overhead.response_bytes;
  out->reads -= samples * overhead.reads;
  out->writes -= samples * overhead.writes;
}

void srv_delta(const srv_counters_t *a, const srv_counters_t *b,
               srv_counters_t *out) {
  srv_delta_n(a, b, 1, out);
}

void srv_add(srv_counters_t *sum, const srv_counters_t *d) {
  sum->packets_received += d->packets_received;
  sum->packets_sent += d->packets_sent;
  sum->bytes_received += d->bytes_received;
  sum->response_bytes += d->response_bytes;
  sum->reads += d->reads;
  sum->writes += d->writes;
  sum->fsyncs += d->fsyncs;
  sum->notifications += d->notifications;
}

/* The smallest difference over a few back-to-back samples is what one
 * sample costs (a client's ping in between can only add). */
int srv_calibrate(const char *hosts) {
  srv_counters_t a, b, d;
  if (srv_sample(hosts, &a) != 0) return -1;
  for (int i = 0; i < 4; i++) {
    if (srv_sample(hosts, &b) != 0) return -1;
    raw_delta(&a, &b, &d);
    if (i == 0 || d.packets_received < overhead.packets_received)
      overhead = d;
    a = b;
  }
  overhead.watches = 0;
  overhead.fsyncs = 0;
  overhead.notifications = 0;
  overhead.zxid = 0;
  return 0;
}

void srv_report(const char *scenario, const char *kase, const char *impl,
                const char *per, const srv_counters_t *d, double ops) {
  if (ops <= 0) return;
  char metric[24];
  long n = (long)ops;
  snprintf(metric, sizeof metric, "requests/%s", per);
  result_add(scenario, kase, impl, metric, "", d->packets_received / ops, NAN,
             n);
  snprintf(metric, sizeof metric, "reads/%s", per);
  result_add(scenario, kase, impl, metric, "", d->reads / ops, NAN, n);
  snprintf(metric, sizeof metric, "writes/%s", per);
  result_add(scenario, kase, impl, metric, "", d->writes / ops, NAN, n);
  if (!isnan(d->fsyncs)) { /* a server too old to count them: no row */
    snprintf(metric, sizeof metric, "fsyncs/%s", per);
    result_add(scenario, kase, impl, metric, "", d->fsyncs / ops, NAN, n);
  }
  snprintf(metric, sizeof metric, "bytes/%s", per);
  result_add(scenario, kase, impl, metric, "B",
             (d->bytes_received + d->response_bytes) / ops, NAN, n);
}

/* The sessions one server's `wchp` lists as watching path, but except. */
static int watchers_on(char *w, const char *path, int64_t except) {
  int n = 0, in = 0;
  size_t pl = strlen(path);
  for (char *line = w; line != NULL && *line != '\0';) {
    char *next = strchr(line, '\n');
    if (next != NULL) *next++ = '\0';
    if (line[0] == '/') in = strncmp(line, path, pl) == 0 && line[pl] == '\0';
    else if (in && line[0] == '\t' &&
             strtoll(line + 1, NULL, 16) != (long long)except)
      n++;
    line = next;
  }
  return n;
}

/* Summed over the servers: a session's watches sit on its own server. */
int srv_watchers(const char *hosts, const char *path, int64_t except) {
  hosts = servers_of(hosts);
  int total = 0;
  for (int i = 0, n = host_count(hosts); i < n; i++) {
    char *w = four_letters(hosts, i, "wchp");
    if (w == NULL) return -1;
    total += watchers_on(w, path, except);
    free(w);
  }
  return total;
}

int srv_wait_watched(const char *hosts, const char *path, int64_t except,
                     int timeout_ms) {
  int64_t deadline = bench_now_ns() + (int64_t)timeout_ms * 1000000;
  for (int pause = 1;; pause = pause < 20 ? pause * 2 : 20) {
    if (srv_watchers(hosts, path, except) > 0) return 0;
    if (bench_now_ns() > deadline) return -1;
    bench_sleep_ms(pause);
  }
}
