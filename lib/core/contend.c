/* lib/core/contend.c - the contention core every recipe uses.
 *
 * One acquisition: create our EPHEMERAL_SEQUENTIAL node (found again by its
 * uuid prefix after a connection loss), list the children once, and then ask
 * the recipe's driver "granted, or which lower node do I watch?" until
 * granted, the deadline, a cancel or the loss of the session.  A woken waiter
 * never lists the children again: it checks the lower nodes it already knows
 * (none can appear below it later).  A mutex or write-lock holder releases
 * with one multi that changes its node's data and then deletes it, so its
 * watcher hears NodeDataChanged, not NodeDeleted: "left as holder", which
 * proves every lower node gone.  A wake-up thus costs O(1) server work however
 * long the queue, and no request at all after a holder's release.  Every
 * exit path that did not grant deletes our node and removes our watch.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#include "core/contend.h"

/* How often a create may meet a missing parent (a container the server just
 * removed) before giving up: generous, each retry is one round trip. */
#define PARENT_RETRIES 16

/* ---- small helpers ------------------------------------------------------ */

/* wait_turn's verdict when our own node disappeared while we waited */
#define VANISHED 1

/* What became of a watched node (watch_and_wait's *left). */
#define STILL_THERE 0 /* or not known: look again                       */
#define GONE 1        /* deleted: a give-up, a lost session, a janitor   */
#define RELEASED 2    /* its data changed: it left as a holder       */

static int retryable(int zrc) {
  return zrc == ZCONNECTIONLOSS || zrc == ZOPERATIONTIMEOUT;
}

/* Maps a ZooKeeper failure to what the caller should hear. */
static int map_zrc(zkl__contender_t *c, int zrc, const char *what) {
  if (zrc == ZKL__ZTIMEDOUT)
    return zkl__fail(ZKL_ETIMEDOUT, "%s on %s: no answer before the deadline",
                     what, c->root);
  if (zrc == ZSESSIONEXPIRED || zrc == ZINVALIDSTATE || zrc == ZCLOSING ||
      zkl__session_health(c->s) == ZKL_ELOST)
    return zkl__fail(ZKL_ELOST, "%s on %s: session lost", what, c->root);
  if (zrc == ZNOAUTH)
    return zkl__fail(ZNOAUTH, "%s on %s: not authorised", what, c->root);
  return zkl__fail(zrc, "%s on %s: %s", what, c->root, zerror(zrc));
}

/* How long an unlock keeps retrying its delete through a connection loss
 * before handing it to the janitor: one session timeout. */
static int64_t cleanup_deadline(zkl__contender_t *c) {
  int t = zkl_session_timeout(c->s);
  return zkl__deadline_after_ms(t > 0 ? t : 10000);
}

/* cancel == NULL: the wait cannot be canceled. */
static int canceled(zkl__contender_t *c, const unsigned *cancel) {
  return cancel != NULL && atomic_load(c->cancel_gen) != *cancel;
}

typedef enum { WOKE_FIRED, WOKE_SESSION, WOKE_CANCEL, WOKE_TIMEOUT } woke_t;

/* Waits, with the session locked, until our watch fires, the session state
 * changes (epoch differs from `epoch`), a cancel or the deadline. */
static woke_t wait_locked(zkl__contender_t *c, unsigned epoch,
                          int64_t deadline, const unsigned *cancel) {
  for (;;) {
    if (c->w.fired || c->w.self_fired) return WOKE_FIRED;
    if (zkl__session_epoch(c->s) != epoch) return WOKE_SESSION;
    if (canceled(c, cancel)) return WOKE_CANCEL;
    if (deadline == ZKL__TRY || zkl__session_wait(c->s, &c->w, deadline) != 0)
      return WOKE_TIMEOUT;
  }
}

/* Waits until the session is connected again.  0, ZKL_ELOST,
 * ZKL_ETIMEDOUT or ZKL_ECANCELED.  With no node of ours yet, a lost
 * session that is being re-established is waited for like a suspended
 * one; a node of ours does not survive it (ZKL_ELOST). */
static int await_connected(zkl__contender_t *c, int64_t deadline,
                           const unsigned *cancel) {
  zkl_session_t *s = c->s;
  for (;;) {
    zkl__session_lock(s);
    int h = zkl__health_locked(s);
    if (h == ZKL_ELOST && c->node == NULL && zkl__session_renews_locked(s))
      h = ZKL_ESUSPENDED;
    else if (h == 0 && c->node != NULL &&
             zkl__session_id_locked(s) != c->session_id)
      h = ZKL_ELOST; /* already re-established: our node went with the
                        old session */
    woke_t why = WOKE_SESSION;
    if (h == ZKL_ESUSPENDED) {
      zkl__waiter_register(s, &c->w, NULL);
      why = wait_locked(c, zkl__session_epoch(s), deadline, cancel);
      zkl__waiter_unregister(s, &c->w);
    }
    zkl__session_unlock(s);
    if (h == 0) return 0;
    if (h == ZKL_ELOST) return ZKL_ELOST;
    if (why == WOKE_CANCEL) return ZKL_ECANCELED;
    if (why == WOKE_TIMEOUT) return ZKL_ETIMEDOUT;
  }
}

ptrdiff_t zkl__blocker_exclusive(const zkl__node_t *lower, size_t n) {
  (void)lower;
  return n == 0 ? -1 : (ptrdiff_t)n - 1;
}

/* ---- contender lifetime ---------------------------------------------------- */

int zkl__contender_init(zkl__contender_t *c, zkl_session_t *s,
                        const zkl__driver_t *drv, const char *path,
                        const void *data, size_t data_len,
                        atomic_uint *cancel_gen) {
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
  int rc = c->root == NULL || c->data == NULL ? ZKL_ENOMEM
           : zkl__waiter_init(&c->w) != 0        ? ZKL_ESYSTEM
                                                 : 0;
  if (rc != 0) {
    free(c->root);
    free(c->data);
    return rc;
  }
  zkl__prefix_new(c->prefix);
  c->cancel_gen = cancel_gen;
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
  zkl__session_lock(c->s);
  zkl__waiter_kick(&c->w);
  zkl__session_unlock(c->s);
}

/* ---- our node: create, find again, delete ----------------------------------- */

/* Creates `root` and its missing ancestors as CONTAINER nodes, which the
 * server removes again once they are empty (lock roots do not pile up). */
static int ensure_path(zkl__contender_t *c, char *path) {
  for (int tries = 0; tries < PARENT_RETRIES; tries++) {
    int zrc = zkl__zk_create(c->s, c->dl, path, NULL, -1, ZOO_CONTAINER,
                             NULL, NULL);
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

static int ensure_root(zkl__contender_t *c) {
  char *copy = strdup(c->root); /* ensure_path cuts it up as it recurses */
  if (copy == NULL) return ZSYSTEMERROR;
  int zrc = ensure_path(c, copy);
  free(copy);
  return zrc;
}

static void adopt_node(zkl__contender_t *c, char *path,
                       const struct Stat *st) {
  zkl__node_t n;
  free(c->node);
  c->node = path;
  c->czxid = st->czxid;
  c->owner = st->ephemeralOwner;
  c->seq = zkl__name_parse(path + c->root_len + 1, &n) == 0 ? n.seq : 0;
  /* the session the server made it for (an ephemeral node's owner), not
   * the one current when the answer is read: they differ if the session
   * was replaced in between */
  c->session_id = st->ephemeralOwner != 0 ? st->ephemeralOwner
                                          : zkl_session_id(c->s);
}

/* Looks for a child carrying our prefix and adopts it.  1 found, 0 not
 * there (*zrc_out ZOK or ZNONODE: it was never created), or 0 with another
 * *zrc_out when the answer is not known. */
static int find_mine(zkl__contender_t *c, int *zrc_out) {
  struct String_vector kids = {0, NULL};
  int zrc = zkl__zk_sync(c->s, c->dl, c->root); /* a lagging follower may
                                                   not have applied our
                                                   create yet */
  if (zrc == ZOK) zrc = zkl__zk_children(c->s, c->dl, c->root, 0, &kids);
  *zrc_out = zrc;
  int found = 0;
  for (int i = 0; zrc == ZOK && i < kids.count && !found; i++) {
    if (!zkl__name_is_mine(kids.data[i], c->prefix)) continue;
    size_t len = c->root_len + 1 + strlen(kids.data[i]) + 1;
    char *path = malloc(len);
    struct Stat st;
    if (path == NULL) {
      *zrc_out = ZSYSTEMERROR;
      break;
    }
    snprintf(path, len, "%s/%s", c->root, kids.data[i]);
    int erc = zkl__zk_exists(c->s, c->dl, path, 0, &st);
    if (erc == ZOK) {
      adopt_node(c, path, &st);
      found = 1;
    } else {
      free(path);
      *zrc_out = erc == ZNONODE ? ZOK : erc;
    }
  }
  deallocate_String_vector(&kids);
  return found;
}

/* After a create whose reply was lost: did it happen?  0 adopted our node,
 * 1 it did not happen (create again), <0 gave up: the janitor deletes the
 * node if it exists once the connection is back.  Never a second node. */
static int recover_create(zkl__contender_t *c, int64_t deadline,
                          const unsigned *cancel) {
  for (;;) {
    int rc = await_connected(c, deadline, cancel);
    if (rc != 0) { /* a lost session zkl only declared may still live */
      if (rc != ZKL_ELOST || !zkl__session_gone(c->s))
        zkl__janitor_add(c->s, c->root, c->prefix, NULL);
      return rc;
    }
    int frc;
    if (find_mine(c, &frc)) return 0;
    if (frc == ZOK || frc == ZNONODE) return 1;
    if (!retryable(frc)) { /* refused, or no answer before the deadline */
      zkl__janitor_add(c->s, c->root, c->prefix, NULL);
      return map_zrc(c, frc, "create");
    }
  }
}

/* How many of the contenders below us that can block us a waiter keeps:
 * the nearest ones (memory stays flat however long the queue).  Only when
 * all of them gave up, with no release covering the ones below, does it
 * list the children again. */
#define WINDOW 4

/* The nearest contenders below our node that can block us, in queue order,
 * from ONE listing.  Nodes created later sort after us, so this list only
 * ever shrinks: it is all a woken waiter needs to re-check. */
struct queue {
  zkl__node_t lower[WINDOW]; /* names are our own copies */
  size_t n;
  int more;       /* blockers below lower[0] were left out */
  int self_seen;  /* the listing showed our own node */
  int listed;     /* filled by the listing sent with our create */
};
typedef struct queue queue_t;
static int queue_fill(zkl__contender_t *c, queue_t *q,
                      const struct String_vector *kids);
static void queue_free(queue_t *q);

/* Creates our contender node under a fresh prefix (so that a create handed
 * to the janitor can never be mistaken for a later one).  0 or an error; on
 * error no node of ours is left, or the janitor will delete it.
 * The first try sends the listing of the root right behind the create,
 * without waiting: the server answers a session's requests in order, so it
 * already holds our node, and the uncontended path costs one round trip
 * less.  When that listing came back, q->listed says so. */
static int create_node(zkl__contender_t *c, int64_t deadline,
                       const unsigned *cancel, queue_t *q) {
  memset(q, 0, sizeof *q);
  zkl__prefix_new(c->prefix);
  size_t want = c->root_len + 1 + ZKL__PREFIX_LEN + strlen(c->drv->marker) + 1;
  char *want_path = malloc(want);
  int rc = ZKL_ENOMEM;
  if (want_path == NULL) return rc;
  snprintf(want_path, want, "%s/%s%s", c->root, c->prefix, c->drv->marker);
  for (int parent_tries = 0, tries = 0;; tries++) {
    char *made = NULL;
    struct Stat st;
    struct String_vector kids = {0, NULL};
    zkl__zcall_t *kc = zkl__zk_create_send(
        c->s, want_path, c->data, c->data_len, ZOO_EPHEMERAL_SEQUENTIAL);
    zkl__zcall_t *kl =
        tries == 0 && kc != NULL ? zkl__zk_children_send(c->s, c->root, 0)
                                 : NULL;
    int zrc = zkl__zk_create_wait(kc, c->dl, &made, &st);
    int lrc = kl != NULL ? zkl__zk_children_wait(kl, c->dl, &kids)
                         : ZSYSTEMERROR;
    if (zrc == ZOK) {
      adopt_node(c, made, &st);
      if (lrc == ZOK && queue_fill(c, q, &kids) == 0) q->listed = 1;
      else queue_free(q); /* the caller lists on its own */
      deallocate_String_vector(&kids);
      rc = 0;
      break;
    }
    deallocate_String_vector(&kids);
    if (zrc == ZKL__ZTIMEDOUT) { /* it may still be made: not ours to keep */
      zkl__janitor_add(c->s, c->root, c->prefix, NULL);
      rc = map_zrc(c, zrc, "create");
      break;
    }
    if (zrc == ZNONODE && parent_tries++ < PARENT_RETRIES) {
      zrc = ensure_root(c); /* may race the container reaper: retry */
      if (zrc == ZOK || zrc == ZNONODE) continue;
    }
    if (retryable(zrc)) {
      rc = recover_create(c, deadline, cancel);
      if (rc == 1) continue;
      break;
    }
    rc = map_zrc(c, zrc, "create");
    break;
  }
  free(want_path);
  return rc;
}

/* Lets go of our node once the session is lost.  If zkl only declared the
 * session lost (silence) the server may still keep it (a partition that
 * heals, an ensemble that lost its quorum): the janitor deletes the node
 * should the same session come back. */
static void forget_node(zkl__contender_t *c) {
  if (c->node == NULL) return;
  if (!zkl__session_gone(c->s))
    zkl__janitor_add(c->s, c->root, c->prefix, c->node);
  free(c->node);
  c->node = NULL;
}

/* Hands our node to the janitor (no request into a dead connection: it
 * deletes the node once the connection is back) and forgets it. */
static void to_janitor(zkl__contender_t *c) {
  zkl__janitor_add(c->s, c->root, c->prefix, c->node);
  free(c->node);
  c->node = NULL;
}

/* One attempt at deleting our node; with `mark` (a holder's release),
 * changing its data first in the same multi, which tells the node's
 * watcher that it left as holder.  A ZooKeeper code. */
static int delete_once(zkl__contender_t *c, int mark) {
  if (!mark || c->no_mark) return zkl__zk_delete(c->s, c->dl, c->node);
  int zrc = zkl__zk_release(c->s, c->dl, c->node);
  if (zrc != ZOK && zrc != ZNONODE && !retryable(zrc) &&
      zrc != ZKL__ZTIMEDOUT && zkl__session_health(c->s) != ZKL_ELOST) {
    /* our node's ACL does not let us write it: plain deletes from now on
     * (the waiter behind then checks the nodes below one by one) */
    c->no_mark = 1;
    return zkl__zk_delete(c->s, c->dl, c->node);
  }
  return zrc;
}

/* Deletes our node, retrying through connection losses until `deadline`;
 * past it the janitor takes over.  Frees c->node in every case.
 *   0               deleted.
 *   ZKL_ELOST       it was already gone (deleted by someone else, or the
 *                   session is lost, which deletes it).
 *   ZKL_ESUSPENDED  the connection is down: the janitor deletes it when
 *                   the connection is back.
 *   other <0        ZooKeeper refused; it goes when the session ends. */
static int delete_node(zkl__contender_t *c, int mark, int64_t deadline) {
  int rc = 0, maybe_applied = 0;
  for (int attempt = 0; c->node != NULL; attempt++) {
    int zrc = delete_once(c, mark);
    if (zrc == ZOK) break;
    if (zrc == ZNONODE) {
      rc = maybe_applied ? 0
                         : zkl__fail(ZKL_ELOST, "%s was already deleted",
                                     c->node);
      break;
    }
    if (zrc == ZKL__ZTIMEDOUT) { /* no answer in time: the janitor's job */
      zkl__janitor_add(c->s, c->root, c->prefix, c->node);
      rc = zkl__fail(ZKL_ESUSPENDED, "no answer from ZooKeeper: %s will be "
                     "deleted by the session's janitor", c->node);
      break;
    }
    if (!retryable(zrc)) {
      rc = map_zrc(c, zrc, "delete");
      break;
    }
    maybe_applied = 1;
    rc = attempt < 8 ? await_connected(c, deadline, NULL) : ZKL_ETIMEDOUT;
    if (rc == ZKL_ELOST) {
      forget_node(c);
      break;
    }
    if (rc != 0) {
      zkl__janitor_add(c->s, c->root, c->prefix, c->node);
      rc = zkl__fail(ZKL_ESUSPENDED, "connection down: %s will be deleted "
                     "when it is back", c->node);
      break;
    }
  }
  free(c->node);
  c->node = NULL;
  return rc;
}

/* ---- the queue below us ----------------------------------------------------- */

static void queue_drop(queue_t *q, size_t from, size_t count) {
  for (size_t i = from; i < from + count; i++) free((char *)q->lower[i].name);
  memmove(q->lower + from, q->lower + from + count,
          (q->n - from - count) * sizeof *q->lower);
  q->n -= count;
}

static void queue_free(queue_t *q) {
  queue_drop(q, 0, q->n);
  memset(q, 0, sizeof *q);
}

/* Parses a listing into q: the nearest contenders below our sequence that
 * can block us, picked in one pass (no copy of the listing). */
static int queue_fill(zkl__contender_t *c, queue_t *q,
                      const struct String_vector *kids) {
  const char *self = c->node + c->root_len + 1;
  zkl__node_t near[WINDOW]; /* ascending; names borrowed from kids */
  size_t n = 0;
  for (int i = 0; i < kids->count; i++) {
    zkl__node_t x;
    if (strcmp(kids->data[i], self) == 0) {
      q->self_seen = 1;
      continue;
    }
    /* unknown children are ignored, never fatal */
    if (zkl__name_parse(kids->data[i], &x) != 0 || !c->drv->counts(x.kind) ||
        !c->drv->blocks(x.kind) || zkl__seq_cmp(x.seq, c->seq) >= 0)
      continue;
    if (n == WINDOW) { /* full: x replaces the lowest, if above it */
      q->more = 1;
      if (zkl__node_cmp(&x, &near[0]) < 0) continue;
      memmove(near, near + 1, --n * sizeof *near);
    }
    size_t at = n++;
    for (; at > 0 && zkl__node_cmp(&x, &near[at - 1]) < 0; at--)
      near[at] = near[at - 1];
    near[at] = x;
  }
  for (; q->n < n; q->n++) {
    q->lower[q->n] = near[q->n];
    if ((q->lower[q->n].name = strdup(near[q->n].name)) == NULL)
      return ZKL_ENOMEM; /* q->n counts only the names we own */
  }
  return 0;
}

static int queue_list(zkl__contender_t *c, queue_t *q, int64_t deadline,
                      const unsigned *cancel) {
  for (;;) {
    struct String_vector kids = {0, NULL};
    memset(q, 0, sizeof *q);
    int zrc = zkl__zk_children(c->s, c->dl, c->root, 0, &kids);
    if (zrc == ZOK) {
      int rc = queue_fill(c, q, &kids);
      deallocate_String_vector(&kids);
      if (rc != 0) queue_free(q);
      return rc;
    }
    if (!retryable(zrc)) return map_zrc(c, zrc, "list");
    int rc = await_connected(c, deadline, cancel);
    if (rc != 0) return rc;
  }
}

/* Trylock's first look, with no write: would we be granted if we queued
 * now?  Asks the driver as if our node came after every contender. */
static int peek_busy(zkl__contender_t *c) {
  struct String_vector kids = {0, NULL};
  int zrc = zkl__zk_children(c->s, c->dl, c->root, 0, &kids);
  if (zrc == ZNONODE) return 0; /* no root yet: free */
  if (zrc != ZOK) return map_zrc(c, zrc, "list");
  zkl__node_t *all = calloc(kids.count > 0 ? (size_t)kids.count : 1,
                            sizeof *all);
  int rc = ZKL_ENOMEM;
  if (all != NULL) {
    size_t n = 0;
    for (int i = 0; i < kids.count; i++)
      if (zkl__name_parse(kids.data[i], &all[n]) == 0 &&
          c->drv->counts(all[n].kind))
        n++;
    zkl__nodes_sort(all, n);
    rc = c->drv->blocker(all, n) >= 0
             ? zkl__fail(ZKL_EBUSY, "%s is held", c->root)
             : 0;
    free(all);
  }
  deallocate_String_vector(&kids);
  return rc;
}

/* Is our node still there?  1 yes, 0 no, or a negative code. */
static int self_present(zkl__contender_t *c, int64_t deadline,
                        const unsigned *cancel) {
  for (;;) {
    struct Stat st;
    int zrc = zkl__zk_exists(c->s, c->dl, c->node, 0, &st);
    if (zrc == ZOK) {
      c->owner = st.ephemeralOwner;
      return 1;
    }
    if (zrc == ZNONODE) return 0;
    if (!retryable(zrc)) return map_zrc(c, zrc, "exists");
    int rc = await_connected(c, deadline, cancel);
    if (rc != 0) return rc;
  }
}

/* ---- watching ------------------------------------------------------------------ */

/* Withdraws a watch we no longer need from the server, without waiting for
 * the answer (a caller giving up must not wait on a dead connection; if the
 * connection is gone, so is the server's watch).  Removing only our
 * watcher would be a client-side removal (ZooKeeper's checkWatches): the
 * server keeps one watch per path and session and drops it only for a
 * remove-all.  Other waiters of this session watching the same path are
 * therefore woken to re-check and re-arm. */
static void drop_watches(zkl__contender_t *c, const char *path,
                         ZooWatcherType type) {
  zkl__zk_unwatch(c->s, path, (int)type);
  zkl__session_lock(c->s);
  zkl__waiters_poke_path(c->s, path);
  zkl__session_unlock(c->s);
}

static void drop_watch(zkl__contender_t *c, const char *path) {
  drop_watches(c, path, ZWATCHTYPE_DATA);
}

/* Sets a data watch on target: getData, which sets none on a missing node.
 * A predecessor whose ACL refuses us READ is watched with exists instead,
 * whose watch on a missing node must then be withdrawn. */
static int arm_watch(zkl__contender_t *c, const char *target,
                     struct Stat *st) {
  int zrc = zkl__zk_get(c->s, c->dl, target, 1, NULL, NULL, st);
  if (zrc == ZNOAUTH) {
    zrc = zkl__zk_exists(c->s, c->dl, target, 1, st);
    if (zrc == ZNONODE) drop_watch(c, target);
  }
  if (zrc == ZKL__ZTIMEDOUT) drop_watch(c, target); /* may still be set */
  return zrc;
}

/* Arms a data watch on `target` and waits.  0 with *left telling what
 * became of the target (STILL_THERE, GONE, RELEASED: its data changed,
 * which only the caller can tell to be a release), or a negative code.
 * Our own node is watched too, in the same round trip: should it go while
 * we wait, we wake; *self says what is known of it on return (1 there all
 * along, 0 gone, -1 not known), so that a wake-up needs no look at it. */
static int watch_and_wait(zkl__contender_t *c, const char *target,
                          int64_t deadline, const unsigned *cancel, int *left,
                          int *self) {
  zkl_session_t *s = c->s;
  *self = -1;
  int rc = await_connected(c, deadline, cancel); /* no request into a dead
                                                    connection */
  if (rc != 0) return rc;
  zkl__session_lock(s);
  zkl__waiter_register(s, &c->w, target);
  c->w.self_path = c->node;
  unsigned epoch = zkl__session_epoch(s);
  zkl__session_unlock(s);

  zkl__zcall_t *ks = zkl__zk_exists_send(s, c->node, 1);
  struct Stat st, own;
  int zrc = arm_watch(c, target, &st);
  int src = zkl__zk_exists_wait(ks, c->dl, &own);
  if (src == ZOK) c->owner = own.ephemeralOwner;
  else if (src == ZNONODE || src == ZKL__ZTIMEDOUT)
    drop_watch(c, c->node); /* a watch on a missing node, or maybe set */
  *left = zrc == ZNONODE ? GONE : STILL_THERE;
  woke_t why = WOKE_SESSION;
  zkl__session_lock(s);
  if (zrc == ZOK && src != ZNONODE) {
    why = wait_locked(c, epoch, deadline, cancel);
    if (why == WOKE_FIRED && c->w.fired)
      *left = c->w.fired_type == ZOO_DELETED_EVENT   ? GONE
              : c->w.fired_type == ZOO_CHANGED_EVENT ? RELEASED
                                                     : STILL_THERE;
  }
  *self = src == ZNONODE ? 0 : src == ZOK && !c->w.self_fired ? 1 : -1;
  zkl__waiter_unregister(s, &c->w);
  zkl__session_unlock(s);
  if (*self == 0) { /* our node is gone: no use watching for our turn */
    if (zrc == ZOK) drop_watch(c, target);
    return 0;
  }
  if (zrc != ZOK && zrc != ZNONODE && !retryable(zrc))
    return map_zrc(c, zrc, "watch");
  if (why == WOKE_CANCEL || why == WOKE_TIMEOUT) {
    drop_watch(c, target); /* not our own node's: it goes with the node */
    return why == WOKE_CANCEL ? ZKL_ECANCELED : ZKL_ETIMEDOUT;
  }
  if (*left == STILL_THERE && (zrc != ZOK || why == WOKE_SESSION)) {
    /* connection trouble: wait it out, then look again (the same session
     * keeps its watches; a new one has no node of ours anyway) */
    rc = await_connected(c, deadline, cancel);
    if (rc == ZKL_ETIMEDOUT || rc == ZKL_ECANCELED) drop_watch(c, target);
    return rc;
  }
  return 0;
}

/* Waits until the driver grants us, given the queue below us.  0 granted,
 * VANISHED if our own node disappeared meanwhile, or a negative code. */
static int wait_turn(zkl__contender_t *c, queue_t *q, int64_t deadline,
                     const unsigned *cancel) {
  char *target = NULL;
  int rc = 0;
  int self = 1; /* our node: 1 known there since the last wait, -1 not
                   known (0: gone) */
  for (;;) {
    ptrdiff_t idx = c->drv->blocker(q->lower, q->n);
    if (idx < 0 && q->more) {
      /* every blocker we kept gave up, and no release covered the ones
       * below them: list again (rare) */
      queue_free(q);
      if ((rc = queue_list(c, q, deadline, cancel)) != 0) break;
      if (!(self = q->self_seen)) {
        rc = VANISHED;
        break;
      }
      continue;
    }
    if (idx < 0) {
      /* After a wait, make sure nobody deleted our node meanwhile: the
       * ones behind us would already have passed us. */
      if (self < 0 && (rc = self_present(c, deadline, cancel)) >= 0)
        rc = rc == 1 ? 0 : VANISHED;
      break;
    }
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
    int left = STILL_THERE;
    rc = watch_and_wait(c, target, deadline, cancel, &left, &self);
    if (rc != 0) break;
    if (self == 0) {
      rc = VANISHED;
      break;
    }
    /* A data change is a release only from a kind of node whose zkl
     * holders leave that way; from any other it means nothing. */
    if (left == RELEASED && !zkl__kind_marks_release(q->lower[idx].kind))
      left = STILL_THERE;
    if (left == STILL_THERE) continue; /* reconnected, ...: look again */
    if (left == RELEASED) {
      /* it held the lock, so every node below it, kept or left out, was
       * gone when it did (and none can appear below later) */
      queue_drop(q, 0, (size_t)idx + 1);
      q->more = 0;
    } else { /* it gave up or its session ended: the next one down */
      queue_drop(q, (size_t)idx, 1);
    }
  }
  free(target);
  return rc;
}

/* ---- acquire / release ------------------------------------------------------------ */

/* How long a caller giving up waits for its node's delete to be answered
 * before returning anyway (the server may be frozen without the client
 * knowing yet); normally the answer takes one round trip. */
#define ABANDON_GRACE_MS 500

/* Gives up our node after a failed acquisition without depending on the
 * server: the delete is sent and waited for briefly; should it not be
 * answered in time or the connection fail, the session's janitor deletes
 * the node (again: a late first delete only makes its one a no-op). */
static void abandon(zkl__contender_t *c, int granted) {
  if (c->node == NULL) return;
  if (zkl__session_health(c->s) == ZKL_ESUSPENDED) {
    to_janitor(c);
    return;
  }
  c->dl = zkl__deadline_after_ms(ABANDON_GRACE_MS);
  /* refused after the grant (a deadline that passed, a cancel): it leaves
   * as a holder would, so that the waiter behind needs no look below */
  int zrc = delete_once(c, granted && c->drv->tells_release);
  if ((retryable(zrc) || zrc == ZKL__ZTIMEDOUT) && !zkl__session_gone(c->s))
    zkl__janitor_add(c->s, c->root, c->prefix, c->node);
  free(c->node);
  c->node = NULL;
}

/* The rule for a grant, checked right before an acquisition reports
 * success: our node was made on the session we are on now, and the server
 * was heard from within the session timeout (what holding() asks), and the
 * caller's deadline has not passed.  Nothing the wait learned is trusted
 * for it: a process paused while queued finds its wake-up (the release of
 * the node ahead) waiting in its socket when it runs again, while on the
 * server its session has expired and someone else holds the lock.
 * While the connection is down the grant stands only if the same session
 * comes back with our node.  0 (granted), ZKL_ELOST, VANISHED,
 * ZKL_ETIMEDOUT, ZKL_ESUSPENDED (a trylock) or ZKL_ECANCELED. */
static int confirm_grant(zkl__contender_t *c, int64_t deadline,
                         const unsigned *cancel) {
  for (;;) {
    if (deadline != ZKL__TRY && zkl__now_ns() >= deadline)
      return zkl__fail(ZKL_ETIMEDOUT, "%s: granted only after the deadline",
                       c->root);
    int h = zkl__contend_hold_health(c);
    if (h == 0) return 0;
    if (h == ZKL_ELOST) return ZKL_ELOST;
    if (deadline == ZKL__TRY)
      return zkl__fail(ZKL_ESUSPENDED, "%s: granted, but the connection is "
                       "down", c->root);
    int rc = await_connected(c, deadline, cancel); /* ELOST: another session */
    if (rc != 0) return rc;
    if ((rc = self_present(c, deadline, cancel)) != 1)
      return rc == 0 ? VANISHED : rc; /* else look again */
  }
}

int zkl__contend_acquire(zkl__contender_t *c, int64_t deadline,
                         unsigned cancel_seen) {
  const unsigned *cancel = &cancel_seen;
  /* every request waits for its answer until the caller's deadline; a
   * trylock's until the client itself gives up */
  c->dl = deadline == ZKL__TRY ? ZKL__FOREVER : deadline;
  int rc = await_connected(c, deadline, cancel);
  if (rc == ZKL_ETIMEDOUT)
    return zkl__fail(deadline == ZKL__TRY ? ZKL_ESUSPENDED : ZKL_ETIMEDOUT,
                     "not connected to ZooKeeper");
  if (rc != 0) return rc;
  if (deadline == ZKL__TRY && (rc = peek_busy(c)) != 0) return rc;
  int granted = 0;
  for (int attempt = 0; attempt < 3;) {
    queue_t q;
    if ((rc = create_node(c, deadline, cancel, &q)) == 0) {
      if (q.listed || (rc = queue_list(c, &q, deadline, cancel)) == 0) {
        rc = q.self_seen ? wait_turn(c, &q, deadline, cancel) : VANISHED;
        queue_free(&q);
      }
    }
    granted = rc == 0;
    if (rc == 0) rc = confirm_grant(c, deadline, cancel);
    if (rc == VANISHED && zkl__session_health(c->s) == ZKL_ELOST)
      rc = ZKL_ELOST;
    if (rc == ZKL_ELOST && zkl__session_renews(c->s)) {
      /* The session was lost while we queued: its nodes are gone and a new
       * session is on its way.  Queue again on it. */
      forget_node(c);
      if ((rc = await_connected(c, deadline, cancel)) != 0) break;
      continue;
    }
    if (rc != VANISHED) break;
    /* Our node vanished under us (deleted by someone else): start over
     * with a new node. */
    free(c->node);
    c->node = NULL;
    attempt++;
  }
  if (rc == VANISHED)
    rc = zkl__fail(ZKL_EPROTO, "our node under %s keeps vanishing", c->root);
  if (rc != 0) abandon(c, granted);
  if (rc == ZKL_ETIMEDOUT && deadline == ZKL__TRY) rc = ZKL_ESUSPENDED;
  return rc;
}

/* ---- holding and observing (election) ------------------------------------------ */

int zkl__contend_hold_wait(zkl__contender_t *c, unsigned epoch,
                           unsigned cancel_seen) {
  zkl_session_t *s = c->s;
  if (c->node == NULL) return 1;
  c->dl = ZKL__FOREVER;
  zkl__session_lock(s);
  int moved = zkl__session_epoch(s) != epoch;
  if (!moved) zkl__waiter_register(s, &c->w, c->node);
  zkl__session_unlock(s);
  if (moved) return 0;
  /* Suspended: no request into a dead connection, just wait for the
   * session to change; lost: nothing to wait for. */
  struct Stat st;
  int h = zkl__session_health(s);
  int zrc = h == 0 ? arm_watch(c, c->node, &st)
                   : h == ZKL_ESUSPENDED ? ZCONNECTIONLOSS : ZSESSIONEXPIRED;
  woke_t why = WOKE_SESSION;
  zkl__session_lock(s);
  if (zrc == ZOK || retryable(zrc))
    why = wait_locked(c, epoch, ZKL__FOREVER, &cancel_seen);
  int fired_type = c->w.fired_type;
  zkl__waiter_unregister(s, &c->w);
  zkl__session_unlock(s);
  if (zrc == ZNONODE) return 1;
  /* The watch on our node is not withdrawn: a caller canceling a hold
   * deletes the node next, which ends the watch on the server (one request
   * less on the way to the next holder). */
  if (why == WOKE_CANCEL) return ZKL_ECANCELED;
  if (zrc != ZOK && !retryable(zrc) && zrc != ZSESSIONEXPIRED)
    return map_zrc(c, zrc, "watch");
  return why == WOKE_FIRED && fired_type == ZOO_DELETED_EVENT ? 1 : 0;
}

int zkl__contend_owned(zkl__contender_t *c, int fresh, unsigned cancel_seen) {
  c->dl = ZKL__FOREVER;
  /* what the acquisition last saw of our node: its create or its check
   * after the last wait */
  if (!fresh && c->node != NULL && c->owner != 0 &&
      c->owner == c->session_id && c->owner == zkl_session_id(c->s))
    return 1;
  for (;;) {
    if (c->node == NULL) return 0;
    struct Stat st;
    int zrc = zkl__zk_exists(c->s, c->dl, c->node, 0, &st);
    if (zrc == ZNONODE) return 0;
    if (zrc == ZOK) {
      c->owner = st.ephemeralOwner;
      if (st.ephemeralOwner == zkl_session_id(c->s)) return 1;
      free(c->node); /* not ours to delete */
      c->node = NULL;
      return 0;
    }
    if (!retryable(zrc)) return map_zrc(c, zrc, "exists");
    int rc = await_connected(c, ZKL__FOREVER, &cancel_seen);
    if (rc != 0) return rc;
  }
}

int zkl__contend_release_nowait(zkl__contender_t *c) {
  if (c->node == NULL) return ZKL_ELOST;
  int h = zkl__contend_hold_health(c);
  if (h == ZKL_ELOST) {
    forget_node(c);
    return ZKL_ELOST;
  }
  if (h != 0) {
    to_janitor(c);
    return ZKL_ESUSPENDED;
  }
  c->dl = zkl__deadline_after_ms(zkl_session_timeout(c->s));
  return delete_node(c, c->drv->tells_release, ZKL__TRY);
}

int zkl__contend_head(zkl__contender_t *c, int watch, char **data, int *len,
                      int64_t *czxid) {
  /* not c->dl: zkl_election_leader() asks from the caller's thread while
   * the election's thread uses the same contender */
  const int64_t dl = ZKL__FOREVER;
  *data = NULL;
  *len = 0;
  if (watch) {
    zkl__session_lock(c->s);
    zkl__waiter_register(c->s, &c->w, c->root);
    zkl__session_unlock(c->s);
  }
  for (int tries = 0; tries < 8; tries++) {
    struct String_vector kids = {0, NULL};
    int zrc = zkl__zk_children(c->s, dl, c->root, watch, &kids);
    if (zrc == ZNONODE) {
      /* no root: nobody leads; an exists watch tells us when it appears
       * (and if it appeared meanwhile, list again with a child watch) */
      if (watch && zkl__zk_exists(c->s, dl, c->root, 1, NULL) == ZOK)
        continue;
      return ZKL_ENOENT;
    }
    if (zrc != ZOK) return map_zrc(c, zrc, "list");
    zkl__node_t head = {NULL, 0, ZKL__KIND_NONE};
    for (int i = 0; i < kids.count; i++) {
      zkl__node_t n;
      if (zkl__name_parse(kids.data[i], &n) == 0 && c->drv->counts(n.kind) &&
          (head.name == NULL || zkl__seq_cmp(n.seq, head.seq) < 0))
        head = n;
    }
    if (head.name == NULL) {
      deallocate_String_vector(&kids);
      return ZKL_ENOENT;
    }
    size_t plen = c->root_len + strlen(head.name) + 2;
    char *path = malloc(plen), *buf = NULL;
    if (path != NULL) snprintf(path, plen, "%s/%s", c->root, head.name);
    deallocate_String_vector(&kids);
    int blen = 0;
    struct Stat st;
    if (path == NULL) return ZKL_ENOMEM;
    zrc = zkl__zk_get(c->s, dl, path, 0, &buf, &blen, &st);
    free(path);
    if (zrc == ZNONODE) { /* the head left meanwhile: look again */
      free(buf);
      continue;
    }
    if (zrc != ZOK) {
      free(buf);
      return map_zrc(c, zrc, "read");
    }
    *data = buf;
    *len = blen < 0 ? 0 : blen;
    *czxid = st.czxid;
    return 0;
  }
  return zkl__fail(ZKL_EPROTO, "the head of %s keeps changing", c->root);
}

int zkl__contend_wait_watch(zkl__contender_t *c, unsigned cancel_seen) {
  zkl_session_t *s = c->s;
  zkl__session_lock(s);
  int lost = zkl__health_locked(s) == ZKL_ELOST;
  woke_t why = lost ? WOKE_SESSION
                    : wait_locked(c, c->w.epoch, ZKL__FOREVER, &cancel_seen);
  zkl__waiter_unregister(s, &c->w);
  zkl__session_unlock(s);
  if (lost) return ZKL_ELOST;
  if (why != WOKE_CANCEL) return 0;
  drop_watches(c, c->root, ZWATCHTYPE_ANY); /* the child/exists watch */
  return ZKL_ECANCELED;
}

int zkl__contend_await_session(zkl__contender_t *c, unsigned cancel_seen) {
  forget_node(c);
  return await_connected(c, ZKL__FOREVER, &cancel_seen);
}

int zkl__contend_hold_health(zkl__contender_t *c) {
  int h = zkl__session_health(c->s);
  if (h == 0 && zkl_session_id(c->s) != c->session_id) h = ZKL_ELOST;
  return h;
}

int zkl__contend_hold_again(zkl__contender_t *c) {
  int h = zkl__contend_hold_health(c);
  if (h == ZKL_ESUSPENDED)
    return zkl__fail(h, "the connection is down: the hold of %s is in doubt",
                     c->root);
  return h;
}

int zkl__contend_release(zkl__contender_t *c) {
  if (c->node == NULL) return ZKL_ELOST;
  if (zkl__session_health(c->s) == ZKL_ELOST ||
      zkl_session_id(c->s) != c->session_id) {
    forget_node(c);
    return zkl__fail(ZKL_ELOST, "session lost while holding %s", c->root);
  }
  c->dl = cleanup_deadline(c);
  return delete_node(c, c->drv->tells_release, c->dl);
}
