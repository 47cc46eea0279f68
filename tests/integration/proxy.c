/* tests/integration/proxy.c - a small TCP proxy between one test's
 * ZooKeeper clients and the server, to inject network faults:
 *  - blackhole: stop moving bytes in both directions (a partition: the
 *    client only learns from its own timeouts), new connections included;
 *  - cut after an opcode: forward the next client request of that type to
 *    the server, then close both sides before any reply goes back (the
 *    server applied it; the client sees a connection loss);
 *  - hold at an opcode: keep the next client request of that type, and
 *    every later one of that connection, until released (the server's
 *    side still flows): what the client sent is answered late, in order.
 * One thread, poll(); loopback only. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "itest.h"

#define MAXPAIRS 16
#define BUF (1 << 16)

struct pair {
  int cfd, sfd;      /* client side, server side; -1 when unused */
  int first_seen;    /* the first frame (ConnectRequest) has no header */
  int held;          /* requests kept from the server (hold at an opcode) */
  size_t len;        /* client bytes read, not yet forwarded */
  unsigned char buf[BUF];
};

struct it_proxy {
  int lfd, port, target_port;
  int wake[2];       /* a pipe to wake the thread */
  pthread_t thread;
  pthread_mutex_t mu;
  int stop, blackhole, cut_opcode, cuts;
  int hold_opcode, holding, unhold; /* hold at an opcode; a pair held;
                                       release it */
  struct pair pairs[MAXPAIRS];
};

static void pair_close(struct pair *p) {
  if (p->cfd >= 0) close(p->cfd);
  if (p->sfd >= 0) close(p->sfd);
  p->cfd = p->sfd = -1;
  p->len = 0;
  p->first_seen = 0;
  p->held = 0;
}

/* Both legs forward each read at once, as the ZooKeeper client's own
 * socket does (it sets TCP_NODELAY; strace shows it): with Nagle's
 * algorithm on a leg, the second of two requests sent back to back (a
 * getData with a getChildren) waits for the first one's delayed ACK, about
 * 40 ms, which a direct connection never pays. */
static void no_delay(int fd) {
  int one = 1;
  if (fd >= 0) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static int connect_target(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    close(fd);
    return -1;
  }
  no_delay(fd);
  return fd;
}

static int write_all(int fd, const unsigned char *b, size_t n) {
  while (n > 0) {
    /* a peer that closed its end must not kill us with SIGPIPE */
    ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    b += w;
    n -= (size_t)w;
  }
  return 0;
}

static uint32_t be32(const unsigned char *b) {
  return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 |
         b[3];
}

/* Forwards the complete client frames in p->buf; 1 if the pair was cut. */
static int forward_frames(it_proxy_t *x, struct pair *p) {
  size_t off = 0;
  while (p->len - off >= 4) {
    size_t flen = be32(p->buf + off) + 4;
    if (flen > BUF) return -1;
    if (p->len - off < flen) break;
    int opcode = p->first_seen && flen >= 12 ? (int32_t)be32(p->buf + off + 8)
                                             : 0;
    if (p->held) break;
    pthread_mutex_lock(&x->mu);
    if (x->hold_opcode != 0 && opcode == x->hold_opcode) {
      x->hold_opcode = 0;
      x->holding = 1;
      p->held = 1;
    }
    pthread_mutex_unlock(&x->mu);
    if (p->held) break;
    p->first_seen = 1;
    if (write_all(p->sfd, p->buf + off, flen) != 0) return -1;
    off += flen;
    pthread_mutex_lock(&x->mu);
    int cut = x->cut_opcode != 0 && opcode == x->cut_opcode;
    if (cut) {
      x->cut_opcode = 0;
      x->cuts++;
    }
    pthread_mutex_unlock(&x->mu);
    if (cut) {
      usleep(20000); /* let the server apply it; its reply is dropped */
      return 1;
    }
  }
  memmove(p->buf, p->buf + off, p->len - off);
  p->len -= off;
  return 0;
}

static void *proxy_main(void *arg) {
  it_proxy_t *x = arg;
  for (;;) {
    struct pollfd fds[2 + 2 * MAXPAIRS];
    int n = 0, hole;
    pthread_mutex_lock(&x->mu);
    if (x->stop) {
      pthread_mutex_unlock(&x->mu);
      break;
    }
    hole = x->blackhole;
    int unhold = x->unhold;
    x->unhold = 0;
    pthread_mutex_unlock(&x->mu);
    for (int i = 0; i < MAXPAIRS && unhold; i++) {
      struct pair *p = &x->pairs[i];
      if (p->cfd < 0 || !p->held) continue;
      p->held = 0;
      if (forward_frames(x, p) != 0) pair_close(p);
    }
    fds[n++] = (struct pollfd){x->wake[0], POLLIN, 0};
    fds[n++] = (struct pollfd){x->lfd, POLLIN, 0};
    for (int i = 0; i < MAXPAIRS && !hole; i++) {
      if (x->pairs[i].cfd < 0) continue;
      fds[n++] = (struct pollfd){x->pairs[i].cfd, POLLIN, 0};
      fds[n++] = (struct pollfd){x->pairs[i].sfd, POLLIN, 0};
    }
    if (poll(fds, (nfds_t)n, 1000) <= 0) continue;
    if (fds[0].revents) {
      char b[64];
      if (read(x->wake[0], b, sizeof b) < 0) continue;
    }
    if (fds[1].revents & POLLIN) { /* accept even while blackholed */
      int c = accept(x->lfd, NULL, NULL);
      no_delay(c);
      int s = c >= 0 ? connect_target(x->target_port) : -1;
      int placed = 0;
      for (int i = 0; i < MAXPAIRS && s >= 0 && !placed; i++) {
        if (x->pairs[i].cfd >= 0) continue;
        x->pairs[i].cfd = c;
        x->pairs[i].sfd = s;
        placed = 1;
      }
      if (!placed) {
        if (c >= 0) close(c);
        if (s >= 0) close(s);
      }
    }
    for (int k = 2; k < n; k += 2) {
      struct pair *p = NULL;
      for (int i = 0; i < MAXPAIRS; i++)
        if (x->pairs[i].cfd == fds[k].fd) p = &x->pairs[i];
      if (p == NULL) continue;
      if (fds[k + 1].revents & (POLLIN | POLLHUP | POLLERR)) {
        unsigned char b[BUF];
        ssize_t r = read(p->sfd, b, sizeof b);
        if (r <= 0 || write_all(p->cfd, b, (size_t)r) != 0) {
          pair_close(p);
          continue;
        }
      }
      if (fds[k].revents & (POLLIN | POLLHUP | POLLERR)) {
        ssize_t r = read(p->cfd, p->buf + p->len, BUF - p->len);
        if (r <= 0) {
          pair_close(p);
          continue;
        }
        p->len += (size_t)r;
        if (forward_frames(x, p) != 0) pair_close(p);
      }
    }
  }
  return NULL;
}

it_proxy_t *it_proxy_start(void) {
  const char *h = it_hosts();
  const char *colon = strrchr(h, ':');
  ck_assert_msg(colon != NULL && strchr(h, ',') == NULL,
                "the proxy needs a single server, not %s", h);
  return it_proxy_start_to(atoi(colon + 1));
}

it_proxy_t *it_proxy_start_to(int target_port) {
  it_proxy_t *x = calloc(1, sizeof *x);
  ck_assert_ptr_nonnull(x);
  x->target_port = target_port;
  for (int i = 0; i < MAXPAIRS; i++) x->pairs[i].cfd = x->pairs[i].sfd = -1;
  pthread_mutex_init(&x->mu, NULL);
  ck_assert_int_eq(pipe(x->wake), 0);
  x->lfd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t al = sizeof a;
  ck_assert_int_eq(bind(x->lfd, (struct sockaddr *)&a, sizeof a), 0);
  ck_assert_int_eq(listen(x->lfd, 16), 0);
  ck_assert_int_eq(getsockname(x->lfd, (struct sockaddr *)&a, &al), 0);
  x->port = ntohs(a.sin_port);
  ck_assert_int_eq(pthread_create(&x->thread, NULL, proxy_main, x), 0);
  return x;
}

int it_proxy_port(it_proxy_t *x) { return x->port; }

static void poke(it_proxy_t *x) {
  if (write(x->wake[1], "x", 1) != 1) ck_abort_msg("proxy wake failed");
}

void it_proxy_blackhole(it_proxy_t *x, int on) {
  pthread_mutex_lock(&x->mu);
  x->blackhole = on;
  pthread_mutex_unlock(&x->mu);
  poke(x);
}

void it_proxy_cut_after(it_proxy_t *x, int opcode) {
  pthread_mutex_lock(&x->mu);
  x->cut_opcode = opcode;
  pthread_mutex_unlock(&x->mu);
}

void it_proxy_hold_at(it_proxy_t *x, int opcode) {
  pthread_mutex_lock(&x->mu);
  x->hold_opcode = opcode;
  x->holding = 0;
  pthread_mutex_unlock(&x->mu);
}

int it_proxy_holding(it_proxy_t *x) {
  pthread_mutex_lock(&x->mu);
  int h = x->holding;
  pthread_mutex_unlock(&x->mu);
  return h;
}

void it_proxy_release(it_proxy_t *x) {
  pthread_mutex_lock(&x->mu);
  x->hold_opcode = 0;
  x->holding = 0;
  x->unhold = 1;
  pthread_mutex_unlock(&x->mu);
  poke(x);
}

int it_proxy_cuts(it_proxy_t *x) {
  pthread_mutex_lock(&x->mu);
  int n = x->cuts;
  pthread_mutex_unlock(&x->mu);
  return n;
}

void it_proxy_stop(it_proxy_t *x) {
  pthread_mutex_lock(&x->mu);
  x->stop = 1;
  pthread_mutex_unlock(&x->mu);
  poke(x);
  pthread_join(x->thread, NULL);
  for (int i = 0; i < MAXPAIRS; i++) pair_close(&x->pairs[i]);
  close(x->lfd);
  close(x->wake[0]);
  close(x->wake[1]);
  pthread_mutex_destroy(&x->mu);
  free(x);
}
