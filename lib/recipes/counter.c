/* lib/recipes/counter.c - the shared counter: one integer in the data of
 * one persistent node, changed only by compare-and-set on the node's data
 * version (see zkl/counter.h for the formats and the rules).
 *
 * Every call is a call of the call base (core/call.c), run as an
 * operation of the object's one contender, `c`, which never makes a node:
 * its waiter is what zkl_counter_wait() waits on (a data watch on the
 * counter's node). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zookeeper/zookeeper.h>

#include "core/contend.h"
#include "zkl/counter.h"

#define CREATE_TRIES 4 /* a create that meets a missing parent, or a set
                          that meets a node deleted meanwhile            */
#define TEXT_MAX 24    /* "-9223372036854775808" and a NUL               */

struct zkl_counter {
  zkl__calls_t calls; /* one call at a time; the cancel generation     */
  zkl_session_t *s;
  int format;
  int64_t initial;
  char *path;
  size_t path_len;
  zkl__contender_t c; /* its operations are the calls; it makes no node */
  uint64_t rng;       /* add's pauses after a conflict                 */
};

/* ---- the formats -------------------------------------------------------------- */

static int64_t min_of(int format) {
  return format == ZKL_COUNTER_INT32 ? INT32_MIN : INT64_MIN;
}
static int64_t max_of(int format) {
  return format == ZKL_COUNTER_INT32 ? INT32_MAX : INT64_MAX;
}
static const char *format_name(int format) {
  return format == ZKL_COUNTER_INT32   ? "32-bit"
         : format == ZKL_COUNTER_INT64 ? "64-bit"
                                       : "text";
}

/* The node's bytes for v (in range): their length. */
static int encode(int format, int64_t v, char *buf) {
  if (format == ZKL_COUNTER_TEXT) return snprintf(buf, TEXT_MAX, "%" PRId64, v);
  int n = format == ZKL_COUNTER_INT32 ? 4 : 8;
  uint64_t u = (uint64_t)v;
  for (int i = n - 1; i >= 0; i--) {
    buf[i] = (char)(u & 0xff);
    u >>= 8;
  }
  return n;
}

/* The value of len bytes of data: 0, or -1 if they are not of the format.
 * Empty data is `initial`. */
static int decode(int format, int64_t initial, const char *data, int len,
                  int64_t *v) {
  if (len == 0) {
    *v = initial;
    return 0;
  }
  if (format == ZKL_COUNTER_TEXT) {
    /* what kazoo writes: repr() of an int, an optional minus sign and
     * digits, nothing else */
    if (len >= TEXT_MAX) return -1;
    char buf[TEXT_MAX];
    memcpy(buf, data, (size_t)len);
    buf[len] = '\0';
    const char *p = buf[0] == '-' ? buf + 1 : buf;
    if (*p == '\0') return -1;
    for (const char *q = p; *q != '\0'; q++)
      if (*q < '0' || *q > '9') return -1;
    errno = 0;
    char *end;
    long long r = strtoll(buf, &end, 10);
    if (errno != 0 || *end != '\0') return -1;
    *v = r;
    return 0;
  }
  int n = format == ZKL_COUNTER_INT32 ? 4 : 8;
  if (len != n) return -1;
  uint64_t u = 0;
  for (int i = 0; i < n; i++) u = (u << 8) | (unsigned char)data[i];
  *v = n == 4 ? (int64_t)(int32_t)(uint32_t)u : (int64_t)u;
  return 0;
}

/* A pause after the n-th conflict of an add: uniform in [0, cap), cap
 * 2 ms doubling to 16 ms.  The object's own xorshift (one call at a time
 * per object, so no lock). */
static int64_t jitter_ns(zkl_counter_t *k, int n) {
  uint64_t x = k->rng;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  k->rng = x;
  int64_t cap = 2000000LL << (n > 4 ? 3 : n - 1);
  return (int64_t)(x % (uint64_t)cap);
}

/* ---- a call ------------------------------------------------------------------- */

enum { K_GET, K_SET, K_CAS, K_ADD, K_WAIT };

typedef struct ccall {
  zkl__call_t call; /* first: the call base */
  zkl_counter_t *k;
  int kind;
  pt_t pt, pt_read, pt_write, pt_change;
  int rc, zrc, tries, conflicts;
  int64_t until;        /* add: the end of the pause after a conflict  */
  int64_t arg;          /* set, cas: the value; add: the delta          */
  zkl_count_t seen;     /* cas: the caller's; wait: the baseline        */
  int has_seen;
  int64_t target;       /* the value being written                      */
  zkl_count_t base;     /* the write's condition: create if !exists, else
                           setData at base.version (set: any version)   */
  int blind;            /* set: at any version                          */
  int multi;            /* the write in flight is a multi (version -1)  */
  zkl_count_t now;      /* what the call saw last                       */
  int has_now;
  unsigned epoch;
  zkl__zcall_t *z, **zs;
  size_t nzs;
  zkl_count_fn fn;
} ccall_t;

#define READ_AGAIN 1  /* the read met a connection loss: look again */

static int map_zrc(zkl_counter_t *k, int zrc, const char *what) {
  if (zrc == ZNOCHILDRENFOREPHEMERALS)
    return zkl__fail(zrc, "%s %s: its parent is an ephemeral node", what,
                     k->path);
  return zkl__zrc_fail(k->s, zrc, what, k->path);
}

static int not_connected(ccall_t *x, int rc) {
  if (rc != ZKL_ETIMEDOUT) return rc;
  if (x->kind == K_GET || x->kind == K_SET || x->kind == K_CAS)
    return zkl__fail(ZKL_ESUSPENDED, "not connected to ZooKeeper within a "
                     "session timeout");
  return x->call.deadline == ZKL__TRY
             ? zkl__fail(ZKL_ESUSPENDED, "not connected to ZooKeeper")
             : zkl__fail(ZKL_ETIMEDOUT, "not connected to ZooKeeper before "
                         "the deadline");
}

/* Reads the node into x->now (watch: and leaves a watch on it, a data
 * watch or, while it is missing, an existence watch).  0; ZKL_EPROTO (the
 * data is not of the format; x->now has the version); READ_AGAIN; or a
 * code. */
static int read_step(zkl__op_t *o, ccall_t *x, int watch) {
  zkl_counter_t *k = x->k;
  pt_t *pt = &x->pt_read;
  PT_BEGIN(pt);
  for (;;) {
    x->z = zkl__zk_get_send(k->s, k->path, watch);
    PT_AWAIT_ANSWER(o, pt, x->z, x->call.dl);
    {
      char *data = NULL;
      int len = 0;
      struct Stat st;
      x->zrc = zkl__zk_get_wait(x->z, ZKL__TRY, &data, &len, &st);
      x->z = NULL;
      if (x->zrc == ZOK) {
        memset(&x->now, 0, sizeof x->now);
        x->now.exists = 1;
        x->now.version = st.version;
        x->now.zxid = (uint64_t)st.mzxid;
        x->has_now = 1;
        int bad = decode(k->format, k->initial, data, len, &x->now.value);
        free(data);
        if (bad)
          PT_RETURN(pt, zkl__fail(ZKL_EPROTO, "%s holds %d bytes that are "
                                  "not a %s counter", k->path, len,
                                  format_name(k->format)));
        PT_RETURN(pt, 0);
      }
      free(data);
    }
    if (x->zrc == ZCONNECTIONLOSS || x->zrc == ZOPERATIONTIMEOUT)
      PT_RETURN(pt, READ_AGAIN);
    if (x->zrc != ZNONODE) PT_RETURN(pt, map_zrc(k, x->zrc, "read"));
    memset(&x->now, 0, sizeof x->now);
    x->now.value = k->initial;
    x->has_now = 1;
    if (!watch) PT_RETURN(pt, 0);
    /* a missing node leaves no data watch: watch for its creation (and
     * read it if it came meanwhile) */
    x->z = zkl__zk_exists_send(k->s, k->path, 1);
    PT_AWAIT_ANSWER(o, pt, x->z, x->call.dl);
    x->zrc = zkl__zk_exists_wait(x->z, ZKL__TRY, NULL);
    x->z = NULL;
    if (x->zrc == ZNONODE) PT_RETURN(pt, 0);
    if (x->zrc == ZCONNECTIONLOSS || x->zrc == ZOPERATIONTIMEOUT)
      PT_RETURN(pt, READ_AGAIN);
    if (x->zrc != ZOK) PT_RETURN(pt, map_zrc(k, x->zrc, "watch"));
  }
  PT_END(pt);
  return 0;
}

/* Sends the node's missing parents (CONTAINER nodes, as Curator's
 * creatingParentContainersIfNeeded) and then the node, together. */
static int send_create_with_parents(ccall_t *x, const char *buf, int len) {
  zkl_counter_t *k = x->k;
  x->zs = zkl__zk_parents_send(k->s, k->path, &x->nzs);
  if (x->zs == NULL) return zkl__fail(ZKL_ENOMEM, "no memory");
  x->z = zkl__zk_create_send(k->s, k->path, buf, len, 0);
  return 0;
}

/* Writes x->target on the condition x->base (x->blind: whatever the
 * version).  0 and x->now the counter as written; ZKL_ESTALE (the
 * condition failed: x->now not set); ZKL_ESUSPENDED (the answer was lost:
 * may be applied); or a code.  Once sent, the answer is waited for whatever
 * the deadline: the client gives one at the latest when the connection is
 * given up. */
static int write_step(zkl__op_t *o, ccall_t *x) {
  zkl_counter_t *k = x->k;
  pt_t *pt = &x->pt_write;
  PT_BEGIN(pt);
  if (x->target < min_of(k->format) || x->target > max_of(k->format))
    PT_RETURN(pt, zkl__fail(ZKL_ERANGE, "%" PRId64 " does not fit a %s "
                            "counter (%s)", x->target,
                            format_name(k->format), k->path));
  for (x->tries = 0;; x->tries++) {
    {
      char buf[TEXT_MAX];
      int len = encode(k->format, x->target, buf);
      if (!x->base.exists) {
        if (x->tries == 0) {
          x->z = zkl__zk_create_send(k->s, k->path, buf, len, 0);
        } else {
          int rc = send_create_with_parents(x, buf, len);
          if (rc != 0) PT_RETURN(pt, rc);
        }
      } else if (!x->blind && x->base.version == -1) {
        /* ZooKeeper reads version -1 as "any": the condition is put after
         * the write instead, in one multi: the write makes the version
         * 0 only if it was -1 before, and the check of 0 undoes it if
         * not (another writer came first) */
        zkl__mop_t m[2] = {
            {.type = ZOO_SETDATA_OP, .path = k->path, .data = buf,
             .len = len, .version = -1},
            {.type = ZOO_CHECK_OP, .path = k->path, .version = 0},
        };
        x->z = zkl__zk_multi_send(k->s, m, 2);
        x->multi = 1;
      } else {
        x->z = zkl__zk_set_send(k->s, k->path, buf, len,
                                x->blind ? -1 : x->base.version);
      }
    }
    PT_AWAIT_ANSWER(o, pt, x->z, ZKL__FOREVER);
    {
      struct Stat st;
      memset(&st, 0, sizeof st);
      if (!x->base.exists) {
        char *made = NULL;
        x->zrc = zkl__zk_create_wait(x->z, ZKL__TRY, &made, &st);
        free(made);
        zkl__zk_parents_end(x->zs, x->nzs);
        x->zs = NULL;
        x->nzs = 0;
      } else if (x->multi) {
        struct Stat sts[2];
        int errs[2];
        x->zrc = zkl__zk_multi_wait_stat(x->z, ZKL__TRY, errs, NULL, sts);
        x->multi = 0;
        if (x->zrc == ZOK) st = sts[0];
        else if (errs[1] == ZBADVERSION) x->zrc = ZBADVERSION;
      } else {
        x->zrc = zkl__zk_set_wait(x->z, ZKL__TRY, &st);
      }
      x->z = NULL;
      if (x->zrc == ZOK) {
        memset(&x->now, 0, sizeof x->now);
        x->now.value = x->target;
        x->now.version = st.version;
        x->now.exists = 1;
        x->now.zxid = (uint64_t)st.mzxid;
        x->has_now = 1;
        PT_RETURN(pt, 0);
      }
    }
    if (x->zrc == ZCONNECTIONLOSS || x->zrc == ZOPERATIONTIMEOUT)
      PT_RETURN(pt, zkl__fail(ZKL_ESUSPENDED, "the connection was lost before "
                              "the answer to the write of %s came: it may "
                              "have been applied", k->path));
    if (!x->base.exists && x->zrc == ZNONODE && x->tries + 1 < CREATE_TRIES)
      continue; /* a parent is missing: made with the next try */
    if (x->blind && x->zrc == ZNONODE && x->tries + 1 < CREATE_TRIES) {
      x->base.exists = 0; /* deleted meanwhile: make it */
      continue;
    }
    if (x->blind && x->zrc == ZNODEEXISTS && x->tries + 1 < CREATE_TRIES) {
      x->base.exists = 1; /* made meanwhile: write over it */
      continue;
    }
    if (x->zrc == ZBADVERSION || x->zrc == ZNODEEXISTS || x->zrc == ZNONODE)
      PT_RETURN(pt, ZKL_ESTALE);
    PT_RETURN(pt, map_zrc(k, x->zrc, "write"));
  }
  PT_END(pt);
  return 0;
}

/* Does b differ from a (another write, or the node made or deleted)? */
static int differs(const zkl_count_t *a, const zkl_count_t *b) {
  if (a->exists != b->exists) return 1;
  return a->exists && (a->version != b->version || a->zxid != b->zxid);
}

static int stale(ccall_t *x) {
  return zkl__fail(ZKL_ESTALE, "%s changed since it was read: nothing "
                   "written", x->k->path);
}

/* get, set, cas: each request until the call's deadline (a session timeout
 * or the caller's) */
static int short_step(zkl__op_t *o, void *ctx) {
  ccall_t *x = ctx;
  pt_t *pt = &x->pt;
  PT_BEGIN(pt);
  for (;;) {
    PT_CALL(pt, x->rc, zkl__op_connected(o, x->call.deadline));
    if (x->rc != 0) PT_RETURN(pt, not_connected(x, x->rc));
    if (x->kind == K_GET) {
      PT_CALL(pt, x->rc, read_step(o, x, 0));
      if (x->rc == READ_AGAIN) continue;
      PT_RETURN(pt, x->rc);
    }
    if (x->kind == K_SET) {
      /* made when missing, else written at any version (a set is
       * unconditional): a guess that the node exists saves a request */
      x->base.exists = 1;
      x->blind = 1;
      x->target = x->arg;
      PT_CALL(pt, x->rc, write_step(o, x));
      PT_RETURN(pt, x->rc);
    }
    /* cas */
    x->target = x->arg;
    x->base = x->seen;
    PT_CALL(pt, x->rc, write_step(o, x));
    if (x->rc != ZKL_ESTALE) PT_RETURN(pt, x->rc);
    /* tell what it is now */
    x->has_now = 0;
    for (;;) {
      PT_CALL(pt, x->rc, zkl__op_connected(o, x->call.deadline));
      if (x->rc != 0) PT_RETURN(pt, stale(x));
      PT_CALL(pt, x->rc, read_step(o, x, 0));
      if (x->rc != READ_AGAIN) break;
    }
    PT_RETURN(pt, stale(x));
  }
  PT_END(pt);
  return 0;
}

/* Waits until the counter differs from x->seen (unset: from the first
 * read), reading it with a watch: 0 or ZKL_EPROTO (x->now is the change),
 * ZKL_ETIMEDOUT, ZKL_ECANCELED, or a code.  A connection that is down is
 * waited through until the deadline. */
static int change_step(zkl__op_t *o, ccall_t *x) {
  zkl_counter_t *k = x->k;
  pt_t *pt = &x->pt_change;
  PT_BEGIN(pt);
  for (;;) {
    PT_CALL(pt, x->rc, zkl__op_connected(o, x->call.deadline));
    if (x->rc != 0) PT_RETURN(pt, not_connected(x, x->rc));
    zkl__session_lock(k->s);
    zkl__waiter_register(k->s, &k->c.w, k->path);
    x->epoch = zkl__session_epoch(k->s);
    zkl__session_unlock(k->s);
    PT_CALL(pt, x->rc, read_step(o, x, 1));
    if (x->rc == READ_AGAIN) {
      zkl__op_unwait(o);
      continue;
    }
    if (x->rc != 0 && x->rc != ZKL_EPROTO) {
      zkl__op_unwait(o);
      PT_RETURN(pt, x->rc);
    }
    if (!x->has_seen) {
      x->seen = x->now; /* the next change from now on */
      x->has_seen = 1;
    } else if (differs(&x->seen, &x->now)) {
      zkl__op_unwait(o);
      PT_RETURN(pt, x->rc);
    }
    PT_CALL(pt, x->zrc, zkl__op_await(o, x->epoch, x->call.deadline));
    if (x->zrc == ZKL_ETIMEDOUT)
      PT_RETURN(pt, zkl__fail(ZKL_ETIMEDOUT, "%s did not change until the "
                              "deadline", k->path));
    if (x->zrc == ZKL_ECANCELED)
      PT_RETURN(pt, zkl__fail(ZKL_ECANCELED, "the call on %s was canceled",
                              k->path));
    /* fired, or the session changed: look again */
  }
  PT_END(pt);
  return 0;
}

static int add_step(zkl__op_t *o, void *ctx) {
  ccall_t *x = ctx;
  zkl_counter_t *k = x->k;
  pt_t *pt = &x->pt;
  PT_BEGIN(pt);
  /* Always read first.  A guess from the object's own last write would
   * save the read while nobody else writes, but a version names no node:
   * one deleted and made again since has the same versions anew, and a
   * guessed write would land on it with a value computed from the old
   * one.  Read then write leaves that window only between the two. */
  for (;;) {
    PT_CALL(pt, x->rc, zkl__op_connected(o, x->call.deadline));
    if (x->rc != 0) PT_RETURN(pt, not_connected(x, x->rc));
    PT_CALL(pt, x->rc, read_step(o, x, 0));
    if (x->rc == READ_AGAIN) continue;
    if (x->rc != 0) PT_RETURN(pt, x->rc);
    if ((x->arg > 0 && x->now.value > max_of(k->format) - x->arg) ||
        (x->arg < 0 && x->now.value < min_of(k->format) - x->arg))
      PT_RETURN(pt, zkl__fail(ZKL_ERANGE, "%" PRId64 " + %" PRId64 " leaves "
                              "the range of a %s counter (%s): nothing "
                              "written", x->now.value, x->arg,
                              format_name(k->format), k->path));
    x->target = x->now.value + x->arg;
    x->base = x->now;
    x->blind = 0;
    PT_CALL(pt, x->rc, write_step(o, x));
    if (x->rc != ZKL_ESTALE) PT_RETURN(pt, x->rc);
    if (x->call.deadline == ZKL__TRY)
      PT_RETURN(pt, zkl__fail(ZKL_ESTALE, "another writer of %s came first: "
                              "nothing written", k->path));
    if (zkl__now_ns() >= x->call.deadline)
      PT_RETURN(pt, zkl__fail(ZKL_ETIMEDOUT, "other writers of %s kept "
                              "coming first until the deadline: nothing "
                              "written", k->path));
    if (zkl__op_canceled(o))
      PT_RETURN(pt, zkl__fail(ZKL_ECANCELED, "the add to %s was canceled",
                              k->path));
    /* Another writer came first: a short random pause before reading
     * again (up to 2, 4, 8, then 16 ms), so that contenders spread out
     * instead of all reading the same version again and all but one
     * losing again: with 8 contenders, 4 writes per increment at once,
     * about 1.5 with the pause (docs/performance.md, S11). */
    x->conflicts++;
    x->until = zkl__now_ns() + jitter_ns(k, x->conflicts);
    if (x->call.deadline != ZKL__FOREVER && x->until > x->call.deadline)
      x->until = x->call.deadline;
    PT_AWAIT(o, pt, zkl__now_ns() >= x->until || zkl__op_canceled(o),
             x->until);
  }
  PT_END(pt);
  return 0;
}

static int wait_step(zkl__op_t *o, void *ctx) {
  ccall_t *x = ctx;
  pt_t *pt = &x->pt;
  PT_BEGIN(pt);
  PT_CALL(pt, x->rc, change_step(o, x));
  PT_RETURN(pt, x->rc);
  PT_END(pt);
  return 0;
}

/* ---- running calls ------------------------------------------------------------ */

static zkl__step_fn step_of(int kind) {
  return kind == K_ADD ? add_step : kind == K_WAIT ? wait_step : short_step;
}

static void ccall_release(zkl__call_t *c) {
  ccall_t *x = (ccall_t *)c;
  zkl__zk_parents_end(x->zs, x->nzs);
  free(c->detail);
  free(x);
}

static void ccall_deliver(zkl__call_t *c) {
  ccall_t *x = (ccall_t *)c;
  /* what the call saw, on success and on the failures that saw it */
  const zkl_count_t *now =
      x->has_now && (c->rc == 0 || c->rc == ZKL_ESTALE || c->rc == ZKL_EPROTO)
          ? &x->now
          : NULL;
  x->fn(c->obj, c->rc, now, c->arg);
}

static int null_counter(void) {
  return zkl__fail(ZKL_EINVAL, "counter is NULL");
}

static ccall_t *ccall_new(zkl_counter_t *k, int kind, int64_t timeout_ms) {
  ccall_t *x = calloc(1, sizeof *x);
  if (x == NULL) {
    zkl__fail(ZKL_ENOMEM, "no memory for a counter call");
    return NULL;
  }
  zkl__call_init(&x->call, &k->calls, k, timeout_ms);
  x->call.release = ccall_release;
  x->call.deliver = ccall_deliver;
  x->k = k;
  x->kind = kind;
  return x;
}

/* get, set and cas wait for a connection up to a session timeout */
static int64_t short_timeout(zkl_counter_t *k) {
  return zkl_session_timeout(k->s);
}

static int run(zkl_counter_t *k, int kind, int64_t timeout_ms, int64_t arg,
               const zkl_count_t *seen, zkl_count_t *now) {
  zkl__clear_error();
  if (k == NULL) return null_counter();
  if (kind == K_CAS && seen == NULL)
    return zkl__fail(ZKL_EINVAL, "seen is NULL");
  if (kind == K_GET && now == NULL) return zkl__fail(ZKL_EINVAL, "now is NULL");
  ccall_t *x = ccall_new(k, kind, timeout_ms);
  if (x == NULL) {
    if (now != NULL) memset(now, 0, sizeof *now);
    return ZKL_ENOMEM;
  }
  x->arg = arg;
  if (seen != NULL) { /* before *now is cleared: they may be one */
    x->seen = *seen;
    x->has_seen = 1;
  }
  if (now != NULL) memset(now, 0, sizeof *now);
  int rc = zkl__call_blocking(&x->call, &k->c, step_of(kind));
  if (now != NULL && x->has_now &&
      (rc == 0 || rc == ZKL_ESTALE || rc == ZKL_EPROTO))
    *now = x->now;
  ccall_release(&x->call);
  return rc;
}

static int run_async(zkl_counter_t *k, int kind, int64_t timeout_ms,
                     int64_t arg, const zkl_count_t *seen, zkl_count_fn cb,
                     void *cbarg) {
  zkl__clear_error();
  if (k == NULL) return null_counter();
  if (cb == NULL) return zkl__fail(ZKL_EINVAL, "the callback is NULL");
  if (kind == K_CAS && seen == NULL)
    return zkl__fail(ZKL_EINVAL, "seen is NULL");
  ccall_t *x = ccall_new(k, kind, timeout_ms);
  if (x == NULL) return ZKL_ENOMEM;
  x->arg = arg;
  if (seen != NULL) {
    x->seen = *seen;
    x->has_seen = 1;
  }
  x->fn = cb;
  x->call.arg = cbarg;
  return zkl__call_async(&x->call, &k->c, step_of(kind));
}

/* ---- the public calls -------------------------------------------------------- */

void zkl_counter_opts_init(zkl_counter_opts_t *opts) {
  if (opts == NULL) return;
  memset(opts, 0, sizeof *opts);
  opts->format = ZKL_COUNTER_INT32;
}

int zkl_counter_create(zkl_counter_t **out, zkl_session_t *s,
                       const char *path, const zkl_counter_opts_t *opts) {
  zkl__clear_error();
  if (out == NULL) return zkl__fail(ZKL_EINVAL, "out is NULL");
  *out = NULL;
  zkl_counter_opts_t def;
  zkl_counter_opts_init(&def);
  if (opts == NULL) opts = &def;
  int rc = zkl__check_recipe_args(s, path, NULL, 0);
  if (rc != 0) return rc;
  if (strcmp(path, "/") == 0)
    return zkl__fail(ZKL_EINVAL, "a counter cannot be at /");
  if (opts->format != ZKL_COUNTER_INT32 && opts->format != ZKL_COUNTER_INT64 &&
      opts->format != ZKL_COUNTER_TEXT)
    return zkl__fail(ZKL_EINVAL, "unknown counter format %d",
                     (int)opts->format);
  if (opts->initial < min_of((int)opts->format) ||
      opts->initial > max_of((int)opts->format))
    return zkl__fail(ZKL_EINVAL, "initial value %" PRId64 " does not fit a "
                     "%s counter", opts->initial,
                     format_name((int)opts->format));
  zkl_counter_t *k = calloc(1, sizeof *k);
  if (k == NULL) return zkl__fail(ZKL_ENOMEM, "no memory for a counter");
  k->s = s;
  k->rng = (uint64_t)zkl__now_ns() ^ ((uint64_t)(uintptr_t)k << 16) ^
           0x9e3779b97f4a7c15ULL;
  if (k->rng == 0) k->rng = 1;
  k->format = (int)opts->format;
  k->initial = opts->initial;
  k->path = strdup(path);
  k->path_len = strlen(path);
  rc = k->path == NULL ? ZKL_ENOMEM : zkl__calls_init(&k->calls, s, "counter");
  if (rc == 0) {
    rc = zkl__contender_init(&k->c, s, &zkl__driver_mutex, path, NULL, 0,
                             &k->calls.own.cancel_gen);
    if (rc != 0) zkl__calls_fini(&k->calls);
  }
  if (rc != 0) {
    free(k->path);
    free(k);
    return zkl__fail(rc, rc == ZKL_ENOMEM ? "no memory for a counter"
                                          : "cannot make the counter's mutex");
  }
  *out = k;
  return 0;
}

int zkl_counter_get(zkl_counter_t *k, zkl_count_t *now) {
  return run(k, K_GET, k != NULL ? short_timeout(k) : 0, 0, NULL, now);
}
int zkl_counter_set(zkl_counter_t *k, int64_t value, zkl_count_t *now) {
  return run(k, K_SET, k != NULL ? short_timeout(k) : 0, value, NULL, now);
}
int zkl_counter_cas(zkl_counter_t *k, const zkl_count_t *seen, int64_t value,
                    zkl_count_t *now) {
  return run(k, K_CAS, k != NULL ? short_timeout(k) : 0, value, seen, now);
}
int zkl_counter_add(zkl_counter_t *k, int64_t delta, int64_t timeout_ms,
                    zkl_count_t *now) {
  return run(k, K_ADD, timeout_ms, delta, NULL, now);
}
int zkl_counter_wait(zkl_counter_t *k, const zkl_count_t *seen,
                     int64_t timeout_ms, zkl_count_t *now) {
  return run(k, K_WAIT, timeout_ms, 0, seen, now);
}

int zkl_counter_get_async(zkl_counter_t *k, zkl_count_fn cb, void *arg) {
  return run_async(k, K_GET, k != NULL ? short_timeout(k) : 0, 0, NULL, cb,
                   arg);
}
int zkl_counter_set_async(zkl_counter_t *k, int64_t value, zkl_count_fn cb,
                          void *arg) {
  return run_async(k, K_SET, k != NULL ? short_timeout(k) : 0, value, NULL,
                   cb, arg);
}
int zkl_counter_cas_async(zkl_counter_t *k, const zkl_count_t *seen,
                          int64_t value, zkl_count_fn cb, void *arg) {
  return run_async(k, K_CAS, k != NULL ? short_timeout(k) : 0, value, seen,
                   cb, arg);
}
int zkl_counter_add_async(zkl_counter_t *k, int64_t delta, int64_t timeout_ms,
                          zkl_count_fn cb, void *arg) {
  return run_async(k, K_ADD, timeout_ms, delta, NULL, cb, arg);
}
int zkl_counter_wait_async(zkl_counter_t *k, const zkl_count_t *seen,
                           int64_t timeout_ms, zkl_count_fn cb, void *arg) {
  return run_async(k, K_WAIT, timeout_ms, 0, seen, cb, arg);
}

int zkl_counter_cancel(zkl_counter_t *k) {
  zkl__clear_error();
  if (k == NULL) return null_counter();
  zkl__owner_cancel(&k->calls.own);
  zkl__contend_cancel(&k->c);
  return 0;
}

static void kick(void *arg) { zkl_counter_cancel(arg); }

void zkl_counter_destroy(zkl_counter_t *k) {
  if (k == NULL) return;
  zkl__calls_drain(&k->calls, kick, k);
  zkl__contender_fini(&k->c);
  zkl__calls_fini(&k->calls);
  free(k->path);
  free(k);
}
