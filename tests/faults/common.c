/* tests/faults/common.c - the shared log, the checker, the recipes behind
 * one face, and the harness's verbs (see faults.h). */
#include <dirent.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "faults.h"

const char *fc_kind_names[] = {"mutex", "rwlock", "election", "mutex async"};

/* ---- the log ------------------------------------------------------------- */

int64_t fc_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

struct fc_log *fc_log_new(void) {
  struct fc_log *l = mmap(NULL, sizeof *l, PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ck_assert(l != MAP_FAILED);
  memset(l, 0, sizeof *l);
  return l;
}

void fc_log_free(struct fc_log *l) { munmap(l, sizeof *l); }

void fc_add(struct fc_log *l, int type, int lane, int who, int shared,
            uint64_t token) {
  int k = __atomic_fetch_add(&l->n, 1, __ATOMIC_SEQ_CST);
  if (k >= FC_MAXREC) return;
  struct fc_rec *r = &l->r[k];
  r->lane = lane;
  r->who = who;
  r->shared = shared;
  r->token = token;
  r->t_us = fc_now_us();
  __atomic_store_n(&r->type, type, __ATOMIC_SEQ_CST);
}

static int count(const struct fc_log *l) {
  int n = __atomic_load_n(&l->n, __ATOMIC_SEQ_CST);
  return n < FC_MAXREC ? n : FC_MAXREC;
}

/* ---- the checker ------------------------------------------------------------ */

/* After the pause at index p: was `who` told first thing once resumed (or
 * did it never act again)? */
static int told_after_pause(const struct fc_log *l, int n, int p) {
  const struct fc_rec *pr = &l->r[p];
  int k = p + 1;
  for (; k < n; k++)
    if (l->r[k].who == pr->who && l->r[k].lane == pr->lane &&
        l->r[k].type == R_RESUME)
      break;
  for (k++; k < n; k++) {
    const struct fc_rec *r = &l->r[k];
    if (r->who != pr->who || r->lane != pr->lane) continue;
    if (r->type == R_TOLD || r->type == R_KILLED) return 1;
    if (r->type == R_ENTER || r->type == R_EXIT) return 0;
  }
  return 1;
}

struct holder {
  int open, shared, told;
  uint64_t token;
};

static void violation(fc_verdict_t *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void violation(fc_verdict_t *v, const char *fmt, ...) {
  if (v->violations++ == 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->first, sizeof v->first, fmt, ap);
    va_end(ap);
  }
}

void fc_check(const struct fc_log *l, int lane, fc_verdict_t *v) {
  static struct holder h[FC_MAXWHO];
  memset(h, 0, sizeof h);
  memset(v, 0, sizeof *v);
  int n = count(l);
  uint64_t max_token = 0, writer_token = 0;
  int64_t t0 = n > 0 ? l->r[0].t_us : 0;
  for (int k = 0; k < n; k++) {
    const struct fc_rec *r = &l->r[k];
    if (r->lane != lane || r->type == 0) continue;
    ck_assert_int_lt(r->who, FC_MAXWHO);
    struct holder *me = &h[r->who];
    switch (r->type) {
      case R_PAUSE:
        if (me->open && told_after_pause(l, n, k)) me->told = 1;
        break;
      case R_TOLD: me->told = 1; break;
      case R_KILLED: me->open = 0; break;
      case R_EXIT: me->open = 0; break;
      case R_ENTER:
        v->entries++;
        for (int o = 0; o < FC_MAXWHO; o++)
          if (o != r->who && h[o].open && !h[o].told &&
              !(r->shared && h[o].shared))
            violation(v, "w%d entered with token %" PRIu64 " at +%.3f s "
                      "while w%d held with token %" PRIu64 " and had not been "
                      "told", r->who, r->token, (r->t_us - t0) / 1e6, o,
                      h[o].token);
        /* the same hold announced again (an election leader whose
         * session came back after SUSPENDED): its own token, nobody
         * granted since */
        int again = me->open && me->told && r->token == me->token &&
                    r->token == max_token;
        if (!again && (r->token == 0 ||
                       r->token <= (r->shared ? writer_token : max_token)))
          violation(v, "w%d entered at +%.3f s with token %" PRIu64 ", not "
                    "above %" PRIu64 " granted before", r->who,
                    (r->t_us - t0) / 1e6, r->token,
                    r->shared ? writer_token : max_token);
        if (!r->shared) writer_token = r->token;
        if (r->token > max_token) max_token = r->token;
        me->open = 1;
        me->shared = r->shared;
        me->told = 0;
        me->token = r->token;
        break;
    }
  }
}

int fc_entered_after(const struct fc_log *l, int lane, int who, int after) {
  int n = count(l);
  for (int k = after + 1; k < n; k++)
    if (l->r[k].lane == lane && l->r[k].who == who &&
        l->r[k].type == R_ENTER)
      return 1;
  return 0;
}

/* ---- the recipes behind one face --------------------------------------------- */

static struct fc_log *self_log;
static int self_lane, self_who;

void fc_worker_is(struct fc_log *l, int lane, int who) {
  self_log = l;
  self_lane = lane;
  self_who = who;
}

static void on_state(zkl_session_t *s, zkl_session_state_t st, void *arg) {
  (void)s, (void)arg;
  if (self_log != NULL &&
      (st == ZKL_SESSION_SUSPENDED || st == ZKL_SESSION_LOST))
    fc_add(self_log, R_TOLD, self_lane, self_who, 0, 0);
}

zkl_session_t *fc_session(const char *hosts, int timeout_ms) {
  zkl_session_opts_t o;
  zkl_session_opts_init(&o);
  o.session_timeout_ms = timeout_ms;
  o.connect_timeout_ms = 30000;
  o.on_state = on_state;
  zkl_session_t *s = NULL;
  return zkl_session_open(&s, hosts, &o) == 0 ? s : NULL;
}

static void on_elected(zkl_election_t *e, uint64_t token, void *arg) {
  (void)e;
  fc_held_t *h = arg;
  fc_add(h->log, R_ENTER, h->lane, h->who, 0, token);
}

static void on_revoked(zkl_election_t *e, zkl_election_reason_t why,
                       void *arg) {
  (void)e, (void)why;
  fc_held_t *h = arg;
  fc_add(h->log, R_TOLD, h->lane, h->who, 0, 0);
}

int fc_held_make(fc_held_t *h, zkl_session_t *s, const char *path) {
  char id[16];
  snprintf(id, sizeof id, "w%d", h->who);
  zkl_election_opts_t eo;
  zkl_election_opts_init(&eo);
  eo.on_elected = on_elected;
  eo.on_revoked = on_revoked;
  eo.arg = h;
  switch (h->kind) {
    case K_MUTEX:
    case K_ASYNC: h->s = s; return zkl_mutex_create(&h->m, s, path, NULL);
    case K_RWLOCK: return zkl_rwlock_create(&h->l, s, path, NULL);
    case K_ELECTION:
      return zkl_election_create(&h->e, s, path, id, strlen(id), &eo);
  }
  return ZKL_EINVAL;
}

void fc_held_free(fc_held_t *h) {
  zkl_mutex_destroy(h->m);
  zkl_rwlock_destroy(h->l);
  zkl_election_destroy(h->e);
  h->m = NULL;
  h->l = NULL;
  h->e = NULL;
}

static void async_done(void *obj, int rc, uint64_t token, void *arg) {
  (void)obj, (void)token;
  fc_held_t *h = arg;
  h->async_rc = rc;
  h->async_done = 1;
}

/* The worker's loop: polls the session's fd and dispatches until the
 * call's completion came (it always comes: the call's deadline, a loss,
 * or the grant). */
static int async_wait(fc_held_t *h) {
  struct pollfd p = {zkl_session_fd(h->s), POLLIN, 0};
  while (!h->async_done)
    if (poll(&p, 1, 1000) == 1) zkl_session_dispatch(h->s);
  return h->async_rc;
}

static void watch_done(void *obj, int rc, uint64_t token, void *arg) {
  (void)obj, (void)token;
  fc_held_t *h = arg;
  h->watch_rc = rc;
  h->watch_n++;
}

static int take(fc_held_t *h, int shared, int64_t t) {
  switch (h->kind) {
    case K_ASYNC: {
      h->async_done = 0;
      int rc = zkl_mutex_lock_async(h->m, t, async_done, h);
      if (rc == 0) rc = async_wait(h);
      if (rc == 0) { /* "your hold is gone", through the same fd */
        h->watch_n = 0;
        h->watch_rc = 1;
        int w = zkl_mutex_watch_async(h->m, watch_done, h);
        if (w != 0) {
          fprintf(stderr, "worker %d: watch_async: %s\n", h->who,
                  zkl_strerror(w));
          abort();
        }
        h->watch_armed = 1;
      }
      return rc;
    }
    case K_MUTEX: return t < 0 ? zkl_mutex_lock(h->m)
                               : zkl_mutex_timedlock(h->m, t);
    case K_RWLOCK:
      if (shared)
        return t < 0 ? zkl_rwlock_rdlock(h->l) : zkl_rwlock_timedrdlock(h->l, t);
      return t < 0 ? zkl_rwlock_wrlock(h->l) : zkl_rwlock_timedwrlock(h->l, t);
    case K_ELECTION: {
      int rc = zkl_election_start(h->e);
      if (rc != 0 && rc != ZKL_EBUSY) return rc;
      rc = zkl_election_await(h->e, t);
      if (rc == ZKL_ETIMEDOUT) zkl_election_resign(h->e);
      return rc;
    }
  }
  return ZKL_EINVAL;
}

int fc_held_take(fc_held_t *h, int shared, int64_t timeout_ms) {
  int rc = take(h, shared, timeout_ms);
  if (rc != 0 || h->kind == K_ELECTION) return rc;
  /* the grant as it was made: the token read without any check */
  uint64_t t = 0;
  if (h->kind == K_MUTEX || h->kind == K_ASYNC) zkl_mutex_token(h->m, &t);
  else zkl_rwlock_token(h->l, &t);
  fc_add(h->log, R_ENTER, h->lane, h->who, shared, t);
  return 0;
}

int fc_held_ok(fc_held_t *h) {
  switch (h->kind) {
    case K_MUTEX:
    case K_ASYNC:
      zkl_session_dispatch(h->s); /* what waits, the hold's watch too */
      return !(h->watch_armed && h->watch_n > 0) &&
             zkl_mutex_holding(h->m) == 1;
    case K_RWLOCK: return zkl_rwlock_holding(h->l) > 0;
    case K_ELECTION: return zkl_election_is_leader(h->e) == 1;
  }
  return 0;
}

int fc_held_act(fc_held_t *h, int ms, const int *stop) {
  /* holding() is asked before every act, and once more after the last nap:
   * a holder paused past its deadline must learn it lost the lock before
   * it releases (its EXIT would read as acting on a lost hold) */
  for (int64_t end = it_now_ms() + ms;;) {
    if (!fc_held_ok(h)) {
      fc_add(h->log, R_TOLD, h->lane, h->who, 0, 0);
      return 0;
    }
    if (it_now_ms() >= end ||
        (stop != NULL && __atomic_load_n(stop, __ATOMIC_SEQ_CST)))
      return 1;
    usleep(2000);
  }
}

void fc_held_work(fc_held_t *h, int shared, int ms) {
  fc_held_act(h, ms, NULL);
  fc_held_release(h, shared);
}

void fc_held_release(fc_held_t *h, int shared) {
  fc_add(h->log, R_EXIT, h->lane, h->who, shared, 0);
  if (h->kind == K_MUTEX) zkl_mutex_unlock(h->m);
  else if (h->kind == K_ASYNC) {
    h->async_done = 0;
    if (zkl_mutex_unlock_async(h->m, async_done, h) == 0) async_wait(h);
    /* the watch ended exactly once, before the unlock's completion: 0 (we
     * let go first) or ZKL_ELOST (the hold was gone) */
    if (h->watch_armed &&
        (h->watch_n != 1 || (h->watch_rc != 0 && h->watch_rc != ZKL_ELOST))) {
      fprintf(stderr, "worker %d: the hold's watch completed %d times, "
              "last with %s\n", h->who, h->watch_n,
              zkl_err_name(h->watch_rc));
      abort();
    }
    h->watch_armed = 0;
  } else if (h->kind == K_RWLOCK) zkl_rwlock_unlock(h->l);
  else {
    zkl_election_resign(h->e);
    while (zkl_election_is_leader(h->e) == 1) usleep(1000);
  }
}

int fc_env_int(const char *name, int dflt) {
  const char *v = getenv(name);
  return v != NULL && atoi(v) > 0 ? atoi(v) : dflt;
}

uint64_t fc_seed(const char *var) {
  const char *v = getenv(var);
  if (v != NULL && v[0] != '\0') return strtoull(v, NULL, 0);
  return it_mix64((uint64_t)time(NULL) << 22 ^ (uint64_t)getpid()) %
         1000000000u;
}

uint64_t fc_xorshift(uint64_t *state) {
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  return *state * 0x2545f4914f6cdd1dULL;
}

void fc_appendf(char *buf, size_t len, const char *fmt, ...) {
  size_t off = strlen(buf);
  if (off + 1 >= len) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + off, len - off, fmt, ap);
  va_end(ap);
}

pid_t fc_fork(void) {
  pid_t parent = getpid();
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid > 0) return pid;
#ifdef __linux__
  prctl(PR_SET_PDEATHSIG, SIGKILL); /* not outlive an aborted test */
#endif
  if (getppid() != parent) _exit(1); /* it died before the prctl */
  return 0;
}

int fc_reap_by(pid_t pid, int64_t until, int *status) {
  for (;;) {
    pid_t r = waitpid(pid, status, WNOHANG);
    if (r == pid || r < 0) return 1;
    if (it_now_ms() >= until) return 0;
    it_sleep_ms(20);
  }
}

/* ---- the harness ------------------------------------------------------------- */

void fc_harness_cmd(char *cmd, size_t len, const char *env, const char *verb,
                    int id) {
  char ids[16] = "";
  if (id > 0) snprintf(ids, sizeof ids, "%d", id);
  snprintf(cmd, len, "%s \"%s\" %s \"%s\" %s >/dev/null 2>&1", env,
           getenv("ZKL_TEST_HARNESS"), verb, getenv("ZKL_TEST_ENSEMBLE_DIR"),
           ids);
}

void fc_harness_env(const char *env, const char *verb, int id) {
  char cmd[1024];
  fc_harness_cmd(cmd, sizeof cmd, env, verb, id);
  ck_assert_msg(system(cmd) == 0, "harness %s %d failed", verb, id);
}

void fc_harness(const char *verb, int id) { fc_harness_env("", verb, id); }

int fc_leader_id(void) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "\"%s\" leader \"%s\"", getenv("ZKL_TEST_HARNESS"),
           getenv("ZKL_TEST_ENSEMBLE_DIR"));
  FILE *f = popen(cmd, "r");
  int id = 0;
  if (f != NULL && fscanf(f, "%d", &id) != 1) id = 0;
  if (f != NULL) pclose(f);
  return id;
}

int fc_server_port(int id) {
  const char *p = it_hosts();
  for (int i = 1; i < id && p != NULL; i++) {
    p = strchr(p, ',');
    if (p != NULL) p++;
  }
  const char *colon = p != NULL ? strchr(p, ':') : NULL;
  ck_assert_msg(colon != NULL, "no server %d in %s", id, it_hosts());
  return atoi(colon + 1);
}

int fc_orphans(zkl_session_t *s, const char *path, int timeout_ms) {
  return it_wait_children(s, path, 0, timeout_ms) ? 0
                                                  : it_children(s, path, NULL);
}

/* ---- the servers' history: their transaction logs ---------------------------- */

struct cur {
  const unsigned char *p, *end;
  int bad;
};

static int64_t rd64(struct cur *c) {
  if (c->end - c->p < 8) {
    c->bad = 1;
    return 0;
  }
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = v << 8 | c->p[i];
  c->p += 8;
  return (int64_t)v;
}

static int32_t rd32(struct cur *c) {
  if (c->end - c->p < 4) {
    c->bad = 1;
    return 0;
  }
  uint32_t v = (uint32_t)c->p[0] << 24 | (uint32_t)c->p[1] << 16 |
               (uint32_t)c->p[2] << 8 | c->p[3];
  c->p += 4;
  return (int32_t)v;
}

/* A jute buffer or string: its bytes (not copied) and length (-1: null). */
static const unsigned char *rdbuf(struct cur *c, int *len) {
  *len = rd32(c);
  if (*len < 0 || c->bad) return NULL;
  if (c->end - c->p < *len) {
    c->bad = 1;
    return NULL;
  }
  const unsigned char *b = c->p;
  c->p += *len;
  return b;
}

static void skip_acl(struct cur *c) {
  int n = rd32(c), len;
  for (int i = 0; i < n && !c->bad; i++) {
    rd32(c);
    rdbuf(c, &len);
    rdbuf(c, &len);
  }
}

static void keep_zxid(struct fc_txhist *h, uint64_t zxid) {
  if (h->nzx == h->capzx) {
    h->capzx = h->capzx ? h->capzx * 2 : 4096;
    h->zx = realloc(h->zx, h->capzx * sizeof *h->zx);
    ck_assert_ptr_nonnull(h->zx);
  }
  h->zx[h->nzx++] = zxid << 2 | (uint64_t)h->server;
}

static void keep_op(struct fc_txhist *h, const struct fc_txop *o,
                    const unsigned char *path, int plen,
                    const unsigned char *data, int dlen) {
  if (h->n == h->cap) {
    h->cap = h->cap ? h->cap * 2 : 1024;
    h->op = realloc(h->op, h->cap * sizeof *h->op);
    ck_assert_ptr_nonnull(h->op);
  }
  struct fc_txop *x = &h->op[h->n++];
  *x = *o;
  x->path = path != NULL ? strndup((const char *)path, (size_t)plen) : NULL;
  x->data = NULL;
  x->dlen = dlen > 0 ? dlen : 0;
  if (data != NULL && dlen > 0) {
    x->data = malloc((size_t)dlen);
    ck_assert_ptr_nonnull(x->data);
    memcpy(x->data, data, (size_t)dlen);
  }
}

static int under(const unsigned char *path, int plen, const char *prefix) {
  size_t n = strlen(prefix);
  return path != NULL && (size_t)plen >= n &&
         memcmp(path, prefix, n) == 0;
}

/* One transaction body of `type` (a multi's sub-transactions one by one);
 * keeps what touches the prefix.  0, or -1 for a failed multi. */
static int parse_txn(struct fc_txhist *h, const char *prefix,
                     struct fc_txop *o, int type, struct cur *c) {
  int plen, dlen;
  const unsigned char *path, *data;
  o->type = type;
  switch (type) {
    case 1:  /* create */
    case 15: /* create2 */
    case 19: /* createContainer */
    case 21: /* createTTL */
      path = rdbuf(c, &plen);
      data = rdbuf(c, &dlen);
      skip_acl(c);
      o->eph = 0;
      if (type == 1 || type == 15) o->eph = c->p < c->end && *c->p++ != 0;
      if (c->bad || !under(path, plen, prefix)) return 0;
      o->kind = FC_T_CREATE;
      keep_op(h, o, path, plen, data, dlen);
      return 0;
    case 2:  /* delete */
    case 20: /* deleteContainer */
      path = rdbuf(c, &plen);
      if (c->bad || !under(path, plen, prefix)) return 0;
      o->kind = FC_T_DELETE;
      keep_op(h, o, path, plen, NULL, 0);
      return 0;
    case 5: /* setData */
      path = rdbuf(c, &plen);
      data = rdbuf(c, &dlen);
      if (c->bad || !under(path, plen, prefix)) return 0;
      o->kind = FC_T_SET;
      keep_op(h, o, path, plen, data, dlen);
      return 0;
    case 14: { /* multi: vector<Txn{int type; buffer data}> */
      int n = rd32(c);
      struct cur subs = *c;
      for (int i = 0; i < n && !subs.bad; i++) { /* a failed multi: none */
        int t = rd32(&subs), len;
        rdbuf(&subs, &len);
        if (t == -1) return -1;
      }
      for (int i = 0; i < n && !c->bad; i++) {
        int t = rd32(c), len;
        const unsigned char *b = rdbuf(c, &len);
        if (b == NULL) continue;
        struct cur sc = {b, b + len, 0};
        o->sub = i;
        o->multi = 1;
        parse_txn(h, prefix, o, t, &sc);
      }
      return 0;
    }
    case -11: /* closeSession: its ephemerals go */
      o->kind = FC_T_CLOSE;
      keep_op(h, o, NULL, 0, NULL, 0);
      return 0;
  }
  return 0;
}

/* Reads one log file: a 16-byte header ("ZKLG", version, dbid), then per
 * transaction a checksum (8), the entry as a buffer (4 + length: the
 * header, the body, a digest) and 'B'; zeros past the end (preallocated). */
static void read_txnlog(struct fc_txhist *h, const char *file,
                        const char *prefix) {
  FILE *f = fopen(file, "rb");
  if (f == NULL) return;
  unsigned char hdr[16], *buf = NULL;
  size_t cap = 0;
  if (fread(hdr, 1, 16, f) != 16 || memcmp(hdr, "ZKLG", 4) != 0) {
    fclose(f);
    return;
  }
  h->files++;
  for (;;) {
    unsigned char head[12];
    if (fread(head, 1, 12, f) != 12) break;
    struct cur hc = {head, head + 12, 0};
    int64_t crc = rd64(&hc);
    int32_t len = rd32(&hc);
    if (len <= 0) {
      if (crc != 0) h->torn++;
      break;
    }
    if ((size_t)len + 1 > cap) {
      cap = (size_t)len + 1;
      buf = realloc(buf, cap);
      ck_assert_ptr_nonnull(buf);
    }
    if (fread(buf, 1, (size_t)len + 1, f) != (size_t)len + 1 ||
        buf[len] != 'B') {
      h->torn++;
      break;
    }
    struct cur c = {buf, buf + len, 0};
    struct fc_txop o;
    memset(&o, 0, sizeof o);
    o.sid = rd64(&c);
    rd32(&c); /* cxid */
    o.zxid = (uint64_t)rd64(&c);
    o.time_ms = rd64(&c);
    int type = rd32(&c);
    if (c.bad) {
      h->torn++;
      break;
    }
    keep_zxid(h, o.zxid);
    parse_txn(h, prefix, &o, type, &c);
  }
  free(buf);
  fclose(f);
}

static int op_cmp(const void *a, const void *b) {
  const struct fc_txop *x = a, *y = b;
  if (x->zxid != y->zxid) return x->zxid < y->zxid ? -1 : 1;
  return x->sub - y->sub;
}

static int u64_cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static int committed(const uint64_t *ok, size_t n, uint64_t zxid) {
  return bsearch(&zxid, ok, n, sizeof *ok, u64_cmp) != NULL;
}

/* The merged history of every server, by zxid, without repeats; *gaps the
 * zxids missing between the first and the last op kept (the ops' span).
 * Only committed transactions: a server's log also holds the proposals it
 * logged that no quorum acknowledged (a leader paused or killed with them
 * in flight); the next leader never had them, and a follower that comes
 * back by a snapshot keeps them in its old log files.  A committed one was
 * logged by a quorum before it was applied, and logs are never purged
 * here, so: the zxids found in the logs of a majority of the servers. */
void fc_history_read(struct fc_txhist *h, const char *prefix, int *gaps) {
  memset(h, 0, sizeof *h);
  const char *dir = getenv("ZKL_TEST_ENSEMBLE_DIR");
  int servers = 0;
  for (int id = 1; id <= 3 && dir != NULL; id++) {
    char d[1024];
    snprintf(d, sizeof d, "%s/%d/data/version-2", dir, id);
    DIR *dp = opendir(d);
    if (dp == NULL) continue;
    servers++;
    h->server = id;
    struct dirent *de;
    while ((de = readdir(dp)) != NULL) {
      if (strncmp(de->d_name, "log.", 4) != 0) continue;
      char file[1400];
      snprintf(file, sizeof file, "%s/%s", d, de->d_name);
      read_txnlog(h, file, prefix);
    }
    closedir(dp);
  }
  /* zxid << 2 | server: sorted, each zxid's servers are together */
  if (h->nzx > 1) qsort(h->zx, h->nzx, sizeof *h->zx, u64_cmp);
  int quorum = servers / 2 + 1;
  size_t w = 0;
  for (size_t i = 0, j; i < h->nzx; i = j) {
    int by = 0;
    for (j = i; j < h->nzx && h->zx[j] >> 2 == h->zx[i] >> 2; j++)
      by += j == i || h->zx[j] != h->zx[j - 1];
    if (by >= quorum) h->zx[w++] = h->zx[i] >> 2;
    else h->uncommitted++;
  }
  h->nzx = w; /* committed zxids, sorted, each once */
  if (h->n > 1) qsort(h->op, h->n, sizeof *h->op, op_cmp);
  w = 0;
  for (size_t i = 0; i < h->n; i++) {
    const struct fc_txop *a = &h->op[w > 0 ? w - 1 : 0], *b = &h->op[i];
    if ((w > 0 && a->zxid == b->zxid && a->sub == b->sub &&
         a->kind == b->kind) ||
        !committed(h->zx, h->nzx, b->zxid)) {
      free(h->op[i].path);
      free(h->op[i].data);
      continue;
    }
    h->op[w++] = h->op[i];
  }
  h->n = w;
  /* within the span of our ops: each epoch's counters consecutive, and a
   * new epoch from counter 1 */
  *gaps = 0;
  uint64_t lo = UINT64_MAX, hi = 0;
  for (size_t i = 0; i < h->n; i++) {
    if (h->op[i].kind == FC_T_CLOSE) continue;
    if (h->op[i].zxid < lo) lo = h->op[i].zxid;
    if (h->op[i].zxid > hi) hi = h->op[i].zxid;
  }
  for (size_t i = 1; i < h->nzx; i++) {
    uint64_t a = h->zx[i - 1], b = h->zx[i];
    if (b <= lo || a >= hi) continue;
    if (a >> 32 == b >> 32) *gaps += (int)(b - a - 1);
    else *gaps += (int)((b & 0xffffffffu) - 1);
  }
}

void fc_history_free(struct fc_txhist *h) {
  for (size_t i = 0; i < h->n; i++) {
    free(h->op[i].path);
    free(h->op[i].data);
  }
  free(h->op);
  free(h->zx);
}

/* ---- the worker fleet's faults ------------------------------------------- */

int fc_stopping(const struct fc_worker *w) {
  return fc_load(w->stop) || getppid() != w->parent;
}

int fc_total_cuts(struct fc_worker *w) {
  int n = 0;
  for (int i = 0; i < FC_SERVERS; i++) n += it_proxy_cuts(w->px[i]);
  return n;
}

void *fc_cut_control(void *arg) {
  struct fc_worker *w = arg;
  struct fc_slot *sl = w->sl;
  int cut = 0, gen = fc_load(&sl->cut_gen), armed = 0, base = 0;
  int64_t armed_at = 0;
  while (!fc_load(&w->ctl_stop)) {
    int64_t now = it_now_ms();
    int want = now < __atomic_load_n(&sl->cut_until_ms, __ATOMIC_SEQ_CST);
    for (int i = 0; i < FC_SERVERS && want != cut; i++)
      it_proxy_blackhole(w->px[i], want);
    cut = want;
    int g = fc_load(&sl->cut_gen);
    if (g != gen) { /* armed anew, or disarmed (cut_op 0) */
      gen = g;
      int op = fc_load(&sl->cut_op);
      if (armed)
        __atomic_add_fetch(&sl->op_cuts, fc_total_cuts(w) - base,
                           __ATOMIC_SEQ_CST);
      base = fc_total_cuts(w);
      for (int i = 0; i < FC_SERVERS; i++) it_proxy_cut_after(w->px[i], op);
      armed = op != 0;
      armed_at = now;
    }
    if (armed) {
      int n = fc_total_cuts(w);
      if (n > base || now - armed_at > 5000) {
        for (int i = 0; i < FC_SERVERS; i++) it_proxy_cut_after(w->px[i], 0);
        __atomic_add_fetch(&sl->op_cuts, fc_total_cuts(w) - base,
                           __ATOMIC_SEQ_CST);
        armed = 0;
      }
    }
    it_sleep_ms(5);
  }
  return NULL;
}

void fc_proxies_start(struct fc_worker *w, struct fc_slot *sl) {
  size_t off = 0;
  w->sl = sl;
  for (int i = 0; i < FC_SERVERS; i++) {
    w->px[i] = it_proxy_start_to(fc_server_port(i + 1));
    off += (size_t)snprintf(w->hosts + off, sizeof w->hosts - off,
                            "%s127.0.0.1:%d", i > 0 ? "," : "",
                            it_proxy_port(w->px[i]));
  }
  if (pthread_create(&w->ctl, NULL, fc_cut_control, w) != 0) _exit(4);
}

void fc_proxies_stop(struct fc_worker *w) {
  fc_store(&w->ctl_stop, 1);
  pthread_join(w->ctl, NULL);
  for (int i = 0; i < FC_SERVERS; i++) it_proxy_stop(w->px[i]);
}

int fc_spare_wait(struct fc_worker *w, struct fc_spare *sp) {
  while (!fc_load(&sp->go)) {
    if (fc_stopping(w)) return 0;
    it_sleep_ms(5);
  }
  w->slot = sp->slot;
  return 1;
}

const char *fc_fault_names[FC_KINDS] = {
    "pause worker", "kill worker",  "cut worker",    "cut after op",
    "kill server",  "pause server", "restart server"};

void fc_sched_init(struct fc_sched *sc, const char *name) {
  memset(sc, 0, sizeof *sc);
  sc->name = name;
  sc->maxtrace = FC_MAXTRACE;
  sc->clock_us = fc_now_us;
}

void fc_sched_fleet(struct fc_sched *sc, int nslots, struct fc_spare *spare,
                    int *nspares, int *used, int session_ms, int max_paused,
                    int maxtrace) {
  sc->nslots = nslots;
  sc->spare = spare;
  sc->nspares = nspares;
  sc->used = used;
  sc->session_ms = session_ms;
  sc->max_paused = max_paused;
  sc->maxtrace = maxtrace;
}

uint64_t fc_rnd(struct fc_sched *sc) { return fc_xorshift(&sc->rng); }

int fc_between(uint64_t r, int lo, int hi) {
  return lo + (int)(r % (uint64_t)(hi - lo + 1));
}

static void note(struct fc_sched *sc, fc_fault_t kind, int who, int dur_ms,
                 int arg) {
  sc->faults[kind]++;
  if (sc->ntrace < sc->maxtrace && sc->ntrace < FC_MAXTRACE)
    sc->trace[sc->ntrace++] =
        (struct fc_trace){sc->clock_us(), kind, who, dur_ms, arg};
}

static int harness_now(struct fc_sched *sc, const char *verb, int id) {
  char cmd[1024];
  fc_harness_cmd(cmd, sizeof cmd, "", verb, id);
  if (system(cmd) == 0) return 1;
  fprintf(stderr, "%s: harness %s %d failed\n", sc->name, verb, id);
  sc->harness_failures++;
  return 0;
}

/* A verb that waits (restart), in a child so the schedule goes on. */
static pid_t harness_async(struct fc_sched *sc, const char *verb, int id) {
  char cmd[1024];
  fc_harness_cmd(cmd, sizeof cmd, "", verb, id);
  pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
  }
  if (pid < 0) sc->harness_failures++;
  return pid;
}

static void lost_worker(struct fc_sched *sc, int s, int status) {
  fprintf(stderr, "%s: slot %d (w%d) exited by itself, status %d\n",
          sc->name, s, sc->slot[s].who, status);
  sc->slot[s].pid = 0;
  sc->died++;
}

void fc_reap_unexpected(struct fc_sched *sc) {
  for (int s = 0; s < sc->nslots; s++) {
    int st;
    pid_t pid = sc->slot[s].pid;
    if (pid > 0 && waitpid(pid, &st, WNOHANG) == pid) lost_worker(sc, s, st);
  }
}

static int paused_now(const struct fc_sched *sc) {
  int n = 0;
  for (int s = 0; s < sc->nslots; s++) n += sc->slot[s].resume_at != 0;
  return n;
}

/* The a_pick-th (modulo their number) live slot that fits the armed
 * fault; -1 if none. */
static int pick_slot(struct fc_sched *sc) {
  int cand[FC_MAXSLOTS], n = 0;
  for (int s = 0; s < sc->nslots; s++) {
    if (sc->slot[s].pid <= 0) continue;
    if (sc->a_state >= 0 && fc_load(&sc->ctl[s]->state) != sc->a_state)
      continue;
    if (sc->fits != NULL && !sc->fits(s)) continue;
    int stopped = sc->slot[s].resume_at != 0, ok;
    switch (sc->a_kind) {
      case FC_PAUSE: ok = !stopped && paused_now(sc) < sc->max_paused; break;
      case FC_KILL: ok = !stopped && *sc->used < *sc->nspares; break;
      case FC_CUT: ok = sc->slot[s].lift_at == 0; break;
      default: ok = !stopped; break;
    }
    if (ok) cand[n++] = s;
  }
  return n > 0 ? cand[sc->a_pick % (uint64_t)n] : -1;
}

static int fire_worker_fault(struct fc_sched *sc) {
  int s = pick_slot(sc), st;
  if (s < 0) return 0;
  struct fc_slot *sl = sc->ctl[s];
  int who = sc->slot[s].who, state = fc_load(&sl->state);
  switch (sc->a_kind) {
    case FC_PAUSE:
      kill(sc->slot[s].pid, SIGSTOP);
      if (waitpid(sc->slot[s].pid, &st, WUNTRACED) != sc->slot[s].pid ||
          !WIFSTOPPED(st)) {
        lost_worker(sc, s, st);
        return 1;
      }
      state = fc_load(&sl->state); /* as it stopped */
      sc->mark(FC_PAUSE, who, state, sc->a_dur);
      sc->slot[s].resume_at = it_now_ms() + sc->a_dur;
      sc->long_pauses += sc->a_dur > sc->session_ms;
      if (state >= 0 && state < 3)
        sc->long_in[state] += sc->a_dur > sc->session_ms;
      note(sc, FC_PAUSE, who, sc->a_dur, state);
      return 1;
    case FC_KILL: { /* then a spare takes the slot as a new incarnation */
      kill(sc->slot[s].pid, SIGKILL);
      waitpid(sc->slot[s].pid, &st, 0);
      sc->mark(FC_KILL, who, state, 0);
      note(sc, FC_KILL, who, 0, state);
      struct fc_spare *sp = &sc->spare[(*sc->used)++];
      fc_store(&sl->state, FC_W_IDLE); /* the dead one's word is void */
      if (sc->takeover != NULL) sc->takeover(s);
      sp->slot = s;
      fc_store(&sp->go, 1);
      sc->slot[s].pid = sp->pid;
      sc->slot[s].who = sp->who;
      return 1;
    }
    case FC_CUT:
      sc->slot[s].lift_at = it_now_ms() + sc->a_dur;
      __atomic_store_n(&sl->cut_until_ms, sc->slot[s].lift_at,
                       __ATOMIC_SEQ_CST);
      note(sc, FC_CUT, who, sc->a_dur, sc->cut_state ? state : 0);
      return 1;
    default: /* FC_CUT_OP */
      fc_store(&sl->cut_op, sc->a_op);
      __atomic_add_fetch(&sl->cut_gen, 1, __ATOMIC_SEQ_CST);
      note(sc, FC_CUT_OP, who, 0, sc->a_op);
      return 1;
  }
}

/* One server at a time: the quorum stays. */
static int fire_server_fault(struct fc_sched *sc) {
  if (sc->srv_state != FC_SV_UP) return 0;
  fc_fault_t kind = sc->a_kind;
  int id = 1 + (int)(sc->a_pick % FC_SERVERS);
  sc->srv_id = id;
  sc->srv_undo_at = it_now_ms() + sc->a_dur;
  if (kind == FC_KILL_SERVER) {
    if (harness_now(sc, "kill", id)) sc->srv_state = FC_SV_DOWN;
  } else if (kind == FC_PAUSE_SERVER) {
    if (harness_now(sc, "pause", id)) sc->srv_state = FC_SV_PAUSED;
  } else if (harness_now(sc, "kill", id) &&
             (sc->srv_helper = harness_async(sc, "restart", id)) > 0) {
    sc->srv_state = FC_SV_RESTARTING;
  }
  note(sc, kind, id, kind == FC_RESTART_SERVER ? 0 : sc->a_dur, 0);
  return 1;
}

static void server_undo(struct fc_sched *sc, int64_t now, int all) {
  int st;
  if (sc->srv_state == FC_SV_DOWN && (all || now >= sc->srv_undo_at)) {
    sc->srv_helper = harness_async(sc, "restart", sc->srv_id);
    sc->srv_state = sc->srv_helper > 0 ? FC_SV_RESTARTING : FC_SV_UP;
  } else if (sc->srv_state == FC_SV_PAUSED &&
             (all || now >= sc->srv_undo_at)) {
    harness_now(sc, "resume", sc->srv_id);
    sc->srv_state = FC_SV_UP;
  } else if (sc->srv_state == FC_SV_RESTARTING &&
             waitpid(sc->srv_helper, &st, WNOHANG) == sc->srv_helper) {
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      fprintf(stderr, "%s: harness restart %d failed\n", sc->name,
              sc->srv_id);
      sc->harness_failures++;
    }
    sc->srv_state = FC_SV_UP;
  }
}

/* Undoes what is due (all: everything now). */
static void undo_due(struct fc_sched *sc, int64_t now, int all) {
  for (int s = 0; s < sc->nslots; s++) {
    struct fc_slot *sl = sc->ctl[s];
    if (all && fc_load(&sl->cut_op) != 0) { /* disarmed */
      fc_store(&sl->cut_op, 0);
      __atomic_add_fetch(&sl->cut_gen, 1, __ATOMIC_SEQ_CST);
    }
    if (sc->slot[s].resume_at != 0 && (all || now >= sc->slot[s].resume_at)) {
      sc->mark(-1, sc->slot[s].who, 0, 0);
      kill(sc->slot[s].pid, SIGCONT);
      sc->slot[s].resume_at = 0;
    }
    if (sc->slot[s].lift_at != 0 && (all || now >= sc->slot[s].lift_at)) {
      __atomic_store_n(&sl->cut_until_ms, 0, __ATOMIC_SEQ_CST);
      sc->slot[s].lift_at = 0;
    }
  }
  server_undo(sc, now, all);
}

void fc_arm(struct fc_sched *sc, int64_t now, fc_fault_t kind, int forced,
            uint64_t d) {
  sc->a_kind = kind;
  sc->a_dur = kind == FC_PAUSE ? fc_between(d, 300, 5000)
                               : fc_between(d, 500, 5000);
  if (forced && kind == FC_PAUSE) /* past the session timeout */
    sc->a_dur = fc_between(d, sc->session_ms * 9 / 4, sc->session_ms * 5 / 2);
  sc->a_state = -1;
  /* a target may turn up meanwhile; a forced fault waits longer */
  sc->a_until = now + (forced ? 5000 : 300);
  sc->armed = 1;
}

void fc_tick(struct fc_sched *sc, void (*arm)(int64_t now)) {
  int64_t now = it_now_ms();
  undo_due(sc, now, 0);
  if (sc->tick++ % 20 == 0) fc_reap_unexpected(sc);
  if (sc->armed) {
    int done = sc->a_kind >= FC_KILL_SERVER ? fire_server_fault(sc)
                                            : fire_worker_fault(sc);
    if (done) {
      sc->armed = 0;
    } else if (now >= sc->a_until) {
      sc->skipped[sc->a_kind]++;
      sc->armed = 0;
    }
  }
  if (!sc->armed && now >= sc->next) {
    arm(now);
    sc->next = now + fc_between(fc_rnd(sc), 500, 2500);
  }
}

void fc_undo_all(struct fc_sched *sc) {
  undo_due(sc, it_now_ms(), 1);
  if (sc->srv_state == FC_SV_RESTARTING) {
    int st = 0;
    if (!fc_reap_by(sc->srv_helper, it_now_ms() + 60000, &st)) {
      kill(sc->srv_helper, SIGKILL);
      waitpid(sc->srv_helper, &st, 0);
      sc->harness_failures++;
    } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      sc->harness_failures++;
    }
    sc->srv_state = FC_SV_UP;
  }
  harness_now(sc, "wait-ready", 0);
}

void fc_stop_fleet(struct fc_sched *sc, int *stop, int stop_ms,
                   void (*stuck)(int who)) {
  fc_store(stop, 1);
  int64_t until = it_now_ms() + stop_ms;
  for (int i = 0; i < sc->nslots + *sc->nspares; i++) {
    int k = i - sc->nslots;
    int who = k < 0 ? sc->slot[i].who : sc->spare[k].who;
    pid_t pid = k < 0 ? sc->slot[i].pid : k >= *sc->used ? sc->spare[k].pid : 0;
    int st = 0;
    if (pid <= 0) continue;
    if (!fc_reap_by(pid, until, &st)) {
      fprintf(stderr, "%s: w%d did not stop in %d ms\n", sc->name, who,
              stop_ms);
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      if (stuck != NULL) stuck(who);
      sc->stuck++;
    } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      fprintf(stderr, "%s: w%d ended with status %d\n", sc->name, who, st);
      sc->died++;
    }
  }
}

int fc_op_cuts(const struct fc_sched *sc) {
  int n = 0;
  for (int s = 0; s < sc->nslots; s++) n += fc_load(&sc->ctl[s]->op_cuts);
  return n;
}

void fc_print_trace(const struct fc_sched *sc, const char *what,
                    uint64_t seed, int64_t t0,
                    void (*line)(const struct fc_trace *t, double at)) {
  printf("fault trace%s%s (seed %" PRIu64 "; +s from the log's first "
         "record):\n", what != NULL ? " of " : "", what != NULL ? what : "",
         seed);
  for (int i = 0; i < sc->ntrace; i++) {
    const struct fc_trace *t = &sc->trace[i];
    double at = (t->t_us - t0) / 1e6;
    if (t->kind >= FC_KILL_SERVER)
      printf("  +%8.3f s  %-14s server %d  %5d ms\n", at,
             fc_fault_names[t->kind], t->who, t->dur_ms);
    else if (line != NULL)
      line(t, at);
    else
      printf("  +%8.3f s  %-14s w%-3d %5d ms  (%d)\n", at,
             fc_fault_names[t->kind], t->who, t->dur_ms, t->arg);
  }
}
