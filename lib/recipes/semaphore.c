/* lib/recipes/semaphore.c - the counting semaphore in Curator's
 * InterProcessSemaphoreV2 layout (see zkl/semaphore.h): a gate mutex at
 * <path>/locks and a lease node per lease under <path>/leases; or in
 * kazoo's: a gate at <path>-__lock__ (kazoo Lock names), the leases right
 * under <path>, the maximum in <path>'s data (ASCII).  One protocol for
 * both: only the paths, the gate's names and the maximum's source differ.
 *
 * An acquire is one call (core/call.c) run as an operation of the gate's
 * contender: it takes the gate (the mutex protocol: arrival order, each
 * waiter watching its predecessor), then, as the gate's holder, watches
 * the leases (and the shared count) until qty fit, and makes the qty
 * lease nodes in one multi that also writes (so checks) the gate node;
 * then it lets the gate go.  A release is not a call: it deletes lease
 * nodes with plain requests, so that it never waits behind an acquire. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zookeeper/zookeeper.h>

#include "core/contend.h"
#include "zkl/semaphore.h"

#define LEASE_MARK "lease-"
#define NAME_CAP 64         /* zkl_lease_t.name                            */
#define MAKE_TRIES 8        /* multis refused for a missing leases/ path  */

typedef struct held {
  char name[NAME_CAP];
  uint64_t token;
  int64_t sid; /* the session its node belongs to */
} held_t;

struct zkl_sem {
  zkl__calls_t calls; /* one acquire at a time; calls.own.mu guards held */
  zkl_session_t *s;
  char *path, *leases, *count_path;
  size_t leases_len;
  int max;            /* local, 0: from count_path (kazoo: <path>) only */
  int kazoo;          /* ZKL_SEM_KAZOO: leases = path, the maximum in its
                         data as ASCII, count_path NULL                   */
  int gate_ro;        /* our gate node refused a write (its ACL): the
                         lease multi checks it instead (the acquire's) */
  zkl__contender_t gate; /* <path>/locks; its waiter also watches the
                            leases and the count while it holds the gate */
  held_t *held;
  size_t n_held, cap_held;
  size_t rels_pending; /* async releases not posted yet (own.mu)       */
};

/* ---- held leases (own.mu) --------------------------------------------------------- */

static ptrdiff_t held_find(const zkl_sem_t *m, const char *name) {
  for (size_t i = 0; i < m->n_held; i++)
    if (strcmp(m->held[i].name, name) == 0) return (ptrdiff_t)i;
  return -1;
}

static int held_add(zkl_sem_t *m, const held_t *h, size_t n) {
  if (m->n_held + n > m->cap_held) {
    size_t cap = m->n_held + n + 8;
    held_t *v = realloc(m->held, cap * sizeof *v);
    if (v == NULL) return ZKL_ENOMEM;
    m->held = v;
    m->cap_held = cap;
  }
  memcpy(m->held + m->n_held, h, n * sizeof *h);
  m->n_held += n;
  return 0;
}

static void held_remove(zkl_sem_t *m, size_t i) {
  m->held[i] = m->held[--m->n_held];
}

static void lease_path(const zkl_sem_t *m, const char *name, char *buf,
                       size_t len) {
  snprintf(buf, len, "%s/%s", m->leases, name);
}

static int lease_health(zkl_sem_t *m, int64_t sid) {
  if (zkl_session_id(m->s) != sid) return ZKL_ELOST; /* a new session */
  return zkl__session_health(m->s);
}

/* ---- an acquire --------------------------------------------------------------------- */

typedef struct scall {
  zkl__call_t call; /* first: the call base */
  zkl_sem_t *m;
  int kind;         /* S_ACQUIRE, S_COUNT or S_HOLDERS */
  pt_t pt;
  int rc, zrc, tries, saved_rc;
  unsigned qty;
  int in_gate;      /* we hold the gate                                */
  int sent;         /* a lease multi was sent: its outcome may be unknown */
  unsigned epoch;
  char prefix[ZKL__PREFIX_LEN + 1]; /* this acquisition's "_c_<uuid>-" */
  int max;          /* as read                                          */
  uint64_t token;   /* the lease multi's zxid, 0 until known            */
  size_t leased;    /* as listed                                        */
  zkl__zcall_t *z, *z0, *z2, **zs;
  size_t nzs;
  struct String_vector kids;
  held_t *got;      /* the leases made (qty)                             */
  zkl__zcall_t **gets; /* holders: a read per lease listed             */
  zkl_sem_holder_t *hv;
  size_t nh, gi;
  zkl_leases_fn fn;
} scall_t;

enum { S_ACQUIRE, S_COUNT, S_HOLDERS };

static int map_zrc(zkl_sem_t *m, int zrc, const char *what) {
  return zkl__zrc_fail(m->s, zrc, what, m->path);
}

static int lost_answer(int zrc) {
  return zrc == ZCONNECTIONLOSS || zrc == ZOPERATIONTIMEOUT;
}

/* Where the maximum is read from: the shared count, <path> itself in
 * kazoo's layout, or nowhere (NULL: the local max). */
static const char *max_src(const zkl_sem_t *m) {
  return m->kazoo ? m->path : m->count_path;
}

/* kazoo's maximum: <path>'s data as Python's int() reads it (blanks
 * around, a sign, digits with single '_' between them).  1 and *v, or 0
 * when it is no number (kazoo then ignores it). */
static int ascii_max(const char *d, int len, long long *v) {
  int i = 0, neg = 0, digits = 0;
  long long n = 0;
  while (i < len && (d[i] == ' ' || (d[i] >= '\t' && d[i] <= '\r'))) i++;
  if (i < len && (d[i] == '+' || d[i] == '-')) neg = d[i++] == '-';
  for (; i < len; i++) {
    if (d[i] >= '0' && d[i] <= '9') {
      if (n < 1000000000000LL) n = n * 10 + (d[i] - '0');
      digits++;
    } else if (d[i] == '_' && digits > 0 && i + 1 < len && d[i + 1] >= '0' &&
               d[i + 1] <= '9') {
      continue;
    } else {
      break;
    }
  }
  while (i < len && (d[i] == ' ' || (d[i] >= '\t' && d[i] <= '\r'))) i++;
  if (digits == 0 || i != len) return 0;
  *v = neg ? -n : n;
  return 1;
}

/* The maximum kazoo keeps in <path>'s data (data, len): x->max, or
 * ZKL_EINVAL. */
static int max_take_kazoo(scall_t *x, const char *data, int len) {
  zkl_sem_t *m = x->m;
  long long v = 0;
  if (data == NULL || len <= 0 || !ascii_max(data, len, &v)) {
    if (m->max > 0) return 0; /* no number: ignored, as kazoo does */
    return zkl__fail(ZKL_EINVAL, "%s: no maximum stored in its data (kazoo's "
                     "layout) and no max given", m->path);
  }
  if (v < 1 || v > INT_MAX)
    return zkl__fail(ZKL_EINVAL, "%s: the maximum stored in its data, %lld, "
                     "is not 1 or more", m->path, v);
  if (m->max > 0 && v != m->max)
    return zkl__fail(ZKL_EINVAL, "%s: max %d disagrees with the maximum %lld "
                     "stored in its data (kazoo's layout)", m->path, m->max,
                     v);
  x->max = (int)v;
  return 0;
}

/* The maximum from the shared count's answer (z2) and the local one:
 * x->max, or ZKL_EINVAL. */
static int max_take(scall_t *x) {
  zkl_sem_t *m = x->m;
  x->max = m->max;
  if (max_src(m) == NULL) return 0;
  char *data = NULL;
  int len = 0;
  int zrc = zkl__zk_get_wait(x->z2, ZKL__TRY, &data, &len, NULL);
  x->z2 = NULL;
  if (zrc == ZNONODE) {
    free(data);
    if (m->max > 0) return 0;
    if (m->kazoo)
      return zkl__fail(ZKL_EINVAL, "%s: no such semaphore (kazoo's layout: "
                       "the maximum is in its data) and no max given",
                       m->path);
    return zkl__fail(ZKL_EINVAL, "%s: no shared count at %s and no max "
                     "given", m->path, m->count_path);
  }
  if (zrc != ZOK) {
    free(data);
    return map_zrc(m, zrc, "read the count of");
  }
  if (m->kazoo) {
    int rc = max_take_kazoo(x, data, len);
    free(data);
    return rc;
  }
  int32_t v = 0;
  int ok = len == 4;
  if (ok)
    v = (int32_t)(((uint32_t)(unsigned char)data[0] << 24) |
                  ((uint32_t)(unsigned char)data[1] << 16) |
                  ((uint32_t)(unsigned char)data[2] << 8) |
                  (uint32_t)(unsigned char)data[3]);
  free(data);
  if (!ok || v < 1)
    return zkl__fail(ZKL_EINVAL, "%s: the shared count %s is not a 4-byte "
                     "maximum of 1 or more", m->path, m->count_path);
  if (m->max > 0 && v != m->max)
    return zkl__fail(ZKL_EINVAL, "%s: max %d disagrees with the shared "
                     "count %d at %s", m->path, m->max, (int)v,
                     m->count_path);
  x->max = (int)v;
  return 0;
}

/* How many of the listed leases are this acquisition's. */
static size_t ours(const scall_t *x) {
  size_t n = 0;
  for (int i = 0; i < x->kids.count; i++)
    if (zkl__name_is_mine(x->kids.data[i], x->prefix)) n++;
  return n;
}

/* The lease multi: a write of our gate node (its own data again), then
 * qty creates.  The write fails the multi as a check would if the node is
 * gone, and its stat's mzxid is the multi's zxid: the czxid of the leases,
 * their token, with no read after.  It also tells a zkl acquirer behind us
 * in the gate, as a release mark does, that it may look at the leases:
 * ours are made by then (the same transaction), and we make no more.  Other
 * peers' waiters (Curator's, kazoo's) look again and find our gate node
 * still there until our release deletes it.  A gate node whose ACL refuses
 * the write (m->gate_ro) is checked instead, and the token read after. */
static zkl__zcall_t *lease_multi(scall_t *x) {
  zkl_sem_t *m = x->m;
  zkl__mop_t *ops = calloc(x->qty + 1, sizeof *ops);
  size_t pl = m->leases_len + 1 + ZKL__PREFIX_LEN + sizeof LEASE_MARK;
  char *p = malloc(pl);
  zkl__zcall_t *z = NULL;
  if (ops != NULL && p != NULL) {
    snprintf(p, pl, "%s/%s%s", m->leases, x->prefix, LEASE_MARK);
    ops[0] = m->gate_ro
                 ? (zkl__mop_t){.type = ZOO_CHECK_OP, .path = m->gate.node,
                                .version = -1}
                 : (zkl__mop_t){.type = ZOO_SETDATA_OP, .path = m->gate.node,
                                .data = m->gate.data,
                                .len = m->gate.data_len, .version = -1};
    for (unsigned i = 1; i <= x->qty; i++)
      ops[i] = (zkl__mop_t){.type = ZOO_CREATE_OP, .path = p,
                            .data = m->gate.data, .len = m->gate.data_len,
                            .flags = ZOO_EPHEMERAL | ZOO_SEQUENCE};
    z = zkl__zk_multi_send(m->s, ops, (int)x->qty + 1);
  }
  free(p);
  free(ops);
  return z;
}

/* Our leases' names from the multi's paths (made) or from a listing. */
static void got_from_made(scall_t *x, char **made) {
  for (unsigned i = 0; i < x->qty; i++) {
    const char *slash = made[i + 1] != NULL ? strrchr(made[i + 1], '/') : NULL;
    snprintf(x->got[i].name, NAME_CAP, "%s",
             slash != NULL ? slash + 1 : "");
  }
}

static void got_from_listing(scall_t *x) {
  unsigned j = 0;
  for (int i = 0; i < x->kids.count && j < x->qty; i++)
    if (zkl__name_is_mine(x->kids.data[i], x->prefix))
      snprintf(x->got[j++].name, NAME_CAP, "%s", x->kids.data[i]);
}

/* Gives leases back without a request (from dispatch, with its queue
 * locked): forgotten by the object, and deleted by the janitor unless
 * their session is gone (then they went with it). */
static void give_back(zkl_sem_t *m, const held_t *h, size_t n) {
  size_t pl = m->leases_len + NAME_CAP + 2;
  char *p = malloc(pl);
  pthread_mutex_lock(&m->calls.own.mu);
  for (size_t i = 0; i < n; i++) {
    ptrdiff_t j = held_find(m, h[i].name);
    if (j >= 0) held_remove(m, (size_t)j);
    if (lease_health(m, h[i].sid) != ZKL_ELOST && p != NULL) {
      lease_path(m, h[i].name, p, pl);
      zkl__janitor_add_owned(m->s, p, m->gate.data, m->gate.data_len);
    }
  }
  pthread_mutex_unlock(&m->calls.own.mu);
  free(p);
}

static int acquire_step(zkl__op_t *op, void *ctx) {
  scall_t *x = ctx;
  zkl_sem_t *m = x->m;
  pt_t *pt = &x->pt;
  PT_BEGIN(pt);
  if (max_src(m) != NULL) {
    /* a shared count that refuses this acquire is told before lining up
     * (it is read again, and watched, by the gate's holder) */
    PT_CALL(pt, x->rc, zkl__op_connected(op, x->call.deadline));
    if (x->rc == 0) {
      x->z2 = zkl__zk_get_send(m->s, max_src(m), 0);
      PT_AWAIT_ANSWER(op, pt, x->z2, x->call.dl);
      x->rc = max_take(x);
      if (x->rc == 0 && (int)x->qty > x->max)
        x->rc = zkl__fail(ZKL_EINVAL, "%s: %u leases of a maximum of %d",
                          m->path, x->qty, x->max);
      if (x->rc == ZKL_EINVAL) goto out;
    }
  }
  for (x->tries = 0;;) {
    if (!x->in_gate) {
      PT_CALL(pt, x->rc, zkl__op_acquire(op));
      if (x->rc != 0) {
        if (x->rc == ZKL_EBUSY)
          x->rc = zkl__fail(ZKL_EBUSY, "%s: the gate is busy", m->path);
        else if (x->rc == ZKL_ETIMEDOUT && zkl_last_error()[0] == '\0')
          x->rc = zkl__fail(ZKL_ETIMEDOUT, "%s: not through the gate "
                            "before the deadline", m->path);
        else if (x->rc == ZKL_ECANCELED && zkl_last_error()[0] == '\0')
          x->rc = zkl__fail(ZKL_ECANCELED, "%s: the acquire was canceled",
                            m->path);
        goto out; /* no gate, no lease */
      }
      x->in_gate = 1;
    }
    /* as the gate's holder: the leases and the count, watched */
    zkl__session_lock(m->s);
    zkl__waiter_register(m->s, &m->gate.w, m->leases);
    if (max_src(m) != NULL)
      zkl__waiter_watch_self(m->s, &m->gate.w, max_src(m));
    x->epoch = zkl__session_epoch(m->s);
    zkl__session_unlock(m->s);
    /* looking for a multi whose answer was lost: a sync first, so that
     * a server behind the leader cannot hide what it made */
    x->z0 = x->sent ? zkl__zk_sync_send(m->s, m->leases) : NULL;
    x->z2 = max_src(m) != NULL ? zkl__zk_get_send(m->s, max_src(m), 1)
                               : NULL;
    x->z = zkl__zk_children_send(m->s, m->leases, 1);
    PT_AWAIT_ANSWER(op, pt, x->z, x->call.dl);
    if (x->z0 != NULL) {
      int src = zkl__zk_wait(x->z0, ZKL__TRY);
      x->z0 = NULL;
      if (src != ZOK && src != ZNONODE) { /* the listing may be stale */
        zkl__op_unwait(op);
        struct String_vector unused;
        zkl__zk_children_wait(x->z, ZKL__TRY, &unused);
        zkl__zk_children_free(&unused);
        x->z = NULL;
        if (x->z2 != NULL) zkl__zk_get_wait(x->z2, ZKL__TRY, NULL, NULL, NULL);
        x->z2 = NULL;
        x->rc = map_zrc(m, src, "sync");
        if (x->rc == ZKL_ESUSPENDED || x->rc == ZKL_ELOST) goto reconnect;
        goto out;
      }
    }
    zkl__zk_children_free(&x->kids);
    x->zrc = zkl__zk_children_wait(x->z, ZKL__TRY, &x->kids);
    x->z = NULL;
    x->rc = x->zrc == ZOK || x->zrc == ZNONODE ? max_take(x)
                                                : map_zrc(m, x->zrc, "list");
    if (x->z2 != NULL) { /* not taken by max_take */
      zkl__zk_get_wait(x->z2, ZKL__TRY, NULL, NULL, NULL);
      x->z2 = NULL;
    }
    if (x->rc != 0) {
      zkl__op_unwait(op);
      if (x->rc == ZKL_ESUSPENDED || x->rc == ZKL_ELOST) goto reconnect;
      goto out;
    }
    x->leased = x->zrc == ZNONODE ? 0 : (size_t)x->kids.count;
    if (x->sent) { /* a multi of ours whose answer was lost */
      x->sent = 0;
      size_t mine = ours(x);
      if (mine == x->qty) {
        zkl__op_unwait(op);
        got_from_listing(x);
        goto made;
      }
      x->leased -= mine; /* 0: it was not applied */
    }
    if ((int)x->qty > x->max) {
      zkl__op_unwait(op);
      x->rc = zkl__fail(ZKL_EINVAL, "%s: %u leases of a maximum of %d",
                        m->path, x->qty, x->max);
      goto out;
    }
    if (x->leased + x->qty > (size_t)x->max) {
      if (x->call.deadline == ZKL__TRY) {
        zkl__op_unwait(op);
        x->rc = zkl__fail(ZKL_EBUSY, "%s: %zu of %d leases held, %u do not "
                          "fit", m->path, x->leased, x->max, x->qty);
        goto out;
      }
      PT_CALL(pt, x->zrc, zkl__op_await(op, x->epoch, x->call.deadline));
      if (x->zrc == ZKL_ETIMEDOUT) {
        x->rc = zkl__fail(ZKL_ETIMEDOUT, "%s: %u leases did not fit before "
                          "the deadline", m->path, x->qty);
        goto out;
      }
      if (x->zrc == ZKL_ECANCELED) {
        x->rc = zkl__fail(ZKL_ECANCELED, "%s: the acquire was canceled",
                          m->path);
        goto out;
      }
      if (x->zrc == 0) goto reconnect; /* the session changed */
      continue; /* the leases or the count changed: look again */
    }
    zkl__op_unwait(op);
    /* they fit: all qty leases in one multi, with our gate node checked */
    x->token = 0;
    x->z = lease_multi(x);
    if (x->z == NULL) {
      x->rc = zkl__fail(ZKL_ENOMEM, "no memory");
      goto out;
    }
    x->sent = 1;
    PT_AWAIT_ANSWER(op, pt, x->z, ZKL__FOREVER);
    {
      char **made = calloc(x->qty + 1, sizeof *made);
      int *errs = calloc(x->qty + 1, sizeof *errs);
      struct Stat *stats = calloc(x->qty + 1, sizeof *stats);
      if (made == NULL || errs == NULL || stats == NULL) {
        free(made);
        free(errs);
        free(stats);
        zkl__zk_multi_wait(x->z, ZKL__TRY, NULL, NULL);
        x->z = NULL;
        x->rc = zkl__fail(ZKL_ENOMEM, "no memory");
        goto out;
      }
      x->zrc = zkl__zk_multi_wait_stat(x->z, ZKL__TRY, errs, made, stats);
      x->z = NULL;
      if (x->zrc == ZOK) {
        got_from_made(x, made);
        if (!m->gate_ro) x->token = (uint64_t)stats[0].mzxid;
      }
      free(stats);
      /* the op that failed: the last not marked ZRUNTIMEINCONSISTENCY
       * (those before it carry the multi's code) */
      unsigned failed = 0;
      for (unsigned i = 0; i <= x->qty; i++)
        if (errs[i] != ZRUNTIMEINCONSISTENCY) failed = i;
      int gate_gone = x->zrc == ZNONODE && failed == 0;
      int gate_ro = x->zrc == ZNOAUTH && failed == 0 && !m->gate_ro;
      for (unsigned i = 0; i <= x->qty; i++) free(made[i]);
      free(made);
      free(errs);
      if (x->zrc == ZOK) {
        x->sent = 0;
        goto made;
      }
      if (lost_answer(x->zrc)) goto reconnect; /* found again by prefix */
      x->sent = 0;
      if (gate_gone) { /* our gate node went: line up again */
        zkl__contend_forsake(&m->gate);
        x->in_gate = 0;
        continue;
      }
      if (gate_ro) { /* not ours to write: checked from now on */
        m->gate_ro = 1;
        continue;
      }
    }
    if (x->zrc != ZNONODE || ++x->tries >= MAKE_TRIES) {
      x->rc = map_zrc(m, x->zrc, "make the leases of");
      goto out;
    }
    /* no leases/ yet: make it (a container, as Curator does); in kazoo's
     * layout <path> itself, PERSISTENT with the maximum in its data, as
     * kazoo makes it (a kazoo client that made it once never makes it
     * again: a container reaped under it would fail its acquires) */
    x->zs = zkl__zk_parents_send(m->s, m->leases, &x->nzs);
    if (x->zs == NULL) {
      x->rc = zkl__fail(ZKL_ENOMEM, "no memory");
      goto out;
    }
    if (m->kazoo) {
      char text[16];
      int tl = snprintf(text, sizeof text, "%d", x->max);
      x->z = zkl__zk_create_send(m->s, m->leases, text, tl, ZOO_PERSISTENT);
    } else {
      x->z = zkl__zk_create_send(m->s, m->leases, "", 0, ZOO_CONTAINER);
    }
    PT_AWAIT_ANSWER(op, pt, x->z, ZKL__FOREVER);
    zkl__zk_create_wait(x->z, ZKL__TRY, NULL, NULL);
    x->z = NULL;
    zkl__zk_parents_end(x->zs, x->nzs);
    x->zs = NULL;
    continue;
  reconnect:
    /* the connection went, or the session: wait for it; with a new
     * session the gate (and any lease made) went with the old one, and
     * the acquire lines up again on the new one */
    if (x->in_gate && zkl__contend_hold_health(&m->gate) == ZKL_ELOST) {
      zkl__contend_forsake(&m->gate);
      x->in_gate = 0;
      x->sent = 0;
    }
    PT_CALL(pt, x->rc, zkl__op_connected(op, x->call.deadline));
    if (x->rc == ZKL_ELOST && x->in_gate && zkl__session_renews(m->s)) {
      /* the session went while we held the gate (the wait for the
       * connection says so while our gate node is still recorded): the
       * node, and any lease made, went with it; line up again on the new
       * session, as a waiter in the gate's line does */
      zkl__contend_forsake(&m->gate);
      x->in_gate = 0;
      x->sent = 0;
      goto reconnect;
    }
    if (x->rc != 0) {
      if (x->rc == ZKL_ETIMEDOUT)
        x->rc = zkl__fail(x->call.deadline == ZKL__TRY ? ZKL_ESUSPENDED
                                                        : ZKL_ETIMEDOUT,
                          "%s: not connected to ZooKeeper", m->path);
      else if (x->rc == ZKL_ELOST && zkl_last_error()[0] == '\0')
        x->rc = zkl__fail(ZKL_ELOST, "%s: the session was lost", m->path);
      goto out;
    }
    if (zkl__contend_hold_health(&m->gate) == ZKL_ELOST) {
      zkl__contend_forsake(&m->gate);
      x->in_gate = 0;
      x->sent = 0;
    }
  }
made:
  /* the token: the czxid of the multi (one for all its leases), from the
   * multi's answer, or read when that answer was lost or the gate node
   * only checked */
  if (x->token == 0) {
    size_t pl = m->leases_len + NAME_CAP + 2;
    char *p = malloc(pl);
    if (p == NULL) {
      x->rc = zkl__fail(ZKL_ENOMEM, "no memory");
      goto undo;
    }
    snprintf(p, pl, "%s/%s", m->leases, x->got[0].name);
    x->z = zkl__zk_exists_send(m->s, p, 0);
    free(p);
    PT_AWAIT_ANSWER(op, pt, x->z, ZKL__FOREVER);
    struct Stat st;
    memset(&st, 0, sizeof st);
    x->zrc = zkl__zk_exists_wait(x->z, ZKL__TRY, &st);
    x->z = NULL;
    if (x->zrc != ZOK) {
      x->rc = map_zrc(m, x->zrc, "read a lease of");
      goto undo;
    }
    x->token = (uint64_t)st.czxid;
  }
  {
    /* the rule for a grant (as the lock's): made on the session we are
     * on, the server heard from within the session timeout, and the
     * deadline not passed; nothing the wait learned is trusted for it (a
     * process paused after the multi finds its answer waiting when it
     * runs again, while its session may have expired) */
    if (x->call.deadline != ZKL__TRY && zkl__now_ns() >= x->call.deadline) {
      x->rc = zkl__fail(ZKL_ETIMEDOUT, "%s: granted only after the "
                        "deadline", m->path);
      goto undo;
    }
    int h = zkl__session_health(m->s);
    if (h == ZKL_ESUSPENDED && x->call.deadline != ZKL__TRY) {
      x->sent = 1; /* found again by prefix once the session is back */
      goto reconnect;
    }
    if (h != 0) {
      x->rc = zkl__fail(h, h == ZKL_ELOST ? "%s: granted, but the session "
                        "was lost" : "%s: granted, but the connection is "
                        "down", m->path);
      goto undo;
    }
    int64_t sid = zkl_session_id(m->s);
    for (unsigned i = 0; i < x->qty; i++) {
      x->got[i].token = x->token;
      x->got[i].sid = sid;
    }
    pthread_mutex_lock(&m->calls.own.mu);
    x->rc = held_add(m, x->got, x->qty);
    pthread_mutex_unlock(&m->calls.own.mu);
    if (x->rc != 0) {
      x->rc = zkl__fail(ZKL_ENOMEM, "no memory");
      goto undo;
    }
  }
  goto out;
undo:
  x->sent = 1; /* made but not kept: the janitor deletes them by prefix */
out:
  if (x->sent) { /* the outcome unknown: whatever it made goes */
    zkl__janitor_add(m->s, m->leases, x->prefix, NULL);
    x->sent = 0;
  }
  if (x->in_gate) {
    x->in_gate = 0;
    x->saved_rc = x->rc;
    PT_CALL(pt, x->rc, zkl__op_release(op, 1));
    x->rc = x->saved_rc;
  }
  if (x->rc == 0) {
    /* the rule for a grant once more, after the gate's release: that
     * waits for its answer (up to a session timeout), and a process
     * paused or cut off meanwhile must not report leases its session
     * lost (the fault suite's seed 42: 0 returned 2.4 s after the
     * server had expired the session) */
    int h = lease_health(m, x->got[0].sid);
    if (h == 0 && x->call.deadline != ZKL__TRY &&
        zkl__now_ns() >= x->call.deadline)
      h = ZKL_ETIMEDOUT;
    if (h != 0) {
      give_back(m, x->got, x->qty);
      x->rc = zkl__fail(h, h == ZKL_ELOST
                               ? "%s: granted, but the session was lost: "
                                 "the leases went with it"
                           : h == ZKL_ESUSPENDED
                               ? "%s: granted, but the connection went down "
                                 "as the gate was let go: the leases are "
                                 "given back"
                               : "%s: granted only after the deadline: the "
                                 "leases are given back",
                        m->path);
    }
  }
  PT_RETURN(pt, x->rc);
  PT_END(pt);
  return 0;
}

static int count_step(zkl__op_t *op, void *ctx) {
  scall_t *x = ctx;
  zkl_sem_t *m = x->m;
  pt_t *pt = &x->pt;
  PT_BEGIN(pt);
  for (;;) {
    PT_CALL(pt, x->rc, zkl__op_connected(op, x->call.deadline));
    if (x->rc == ZKL_ETIMEDOUT)
      PT_RETURN(pt, zkl__fail(ZKL_ESUSPENDED, "not connected to ZooKeeper "
                              "within a session timeout"));
    if (x->rc != 0) PT_RETURN(pt, x->rc);
    x->z2 = max_src(m) != NULL ? zkl__zk_get_send(m->s, max_src(m), 0)
                               : NULL;
    x->z = zkl__zk_children_send(m->s, m->leases, 0);
    PT_AWAIT_ANSWER(op, pt, x->z, x->call.dl);
    zkl__zk_children_free(&x->kids);
    x->zrc = zkl__zk_children_wait(x->z, ZKL__TRY, &x->kids);
    x->z = NULL;
    x->rc = x->zrc == ZOK || x->zrc == ZNONODE ? max_take(x)
                                                : map_zrc(m, x->zrc, "count");
    if (x->z2 != NULL) {
      zkl__zk_get_wait(x->z2, ZKL__TRY, NULL, NULL, NULL);
      x->z2 = NULL;
    }
    if (x->rc == ZKL_ESUSPENDED) continue;
    x->leased = x->zrc == ZNONODE ? 0 : (size_t)x->kids.count;
    PT_RETURN(pt, x->rc);
  }
  PT_END(pt);
  return 0;
}

static void holders_end(scall_t *x);

static int holder_cmp(const void *a, const void *b) {
  const zkl_sem_holder_t *x = a, *y = b;
  if (x->token != y->token) return x->token < y->token ? -1 : 1;
  const char *p = strrchr(x->name, '-'), *q = strrchr(y->name, '-');
  return strcmp(p != NULL ? p : x->name, q != NULL ? q : y->name);
}

static int holders_step(zkl__op_t *op, void *ctx) {
  scall_t *x = ctx;
  zkl_sem_t *m = x->m;
  pt_t *pt = &x->pt;
  PT_BEGIN(pt);
  for (;;) {
    holders_end(x);
    PT_CALL(pt, x->rc, zkl__op_connected(op, x->call.deadline));
    if (x->rc == ZKL_ETIMEDOUT)
      PT_RETURN(pt, zkl__fail(ZKL_ESUSPENDED, "not connected to ZooKeeper "
                              "within a session timeout"));
    if (x->rc != 0) PT_RETURN(pt, x->rc);
    x->z = zkl__zk_children_send(m->s, m->leases, 0);
    PT_AWAIT_ANSWER(op, pt, x->z, x->call.dl);
    zkl__zk_children_free(&x->kids);
    x->zrc = zkl__zk_children_wait(x->z, ZKL__TRY, &x->kids);
    x->z = NULL;
    if (x->zrc == ZNONODE) PT_RETURN(pt, 0); /* nobody yet */
    if (lost_answer(x->zrc)) continue;
    if (x->zrc != ZOK) PT_RETURN(pt, map_zrc(m, x->zrc, "list the leases of"));
    if (x->kids.count == 0) PT_RETURN(pt, 0);
    x->gets = calloc((size_t)x->kids.count, sizeof *x->gets);
    x->hv = calloc((size_t)x->kids.count, sizeof *x->hv);
    if (x->gets == NULL || x->hv == NULL)
      PT_RETURN(pt, zkl__fail(ZKL_ENOMEM, "no memory"));
    {
      size_t pl = m->leases_len + NAME_CAP + 2;
      char *p = malloc(pl);
      if (p == NULL) PT_RETURN(pt, zkl__fail(ZKL_ENOMEM, "no memory"));
      for (int i = 0; i < x->kids.count; i++) {
        lease_path(m, x->kids.data[i], p, pl);
        x->gets[i] = zkl__zk_get_send(m->s, p, 0);
      }
      free(p);
    }
    x->saved_rc = 0;
    for (x->gi = 0; x->gi < (size_t)x->kids.count; x->gi++) {
      PT_AWAIT_ANSWER(op, pt, x->gets[x->gi], x->call.dl);
      {
        char *data = NULL;
        int len = 0;
        struct Stat st;
        memset(&st, 0, sizeof st);
        int zrc = zkl__zk_get_wait(x->gets[x->gi], ZKL__TRY, &data, &len, &st);
        x->gets[x->gi] = NULL;
        if (zrc == ZOK) {
          zkl_sem_holder_t *h = &x->hv[x->nh];
          h->data = malloc(len > 0 ? (size_t)len + 1 : 1);
          if (h->data == NULL) {
            free(data);
            if (x->saved_rc == 0) x->saved_rc = ZKL_ENOMEM;
            continue;
          }
          if (len > 0) memcpy(h->data, data, (size_t)len);
          h->data[len > 0 ? len : 0] = '\0';
          h->len = len > 0 ? (size_t)len : 0;
          snprintf(h->name, sizeof h->name, "%s", x->kids.data[x->gi]);
          h->token = (uint64_t)st.czxid;
          h->session = st.ephemeralOwner;
          x->nh++;
        } else if (zrc != ZNONODE && x->saved_rc == 0) {
          x->saved_rc = zrc; /* given back meanwhile: left out */
        }
        free(data);
      }
    }
    free(x->gets);
    x->gets = NULL;
    if (x->saved_rc == ZKL_ENOMEM)
      PT_RETURN(pt, zkl__fail(ZKL_ENOMEM, "no memory"));
    if (lost_answer(x->saved_rc)) continue;
    if (x->saved_rc != 0)
      PT_RETURN(pt, map_zrc(m, x->saved_rc, "read the leases of"));
    qsort(x->hv, x->nh, sizeof *x->hv, holder_cmp);
    PT_RETURN(pt, 0);
  }
  PT_END(pt);
  return 0;
}

/* ---- running calls --------------------------------------------------------------------- */

static void holders_end(scall_t *x) {
  for (int i = 0; x->gets != NULL && i < x->kids.count; i++)
    if (x->gets[i] != NULL) zkl__zk_get_wait(x->gets[i], ZKL__TRY, NULL, NULL,
                                             NULL);
  free(x->gets);
  x->gets = NULL;
  zkl_sem_holders_free(x->hv, x->nh);
  x->hv = NULL;
  x->nh = 0;
}

static void scall_release(zkl__call_t *c) {
  scall_t *x = (scall_t *)c;
  holders_end(x);
  zkl__zk_parents_end(x->zs, x->nzs);
  if (x->z0 != NULL) zkl__zk_wait(x->z0, ZKL__TRY);
  zkl__zk_children_free(&x->kids);
  free(x->got);
  free(c->detail);
  free(x);
}

/* At dispatch: a grant is reported only while it holds; one in doubt or
 * lost by then is given back and reported so. */
static void scall_check(zkl__call_t *c) {
  scall_t *x = (scall_t *)c;
  zkl_sem_t *m = x->m;
  if (x->kind != S_ACQUIRE || c->rc != 0) return;
  int h = lease_health(m, x->got[0].sid);
  if (h == 0) return;
  give_back(m, x->got, x->qty);
  zkl__call_report(c, h, h == ZKL_ELOST
                             ? "granted, but the session was lost before the "
                               "completion was dispatched"
                             : "granted, but the connection went down before "
                               "the completion was dispatched: the leases "
                               "are given back");
}

static void scall_deliver(zkl__call_t *c) {
  scall_t *x = (scall_t *)c;
  if (c->rc != 0) {
    x->fn(c->obj, c->rc, NULL, 0, c->arg);
    return;
  }
  zkl_lease_t *v = calloc(x->qty, sizeof *v);
  if (v == NULL) { /* not reported: given back */
    give_back(x->m, x->got, x->qty);
    zkl__fail(ZKL_ENOMEM, "no memory to report the leases: given back");
    x->fn(c->obj, ZKL_ENOMEM, NULL, 0, c->arg);
    return;
  }
  for (unsigned i = 0; i < x->qty; i++) {
    memcpy(v[i].name, x->got[i].name, NAME_CAP);
    v[i].token = x->got[i].token;
  }
  x->fn(c->obj, 0, v, x->qty, c->arg);
  free(v);
}

static int null_sem(void) {
  return zkl__fail(ZKL_EINVAL, "semaphore is NULL");
}

static scall_t *scall_new(zkl_sem_t *m, int kind, unsigned qty,
                          int64_t timeout_ms) {
  scall_t *x = calloc(1, sizeof *x);
  if (x != NULL && qty > 0) x->got = calloc(qty, sizeof *x->got);
  if (x == NULL || (qty > 0 && x->got == NULL)) {
    free(x);
    zkl__fail(ZKL_ENOMEM, "no memory for a semaphore call");
    return NULL;
  }
  zkl__call_init(&x->call, &m->calls, m, timeout_ms);
  x->call.release = scall_release;
  x->call.deliver = scall_deliver;
  x->call.check = scall_check;
  x->m = m;
  x->kind = kind;
  x->qty = qty;
  zkl__prefix_new(x->prefix);
  return x;
}

static int acquire_args(zkl_sem_t *m, unsigned qty) {
  if (m == NULL) return null_sem();
  if (qty == 0 || qty > ZKL_SEM_QTY_MAX)
    return zkl__fail(ZKL_EINVAL, "%s: qty %u is not within 1..%d", m->path,
                     qty, ZKL_SEM_QTY_MAX);
  if (m->max > 0 && (int)qty > m->max)
    return zkl__fail(ZKL_EINVAL, "%s: %u leases of a maximum of %d",
                     m->path, qty, m->max);
  pthread_mutex_lock(&m->calls.own.mu);
  size_t n = m->n_held;
  pthread_mutex_unlock(&m->calls.own.mu);
  if (n + qty > ZKL_SEM_QTY_MAX)
    return zkl__fail(ZKL_EINVAL, "%s: the object would hold %zu leases, "
                     "more than %d", m->path, n + qty, ZKL_SEM_QTY_MAX);
  return 0;
}

int zkl_sem_acquire(zkl_sem_t *m, unsigned qty, int64_t timeout_ms,
                    zkl_lease_t *leases) {
  zkl__clear_error();
  if (leases == NULL) return zkl__fail(ZKL_EINVAL, "leases is NULL");
  int rc = acquire_args(m, qty);
  if (rc != 0) return rc;
  scall_t *x = scall_new(m, S_ACQUIRE, qty, timeout_ms);
  if (x == NULL) return ZKL_ENOMEM;
  rc = zkl__call_blocking(&x->call, &m->gate, acquire_step);
  if (rc == 0)
    for (unsigned i = 0; i < qty; i++) {
      memcpy(leases[i].name, x->got[i].name, NAME_CAP);
      leases[i].token = x->got[i].token;
    }
  scall_release(&x->call);
  return rc;
}

int zkl_sem_acquire_async(zkl_sem_t *m, unsigned qty, int64_t timeout_ms,
                          zkl_leases_fn cb, void *arg) {
  zkl__clear_error();
  if (cb == NULL) return zkl__fail(ZKL_EINVAL, "the callback is NULL");
  int rc = acquire_args(m, qty);
  if (rc != 0) return rc;
  scall_t *x = scall_new(m, S_ACQUIRE, qty, timeout_ms);
  if (x == NULL) return ZKL_ENOMEM;
  x->fn = cb;
  x->call.arg = arg;
  return zkl__call_async(&x->call, &m->gate, acquire_step);
}

int zkl_sem_count(zkl_sem_t *m, size_t *leased, int *max) {
  zkl__clear_error();
  if (m == NULL || leased == NULL)
    return zkl__fail(ZKL_EINVAL, "semaphore or leased is NULL");
  *leased = 0;
  if (max != NULL) *max = 0;
  scall_t *x = scall_new(m, S_COUNT, 0, zkl_session_timeout(m->s));
  if (x == NULL) return ZKL_ENOMEM;
  int rc = zkl__call_blocking(&x->call, &m->gate, count_step);
  if (rc == 0) {
    *leased = x->leased;
    if (max != NULL) *max = x->max;
  }
  scall_release(&x->call);
  return rc;
}

int zkl_sem_holders(zkl_sem_t *m, zkl_sem_holder_t **out, size_t *n) {
  zkl__clear_error();
  if (m == NULL || out == NULL || n == NULL)
    return zkl__fail(ZKL_EINVAL, "semaphore, out or n is NULL");
  *out = NULL;
  *n = 0;
  scall_t *x = scall_new(m, S_HOLDERS, 0, zkl_session_timeout(m->s));
  if (x == NULL) return ZKL_ENOMEM;
  int rc = zkl__call_blocking(&x->call, &m->gate, holders_step);
  if (rc == 0 && x->nh > 0) {
    *out = x->hv;
    *n = x->nh;
    x->hv = NULL;
    x->nh = 0;
  }
  scall_release(&x->call);
  return rc;
}

void zkl_sem_holders_free(zkl_sem_holder_t *v, size_t n) {
  for (size_t i = 0; v != NULL && i < n; i++) free(v[i].data);
  free(v);
}

/* ---- releases: not calls ---------------------------------------------------------------- */

/* A release underway: the deletes sent, their answers to be taken. */
typedef struct rel {
  zkl__done_t d;        /* first: the async completion's record */
  zkl_sem_t *m;         /* NULL once orphaned                   */
  zkl_session_t *s;
  void *obj;
  size_t n;
  held_t *h;            /* the leases given back                */
  char *leases;         /* their parent, and the gate's data: a
                           delete whose answer is lost goes to the
                           janitor even once the object is gone   */
  char *gdata;
  size_t glen;
  zkl__zcall_t **z;     /* their deletes (NULL: not sent)       */
  int rc;               /* known before the answers (ELOST...)  */
  zkl_done_fn cb;
  void *arg;
} rel_t;

static void rel_free(rel_t *r) {
  if (r->z != NULL)
    for (size_t i = 0; i < r->n; i++)
      if (r->z[i] != NULL) zkl__zk_wait(r->z[i], ZKL__TRY);
  free(r->z);
  free(r->h);
  free(r->leases);
  free(r->gdata);
  free(r);
}

/* Takes the leases out of the object (own.mu): 0, or ZKL_EPERM (one is
 * not held: nothing taken).  leases NULL: all. */
static int rel_take(zkl_sem_t *m, const zkl_lease_t *leases, size_t n,
                    rel_t **out) {
  *out = NULL;
  rel_t *r = calloc(1, sizeof *r);
  if (r == NULL) return zkl__fail(ZKL_ENOMEM, "no memory");
  r->m = m;
  r->s = m->s;
  r->obj = m;
  r->leases = strdup(m->leases);
  r->glen = m->gate.data_len > 0 ? (size_t)m->gate.data_len : 0;
  r->gdata = malloc(r->glen + 1);
  if (r->leases == NULL || r->gdata == NULL) {
    free(r->leases);
    free(r->gdata);
    free(r);
    return zkl__fail(ZKL_ENOMEM, "no memory");
  }
  if (r->glen > 0) memcpy(r->gdata, m->gate.data, r->glen);
  pthread_mutex_lock(&m->calls.own.mu);
  size_t want = leases == NULL ? m->n_held : n;
  r->h = calloc(want > 0 ? want : 1, sizeof *r->h);
  int rc = r->h == NULL ? ZKL_ENOMEM : 0;
  for (size_t i = 0; rc == 0 && leases != NULL && i < n; i++) {
    ptrdiff_t j = held_find(m, leases[i].name);
    if (j < 0 || m->held[j].token != leases[i].token)
      rc = zkl__fail(ZKL_EPERM, "%s: lease %s is not held by this object",
                     m->path, leases[i].name);
    for (size_t k = 0; rc == 0 && k < i; k++)
      if (strcmp(leases[k].name, leases[i].name) == 0)
        rc = zkl__fail(ZKL_EINVAL, "%s: lease %s given twice", m->path,
                       leases[i].name);
  }
  if (rc == 0) {
    for (size_t i = 0; i < want; i++) {
      ptrdiff_t j = leases == NULL ? (ptrdiff_t)(m->n_held - 1)
                                   : held_find(m, leases[i].name);
      r->h[i] = m->held[j];
      held_remove(m, (size_t)j);
    }
    r->n = want;
  }
  pthread_mutex_unlock(&m->calls.own.mu);
  if (rc == ZKL_ENOMEM) rc = zkl__fail(rc, "no memory");
  if (rc != 0) {
    rel_free(r);
    return rc;
  }
  *out = r;
  return 0;
}

/* Sends the deletes of the leases still of the current session; those of
 * a lost one are gone already (r->rc ZKL_ELOST), those in doubt go to the
 * janitor (ZKL_ESUSPENDED). */
static int rel_send(rel_t *r) {
  zkl_sem_t *m = r->m;
  r->z = calloc(r->n > 0 ? r->n : 1, sizeof *r->z);
  if (r->z == NULL) return zkl__fail(ZKL_ENOMEM, "no memory");
  size_t pl = m->leases_len + NAME_CAP + 2;
  char *p = malloc(pl);
  if (p == NULL) return zkl__fail(ZKL_ENOMEM, "no memory");
  for (size_t i = 0; i < r->n; i++) {
    int h = lease_health(m, r->h[i].sid);
    lease_path(m, r->h[i].name, p, pl);
    if (h == ZKL_ELOST) {
      if (r->rc == 0) r->rc = ZKL_ELOST;
    } else if (h != 0) {
      zkl__janitor_add_owned(m->s, p, m->gate.data, m->gate.data_len);
      r->rc = ZKL_ESUSPENDED;
    } else {
      r->z[i] = zkl__zk_delete_send(m->s, p);
    }
  }
  free(p);
  return 0;
}

/* The answers (each until `deadline`): a lease whose answer did not come
 * goes to the janitor. */
static int rel_finish(rel_t *r, int64_t deadline) {
  size_t pl = strlen(r->leases) + NAME_CAP + 2;
  for (size_t i = 0; i < r->n; i++) {
    if (r->z[i] == NULL) continue;
    int zrc = zkl__zk_wait(r->z[i], deadline);
    r->z[i] = NULL;
    if (zrc == ZOK || zrc == ZNONODE) continue;
    if (zrc == ZSESSIONEXPIRED || zrc == ZCLOSING || zrc == ZINVALIDSTATE) {
      if (r->rc == 0) r->rc = ZKL_ELOST;
      continue;
    }
    {
      /* also for an orphan (its object destroyed before the answer):
       * the lease still counts until it is deleted */
      char *p = malloc(pl);
      if (p != NULL) {
        snprintf(p, pl, "%s/%s", r->leases, r->h[i].name);
        zkl__janitor_add_owned(r->s, p, r->gdata, (int)r->glen);
        free(p);
      }
    }
    r->rc = ZKL_ESUSPENDED;
  }
  return r->rc;
}

static int rel_code(zkl_sem_t *m, int rc) {
  if (rc == ZKL_ELOST)
    return zkl__fail(rc, "%s: the session of a lease was lost: it was gone "
                     "already", m->path);
  if (rc == ZKL_ESUSPENDED)
    return zkl__fail(rc, "%s: the connection is down: the janitor deletes "
                     "the leases once it is back", m->path);
  return rc;
}

/* The leases of r whose deletes were not sent: to the janitor (they are
 * out of the object already). */
static void rel_unsent(rel_t *r) {
  zkl_sem_t *m = r->m;
  size_t pl = m->leases_len + NAME_CAP + 2;
  char *p = malloc(pl);
  for (size_t i = 0; p != NULL && i < r->n; i++)
    if ((r->z == NULL || r->z[i] == NULL) &&
        lease_health(m, r->h[i].sid) != ZKL_ELOST) {
      lease_path(m, r->h[i].name, p, pl);
      zkl__janitor_add_owned(m->s, p, m->gate.data, m->gate.data_len);
    }
  free(p);
}

static int release(zkl_sem_t *m, const zkl_lease_t *leases, size_t n) {
  rel_t *r;
  int rc = rel_take(m, leases, n, &r);
  if (rc != 0) return rc;
  rc = rel_send(r);
  if (rc == 0)
    rc = rel_finish(r, zkl__deadline_after_ms(zkl_session_timeout(m->s)));
  else
    rel_unsent(r);
  rc = rel_code(m, rc);
  rel_free(r);
  return rc;
}

int zkl_sem_release(zkl_sem_t *m, const zkl_lease_t *leases, size_t n) {
  zkl__clear_error();
  if (m == NULL || leases == NULL || n == 0)
    return zkl__fail(ZKL_EINVAL, "semaphore or leases is NULL, or n is 0");
  return release(m, leases, n);
}

int zkl_sem_release_all(zkl_sem_t *m) {
  zkl__clear_error();
  if (m == NULL) return null_sem();
  return release(m, NULL, 0);
}

static void rel_run(zkl__done_t *d, int deliver) {
  rel_t *r = (rel_t *)d;
  int rc = rel_finish(r, ZKL__TRY);
  if (deliver) {
    if (r->m != NULL) rc = rel_code(r->m, rc);
    else rc = zkl__fail(ZKL_ECANCELED, "the semaphore object was destroyed "
                        "before the completion was dispatched (the leases "
                        "were given back)");
    r->cb(r->obj, rc, 0, r->arg);
  }
  rel_free(r);
}

static void rel_orphan(zkl__done_t *d) { ((rel_t *)d)->m = NULL; }

static void rel_ready(void *arg) {
  rel_t *r = arg;
  zkl_sem_t *m = r->m; /* r may be run and freed once posted */
  zkl__dispatch_post(zkl__session_dispatch_queue(r->s), &r->d);
  pthread_mutex_lock(&m->calls.own.mu);
  if (--m->rels_pending == 0) pthread_cond_broadcast(&m->calls.own.cv);
  pthread_mutex_unlock(&m->calls.own.mu);
}

int zkl_sem_release_async(zkl_sem_t *m, const zkl_lease_t *leases, size_t n,
                          zkl_done_fn cb, void *arg) {
  zkl__clear_error();
  if (m == NULL || cb == NULL || (leases == NULL) != (n == 0))
    return zkl__fail(ZKL_EINVAL, "semaphore or callback is NULL, or leases "
                     "and n disagree");
  rel_t *r;
  int rc = rel_take(m, leases, n, &r);
  if (rc != 0) return rc;
  r->cb = cb;
  r->arg = arg;
  r->d.owner = &m->calls;
  r->d.run = rel_run;
  r->d.orphan = rel_orphan;
  rc = rel_send(r);
  if (rc != 0) { /* the leases are out of the object: to the janitor */
    rel_unsent(r);
    rel_free(r);
    return rc;
  }
  /* the server answers a session's requests in order: the last delete's
   * answer comes last.  Until it is posted, destroy waits for it. */
  zkl__zcall_t *last = NULL;
  for (size_t i = 0; i < r->n; i++)
    if (r->z[i] != NULL) last = r->z[i];
  pthread_mutex_lock(&m->calls.own.mu);
  m->rels_pending++;
  pthread_mutex_unlock(&m->calls.own.mu);
  zkl__zcall_notify(last, rel_ready, r);
  return 0;
}

int zkl_sem_lease_health(zkl_sem_t *m, const zkl_lease_t *lease) {
  zkl__clear_error();
  if (m == NULL || lease == NULL)
    return zkl__fail(ZKL_EINVAL, "semaphore or lease is NULL");
  pthread_mutex_lock(&m->calls.own.mu);
  ptrdiff_t j = held_find(m, lease->name);
  int64_t sid = j >= 0 ? m->held[j].sid : 0;
  pthread_mutex_unlock(&m->calls.own.mu);
  if (j < 0)
    return zkl__fail(ZKL_EPERM, "%s: lease %s is not held by this object",
                     m->path, lease->name);
  return lease_health(m, sid);
}

size_t zkl_sem_held(zkl_sem_t *m) {
  if (m == NULL) return 0;
  pthread_mutex_lock(&m->calls.own.mu);
  size_t n = m->n_held;
  pthread_mutex_unlock(&m->calls.own.mu);
  return n;
}

/* ---- create, cancel, destroy -------------------------------------------------------- */

void zkl_sem_opts_init(zkl_sem_opts_t *opts) {
  if (opts != NULL) memset(opts, 0, sizeof *opts);
}

int zkl_sem_create(zkl_sem_t **out, zkl_session_t *s, const char *path,
                   const zkl_sem_opts_t *opts) {
  zkl__clear_error();
  if (out == NULL) return zkl__fail(ZKL_EINVAL, "out is NULL");
  *out = NULL;
  if (opts == NULL) return zkl__fail(ZKL_EINVAL, "opts is NULL");
  int rc = zkl__check_recipe_args(s, path, opts->data, opts->data_len);
  if (rc != 0) return rc;
  if (strcmp(path, "/") == 0)
    return zkl__fail(ZKL_EINVAL, "a semaphore cannot be at /");
  if (opts->max < 0)
    return zkl__fail(ZKL_EINVAL, "max %d is negative", opts->max);
  if (opts->format != ZKL_SEM_CURATOR && opts->format != ZKL_SEM_KAZOO)
    return zkl__fail(ZKL_EINVAL, "format %d is neither ZKL_SEM_CURATOR nor "
                     "ZKL_SEM_KAZOO", opts->format);
  int kazoo = opts->format == ZKL_SEM_KAZOO;
  if (kazoo && opts->count_path != NULL)
    return zkl__fail(ZKL_EINVAL, "a count_path has no place in kazoo's "
                     "layout (the maximum is in <path>'s data)");
  if (opts->max == 0 && opts->count_path == NULL && !kazoo)
    return zkl__fail(ZKL_EINVAL, "no max and no count_path");
  if (opts->count_path != NULL && zkl__path_validate(opts->count_path) != 0)
    return ZKL_EINVAL; /* its detail says why */
  zkl_sem_t *m = calloc(1, sizeof *m);
  if (m == NULL) return zkl__fail(ZKL_ENOMEM, "no memory for a semaphore");
  m->s = s;
  m->max = opts->max;
  m->kazoo = kazoo;
  size_t pl = strlen(path);
  m->path = strdup(path);
  m->leases = malloc(pl + sizeof "/leases");
  char *locks = malloc(pl + sizeof "-__lock__");
  if (opts->count_path != NULL) m->count_path = strdup(opts->count_path);
  rc = m->path == NULL || m->leases == NULL || locks == NULL ||
               (opts->count_path != NULL && m->count_path == NULL)
           ? ZKL_ENOMEM
           : 0;
  if (rc == 0) {
    snprintf(m->leases, pl + sizeof "/leases", kazoo ? "%s" : "%s/leases",
             path);
    m->leases_len = strlen(m->leases);
    snprintf(locks, pl + sizeof "-__lock__",
             kazoo ? "%s-__lock__" : "%s/locks", path);
    rc = zkl__calls_init(&m->calls, s, "semaphore");
    if (rc == 0) {
      rc = zkl__contender_init(&m->gate, s,
                               kazoo ? &zkl__driver_kazoo_lock
                                     : &zkl__driver_mutex,
                               locks,
                               opts->data, opts->data_len,
                               &m->calls.own.cancel_gen);
      if (rc != 0) zkl__calls_fini(&m->calls);
    }
  }
  free(locks);
  if (rc != 0) {
    free(m->path);
    free(m->leases);
    free(m->count_path);
    free(m);
    return zkl__fail(rc, "no memory for a semaphore");
  }
  *out = m;
  return 0;
}

int zkl_sem_cancel(zkl_sem_t *m) {
  zkl__clear_error();
  if (m == NULL) return null_sem();
  zkl__owner_cancel(&m->calls.own);
  zkl__contend_cancel(&m->gate);
  return 0;
}

static void kick(void *arg) { zkl_sem_cancel(arg); }

void zkl_sem_destroy(zkl_sem_t *m) {
  if (m == NULL) return;
  /* async releases whose answers are not in yet: posted first (within a
   * session timeout), so that the drain below orphans their completions */
  pthread_mutex_lock(&m->calls.own.mu);
  while (m->rels_pending > 0)
    pthread_cond_wait(&m->calls.own.cv, &m->calls.own.mu);
  pthread_mutex_unlock(&m->calls.own.mu);
  zkl__calls_drain(&m->calls, kick, m);
  size_t pl = m->leases_len + NAME_CAP + 2;
  char *p = malloc(pl);
  for (size_t i = 0; p != NULL && i < m->n_held; i++)
    if (lease_health(m, m->held[i].sid) != ZKL_ELOST) {
      lease_path(m, m->held[i].name, p, pl);
      zkl__janitor_add_owned(m->s, p, m->gate.data, m->gate.data_len);
    }
  free(p);
  free(m->held);
  zkl__contender_fini(&m->gate);
  zkl__calls_fini(&m->calls);
  free(m->path);
  free(m->leases);
  free(m->count_path);
  free(m);
}
