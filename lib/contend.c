/* lib/contend.c - the contention core every recipe uses.
 *
 * One acquisition: create our EPHEMERAL_SEQUENTIAL node (found again by its
 * uuid prefix after a connection loss), list the children once, and then ask
 * the recipe's driver "granted, or which lower node do I watch?" until
 * granted, the deadline, a cancel or the loss of the session.  A woken waiter
 * never lists the children again: it checks the lower nodes it already knows
 * (none can appear below it later), helped by the release mark an exclusive
 * holder leaves in the lock root's data, so a wake-up costs O(1) server work
 * however long the queue.  Every exit path that did not grant deletes our
 * node and removes our watch.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#include "zkl-int.h"

/* How often a create may meet a missing parent (a container the server just
 * removed) before giving up: generous, each retry is one round trip. */
#define PARENT_RETRIES 16

/* ---- small helpers ------------------------------------------------------ */

static int retryable(int zrc) {
  return zrc == ZCONNECTIONLOSS || zrc == ZOPERATIONTIMEOUT;
}

/* Maps a ZooKeeper failure to what the caller should hear. */
static int map_zrc(zkl__contender_t *c, int zrc, const char *what) {
  if (zrc == ZSESSIONEXPIRED || zrc == ZINVALIDSTATE || zrc == ZCLOSING ||
      zkl__session_health(c->s) == ZKL_ELOST)
    return zkl__fail(ZKL_ELOST, "%s on %s: session lost", what, c->root);
  if (zrc == ZNOAUTH)
    return zkl__fail(ZNOAUTH, "%s on %s: not authorised", what, c->root);
  return zkl__fail(zrc, "%s on %s: %s", what, c->root, zerror(zrc));
}

/* A deadline for work that must finish even after the caller's own deadline
 * passed (deleting our node): past the session timeout the server deletes
 * it for us, so waiting longer buys nothing. */
static int64_t cleanup_deadline(zkl__contender_t *c) {
  int t = zkl_session_timeout(c->s);
  return zkl__now_ns() + (int64_t)(t > 0 ? t : 10000) * 1000000;
}

static int canceled(zkl__contender_t *c, unsigned cancel_seen) {
  return atomic_load(&c->cancel_gen) != cancel_seen;
}

#define NO_CANCEL UINT_MAX /* cancel_seen value for waits that ignore cancel */

typedef enum { WOKE_FIRED, WOKE_SESSION, WOKE_CANCEL, WOKE_TIMEOUT } woke_t;

/* Waits, with the session locked, until our watch fires, the session state
 * changes (epoch differs from `epoch`), a cancel or the deadline. */
static woke_t wait_locked(zkl__contender_t *c, unsigned epoch,
                          int64_t deadline, unsigned cancel_seen) {
  for (;;) {
    if (c->w.fired) return WOKE_FIRED;
    if (zkl__session_epoch(c->s) != epoch) return WOKE_SESSION;
    if (cancel_seen != NO_CANCEL && canceled(c, cancel_seen))
      return WOKE_CANCEL;
    if (deadline == ZKL__TRY || zkl__session_wait(c->s, &c->w, deadline) != 0)
      return WOKE_TIMEOUT;
  }
}

/* Waits until the session is connected again.  0, ZKL_ELOST,
 * ZKL_ETIMEDOUT or ZKL_ECANCELED. */
static int await_connected(zkl__contender_t *c, int64_t deadline,
                           unsigned cancel_seen) {
  zkl_session_t *s = c->s;
  for (;;) {
    zkl__session_lock(s);
    int h = zkl__health_locked(s);
    woke_t why = WOKE_SESSION;
    if (h == ZKL_ESUSPENDED) {
      zkl__waiter_register(s, &c->w, NULL);
      why = wait_locked(c, zkl__session_epoch(s), deadline, cancel_seen);
      zkl__waiter_unregister(s, &c->w);
    }
    zkl__session_unlock(s);
    if (h == 0) return 0;
    if (h == ZKL_ELOST) return ZKL_ELOST;
    if (why == WOKE_CANCEL) return ZKL_ECANCELED;
    if (why == WOKE_TIMEOUT) return ZKL_ETIMEDOUT;
  }
}

/* ---- contender lifetime ---------------------------------------------------- */

int zkl__contender_init(zkl__contender_t *c, zkl_session_t *s,
                        const zkl__driver_t *drv, const char *path,
                        const void *data, size_t data_len) {
  memset(c, 0, sizeof *c);
  c->s = s;
  c->drv = drv;
  c->root_len = strlen(path);
  c->root = strdup(path);
  if (data == NULL) {
    char host[256] = "localhost", buf[300];
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    int n = snprintf(buf, sizeof buf, "%s:%ld", host, (long)getpid());
    c->data = malloc((size_t)n + 1);
    if (c->data != NULL) memcpy(c->data, buf, (size_t)n + 1);
    c->data_len = n;
  } else {
    c->data = malloc(data_len > 0 ? data_len : 1);
    if (c->data != NULL && data_len > 0) memcpy(c->data, data, data_len);
    c->data_len = (int)data_len;
  }
  if (c->root == NULL || c->data == NULL || zkl__waiter_init(&c->w) != 0) {
    free(c->root);
    free(c->data);
    return ZKL_ENOMEM;
  }
  zkl__prefix_new(c->prefix);
  atomic_init(&c->cancel_gen, 0);
  zkl__session_ref(s);
  return 0;
}

void zkl__contender_fini(zkl__contender_t *c) {
  zkl__waiter_fini(&c->w);
  free(c->node);
  free(c->root);
  free(c->data);
  zkl__session_unref(c->s);
}

void zkl__contend_cancel(zkl__contender_t *c) {
  atomic_fetch_add(&c->cancel_gen, 1);
  zkl__session_lock(c->s);
  zkl__waiter_kick(&c->w);
  zkl__session_unlock(c->s);
}

/* ---- our node: create, find again, delete ----------------------------------- */

/* Creates `path` and its missing ancestors as CONTAINER nodes, which the
 * server removes again once they are empty (lock roots do not pile up). */
static int ensure_path(zkl__contender_t *c, char *path) {
  zhandle_t *zh = zkl__zh(c->s);
  for (int tries = 0; tries < PARENT_RETRIES; tries++) {
    int zrc = zoo_create(zh, path, NULL, -1, zkl__session_acl(c->s),
                         ZOO_CONTAINER, NULL, 0);
    if (zrc == ZOK || zrc == ZNODEEXISTS) return 0;
    if (zrc != ZNONODE) return zrc;
    char *slash = strrchr(path, '/');
    if (slash == path) return ZNONODE; /* "/" always exists */
    *slash = '\0';
    zrc = ensure_path(c, path);
    *slash = '/';
    if (zrc != 0) return zrc;
  }
  return ZNONODE;
}

static void adopt_node(zkl__contender_t *c, char *path, int64_t czxid) {
  zkl__node_t n;
  free(c->node);
  c->node = path;
  c->czxid = czxid;
  c->seq = zkl__name_parse(path + c->root_len + 1, &n) == 0 ? n.seq : 0;
  c->session_id = zkl_session_id(c->s);
}

/* After a connection loss during create: did the create happen?  Looks for
 * a child carrying our uuid prefix.  1 found (adopted), 0 not found. */
static int find_mine(zkl__contender_t *c, int *zrc_out) {
  zhandle_t *zh = zkl__zh(c->s);
  struct String_vector kids = {0, NULL};
  int zrc = zoo_get_children(zh, c->root, 0, &kids);
  *zrc_out = zrc;
  if (zrc != ZOK) return 0;
  int found = 0;
  for (int i = 0; i < kids.count && !found; i++) {
    if (!zkl__name_is_mine(kids.data[i], c->prefix)) continue;
    size_t len = c->root_len + 1 + strlen(kids.data[i]) + 1;
    char *path = malloc(len);
    struct Stat st;
    if (path == NULL) break;
    snprintf(path, len, "%s/%s", c->root, kids.data[i]);
    zrc = zoo_exists(zh, path, 0, &st);
    if (zrc == ZOK) {
      adopt_node(c, path, st.czxid);
      found = 1;
    } else {
      free(path);
      *zrc_out = zrc == ZNONODE ? ZOK : zrc;
    }
  }
  deallocate_String_vector(&kids);
  return found;
}

/* Creates our contender node: never two, never an orphan.  0 or an error;
 * on error no node of ours exists (or the session is gone, and it with it).
 * A connection loss is waited out even past the caller's deadline: we must
 * learn whether the create happened, or we could leave an orphan. */
static int create_node(zkl__contender_t *c) {
  zhandle_t *zh = zkl__zh(c->s);
  size_t want = c->root_len + 1 + ZKL__PREFIX_LEN + strlen(c->drv->marker) + 1;
  size_t cap = want + 16; /* the server appends up to 11 characters */
  char *want_path = malloc(want), *made = malloc(cap);
  int rc = ZKL_ENOMEM;
  if (want_path == NULL || made == NULL) goto out;
  snprintf(want_path, want, "%s/%s%s", c->root, c->prefix, c->drv->marker);
  for (int parent_tries = 0;;) {
    struct Stat st;
    int zrc = zoo_create2(zh, want_path, c->data, c->data_len,
                          zkl__session_acl(c->s), ZOO_EPHEMERAL_SEQUENTIAL,
                          made, (int)cap, &st);
    if (zrc == ZOK) {
      adopt_node(c, made, st.czxid);
      made = NULL;
      rc = 0;
      break;
    }
    if (zrc == ZNONODE && parent_tries++ < PARENT_RETRIES) {
      zrc = ensure_path(c, c->root); /* may race the container reaper */
      if (zrc == 0 || zrc == ZNONODE) continue;
    }
    if (retryable(zrc)) {
      rc = await_connected(c, cleanup_deadline(c), NO_CANCEL);
      if (rc != 0) {
        rc = rc == ZKL_ETIMEDOUT ? ZKL_ELOST : rc;
        break;
      }
      int frc;
      if (find_mine(c, &frc)) {
        rc = 0;
        break;
      }
      if (frc == ZOK || frc == ZNONODE || retryable(frc)) continue;
      zrc = frc;
    }
    rc = map_zrc(c, zrc, "create");
    break;
  }
out:
  free(want_path);
  free(made);
  return rc;
}

/* Deletes our node; with `mark`, atomically leaves the release mark in the
 * root's data.  Retries through connection losses until the node is gone
 * or the session is (which deletes it too).  0, or ZKL_ELOST when the node
 * was already gone (the hold had been lost) or the session went first. */
static int delete_node(zkl__contender_t *c, int mark) {
  zhandle_t *zh = zkl__zh(c->s);
  int rc = 0, maybe_applied = 0;
  int64_t deadline = cleanup_deadline(c);
  while (c->node != NULL) {
    int zrc;
    if (mark && !c->no_mark) {
      char buf[64];
      int len = zkl__mark_format(buf, sizeof buf, c->czxid);
      zoo_op_t ops[2];
      zoo_op_result_t res[2];
      zoo_set_op_init(&ops[0], c->root, buf, len, -1, NULL);
      zoo_delete_op_init(&ops[1], c->node, -1);
      zrc = zoo_multi(zh, 2, ops, res);
      if (zrc == ZNOAUTH) {
        c->no_mark = 1; /* the root is not ours to write: plain deletes */
        continue;
      }
    } else {
      zrc = zoo_delete(zh, c->node, -1);
    }
    if (zrc == ZOK) break;
    if (zrc == ZNONODE) {
      rc = maybe_applied ? 0 : ZKL_ELOST;
      break;
    }
    if (!retryable(zrc)) {
      rc = map_zrc(c, zrc, "delete");
      break;
    }
    maybe_applied = 1;
    rc = await_connected(c, deadline, NO_CANCEL);
    if (rc != 0) {
      rc = ZKL_ELOST; /* gone with the session, at the latest on expiry */
      break;
    }
  }
  free(c->node);
  c->node = NULL;
  return rc;
}

/* ---- the queue below us ----------------------------------------------------- */

/* The contenders below our node that the driver counts, in queue order,
 * from ONE listing.  Nodes created later sort after us, so this list only
 * ever shrinks: it is all a woken waiter needs to re-check. */
typedef struct queue {
  struct String_vector kids; /* owns the names lower[] points into */
  zkl__node_t *lower;
  size_t n;
  int self_seen;
} queue_t;

static void queue_free(queue_t *q) {
  deallocate_String_vector(&q->kids);
  free(q->lower);
  memset(q, 0, sizeof *q);
}

static void queue_drop(queue_t *q, size_t from, size_t count) {
  memmove(q->lower + from, q->lower + from + count,
          (q->n - from - count) * sizeof *q->lower);
  q->n -= count;
}

/* Parses a listing into q: the counted contenders below our sequence. */
static int queue_fill(zkl__contender_t *c, queue_t *q) {
  const char *self = c->node + c->root_len + 1;
  q->lower = calloc(q->kids.count > 0 ? (size_t)q->kids.count : 1,
                    sizeof *q->lower);
  if (q->lower == NULL) return ZKL_ENOMEM;
  for (int i = 0; i < q->kids.count; i++) {
    zkl__node_t n;
    if (strcmp(q->kids.data[i], self) == 0) {
      q->self_seen = 1;
      continue;
    }
    if (zkl__name_parse(q->kids.data[i], &n) != 0 || !c->drv->counts(n.kind))
      continue; /* unknown children are ignored, never fatal */
    if (zkl__seq_cmp(n.seq, c->seq) < 0) q->lower[q->n++] = n;
  }
  zkl__nodes_sort(q->lower, q->n);
  return 0;
}

static int queue_list(zkl__contender_t *c, queue_t *q, int64_t deadline,
                      unsigned cancel_seen) {
  for (;;) {
    memset(q, 0, sizeof *q);
    int zrc = zoo_get_children(zkl__zh(c->s), c->root, 0, &q->kids);
    if (zrc == ZOK) {
      int rc = queue_fill(c, q);
      if (rc != 0) queue_free(q);
      return rc;
    }
    if (!retryable(zrc)) return map_zrc(c, zrc, "list");
    int rc = await_connected(c, deadline == ZKL__TRY ? cleanup_deadline(c)
                                                     : deadline,
                             cancel_seen);
    if (rc != 0) return rc;
  }
}

/* Trylock's first look: is any counted contender there?  No write. */
static int peek_busy(zkl__contender_t *c) {
  struct String_vector kids = {0, NULL};
  int zrc = zoo_get_children(zkl__zh(c->s), c->root, 0, &kids);
  if (zrc == ZNONODE) return 0; /* no root yet: free */
  if (zrc != ZOK) return map_zrc(c, zrc, "list");
  int busy = 0;
  for (int i = 0; i < kids.count && !busy; i++) {
    zkl__node_t n;
    busy = zkl__name_parse(kids.data[i], &n) == 0 && c->drv->counts(n.kind);
  }
  deallocate_String_vector(&kids);
  return busy ? zkl__fail(ZKL_EBUSY, "%s is held", c->root) : 0;
}

/* Reads the release mark: every node created no later than it is gone.
 * 0 if there is none (or it cannot be read now: we then walk instead). */
static int64_t read_mark(zkl__contender_t *c) {
  char buf[64];
  int len = sizeof buf;
  int64_t czxid = 0;
  if (zoo_get(zkl__zh(c->s), c->root, 0, buf, &len, NULL) != ZOK ||
      zkl__mark_parse(buf, len, &czxid) != 0)
    return 0;
  return czxid;
}

/* ---- watching ------------------------------------------------------------------ */

/* Withdraws a watch we no longer need from the server.  Removing only our
 * watcher would be a client-side removal (ZooKeeper's checkWatches): the
 * server keeps one watch per path and session, and drops it only for a
 * remove-all.  Other waiters of this session watching the same path are
 * therefore woken to re-check and re-arm. */
static void drop_watch(zkl__contender_t *c, const char *path) {
  zoo_remove_all_watches(zkl__zh(c->s), path, ZWATCHTYPE_DATA, 0);
  zkl__session_lock(c->s);
  zkl__waiters_poke_path(c->s, path);
  zkl__session_unlock(c->s);
}

/* Arms a data watch on `target` and waits.  Returns the wait's outcome, or
 * a negative code; *gone says the target no longer exists, *czxid its
 * creation zxid when it did. */
static int watch_and_wait(zkl__contender_t *c, const char *target,
                          int64_t deadline, unsigned cancel_seen, int *gone,
                          int64_t *czxid) {
  zkl_session_t *s = c->s;
  zkl__session_lock(s);
  zkl__waiter_register(s, &c->w, target);
  unsigned epoch = zkl__session_epoch(s);
  zkl__session_unlock(s);

  char tiny[16];
  int len = sizeof tiny;
  struct Stat st;
  int zrc = zoo_wget(zkl__zh(s), target, zkl__watcher, s, tiny, &len, &st);
  *gone = zrc == ZNONODE; /* getData sets no watch on a missing node */
  woke_t why = WOKE_SESSION;
  zkl__session_lock(s);
  if (zrc == ZOK) {
    *czxid = st.czxid;
    why = wait_locked(c, epoch, deadline, cancel_seen);
    if (why == WOKE_FIRED)
      *gone = c->w.fired_type == ZOO_DELETED_EVENT;
  }
  zkl__waiter_unregister(s, &c->w);
  zkl__session_unlock(s);
  if (zrc != ZOK && zrc != ZNONODE && !retryable(zrc))
    return map_zrc(c, zrc, "watch");
  if (why == WOKE_CANCEL || why == WOKE_TIMEOUT) {
    drop_watch(c, target);
    return why == WOKE_CANCEL ? ZKL_ECANCELED : ZKL_ETIMEDOUT;
  }
  if (zrc != ZOK && !*gone) /* connection trouble: wait it out */
    return await_connected(c, deadline, cancel_seen);
  if (why == WOKE_SESSION && !*gone) {
    int rc = await_connected(c, deadline, cancel_seen);
    if (rc != 0) {
      if (rc != ZKL_ELOST) drop_watch(c, target);
      return rc;
    }
  }
  return 0;
}

/* Waits until the driver grants us, given the queue below us. */
static int wait_turn(zkl__contender_t *c, queue_t *q, int64_t deadline,
                     unsigned cancel_seen) {
  char *target = NULL;
  int rc = 0;
  for (;;) {
    ptrdiff_t idx = c->drv->blocker(q->lower, q->n);
    if (idx < 0) break;
    if (deadline == ZKL__TRY) {
      rc = zkl__fail(ZKL_EBUSY, "%s is held", c->root);
      break;
    }
    size_t len = c->root_len + 1 + strlen(q->lower[idx].name) + 1;
    free(target);
    if ((target = malloc(len)) == NULL) {
      rc = ZKL_ENOMEM;
      break;
    }
    snprintf(target, len, "%s/%s", c->root, q->lower[idx].name);
    int gone = 0;
    int64_t czxid = 0;
    rc = watch_and_wait(c, target, deadline, cancel_seen, &gone, &czxid);
    if (rc != 0) break;
    if (!gone) continue; /* data changed, or reconnected: look again */
    queue_drop(q, (size_t)idx, 1);
    /* Still blocked by nodes we knew below it?  If an exclusive holder
     * released after it was created, they are all gone (one read instead
     * of one check per node). */
    if (czxid != 0 && idx > 0 && c->drv->blocker(q->lower, q->n) >= 0 &&
        read_mark(c) >= czxid)
      queue_drop(q, 0, (size_t)idx);
  }
  free(target);
  return rc;
}

/* ---- acquire / release ------------------------------------------------------------ */

int zkl__contend_acquire(zkl__contender_t *c, int64_t deadline,
                         unsigned cancel_seen) {
  int rc = await_connected(c, deadline, cancel_seen);
  if (rc == ZKL_ETIMEDOUT)
    return zkl__fail(deadline == ZKL__TRY ? ZKL_ESUSPENDED : ZKL_ETIMEDOUT,
                     "not connected to ZooKeeper");
  if (rc != 0) return rc;
  if (deadline == ZKL__TRY && (rc = peek_busy(c)) != 0) return rc;
  for (int attempt = 0; attempt < 3; attempt++) {
    if ((rc = create_node(c)) != 0) return rc;
    queue_t q;
    if ((rc = queue_list(c, &q, deadline, cancel_seen)) == 0) {
      if (!q.self_seen) {
        /* Our node vanished under us: deleted by someone else, or the
         * session is going.  Start over with a new node. */
        queue_free(&q);
        free(c->node);
        c->node = NULL;
        if (zkl__session_health(c->s) == ZKL_ELOST) return ZKL_ELOST;
        continue;
      }
      rc = wait_turn(c, &q, deadline, cancel_seen);
      queue_free(&q);
    }
    if (rc != 0) delete_node(c, 0);
    return rc;
  }
  return zkl__fail(ZKL_EPROTO, "our node under %s keeps vanishing", c->root);
}

int zkl__contend_release(zkl__contender_t *c) {
  if (c->node == NULL) return ZKL_ELOST;
  if (zkl__session_health(c->s) == ZKL_ELOST ||
      zkl_session_id(c->s) != c->session_id) {
    free(c->node);
    c->node = NULL;
    return zkl__fail(ZKL_ELOST, "session lost while holding %s", c->root);
  }
  return delete_node(c, c->drv->exclusive);
}
