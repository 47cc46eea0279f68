/* lib/recipes/queue.c - the distributed queue: items are PERSISTENT_SEQUENTIAL
 * children of the queue's path (ZooKeeper's and Curator's `qn-`, kazoo's
 * `entry-<prio>-`), taken by reading and deleting them in one round trip.
 *
 * Every call is an operation of the object's one contender, `line`: the
 * line of blocked consumers at `<path>.zkl/wait`, a zkl mutex queue.  A
 * take that finds nothing joins the line (the mutex protocol: each waiter
 * watches its predecessor), and only the line's head watches the queue's
 * children: a put wakes that one consumer, however many wait.  The head
 * leaves the line as soon as it has taken an item.
 *
 * A put is one multi: the item(s) and an ephemeral marker
 * `<path>.zkl/puts/<uuid>`.  Should the answer be lost, the marker says
 * (after a sync, once the same session is back) whether the multi was
 * applied.  Markers of confirmed puts are deleted by the object's next
 * put (in its multi), or by the janitor when the object is destroyed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zookeeper/zookeeper.h>

#include "core/contend.h"
#include "zkl/queue.h"

#define BATCH_MAX 1000     /* items of one put or take                  */
#define PIPE_MAX 256       /* read+delete pairs sent together            */
#define BATCH_BYTES 262144 /* a batch take's multi, at most about (the
                              server refuses requests over jute.maxbuffer,
                              1 MB by default, closing the connection)   */
#define STALE_MAX 8        /* confirmed markers waiting for deletion     */
#define PUT_TRIES 16       /* a put's resends (paths made, not applied)  */
#define COUNT_AGE_NS 1000000000LL /* a size count older than this is read again */
#define NAME_MAX_LEN 31    /* zkl_item_t.name                            */
#define SIDE_SUFFIX ".zkl"
#define UNREAD_MAX 16      /* unreadable items remembered per object     */
#define ENDED_MAX 16       /* ended claims remembered per object         */
/* A kept listing is read again once this old: a busy consumer then sees,
 * within a second, an item whose claimer died (LockingQueue) or one of a
 * higher priority put after the listing (kazoo's formats). */
#define LIST_AGE_NS 1000000000LL

/* ---- item names (names.c) ------------------------------------------------ */

typedef zkl__item_name_t ref_t;

/* Is `name` an item of format f?  0 and *r filled, or -1. */
static int item_parse(int f, const char *name, ref_t *r) {
  return zkl__item_parse(f == ZKL_QUEUE_QN ? ZKL__ITEM_QN : ZKL__ITEM_ENTRY,
                         name, r) == 0 ? 0 : -1;
}

static int ref_cmp(const void *a, const void *b) {
  return zkl__item_cmp(a, b);
}

/* ---- the object ------------------------------------------------------------ */

struct zkl_queue {
  zkl__calls_t calls; /* one call at a time (calls.own.mu guards the
                         claims too); the cancel generation */
  zkl_session_t *s;
  int format, priority;
  size_t max_items;
  char *root;
  size_t root_len;
  char *items;      /* where the items are: root, or root/entries    */
  char *taken;      /* ZKL_QUEUE_LOCKING: root/taken, else NULL        */
  char id[33];      /* a claim's data: this object's uuid, in hex      */
  char *side;       /* "<root>.zkl"        */
  char *puts;       /* "<root>.zkl/puts"   */
  zkl__contender_t line; /* "<root>.zkl/wait": the consumers' line; its
                            waiter also waits for the queue's children */
  zkl__contender_t pline; /* "<root>.zkl/full": the producers waiting for
                             room (soft_max); puts run as its operations */
  size_t soft_max;
  /* the listing kept between calls (used by the call in progress only) */
  struct String_vector kids;
  struct String_vector tkids; /* taken/'s children, sorted (claimed)  */
  ref_t *refs;
  size_t n, next;
  int listed;
  int64_t listed_at; /* a listing older than LIST_AGE_NS is read again */
  /* the size as last counted, for max_items */
  size_t count, since;
  int64_t count_at;
  int counted;
  /* markers of confirmed puts, deleted by the next put */
  char *stale[STALE_MAX];
  int n_stale;
  /* items this session may not read (their ACL): left out of listings so
   * that they do not block the queue; the oldest forgotten past UNREAD_MAX */
  char unread[UNREAD_MAX][NAME_MAX_LEN + 1];
  size_t n_unread, unread_at;
  /* the claims this object holds (own.mu guards them) */
  struct claim {
    char name[NAME_MAX_LEN + 1];
    int64_t czxid, sid;
    int doubt; /* a settlement's answer was lost: it may be applied */
  } *claims;
  size_t n_claims, cap_claims;
  /* claims superseded by a newer claim of the same item (their node was
   * deleted by someone else, and the object claimed the item again):
   * settling one says ZKL_ELOST, not ZKL_EPERM */
  struct ended {
    char name[NAME_MAX_LEN + 1];
    int64_t czxid;
  } ended[ENDED_MAX];
  size_t ended_at;
};

static int name_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int unreadable(const zkl_queue_t *q, const char *name) {
  for (size_t i = 0; i < q->n_unread; i++)
    if (strcmp(q->unread[i], name) == 0) return 1;
  return 0;
}

/* Is `name` claimed, as the listing saw taken/? */
static int claimed(const zkl_queue_t *q, const char *name) {
  return q->tkids.count > 0 &&
         bsearch(&name, q->tkids.data, (size_t)q->tkids.count,
                 sizeof *q->tkids.data, name_cmp) != NULL;
}

/* With own.mu held: a claim of ours on `name` ended (czxid). */
static void claim_ended(zkl_queue_t *q, const char *name, int64_t czxid) {
  struct ended *e = &q->ended[q->ended_at++ % ENDED_MAX];
  snprintf(e->name, sizeof e->name, "%s", name);
  e->czxid = czxid;
}

/* With own.mu held: is (name, czxid) a claim of ours that ended? */
static int claim_was(const zkl_queue_t *q, const char *name, int64_t czxid) {
  for (size_t i = 0; i < ENDED_MAX; i++)
    if (q->ended[i].czxid == czxid && czxid != 0 &&
        strcmp(q->ended[i].name, name) == 0)
      return 1;
  return 0;
}

/* With own.mu held: the index of our claim on `name`, or -1. */
static ptrdiff_t claim_find(const zkl_queue_t *q, const char *name) {
  for (size_t i = 0; i < q->n_claims; i++)
    if (strcmp(q->claims[i].name, name) == 0) return (ptrdiff_t)i;
  return -1;
}

static void listing_clear(zkl_queue_t *q) {
  zkl__zk_children_free(&q->kids);
  zkl__zk_children_free(&q->tkids);
  free(q->refs);
  q->refs = NULL;
  q->n = q->next = 0;
  q->listed = 0;
}

/* Keeps a fresh listing (taken over from kids, and tkids: the claims):
 * our items nobody has claimed, in queue order. */
static int listing_set(zkl_queue_t *q, struct String_vector *kids,
                       struct String_vector *tkids) {
  listing_clear(q);
  q->kids = *kids;
  kids->count = 0;
  kids->data = NULL;
  if (tkids != NULL) {
    q->tkids = *tkids;
    tkids->count = 0;
    tkids->data = NULL;
    if (q->tkids.count > 1)
      qsort(q->tkids.data, (size_t)q->tkids.count, sizeof *q->tkids.data,
            name_cmp);
  }
  size_t n = 0;
  if (q->kids.count > 0) {
    q->refs = malloc((size_t)q->kids.count * sizeof *q->refs);
    if (q->refs == NULL) {
      listing_clear(q);
      return zkl__fail(ZKL_ENOMEM, "no memory for a listing of %s", q->root);
    }
    for (int i = 0; i < q->kids.count; i++)
      if (item_parse(q->format, q->kids.data[i], &q->refs[n]) == 0 &&
          !claimed(q, q->kids.data[i]) && !unreadable(q, q->kids.data[i]))
        n++;
    qsort(q->refs, n, sizeof *q->refs, ref_cmp);
  }
  q->n = n;
  q->next = 0;
  q->listed = 1;
  q->listed_at = zkl__now_ns();
  return 0;
}

/* root + "/" + name into buf (CHILD_MAX bytes) */
#define CHILD_MAX (ZKL__PATH_MAX + 64)
static void child_path(const zkl_queue_t *q, const char *name, char *buf) {
  snprintf(buf, CHILD_MAX, "%s/%s", q->items, name);
}

/* taken/ + "/" + name into buf (CHILD_MAX bytes) */
static void claim_path(const zkl_queue_t *q, const char *name, char *buf) {
  snprintf(buf, CHILD_MAX, "%s/%s", q->taken, name);
}

static int retryable(int zrc) {
  return zrc == ZCONNECTIONLOSS || zrc == ZOPERATIONTIMEOUT;
}

static int map_zrc(zkl_queue_t *q, int zrc, const char *what) {
  char w[96];
  snprintf(w, sizeof w, "%s on", what);
  if (zrc == ZNOCHILDRENFOREPHEMERALS)
    return zkl__fail(zrc, "%s %s: the path is an ephemeral node, not a "
                     "queue", w, q->root);
  return zkl__zrc_fail(q->s, zrc, w, q->root);
}

/* ---- a call ------------------------------------------------------------------ */

enum { Q_PUT, Q_TAKE, Q_PEEK, Q_SIZE, Q_REMOVE, Q_CLAIM, Q_ACK, Q_NACK,
       Q_LIST };

typedef struct qcall {
  zkl__call_t call;     /* first: the call base (call.c)                */
  zkl_queue_t *q;       /* NULL once the object is destroyed (orphan)   */
  int kind;
  pt_t pt, pt_sub, pt_list, pt_put;
  int rc, zrc, zrc2, tries, err;
  char *noauth;         /* an unreadable item met: the detail to tell    */
  zkl__zcall_t *k, *k2;
  unsigned epoch;
  /* put */
  zkl_buf_t *bufs;
  size_t nbufs;
  char *copy;           /* async: the payloads' copy                     */
  char marker[CHILD_MAX];
  int n_stale_sent, resent;
  int64_t sid;          /* the session the put was sent on (settle: the
                           claim's)                                     */
  int64_t czxid;        /* a claim's                                    */
  uint64_t itoken;      /* settle: the token of the item given          */
  int64_t until;        /* room_step's next count                       */
  /* take, peek */
  size_t want, got, sent;
  zkl_item_t *items;
  zkl__zcall_t *kg[PIPE_MAX], *kd[PIPE_MAX];
  struct bitem *b;      /* a batch take's items, read (PIPE_MAX)        */
  int stop;             /* a batch take left an item: no further items  */
  zkl__zcall_t **ks;    /* ensure_step's creates */
  struct String_vector kids, tkids; /* list: its own listing */
  ref_t *refs;
  size_t from;
  size_t nks;
  int in_line, retake, fresh, rechecked;
  /* size, remove, ack, nack */
  size_t size;
  char name[NAME_MAX_LEN + 1];
  int where;            /* nack: ZKL_QUEUE_HEAD or ZKL_QUEUE_TAIL */
  zkl_items_fn icb;      /* async take, claim: the items' callback      */
} qcall_t;

/* Waits for k's answer (or the call's request deadline): the answer's
 * code, k consumed by the given wait. */
#define Q_AWAIT(o, pt, x, k) PT_AWAIT_ANSWER(o, pt, k, (x)->call.dl)

static int not_connected(qcall_t *x, int rc) {
  if (rc != ZKL_ETIMEDOUT) return rc;
  if (x->kind == Q_PEEK || x->kind == Q_SIZE || x->kind == Q_REMOVE ||
      x->kind == Q_LIST || x->kind == Q_ACK || x->kind == Q_NACK)
    return zkl__fail(ZKL_ESUSPENDED, "not connected to ZooKeeper within a "
                     "session timeout");
  return x->call.deadline == ZKL__TRY
             ? zkl__fail(ZKL_ESUSPENDED, "not connected to ZooKeeper")
             : zkl__fail(ZKL_ETIMEDOUT, "not connected to ZooKeeper before "
                         "the deadline");
}

/* Lists the queue (watch: leaves a child watch, or an exists watch when
 * the path is missing): 0, or a code.  A missing path is an empty queue. */
static int list_step(zkl__op_t *o, qcall_t *x, int watch) {
  zkl_queue_t *q = x->q;
  pt_t *pt = &x->pt_list;
  PT_BEGIN(pt);
  /* the claims first: a claim made between the two listings is then
   * seen with its item (an item whose claim went meanwhile is missed
   * until the next listing, and the head's watch on taken/ says so) */
  x->k2 = q->taken != NULL ? zkl__zk_children_send(q->s, q->taken, watch)
                           : NULL;
  x->k = zkl__zk_children_send(q->s, q->items, watch);
  Q_AWAIT(o, pt, x, x->k);
  {
    struct String_vector kids = {0, NULL}, tkids = {0, NULL};
    int trc = x->k2 != NULL ? zkl__zk_children_wait(x->k2, x->call.dl, &tkids)
                            : ZOK;
    x->k2 = NULL;
    x->zrc = zkl__zk_children_wait(x->k, ZKL__TRY, &kids);
    x->k = NULL;
    if (trc != ZOK && trc != ZNONODE) {
      zkl__zk_children_free(&kids);
      PT_RETURN(pt, map_zrc(q, trc, "list the claims of"));
    }
    if (x->zrc == ZOK || x->zrc == ZNONODE) {
      int rc = listing_set(q, &kids, q->taken != NULL ? &tkids : NULL);
      zkl__zk_children_free(&kids);
      zkl__zk_children_free(&tkids);
      if (rc != 0 || x->zrc == ZOK || !watch) PT_RETURN(pt, rc);
    } else {
      zkl__zk_children_free(&tkids);
      PT_RETURN(pt, map_zrc(q, x->zrc, "list"));
    }
  }
  /* no path: told when it appears (and if it did meanwhile, list again) */
  x->k = zkl__zk_exists_send(q->s, q->items, 1);
  Q_AWAIT(o, pt, x, x->k);
  x->zrc = zkl__zk_exists_wait(x->k, ZKL__TRY, NULL);
  x->k = NULL;
  if (x->zrc == ZOK) q->listed = 0; /* look again */
  else if (x->zrc != ZNONODE) PT_RETURN(pt, map_zrc(q, x->zrc, "watch"));
  PT_RETURN(pt, 0);
  PT_END(pt);
  return 0;
}

/* ---- take ------------------------------------------------------------------ */

/* An item this session may not read: left out of the listings from now on,
 * and told (ZNOAUTH) by a call that ends with nothing. */
static void note_unreadable(zkl_queue_t *q, qcall_t *x, const char *name) {
  if (!unreadable(q, name)) {
    size_t i = q->n_unread < UNREAD_MAX ? q->n_unread++ : q->unread_at++ %
                                                              UNREAD_MAX;
    snprintf(q->unread[i], sizeof q->unread[i], "%s", name);
  }
  if (x->noauth == NULL) {
    char buf[CHILD_MAX + 160];
    snprintf(buf, sizeof buf, "%s/%s: its ACL refuses this session: left in "
             "the queue, not taken (zkl_queue_remove() takes it out of the "
             "way)", q->items, name);
    x->noauth = strdup(buf);
  }
}

static void item_fill(zkl_item_t *it, const char *name, char *data, int len,
                      const struct Stat *st) {
  memset(it, 0, sizeof *it);
  it->data = data;
  it->len = len > 0 ? (size_t)len : 0;
  it->token = (uint64_t)st->czxid;
  snprintf(it->name, sizeof it->name, "%s", name);
}

/* Sends the reads and deletes of the next items of the listing together,
 * and keeps those whose delete was ours: 0 (x->got may still be 0), or a
 * code.  A delete answered by a connection loss makes the listing be read
 * again: the item is taken if it is still there. */
/* The end of a take's round: the kept listing moves past what was sent
 * (read again after a retake); what was taken is returned, and a failure
 * is told only when nothing was (its detail stands).  x->rc. */
static int take_settle(qcall_t *x) {
  x->q->next += x->sent;
  if (x->retake) x->q->listed = 0;
  if (x->got == 0 && x->err != 0) x->rc = x->err;
  x->err = 0;
  return x->rc;
}

/* ---- batch take ------------------------------------------------------------
 * Items are read first, all at once; then ONE multi deletes every item
 * read (at the version read: only items read are ever deleted, so an item
 * this session may not read stays), with, in the LockingQueue layout, the
 * create and delete of its claim (an item someone has claimed fails it).
 * The server applies one transaction for the batch instead of one per
 * item.  Should the multi fail (another consumer took an item first), no
 * item of it was taken: the one that failed is told by its code, and the
 * others are deleted one multi each, sent together, as a single take does.
 * So a batch costs two round trips, three at worst, and never skips an
 * item that is still there (the order a consumer sees stays the queue's). */

enum { B_READ = 1, B_GONE, B_LEFT };

typedef struct bitem {
  char *data;
  int len, state;
  struct Stat st;
} bitem_t;

static void batch_clear(qcall_t *x) {
  if (x->b == NULL) return;
  for (size_t i = 0; i < PIPE_MAX; i++) {
    free(x->b[i].data);
    x->b[i].data = NULL;
    x->b[i].state = 0;
  }
}

/* The ops deleting item i of the batch (read at b->st.version) into m,
 * paths into p (2 × CHILD_MAX): how many. */
static int batch_ops(const qcall_t *x, size_t i, zkl__mop_t *m, char *p) {
  const zkl_queue_t *q = x->q;
  const char *name = q->refs[q->next + i].name;
  int version = x->b[i].st.version;
  child_path(q, name, p);
  if (q->taken == NULL) {
    m[0] = (zkl__mop_t){ZOO_DELETE_OP, p, NULL, 0, 0, version};
    return 1;
  }
  claim_path(q, name, p + CHILD_MAX);
  m[0] = (zkl__mop_t){ZOO_CREATE_OP, p + CHILD_MAX, q->id, 32, ZOO_EPHEMERAL,
                      -1};
  m[1] = (zkl__mop_t){ZOO_DELETE_OP, p, NULL, 0, 0, version};
  m[2] = (zkl__mop_t){ZOO_DELETE_OP, p + CHILD_MAX, NULL, 0, 0, -1};
  return 3;
}

/* One multi deleting every item of the batch in state B_READ. */
static zkl__zcall_t *batch_send(qcall_t *x) {
  size_t n = 0;
  for (size_t i = 0; i < x->sent; i++) n += x->b[i].state == B_READ;
  zkl__mop_t *m = calloc(3 * n, sizeof *m);
  char *paths = malloc(n * 2 * CHILD_MAX);
  zkl__zcall_t *k = NULL;
  if (m != NULL && paths != NULL) {
    int ops = 0;
    for (size_t i = 0, j = 0; i < x->sent; i++)
      if (x->b[i].state == B_READ)
        ops += batch_ops(x, i, m + ops, paths + 2 * CHILD_MAX * j++);
    k = zkl__zk_multi_send(x->q->s, m, ops);
  }
  free(m);
  free(paths);
  return k;
}

/* Item i of the batch is the caller's. */
static void batch_take(qcall_t *x, size_t i) {
  zkl_queue_t *q = x->q;
  item_fill(&x->items[x->got++], q->refs[q->next + i].name, x->b[i].data,
            x->b[i].len, &x->b[i].st);
  x->b[i].data = NULL;
  x->b[i].state = B_GONE;
}

/* An item's delete failed with zrc: 1 the item is gone for us (taken or
 * claimed by another, or not ours to delete: noted unreadable), 0 it is
 * left in the queue (x->retake or x->err say why). */
static int batch_refused(qcall_t *x, size_t i, int zrc) {
  zkl_queue_t *q = x->q;
  const char *name = q->refs[q->next + i].name;
  free(x->b[i].data);
  x->b[i].data = NULL;
  x->b[i].state = B_GONE;
  if (zrc == ZNONODE || zrc == ZNODEEXISTS) return 1;
  if (zrc == ZNOAUTH) {
    note_unreadable(q, x, name);
    return 1;
  }
  x->b[i].state = B_LEFT;
  if (retryable(zrc) || zrc == ZKL__ZTIMEDOUT || zrc == ZBADVERSION)
    x->retake = 1; /* read again (a changed item, a lost answer) */
  else if (x->err == 0)
    x->err = map_zrc(q, zrc, "take");
  return 0;
}

static int take_batch(zkl__op_t *o, qcall_t *x) {
  zkl_queue_t *q = x->q;
  pt_t *pt = &x->pt_sub;
  PT_BEGIN(pt);
  if (x->b == NULL && (x->b = calloc(PIPE_MAX, sizeof *x->b)) == NULL)
    PT_RETURN(pt, x->rc = zkl__fail(ZKL_ENOMEM, "no memory for a batch"));
  x->sent = 0;
  for (size_t bytes = 0; x->sent < PIPE_MAX && x->got + x->sent < x->want &&
                         q->next + x->sent < q->n && bytes < BATCH_BYTES;) {
    char path[CHILD_MAX];
    const char *name = q->refs[q->next + x->sent].name;
    child_path(q, name, path);
    /* what its ops add to the multi: paths, a claim's data and ACL */
    bytes += 2 * (strlen(path) + strlen(name)) + 160;
    x->kg[x->sent++] = zkl__zk_get_send(q->s, path, 0);
  }
  /* the server answers in order: the last read's answer comes last */
  zkl__op_notify(o, x->kg[x->sent - 1]);
  PT_AWAIT(o, pt, zkl__zcall_ready(x->kg[x->sent - 1]), ZKL__FOREVER);
  x->tries = 0; /* items read */
  for (size_t i = 0; i < x->sent; i++) {
    bitem_t *b = &x->b[i];
    int g = zkl__zk_get_wait(x->kg[i], ZKL__FOREVER, &b->data, &b->len,
                             &b->st);
    x->kg[i] = NULL;
    if (g == ZOK) {
      b->state = B_READ;
      x->tries++;
    } else if (!batch_refused(x, i, g)) {
      /* not read, so not taken: neither is anything after it (a
       * consumer's items come in the queue's order) */
      for (size_t j = i + 1; j < x->sent; j++) {
        zkl__zk_get_wait(x->kg[j], ZKL__FOREVER, NULL, NULL, NULL);
        x->kg[j] = NULL;
      }
      x->sent = i;
      x->stop = 1;
      q->listed = 0;
      break;
    }
  }
  if (x->tries > 0) {
    x->k = batch_send(x);
    if (x->k == NULL) {
      batch_clear(x);
      PT_RETURN(pt, x->rc = zkl__fail(ZKL_ENOMEM, "no memory for a batch"));
    }
    /* once sent, waited for whatever the deadline: an item deleted is the
     * caller's and must not be dropped for a late answer */
    zkl__op_notify(o, x->k);
    PT_AWAIT(o, pt, zkl__zcall_ready(x->k), ZKL__FOREVER);
    {
      int *errs = calloc(3 * PIPE_MAX, sizeof *errs);
      int zrc = zkl__zk_multi_wait(x->k, ZKL__FOREVER, errs, NULL);
      x->k = NULL;
      if (zrc == ZOK) {
        for (size_t i = 0; i < x->sent; i++)
          if (x->b[i].state == B_READ) batch_take(x, i);
      } else if (retryable(zrc) || zrc == ZKL__ZTIMEDOUT || errs == NULL) {
        /* applied or not, unknown: at-most-once, the items are dropped
         * (a take whose answer is lost loses what it took) */
        for (size_t i = 0; i < x->sent; i++)
          if (x->b[i].state == B_READ) {
            free(x->b[i].data);
            x->b[i].data = NULL;
            x->b[i].state = B_GONE;
          }
        x->retake = 1;
      } else {
        /* The op that failed tells which item, and why: the server says
         * ZRUNTIMEINCONSISTENCY for the ops after it, and the ops before
         * it, not applied, carry the multi's code (zkcall.c) as it does:
         * the last op not marked so is the one. */
        size_t failed = x->sent;
        int code = zrc, op = 0;
        for (size_t i = 0; i < x->sent; i++) {
          if (x->b[i].state != B_READ) continue;
          int nops = q->taken == NULL ? 1 : 3;
          for (int j = 0; j < nops; j++, op++)
            if (errs[op] != ZRUNTIMEINCONSISTENCY) {
              failed = i;
              code = errs[op];
            }
        }
        if (failed == x->sent) failed = 0, code = zrc; /* not told */
        while (x->b[failed].state != B_READ) failed++;
        if (!batch_refused(x, failed, code)) {
          /* left: the items after it wait for the next read */
          for (size_t i = failed + 1; i < x->sent; i++) {
            free(x->b[i].data);
            x->b[i].data = NULL;
            x->b[i].state = B_LEFT;
          }
        }
      }
      free(errs);
    }
    /* the rest of a failed batch: one multi each, sent together */
    x->tries = 0;
    for (size_t i = 0; i < x->sent; i++) {
      x->kd[i] = NULL;
      if (x->b[i].state != B_READ) continue;
      zkl__mop_t m[3];
      char *paths = malloc(2 * CHILD_MAX);
      if (paths != NULL) {
        int n = batch_ops(x, i, m, paths);
        x->kd[i] = zkl__zk_multi_send(q->s, m, n);
        free(paths);
      }
      if (x->kd[i] == NULL) { /* not sent: left, read again later */
        for (size_t j = i; j < x->sent; j++)
          if (x->b[j].state == B_READ) {
            free(x->b[j].data);
            x->b[j].data = NULL;
            x->b[j].state = B_LEFT;
          }
        x->retake = 1;
        break;
      }
      x->tries = (int)i + 1;
    }
    if (x->tries > 0) {
      zkl__op_notify(o, x->kd[x->tries - 1]);
      PT_AWAIT(o, pt, zkl__zcall_ready(x->kd[x->tries - 1]), ZKL__FOREVER);
      for (size_t i = 0; i < (size_t)x->tries; i++) {
        if (x->kd[i] == NULL) continue;
        int d = zkl__zk_multi_wait(x->kd[i], ZKL__FOREVER, NULL, NULL);
        x->kd[i] = NULL;
        if (d == ZOK) batch_take(x, i);
        else batch_refused(x, i, d);
      }
    }
  }
  /* an item left (not taken, still there) ends the batch: what follows it
   * is read again first */
  for (size_t i = 0; i < x->sent; i++)
    if (x->b[i].state == B_LEFT) {
      q->listed = 0;
      x->stop = 1;
    }
  batch_clear(x);
  PT_RETURN(pt, take_settle(x));
  PT_END(pt);
  return 0;
}

static int take_some(zkl__op_t *o, qcall_t *x) {
  zkl_queue_t *q = x->q;
  pt_t *pt = &x->pt_sub;
  PT_BEGIN(pt);
  x->sent = 0;
  while (x->sent < PIPE_MAX && x->got + x->sent < x->want &&
         q->next + x->sent < q->n) {
    char path[CHILD_MAX], cpath[CHILD_MAX];
    const char *name = q->refs[q->next + x->sent].name;
    child_path(q, name, path);
    x->kg[x->sent] = zkl__zk_get_send(q->s, path, 0);
    /* The delete goes in a multi behind a version check, which needs READ
     * permission as the read does: an item this session may not read is
     * never deleted unread.  In the LockingQueue layout the multi also
     * makes (and deletes) a claim: an item someone has claimed fails it. */
    if (q->taken == NULL) {
      zkl__mop_t m[2] = {{ZOO_CHECK_OP, path, NULL, 0, 0, -1},
                         {ZOO_DELETE_OP, path, NULL, 0, 0, -1}};
      x->kd[x->sent] = zkl__zk_multi_send(q->s, m, 2);
    } else {
      claim_path(q, name, cpath);
      zkl__mop_t m[4] = {
          {ZOO_CREATE_OP, cpath, q->id, 32, ZOO_EPHEMERAL, -1},
          {ZOO_CHECK_OP, path, NULL, 0, 0, -1},
          {ZOO_DELETE_OP, path, NULL, 0, 0, -1},
          {ZOO_DELETE_OP, cpath, NULL, 0, 0, -1}};
      x->kd[x->sent] = zkl__zk_multi_send(q->s, m, 4);
    }
    x->sent++;
  }
  /* The server answers in order: the last delete's answer comes last.
   * Once sent, the deletes are waited for whatever the deadline (the
   * client answers every request): an item whose delete was applied is
   * the caller's, and must not be dropped for a late answer. */
  zkl__op_notify(o, x->kd[x->sent - 1]);
  PT_AWAIT(o, pt, zkl__zcall_ready(x->kd[x->sent - 1]), ZKL__FOREVER);
  for (size_t i = 0; i < x->sent; i++) {
    char *data = NULL;
    int len = 0;
    struct Stat st;
    int g = zkl__zk_get_wait(x->kg[i], ZKL__FOREVER, &data, &len, &st);
    int d = zkl__zk_multi_wait(x->kd[i], ZKL__FOREVER, NULL, NULL);
    if (d == ZNODEEXISTS) d = ZNONODE; /* claimed by another: not ours */
    x->kg[i] = x->kd[i] = NULL;
    const char *name = q->refs[q->next + i].name;
    if (g == ZOK && d == ZOK) {
      item_fill(&x->items[x->got++], name, data, len, &st);
      continue;
    }
    free(data);
    if (retryable(d) || d == ZKL__ZTIMEDOUT) x->retake = 1;
    else if (d == ZOK && x->err == 0) /* deleted, not read: the client's */
      x->err = zkl__fail(g, "%s was taken but its data could not be read "
                         "(%s)", name, zerror(g));
    else if (d == ZNOAUTH) note_unreadable(q, x, name);
    else if (d != ZNONODE && x->err == 0) x->err = map_zrc(q, d, "take");
  }
  PT_RETURN(pt, take_settle(x));
  PT_END(pt);
  return 0;
}

/* ---- claims ------------------------------------------------------------------- */

/* Records a claim of ours: 0 or ZKL_ENOMEM. */
static int claim_keep(zkl_queue_t *q, const char *name, int64_t czxid,
                      int64_t owner) {
  pthread_mutex_lock(&q->calls.own.mu);
  int rc = 0;
  /* one record per item: an older claim of the same item is gone, since
   * this one could be made */
  ptrdiff_t i = claim_find(q, name);
  if (i < 0 && q->n_claims == q->cap_claims) {
    size_t cap = q->cap_claims > 0 ? 2 * q->cap_claims : 4;
    struct claim *v = realloc(q->claims, cap * sizeof *v);
    if (v == NULL) rc = ZKL_ENOMEM;
    else {
      q->claims = v;
      q->cap_claims = cap;
    }
  }
  if (rc == 0) {
    if (i >= 0) claim_ended(q, name, q->claims[i].czxid); /* superseded */
    struct claim *c = &q->claims[i >= 0 ? (size_t)i : q->n_claims++];
    snprintf(c->name, sizeof c->name, "%s", name);
    c->czxid = czxid;
    c->sid = owner; /* the node's: not the session we are on by now */
    c->doubt = 0;
  }
  pthread_mutex_unlock(&q->calls.own.mu);
  return rc;
}

/* A settlement of the claim on `name` ended without knowing whether it
 * was applied: the next one must find out. */
static void claim_doubt(zkl_queue_t *q, const char *name) {
  pthread_mutex_lock(&q->calls.own.mu);
  ptrdiff_t i = claim_find(q, name);
  if (i >= 0) q->claims[i].doubt = 1;
  pthread_mutex_unlock(&q->calls.own.mu);
}

/* Forgets our claim on `name`, the one of that czxid (0: whichever): an
 * older claim's settlement must not forget a newer claim of the item. */
static void claim_forget_of(zkl_queue_t *q, const char *name, int64_t czxid) {
  pthread_mutex_lock(&q->calls.own.mu);
  ptrdiff_t i = claim_find(q, name);
  if (i >= 0 && (czxid == 0 || q->claims[i].czxid == czxid))
    q->claims[i] = q->claims[--q->n_claims];
  pthread_mutex_unlock(&q->calls.own.mu);
}

/* Gives a claim node of ours back (its item is gone): deleted now, or by
 * the janitor once the connection is back (the node is this session's). */
static int unclaim(zkl__op_t *o, qcall_t *x) {
  zkl_queue_t *q = x->q;
  pt_t *pt = &x->pt_list;
  PT_BEGIN(pt);
  {
    char cpath[CHILD_MAX];
    claim_path(q, x->name, cpath);
    x->k = zkl__zk_delete_send(q->s, cpath);
  }
  zkl__op_notify(o, x->k);
  PT_AWAIT(o, pt, zkl__zcall_ready(x->k), ZKL__FOREVER);
  x->zrc = zkl__zk_wait(x->k, ZKL__TRY);
  x->k = NULL;
  if (retryable(x->zrc) || x->zrc == ZKL__ZTIMEDOUT) {
    char cpath[CHILD_MAX];
    claim_path(q, x->name, cpath);
    zkl__janitor_add_owned(q->s, cpath, q->id, 32);
  }
  PT_RETURN(pt, 0);
  PT_END(pt);
  return 0;
}

/* One claim attempt on the next unclaimed item of the listing: its claim
 * node and its read go together.  0 (x->got 0 or 1), or a code.  A claim
 * whose answer is lost is looked for once the connection is back: if it
 * was made (by this session), it is kept. */
static int claim_some(zkl__op_t *o, qcall_t *x) {
  zkl_queue_t *q = x->q;
  pt_t *pt = &x->pt_sub;
  PT_BEGIN(pt);
  snprintf(x->name, sizeof x->name, "%s", q->refs[q->next].name);
  q->next++;
  {
    char path[CHILD_MAX], cpath[CHILD_MAX];
    claim_path(q, x->name, cpath);
    child_path(q, x->name, path);
    x->kd[0] = zkl__zk_create_send(q->s, cpath, q->id, 32, ZOO_EPHEMERAL);
    x->kg[0] = zkl__zk_get_send(q->s, path, 0);
  }
  /* once sent, waited for whatever the deadline: a claim made is either
   * kept or given up, never left */
  zkl__op_notify(o, x->kg[0]);
  PT_AWAIT(o, pt, zkl__zcall_ready(x->kg[0]), ZKL__FOREVER);
  {
    struct Stat cst, st;
    char *data = NULL;
    int len = 0;
    x->zrc = zkl__zk_create_wait(x->kd[0], ZKL__FOREVER, NULL, &cst);
    x->zrc2 = zkl__zk_get_wait(x->kg[0], ZKL__FOREVER, &data, &len, &st);
    x->kd[0] = x->kg[0] = NULL;
    if (x->zrc == ZOK && x->zrc2 == ZOK) {
      if (claim_keep(q, x->name, cst.czxid, cst.ephemeralOwner) != 0) {
        free(data);
        x->rc = zkl__fail(ZKL_ENOMEM, "no memory for a claim");
        PT_CALL(pt, x->zrc, unclaim(o, x));
        PT_RETURN(pt, x->rc);
      }
      item_fill(&x->items[0], x->name, data, len, &cst);
      x->got = 1;
      PT_RETURN(pt, 0);
    }
    free(data);
  }
  if (x->zrc == ZNODEEXISTS) PT_RETURN(pt, 0); /* another's claim */
  if (x->zrc == ZOK && x->zrc2 == ZNOAUTH) note_unreadable(q, x, x->name);
  if (x->zrc == ZOK) { /* the item was taken meanwhile, or unreadable */
    PT_CALL(pt, x->zrc, unclaim(o, x));
    PT_RETURN(pt, 0);
  }
  if (!retryable(x->zrc) && x->zrc != ZKL__ZTIMEDOUT)
    PT_RETURN(pt, map_zrc(q, x->zrc, "claim"));
  /* made or not?  The same session, once back, tells (waited for up to a
   * session timeout, whatever the call's deadline: else the janitor
   * deletes it if it is there and ours) */
  q->listed = 0;
  /* computed once: a PT_CALL's argument is evaluated again at each resume */
  x->until = zkl__deadline_after_ms(zkl_session_timeout(q->s));
  PT_CALL(pt, x->rc, zkl__op_connected(o, x->until));
  if (x->rc != 0) {
    char cpath[CHILD_MAX];
    claim_path(q, x->name, cpath);
    zkl__janitor_add_owned(q->s, cpath, q->id, 32);
    x->rc = 0;
    PT_RETURN(pt, 0); /* the caller's loop sees the connection */
  }
  {
    char cpath[CHILD_MAX];
    claim_path(q, x->name, cpath);
    x->k = zkl__zk_get_send(q->s, cpath, 0);
  }
  zkl__op_notify(o, x->k);
  PT_AWAIT(o, pt, zkl__zcall_ready(x->k), ZKL__FOREVER);
  {
    struct Stat cst;
    char *data = NULL;
    int len = 0;
    x->zrc = zkl__zk_get_wait(x->k, ZKL__TRY, &data, &len, &cst);
    x->k = NULL;
    /* ours: made by this session AND this object (another object of the
     * session may claim the item once ours is gone) */
    int mine = x->zrc == ZOK && cst.ephemeralOwner == zkl_session_id(q->s) &&
               len == 32 && data != NULL && memcmp(data, q->id, 32) == 0;
    free(data);
    if (retryable(x->zrc)) { /* again: the janitor looks once it is back */
      char cpath[CHILD_MAX];
      claim_path(q, x->name, cpath);
      zkl__janitor_add_owned(q->s, cpath, q->id, 32);
      PT_RETURN(pt, 0);
    }
    if (!mine) PT_RETURN(pt, 0);
    x->czxid = cst.czxid; /* ours: its item? */
    x->sid = cst.ephemeralOwner;
  }
  {
    char path[CHILD_MAX];
    child_path(q, x->name, path);
    x->k = zkl__zk_get_send(q->s, path, 0);
  }
  zkl__op_notify(o, x->k);
  PT_AWAIT(o, pt, zkl__zcall_ready(x->k), ZKL__FOREVER);
  {
    struct Stat st, cst;
    char *data = NULL;
    int len = 0;
    x->zrc = zkl__zk_get_wait(x->k, ZKL__TRY, &data, &len, &st);
    x->k = NULL;
    if (x->zrc == ZOK && claim_keep(q, x->name, x->czxid, x->sid) == 0) {
      memset(&cst, 0, sizeof cst);
      cst.czxid = x->czxid;
      item_fill(&x->items[0], x->name, data, len, &cst);
      x->got = 1;
      PT_RETURN(pt, 0);
    }
    free(data);
  }
  PT_CALL(pt, x->zrc, unclaim(o, x));
  PT_RETURN(pt, 0);
  PT_END(pt);
  return 0;
}

/* ack and nack: the claim checked (still our node), then one multi. */
static int settle_send(qcall_t *x) {
  zkl_queue_t *q = x->q;
  char path[CHILD_MAX], cpath[CHILD_MAX], again[CHILD_MAX];
  child_path(q, x->name, path);
  claim_path(q, x->name, cpath);
  zkl__mop_t m[3];
  int n = 0;
  if (x->kind == Q_NACK && x->where == ZKL_QUEUE_TAIL) {
    ref_t r;
    item_parse(q->format, x->name, &r);
    snprintf(again, sizeof again, "%s/entry-%03d-", q->items, r.prio);
    m[n++] = (zkl__mop_t){ZOO_CREATE_OP, again,
                          x->nbufs > 0 ? x->bufs[0].data : NULL,
                          x->nbufs > 0 ? (int)x->bufs[0].len : 0,
                          ZOO_SEQUENCE, -1};
  }
  if (x->kind == Q_ACK || x->where == ZKL_QUEUE_TAIL)
    m[n++] = (zkl__mop_t){ZOO_DELETE_OP, path, NULL, 0, 0, -1};
  m[n++] = (zkl__mop_t){ZOO_DELETE_OP, cpath, NULL, 0, 0, -1};
  x->nks = (size_t)n;
  x->k = zkl__zk_multi_send(q->s, m, n);
  return x->k == NULL ? zkl__fail(ZKL_ENOMEM, "no memory") : 0;
}

static int settle_step(zkl__op_t *o, void *ctx) {
  qcall_t *x = ctx;
  zkl_queue_t *q = x->q;
  pt_t *pt = &x->pt;
  PT_BEGIN(pt);
  pthread_mutex_lock(&q->calls.own.mu);
  {
    ptrdiff_t i = claim_find(q, x->name);
    x->czxid = i >= 0 ? q->claims[i].czxid : 0;
    x->sid = i >= 0 ? q->claims[i].sid : 0;
    x->resent = i >= 0 && q->claims[i].doubt; /* an earlier call's */
  }
  pthread_mutex_unlock(&q->calls.own.mu);
  if (x->czxid == 0) {
    pthread_mutex_lock(&q->calls.own.mu);
    int was = claim_was(q, x->name, (int64_t)x->itoken);
    pthread_mutex_unlock(&q->calls.own.mu);
    PT_RETURN(pt, was ? zkl__fail(ZKL_ELOST, "this claim of %s is gone: "
                                  "the object claimed the item again since",
                                  x->name)
                      : zkl__fail(ZKL_EPERM, "%s is not claimed through "
                                  "this object", x->name));
  }
  if ((uint64_t)x->czxid != x->itoken)
    PT_RETURN(pt, zkl__fail(ZKL_ELOST, "this claim of %s (token %llu) is "
                            "gone: the object claimed the item again since "
                            "(token %llu); settle that one",
                            x->name, (unsigned long long)x->itoken,
                            (unsigned long long)x->czxid));
  /* the deadline bounds the wait for a connection; a request sent is
   * waited for until answered (the client answers every one): a late
   * answer must not pass for a failure */
  x->call.dl = ZKL__FOREVER;
  for (x->tries = 0; x->tries < 8; x->tries++) {
    PT_CALL(pt, x->rc, zkl__op_connected(o, x->call.deadline));
    if (x->rc != 0) {
      if (x->resent) claim_doubt(q, x->name); /* told the next call */
      PT_RETURN(pt, x->resent
                        ? zkl__fail(ZKL_ESUSPENDED, "the %s of %s met a "
                                    "connection loss and the connection "
                                    "stayed down: its outcome is unknown "
                                    "(the claim is kept: settle it again)",
                                    x->kind == Q_ACK ? "ack" : "nack",
                                    x->name)
                        : not_connected(x, x->rc));
    }
    if (zkl_session_id(q->s) != x->sid && x->resent &&
        (x->kind == Q_ACK || x->where == ZKL_QUEUE_TAIL)) {
      /* A settlement whose answer was lost, and then the session: the
       * claim is gone either way; the item tells whether it may have
       * been applied (gone: by this settlement, or by another consumer
       * after the claim went). */
      {
        char path[CHILD_MAX];
        child_path(q, x->name, path);
        x->k = zkl__zk_exists_send(q->s, path, 0);
      }
      Q_AWAIT(o, pt, x, x->k);
      x->zrc2 = zkl__zk_exists_wait(x->k, ZKL__TRY, NULL);
      x->k = NULL;
      if (retryable(x->zrc2)) continue;
      claim_forget_of(q, x->name, x->czxid);
      if (x->zrc2 == ZNONODE)
        PT_RETURN(pt, zkl__fail(ZKL_ELOST, "the %s of %s met a connection "
                                "loss and then its session was lost: its "
                                "outcome is unknown (the item is gone: "
                                "settled by this call, or by another "
                                "consumer since); do not undo the work",
                                x->kind == Q_ACK ? "ack" : "nack", x->name));
      PT_RETURN(pt, zkl__fail(ZKL_ELOST, "the claim on %s went with its "
                              "session: another consumer may process it "
                              "(nothing was deleted)", x->name));
    }
    if (zkl_session_id(q->s) != x->sid) {
      claim_forget_of(q, x->name, x->czxid);
      PT_RETURN(pt, zkl__fail(ZKL_ELOST, "the claim on %s went with its "
                              "session: another consumer may process it",
                              x->name));
    }
    {
      char cpath[CHILD_MAX];
      claim_path(q, x->name, cpath);
      /* after a lost answer: a sync first (the server we reach may lag) */
      x->k2 = x->resent ? zkl__zk_sync_send(q->s, q->taken) : NULL;
      x->k = zkl__zk_exists_send(q->s, cpath, 0);
    }
    Q_AWAIT(o, pt, x, x->k);
    if (x->k2 != NULL) zkl__zk_wait(x->k2, ZKL__FOREVER);
    x->k2 = NULL;
    {
      struct Stat cst;
      x->zrc = zkl__zk_exists_wait(x->k, ZKL__TRY, &cst);
      x->k = NULL;
      if (retryable(x->zrc)) continue;
      if (x->zrc == ZOK && (cst.czxid != x->czxid ||
                            cst.ephemeralOwner != x->sid))
        x->zrc = ZNONODE; /* another claim of the same name */
    }
    if (x->zrc == ZNONODE && x->resent &&
        (x->kind == Q_ACK || x->where == ZKL_QUEUE_TAIL)) {
      /* the multi's answer was lost: applied if the item went too */
      {
        char path[CHILD_MAX];
        child_path(q, x->name, path);
        x->k = zkl__zk_exists_send(q->s, path, 0);
      }
      Q_AWAIT(o, pt, x, x->k);
      x->zrc2 = zkl__zk_exists_wait(x->k, ZKL__TRY, NULL);
      x->k = NULL;
      if (retryable(x->zrc2)) continue;
      if (x->zrc2 == ZNONODE) {
        claim_forget_of(q, x->name, x->czxid);
        PT_RETURN(pt, 0);
      }
    } else if (x->zrc == ZNONODE && x->resent) { /* nack to the head */
      claim_forget_of(q, x->name, x->czxid);
      PT_RETURN(pt, 0);
    }
    if (x->zrc == ZNONODE) {
      claim_forget_of(q, x->name, x->czxid);
      PT_RETURN(pt, zkl__fail(ZKL_ELOST, "the claim on %s is gone: another "
                              "consumer may process it", x->name));
    }
    if (x->zrc != ZOK) {
      if (x->resent) claim_doubt(q, x->name);
      PT_RETURN(pt, map_zrc(q, x->zrc, "check the claim"));
    }
    x->rc = settle_send(x);
    if (x->rc != 0) PT_RETURN(pt, x->rc);
    Q_AWAIT(o, pt, x, x->k);
    {
      int errs[3] = {0, 0, 0};
      x->zrc = zkl__zk_multi_wait(x->k, ZKL__TRY, errs, NULL);
      x->k = NULL;
      if (x->zrc == ZOK) {
        claim_forget_of(q, x->name, x->czxid);
        /* the kept listing does not have a nacked item (it was claimed):
         * read again, so that the next claim gets it */
        if (x->kind == Q_NACK) q->listed = 0;
        PT_RETURN(pt, 0);
      }
      if (retryable(x->zrc)) { /* applied?  the claim tells: look again */
        x->resent = 1;
        continue;
      }
      /* The item was gone when the multi ran.  The multi names only the
       * first op that failed (the item's delete, ahead of the claim's), so
       * the claim may have gone too: deleted by someone after our look,
       * which let another consumer take the item.  Or an earlier send of
       * ours, whose answer was lost, did it all.  Look again, once: the
       * claim and the item tell.  A claim still there (and ours) means
       * the item was removed under it by someone else. */
      if (x->zrc == ZNONODE && errs[x->nks - 1] != ZNONODE && !x->rechecked) {
        x->rechecked = 1;
        continue;
      }
      if (x->zrc == ZNONODE && errs[x->nks - 1] != ZNONODE) {
        PT_CALL(pt, x->zrc, unclaim(o, x));
        claim_forget_of(q, x->name, x->czxid);
        PT_RETURN(pt, zkl__fail(ZKL_ENOENT, "%s was removed by someone else",
                                x->name));
      }
    }
    if (x->zrc == ZNONODE) continue; /* the claim went meanwhile: look */
    if (x->resent) claim_doubt(q, x->name);
    PT_RETURN(pt, map_zrc(q, x->zrc, x->kind == Q_ACK ? "ack" : "nack"));
  }
  if (x->resent) claim_doubt(q, x->name);
  PT_RETURN(pt, zkl__fail(ZKL_ESUSPENDED, x->resent
                          ? "the connection keeps failing: the outcome of "
                            "settling %s is unknown (the claim is kept: "
                            "settle it again)"
                          : "the connection keeps failing: the claim on %s "
                            "is as it was", x->name));
  PT_END(pt);
  return 0;
}

/* A claim of ours by the rule of every grant: 0, ZKL_ESUSPENDED, ZKL_ELOST. */
static int claim_health_now(zkl_queue_t *q, const char *name) {
  pthread_mutex_lock(&q->calls.own.mu);
  ptrdiff_t i = claim_find(q, name);
  int64_t sid = i >= 0 ? q->claims[i].sid : 0;
  pthread_mutex_unlock(&q->calls.own.mu);
  if (i < 0 || sid != zkl_session_id(q->s)) return ZKL_ELOST;
  return zkl__session_health(q->s);
}

/* The claim x made is not to be reported: forgotten (its node went with
 * its session). */
static void claim_drop(zkl_queue_t *q, qcall_t *x) {
  claim_forget_of(q, x->name, (int64_t)x->items[0].token);
  zkl_item_free(&x->items[0]);
  x->got = 0;
}

/* The claim x made is not to be reported and may still be there: given
 * up (the janitor deletes it once connected, while its session lives). */
static void claim_give_up(zkl_queue_t *q, qcall_t *x) {
  pthread_mutex_lock(&q->calls.own.mu);
  ptrdiff_t i = claim_find(q, x->name);
  int ours = i >= 0 && q->claims[i].sid == zkl_session_id(q->s);
  pthread_mutex_unlock(&q->calls.own.mu);
  if (ours) {
    char cpath[CHILD_MAX];
    claim_path(q, x->name, cpath);
    zkl__janitor_add_owned(q->s, cpath, q->id, 32);
  }
  claim_drop(q, x);
}

static int take_step(zkl__op_t *o, void *ctx) {
  qcall_t *x = ctx;
  zkl_queue_t *q = x->q;
  pt_t *pt = &x->pt;
  PT_BEGIN(pt);
  x->items = calloc(x->want, sizeof *x->items);
  if (x->items == NULL)
    PT_RETURN(pt, zkl__fail(ZKL_ENOMEM, "no memory for %zu items", x->want));
  for (;;) {
    /* a line node that went with a lost session is let go first: the
     * wait for a connection would otherwise say ELOST although a new
     * session comes (reestablish); the line is joined again on it */
    if (x->in_line && zkl__contend_hold_health(&q->line) == ZKL_ELOST &&
        zkl__session_renews(q->s)) {
      zkl__contend_forsake(&q->line);
      x->in_line = 0;
    }
    PT_CALL(pt, x->rc, zkl__op_connected(o, x->call.deadline));
    if (x->rc != 0) {
      x->rc = not_connected(x, x->rc);
      break;
    }
    if (x->got > 0 && x->kind == Q_CLAIM) { /* made in doubt: ours? */
      if (claim_health_now(q, x->name) == 0) break;
      claim_give_up(q, x); /* its node, if still ours, to the janitor */
    }
    if (!q->listed || q->next >= q->n ||
        zkl__now_ns() - q->listed_at > LIST_AGE_NS) {
      x->fresh = 1; /* this call has read the queue itself */
      PT_CALL(pt, x->rc, list_step(o, x, 0));
      if (x->rc != 0) break;
    }
    while (x->got < x->want && q->next < q->n && x->rc == 0 &&
           zkl__now_ns() < x->call.dl) {
      x->retake = x->stop = 0;
      /* more than one item to take: the batch's way (one transaction) */
      if (x->kind == Q_CLAIM)
        PT_CALL(pt, x->rc, claim_some(o, x));
      else if (x->want - x->got > 1 && q->n - q->next > 1)
        PT_CALL(pt, x->rc, take_batch(o, x));
      else
        PT_CALL(pt, x->rc, take_some(o, x));
      if (x->retake || x->stop) break;
    }
    /* The rule of every grant: a claim is reported only while the session
     * that made it is connected and was heard from lately (nothing the
     * wait learned is trusted for it).  In doubt: looked at again once
     * connected; lost: claimed again on the new session. */
    if (x->rc == 0 && x->got > 0 && x->kind == Q_CLAIM &&
        claim_health_now(q, x->name) != 0)
      continue;
    if (x->rc != 0 || x->got > 0) break;
    if (x->retake) continue; /* wait for the connection, list again */
    if (!x->fresh) { /* what was kept is used up: the queue itself says */
      q->listed = 0;
      continue;
    }
    if (zkl__now_ns() >= x->call.dl) {
      x->rc = zkl__fail(ZKL_ETIMEDOUT, "nothing came to %s in time", q->root);
      break;
    }
    if (x->call.deadline == ZKL__TRY) {
      x->rc = zkl__fail(ZKL_EEMPTY, "%s is empty", q->root);
      break;
    }
    /* nothing to take: wait in the line, and watch the queue at its head */
    if (!x->in_line) {
      PT_CALL(pt, x->rc, zkl__op_acquire(o));
      if (x->rc != 0) break;
      x->in_line = 1;
    }
    zkl__session_lock(q->s);
    zkl__waiter_register(q->s, &q->line.w, q->items);
    /* a claim that goes makes its item available: woken for taken/ too */
    if (q->taken != NULL) zkl__waiter_watch_self(q->s, &q->line.w, q->taken);
    x->epoch = zkl__session_epoch(q->s);
    zkl__session_unlock(q->s);
    PT_CALL(pt, x->rc, list_step(o, x, 1));
    if (x->rc != 0 || !q->listed || q->n > 0) {
      zkl__op_unwait(o);
      if (x->rc != 0) break;
      continue;
    }
    PT_CALL(pt, x->zrc, zkl__op_await(o, x->epoch, x->call.deadline));
    if (x->zrc == 1) q->listed = 0; /* the children changed */
    else if (x->zrc == ZKL_ETIMEDOUT) {
      x->rc = zkl__fail(ZKL_ETIMEDOUT, "nothing came to %s in time", q->root);
      break;
    } else if (x->zrc != 0) {
      x->rc = zkl__fail(x->zrc, "the take from %s was canceled", q->root);
      break;
    }
    /* else the session moved: look again once connected */
  }
  if (x->in_line) { /* the next waiter becomes the head */
    PT_CALL(pt, x->zrc, zkl__op_release(o, 1));
    x->in_line = 0;
  }
  if (x->rc != 0 && x->got > 0 && x->kind == Q_CLAIM)
    claim_give_up(q, x); /* made in doubt, and the call ends without it */
  if (x->rc == 0 && x->got == 0)
    x->rc = zkl__fail(ZKL_ETIMEDOUT, "nothing came to %s in time", q->root);
  if ((x->rc == ZKL_EEMPTY || x->rc == ZKL_ETIMEDOUT) && x->noauth != NULL)
    x->rc = zkl__fail(ZNOAUTH, "%s", x->noauth);
  PT_RETURN(pt, x->rc);
  PT_END(pt);
  return 0;
}

/* ---- list, peek, size, remove ---------------------------------------------- */

/* Every item (claimed or not) in queue order, with its data: up to
 * x->want (0: all), read PIPE_MAX at a time.  A listing of its own: the
 * object's kept listing (unclaimed items only) is not touched. */
static int list_all_step(zkl__op_t *o, void *ctx) {
  qcall_t *x = ctx;
  zkl_queue_t *q = x->q;
  pt_t *pt = &x->pt;
  PT_BEGIN(pt);
  PT_CALL(pt, x->rc, zkl__op_connected(o, x->call.deadline));
  if (x->rc != 0) PT_RETURN(pt, not_connected(x, x->rc));
  x->k2 = q->taken != NULL ? zkl__zk_children_send(q->s, q->taken, 0) : NULL;
  x->k = zkl__zk_children_send(q->s, q->items, 0);
  Q_AWAIT(o, pt, x, x->k);
  {
    int trc = x->k2 != NULL ? zkl__zk_children_wait(x->k2, x->call.dl, &x->tkids)
                            : ZOK;
    x->k2 = NULL;
    x->zrc = zkl__zk_children_wait(x->k, ZKL__TRY, &x->kids);
    x->k = NULL;
    if (x->zrc == ZNONODE) PT_RETURN(pt, 0); /* no path: no items */
    if (x->zrc != ZOK) PT_RETURN(pt, map_zrc(q, x->zrc, "list"));
    if (trc != ZOK && trc != ZNONODE)
      PT_RETURN(pt, map_zrc(q, trc, "list the claims of"));
    if (x->tkids.count > 1)
      qsort(x->tkids.data, (size_t)x->tkids.count, sizeof *x->tkids.data,
            name_cmp);
    size_t n = 0;
    x->refs = malloc(((size_t)x->kids.count + 1) * sizeof *x->refs);
    if (x->refs == NULL) PT_RETURN(pt, zkl__fail(ZKL_ENOMEM, "no memory"));
    for (int i = 0; i < x->kids.count; i++)
      if (item_parse(q->format, x->kids.data[i], &x->refs[n]) == 0) n++;
    qsort(x->refs, n, sizeof *x->refs, ref_cmp);
    if (x->want == 0 || x->want > n) x->want = n;
    x->items = calloc(x->want > 0 ? x->want : 1, sizeof *x->items);
    if (x->items == NULL) PT_RETURN(pt, zkl__fail(ZKL_ENOMEM, "no memory"));
  }
  for (x->from = 0; x->from < x->want; x->from += x->sent) {
    x->sent = 0;
    while (x->sent < PIPE_MAX && x->from + x->sent < x->want) {
      char path[CHILD_MAX];
      child_path(q, x->refs[x->from + x->sent].name, path);
      x->kg[x->sent] = zkl__zk_get_send(q->s, path, 0);
      x->sent++;
    }
    Q_AWAIT(o, pt, x, x->kg[x->sent - 1]);
    for (size_t i = 0; i < x->sent; i++) {
      char *data = NULL;
      int len = 0;
      struct Stat st;
      int g = zkl__zk_get_wait(x->kg[i], x->call.dl, &data, &len, &st);
      x->kg[i] = NULL;
      if (g == ZOK || g == ZNOAUTH) { /* unreadable: listed, data NULL */
        const char *name = x->refs[x->from + i].name;
        zkl_item_t *it = &x->items[x->got++];
        if (g == ZOK) item_fill(it, name, data, len, &st);
        else {
          free(data);
          memset(it, 0, sizeof *it);
          snprintf(it->name, sizeof it->name, "%s", name);
        }
        it->claimed = x->tkids.count > 0 &&
                      bsearch(&name, x->tkids.data, (size_t)x->tkids.count,
                              sizeof *x->tkids.data, name_cmp) != NULL;
      } else {
        free(data);
        if (g != ZNONODE && x->rc == 0)
          x->rc = map_zrc(q, g, x->refs[x->from + i].name);
      }
    }
    if (x->rc != 0) PT_RETURN(pt, x->rc);
  }
  PT_RETURN(pt, 0);
  PT_END(pt);
  return 0;
}

static int peek_step(zkl__op_t *o, void *ctx) {
  qcall_t *x = ctx;
  zkl_queue_t *q = x->q;
  pt_t *pt = &x->pt;
  PT_BEGIN(pt);
  x->items = calloc(1, sizeof *x->items);
  if (x->items == NULL) PT_RETURN(pt, zkl__fail(ZKL_ENOMEM, "no memory"));
  PT_CALL(pt, x->rc, zkl__op_connected(o, x->call.deadline));
  if (x->rc != 0) PT_RETURN(pt, not_connected(x, x->rc));
  for (x->tries = 0; x->tries < 8; x->tries++) {
    PT_CALL(pt, x->rc, list_step(o, x, 0));
    if (x->rc != 0) PT_RETURN(pt, x->rc);
    for (; q->next < q->n; q->next++) {
      {
        char path[CHILD_MAX];
        child_path(q, q->refs[q->next].name, path);
        x->k = zkl__zk_get_send(q->s, path, 0);
      }
      Q_AWAIT(o, pt, x, x->k);
      {
        char *data = NULL;
        int len = 0;
        struct Stat st;
        x->zrc = zkl__zk_get_wait(x->k, ZKL__TRY, &data, &len, &st);
        x->k = NULL;
        if (x->zrc == ZOK) {
          item_fill(x->items, q->refs[q->next].name, data, len, &st);
          x->got = 1;
          q->listed = 0; /* a take lists afresh */
          PT_RETURN(pt, 0);
        }
      }
      if (x->zrc != ZNONODE) PT_RETURN(pt, map_zrc(q, x->zrc, "read"));
    }
    if (q->n == 0) break;
  }
  q->listed = 0;
  PT_RETURN(pt, zkl__fail(ZKL_EEMPTY, "%s is empty", q->root));
  PT_END(pt);
  return 0;
}

static int size_step(zkl__op_t *o, void *ctx) {
  qcall_t *x = ctx;
  zkl_queue_t *q = x->q;
  pt_t *pt = &x->pt;
  PT_BEGIN(pt);
  PT_CALL(pt, x->rc, zkl__op_connected(o, x->call.deadline));
  if (x->rc != 0) PT_RETURN(pt, not_connected(x, x->rc));
  x->k = zkl__zk_exists_send(q->s, q->items, 0);
  Q_AWAIT(o, pt, x, x->k);
  {
    struct Stat st;
    x->zrc = zkl__zk_exists_wait(x->k, ZKL__TRY, &st);
    x->k = NULL;
    if (x->zrc == ZNONODE) x->size = 0;
    else if (x->zrc == ZOK) x->size = (size_t)(st.numChildren > 0
                                                   ? st.numChildren : 0);
    else PT_RETURN(pt, map_zrc(q, x->zrc, "size"));
  }
  PT_RETURN(pt, 0);
  PT_END(pt);
  return 0;
}

static int remove_step(zkl__op_t *o, void *ctx) {
  qcall_t *x = ctx;
  zkl_queue_t *q = x->q;
  pt_t *pt = &x->pt;
  PT_BEGIN(pt);
  PT_CALL(pt, x->rc, zkl__op_connected(o, x->call.deadline));
  if (x->rc != 0) PT_RETURN(pt, not_connected(x, x->rc));
  {
    char path[CHILD_MAX];
    child_path(q, x->name, path);
    x->k = zkl__zk_delete_send(q->s, path);
  }
  Q_AWAIT(o, pt, x, x->k);
  x->zrc = zkl__zk_wait(x->k, ZKL__TRY);
  x->k = NULL;
  if (x->zrc == ZNONODE)
    PT_RETURN(pt, zkl__fail(ZKL_ENOENT, "no item %s in %s", x->name,
                            q->root));
  if (x->zrc != ZOK) PT_RETURN(pt, map_zrc(q, x->zrc, "remove"));
  PT_RETURN(pt, 0);
  PT_END(pt);
  return 0;
}

/* ---- put ------------------------------------------------------------------------ */

/* Makes what a put needs: the path's missing parents (containers), the
 * path (persistent), `<path>.zkl` and its `puts` (containers).  The
 * creates are sent together (the server applies them in order), each a
 * request of its own: an existing node fails only its own. */
static int ensure_step(zkl__op_t *o, qcall_t *x) {
  zkl_queue_t *q = x->q;
  pt_t *pt = &x->pt_sub;
  PT_BEGIN(pt);
  {
    size_t parts = 5;
    for (size_t i = 1; i < q->root_len; i++) parts += q->root[i] == '/';
    x->ks = calloc(parts, sizeof *x->ks);
    char *buf = malloc(q->root_len + 1);
    if (x->ks == NULL || buf == NULL) {
      free(buf);
      PT_RETURN(pt, zkl__fail(ZKL_ENOMEM, "no memory"));
    }
    x->nks = 0;
    for (size_t i = 1; i < q->root_len; i++)
      if (q->root[i] == '/') {
        memcpy(buf, q->root, i);
        buf[i] = '\0';
        x->ks[x->nks++] = zkl__zk_create_send(q->s, buf, "", 0, ZOO_CONTAINER);
      }
    free(buf);
    x->ks[x->nks++] = zkl__zk_create_send(q->s, q->root, "", 0, 0);
    if (q->taken != NULL) { /* persistent, as kazoo makes them */
      x->ks[x->nks++] = zkl__zk_create_send(q->s, q->items, "", 0, 0);
      x->ks[x->nks++] = zkl__zk_create_send(q->s, q->taken, "", 0, 0);
    }
    x->ks[x->nks++] = zkl__zk_create_send(q->s, q->side, "", 0, ZOO_CONTAINER);
    x->ks[x->nks++] = zkl__zk_create_send(q->s, q->puts, "", 0, ZOO_CONTAINER);
  }
  Q_AWAIT(o, pt, x, x->ks[x->nks - 1]);
  x->zrc = ZOK;
  for (size_t i = 0; i < x->nks; i++) {
    int zrc = zkl__zk_create_wait(x->ks[i], x->call.dl, NULL, NULL);
    if (zrc != ZOK && zrc != ZNODEEXISTS && x->zrc == ZOK) x->zrc = zrc;
  }
  free(x->ks);
  x->ks = NULL;
  x->nks = 0;
  if (x->zrc != ZOK) PT_RETURN(pt, map_zrc(q, x->zrc, "create"));
  PT_RETURN(pt, 0);
  PT_END(pt);
  return 0;
}

/* The put's multi went through: its marker waits for the next put's
 * multi to delete it, with the ones that multi deleted. */
static void put_applied(zkl_queue_t *q, qcall_t *x) {
  for (int i = 0; i < x->n_stale_sent; i++) free(q->stale[i]);
  memmove(q->stale, q->stale + x->n_stale_sent,
          (size_t)(q->n_stale - x->n_stale_sent) * sizeof *q->stale);
  q->n_stale -= x->n_stale_sent;
  x->n_stale_sent = 0;
  char *m = strdup(x->marker);
  if (m != NULL && q->n_stale < STALE_MAX) q->stale[q->n_stale++] = m;
  else if (m != NULL) { /* cannot happen: each put takes all of them */
    zkl__janitor_add_owned(q->s, m, NULL, 0);
    free(m);
  }
  q->since += x->nbufs;
}

static int put_send(qcall_t *x) {
  zkl_queue_t *q = x->q;
  size_t n = x->nbufs + 1 + (size_t)q->n_stale;
  zkl__mop_t *m = calloc(n, sizeof *m);
  size_t il = strlen(q->items) + 16;
  char *item = malloc(il);
  if (m == NULL || item == NULL) {
    free(m);
    free(item);
    return zkl__fail(ZKL_ENOMEM, "no memory for a put");
  }
  if (q->format == ZKL_QUEUE_QN) snprintf(item, il, "%s/qn-", q->items);
  else snprintf(item, il, "%s/entry-%03d-", q->items, q->priority);
  size_t i = 0;
  for (; i < x->nbufs; i++)
    m[i] = (zkl__mop_t){ZOO_CREATE_OP, item, x->bufs[i].data,
                        (int)x->bufs[i].len, ZOO_SEQUENCE, -1};
  m[i++] = (zkl__mop_t){ZOO_CREATE_OP, x->marker, "", 0, ZOO_EPHEMERAL, -1};
  for (int j = 0; j < q->n_stale; j++)
    m[i++] = (zkl__mop_t){ZOO_DELETE_OP, q->stale[j], NULL, 0, 0, -1};
  x->n_stale_sent = q->n_stale;
  x->k = zkl__zk_multi_send(q->s, m, (int)n);
  free(m);
  free(item);
  return x->k == NULL ? zkl__fail(ZKL_ENOMEM, "no memory for a put") : 0;
}

/* Until the queue has room below the soft bound: 0, ZKL_EFULL (timeout 0),
 * ZKL_ETIMEDOUT, ZKL_ECANCELED, or a code.  The producers that wait stand
 * in a line; only its head counts the items, every 50 ms. */
#define ROOM_POLL_NS 50000000LL
static int room_step(zkl__op_t *o, qcall_t *x) {
  zkl_queue_t *q = x->q;
  pt_t *pt = &x->pt_sub;
  PT_BEGIN(pt);
  for (;;) {
    x->k = zkl__zk_exists_send(q->s, q->items, 0);
    Q_AWAIT(o, pt, x, x->k);
    {
      struct Stat st;
      x->zrc = zkl__zk_exists_wait(x->k, ZKL__TRY, &st);
      x->k = NULL;
      /* the deadline came during a count: it was full at the last one */
      if (x->in_line && x->zrc == ZKL__ZTIMEDOUT)
        PT_RETURN(pt, zkl__fail(ZKL_EFULL, "%s stayed full (soft bound "
                                "%zu) until the deadline", q->root,
                                q->soft_max));
      if (x->zrc != ZOK && x->zrc != ZNONODE && !retryable(x->zrc))
        PT_RETURN(pt, map_zrc(q, x->zrc, "count"));
      x->size = x->zrc == ZOK && st.numChildren > 0 ? (size_t)st.numChildren
                                                    : 0;
    }
    if (x->zrc != ZOK && x->zrc != ZNONODE) { /* connection: wait for it */
      PT_CALL(pt, x->rc, zkl__op_connected(o, x->call.deadline));
      if (x->rc != 0) PT_RETURN(pt, not_connected(x, x->rc));
      continue;
    }
    if (x->size < q->soft_max) PT_RETURN(pt, 0);
    if (x->call.deadline == ZKL__TRY)
      PT_RETURN(pt, zkl__fail(ZKL_EFULL, "%s holds %zu items: the soft "
                              "bound is %zu", q->root, x->size, q->soft_max));
    if (!x->in_line) {
      PT_CALL(pt, x->rc, zkl__op_acquire(o));
      if (x->rc == ZKL_ETIMEDOUT) /* behind other producers till then */
        PT_RETURN(pt, zkl__fail(ZKL_EFULL, "%s stayed full (soft bound "
                                "%zu) until the deadline", q->root,
                                q->soft_max));
      if (x->rc != 0) PT_RETURN(pt, x->rc);
      x->in_line = 1;
      continue;
    }
    zkl__session_lock(q->s);
    zkl__waiter_register(q->s, &q->pline.w, NULL); /* session, cancel */
    x->epoch = zkl__session_epoch(q->s);
    zkl__session_unlock(q->s);
    {
      int64_t next = zkl__now_ns() + ROOM_POLL_NS;
      x->until = x->call.deadline < next ? x->call.deadline : next;
    }
    PT_CALL(pt, x->zrc, zkl__op_await(o, x->epoch, x->until));
    if (x->zrc == ZKL_ECANCELED)
      PT_RETURN(pt, zkl__fail(ZKL_ECANCELED, "the put to %s was canceled",
                              q->root));
    if (x->zrc == ZKL_ETIMEDOUT && zkl__now_ns() >= x->call.deadline)
      PT_RETURN(pt, zkl__fail(ZKL_EFULL, "%s stayed full (%zu items, soft "
                              "bound %zu) until the deadline", q->root,
                              x->size, q->soft_max));
    if (zkl__contend_hold_health(&q->pline) == ZKL_ELOST &&
        zkl__session_renews(q->s)) {
      zkl__contend_forsake(&q->pline); /* went with its session */
      x->in_line = 0;
    }
    PT_CALL(pt, x->rc, zkl__op_connected(o, x->call.deadline));
    if (x->rc != 0) PT_RETURN(pt, not_connected(x, x->rc));
  }
  PT_END(pt);
  return 0;
}

static int put_body(zkl__op_t *o, qcall_t *x);

static int put_step(zkl__op_t *o, void *ctx) {
  qcall_t *x = ctx;
  pt_t *pt = &x->pt;
  PT_BEGIN(pt);
  PT_CALL(pt, x->rc, zkl__op_connected(o, x->call.deadline));
  if (x->rc != 0) PT_RETURN(pt, not_connected(x, x->rc));
  if (x->q->soft_max > 0) PT_CALL(pt, x->rc, room_step(o, x));
  if (x->rc == 0) PT_CALL(pt, x->rc, put_body(o, x));
  if (x->in_line) { /* the next producer waiting for room looks */
    PT_CALL(pt, x->zrc, zkl__op_release(o, 1));
    x->in_line = 0;
  }
  PT_RETURN(pt, x->rc);
  PT_END(pt);
  return 0;
}

static int put_body(zkl__op_t *o, qcall_t *x) {
  zkl_queue_t *q = x->q;
  pt_t *pt = &x->pt_put;
  PT_BEGIN(pt);
  if (q->max_items > 0 &&
      (!q->counted || zkl__now_ns() - q->count_at > COUNT_AGE_NS ||
       q->count + q->since >= q->max_items / 2)) {
    x->k = zkl__zk_exists_send(q->s, q->items, 0);
    Q_AWAIT(o, pt, x, x->k);
    {
      struct Stat st;
      x->zrc = zkl__zk_exists_wait(x->k, ZKL__TRY, &st);
      x->k = NULL;
      if (x->zrc != ZOK && x->zrc != ZNONODE)
        PT_RETURN(pt, map_zrc(q, x->zrc, "count"));
      q->count = x->zrc == ZOK && st.numChildren > 0
                     ? (size_t)st.numChildren : 0;
    }
    q->count_at = zkl__now_ns();
    q->since = 0;
    q->counted = 1;
  }
  if (q->max_items > 0 && q->count + q->since + x->nbufs > q->max_items)
    PT_RETURN(pt, zkl__fail(ZKL_EFULL, "%s holds %zu items; its bound is "
                            "%zu (past about 61,700 qn- children a Java "
                            "client can no longer list the queue)", q->root,
                            q->count + q->since, q->max_items));
  {
    char prefix[ZKL__PREFIX_LEN + 1];
    zkl__prefix_new(prefix);
    snprintf(x->marker, sizeof x->marker, "%s/%.*s", q->puts,
             ZKL__PREFIX_LEN - 1, prefix); /* "_c_<uuid>" */
  }
  /* once sent, a put waits for its outcome, not for the caller's deadline:
   * the client answers every request, with a connection loss at worst */
  x->call.dl = ZKL__FOREVER;
  x->sid = zkl_session_id(q->s);
  for (x->tries = 0; x->tries < PUT_TRIES; x->tries++) {
    x->rc = put_send(x);
    if (x->rc != 0) PT_RETURN(pt, x->rc);
    Q_AWAIT(o, pt, x, x->k);
    {
      size_t n = x->nbufs + 1 + (size_t)x->n_stale_sent;
      int *errs = calloc(n, sizeof *errs);
      x->zrc = zkl__zk_multi_wait(x->k, ZKL__TRY, errs, NULL);
      x->k = NULL;
      if (x->zrc == ZOK) {
        free(errs);
        put_applied(q, x);
        PT_RETURN(pt, 0);
      }
      /* which op failed: the first whose code is its own */
      size_t bad = n;
      for (size_t i = 0; errs != NULL && i < n; i++)
        if (errs[i] != ZOK && errs[i] != ZRUNTIMEINCONSISTENCY) {
          bad = i;
          break;
        }
      free(errs);
      if (x->zrc == ZNONODE && bad <= x->nbufs) {
        x->n_stale_sent = 0;
        PT_CALL(pt, x->rc, ensure_step(o, x)); /* the path or puts/ */
        if (x->rc != 0) PT_RETURN(pt, x->rc);
        continue;
      }
      if (x->zrc == ZNONODE && bad < n) { /* stale markers already gone */
        for (int i = 0; i < q->n_stale; i++) free(q->stale[i]);
        q->n_stale = 0;
        x->n_stale_sent = 0;
        continue;
      }
    }
    if (x->zrc == ZNODEEXISTS && x->resent)
      break; /* our marker: the first send was applied after all */
    if (!retryable(x->zrc)) PT_RETURN(pt, map_zrc(q, x->zrc, "put"));
    /* The answer is lost: was it applied?  The same session, once back,
     * tells by the marker, after a sync (the server we reach may lag).
     * A resend carries the same marker, so that it fails if the first
     * send is applied after all. */
    x->until = zkl__deadline_after_ms(zkl_session_timeout(q->s));
    for (;;) {
      PT_CALL(pt, x->rc, zkl__op_connected(o, x->until));
      if (x->rc == 0 && zkl_session_id(q->s) != x->sid) x->rc = ZKL_ELOST;
      if (x->rc != 0 && x->rc != ZKL_ELOST) /* the marker, if made, goes */
        zkl__janitor_add_owned(q->s, x->marker, NULL, 0);
      if (x->rc != 0)
        PT_RETURN(pt, zkl__fail(x->rc == ZKL_ETIMEDOUT ? ZKL_ESUSPENDED
                                                       : x->rc,
                                "the put to %s met a connection loss and %s: "
                                "its outcome is unknown", q->root,
                                x->rc == ZKL_ELOST ? "the session was lost"
                                : x->rc == ZKL_ECANCELED
                                    ? "it was canceled"
                                    : "the connection stayed down"));
      x->k2 = zkl__zk_sync_send(q->s, q->puts);
      x->k = zkl__zk_exists_send(q->s, x->marker, 0);
      Q_AWAIT(o, pt, x, x->k);
      zkl__zk_wait(x->k2, ZKL__TRY);
      x->k2 = NULL;
      x->zrc = zkl__zk_exists_wait(x->k, ZKL__TRY, NULL);
      x->k = NULL;
      if (!retryable(x->zrc)) break;
    }
    if (x->zrc == ZOK) break; /* applied */
    if (x->zrc != ZNONODE)
      PT_RETURN(pt, map_zrc(q, x->zrc, "put (its marker)"));
    x->resent = 1; /* not applied: send it again */
  }
  if (x->tries < PUT_TRIES) {
    put_applied(q, x);
    PT_RETURN(pt, 0);
  }
  PT_RETURN(pt, zkl__fail(ZKL_EPROTO, "the put to %s kept failing (its "
                          "path or puts/ keeps vanishing)", q->root));
  PT_END(pt);
  return 0;
}

/* ---- running calls ---------------------------------------------------------- */

static zkl__step_fn step_of(int kind) {
  switch (kind) {
  case Q_PUT: return put_step;
  case Q_TAKE: return take_step;
  case Q_PEEK: return peek_step;
  case Q_LIST: return list_all_step;
  case Q_SIZE: return size_step;
  case Q_CLAIM: return take_step;
  case Q_ACK:
  case Q_NACK: return settle_step;
  default: return remove_step;
  }
}

/* The contender whose operation a call is: the producers' line for puts,
 * the consumers' for the rest (one call at a time per object). */
static zkl__contender_t *contender_of(zkl_queue_t *q, int kind) {
  return kind == Q_PUT ? &q->pline : &q->line;
}

static void qcall_free(qcall_t *x);
static void qcall_release(zkl__call_t *c) { qcall_free((qcall_t *)c); }
static void qcall_deliver(zkl__call_t *c);
static void qcall_check(zkl__call_t *c);
static const char *qcall_orphaned(zkl__call_t *c);

static qcall_t *qcall_new(zkl_queue_t *q, int kind, int64_t timeout_ms) {
  qcall_t *x = calloc(1, sizeof *x);
  if (x == NULL) {
    zkl__fail(ZKL_ENOMEM, "no memory for a queue call");
    return NULL;
  }
  /* peek, size and remove wait for a connection up to a session timeout */
  zkl__call_init(&x->call, &q->calls, q, timeout_ms);
  x->call.release = qcall_release;
  x->call.deliver = qcall_deliver;
  x->call.check = qcall_check;
  x->call.orphaned = qcall_orphaned;
  x->q = q;
  x->kind = kind;
  return x;
}

static void qcall_free(qcall_t *x) {
  batch_clear(x);
  free(x->b);
  zkl__zk_children_free(&x->kids);
  zkl__zk_children_free(&x->tkids);
  free(x->refs);
  if (x->items != NULL) zkl_items_free(x->items, x->got);
  free(x->copy);
  free(x->bufs);
  free(x->call.detail);
  free(x->noauth);
  free(x);
}

static int null_queue(void) {
  return zkl__fail(ZKL_EINVAL, "queue is NULL");
}

/* A blocking call: the object claimed for the calling thread (another
 * thread's call is waited for until the deadline), the step run here. */
static int run_blocking(zkl_queue_t *q, qcall_t *x) {
  return zkl__call_blocking(&x->call, contender_of(q, x->kind),
                            step_of(x->kind));
}

/* ---- async calls: one per object at a time, lasting until dispatched ---- */

static void qcall_deliver(zkl__call_t *c) {
  qcall_t *x = (qcall_t *)c;
  if (x->icb != NULL) {
    zkl_item_t *items = c->rc == 0 ? x->items : NULL;
    size_t n = c->rc == 0 ? x->got : 0;
    if (c->rc == 0) x->items = NULL; /* the callback's now */
    x->icb(c->obj, c->rc, items, n, c->arg);
  } else {
    c->cb(c->obj, c->rc, 0, c->arg);
  }
}

/* At dispatch: a claim is reported only while it holds (the loop may have
 * been slow, or the process paused, since the engine made it); one in
 * doubt or lost by then is given up and reported as ZKL_ESUSPENDED or
 * ZKL_ELOST. */
static void qcall_check(zkl__call_t *c) {
  qcall_t *x = (qcall_t *)c;
  zkl_queue_t *q = x->q;
  if (x->kind != Q_CLAIM || c->rc != 0 || x->got == 0) return;
  int h = claim_health_now(q, x->name);
  if (h == 0) return;
  claim_give_up(q, x);
  zkl__call_report(c, h, h == ZKL_ELOST
                             ? "claimed, but the session was lost before the "
                               "completion was dispatched"
                             : "claimed, but the connection went down before "
                               "the completion was dispatched: the claim is "
                               "given up");
}

static const char *qcall_orphaned(zkl__call_t *c) {
  qcall_t *x = (qcall_t *)c;
  x->q = NULL;
  return c->rc == 0 && x->kind == Q_TAKE
             ? "the queue object was destroyed before the completion was "
               "dispatched: its items are lost"
             : NULL;
}

static int run_async(zkl_queue_t *q, qcall_t *x) {
  return zkl__call_async(&x->call, contender_of(q, x->kind), step_of(x->kind));
}

/* ---- the public calls ---------------------------------------------------------- */

void zkl_queue_opts_init(zkl_queue_opts_t *opts) {
  if (opts == NULL) return;
  memset(opts, 0, sizeof *opts);
  opts->format = ZKL_QUEUE_QN;
  opts->priority = 100;
  opts->max_items = 50000;
}

int zkl_queue_create(zkl_queue_t **out, zkl_session_t *s, const char *path,
                     const zkl_queue_opts_t *opts) {
  zkl__clear_error();
  if (out == NULL) return zkl__fail(ZKL_EINVAL, "out is NULL");
  *out = NULL;
  zkl_queue_opts_t def;
  zkl_queue_opts_init(&def);
  if (opts == NULL) opts = &def;
  int rc = zkl__check_recipe_args(s, path, NULL, 0);
  if (rc != 0) return rc;
  if (strcmp(path, "/") == 0)
    return zkl__fail(ZKL_EINVAL, "a queue cannot be at /");
  if (opts->format != ZKL_QUEUE_QN && opts->format != ZKL_QUEUE_KAZOO &&
      opts->format != ZKL_QUEUE_LOCKING)
    return zkl__fail(ZKL_EINVAL, "unknown queue format %d",
                     (int)opts->format);
  if (opts->priority < 0 || opts->priority > 999)
    return zkl__fail(ZKL_EINVAL, "priority %d is not within 0..999",
                     opts->priority);
  zkl_queue_t *q = calloc(1, sizeof *q);
  if (q == NULL) return zkl__fail(ZKL_ENOMEM, "no memory for a queue");
  q->s = s;
  q->format = (int)opts->format;
  q->priority = opts->priority;
  q->max_items = opts->max_items;
  q->soft_max = opts->soft_max;
  q->root_len = strlen(path);
  q->root = strdup(path);
  size_t sl = q->root_len + sizeof SIDE_SUFFIX + 16;
  q->items = malloc(sl);
  if (q->format == ZKL_QUEUE_LOCKING) q->taken = malloc(sl);
  {
    char prefix[ZKL__PREFIX_LEN + 1]; /* "_c_<uuid>-": its hex digits */
    zkl__prefix_new(prefix);
    size_t j = 0;
    for (const char *p = prefix + 3; *p != '\0' && j < 32; p++)
      if (*p != '-') q->id[j++] = *p;
    q->id[j] = '\0';
  }
  if (q->items != NULL) {
    if (q->format == ZKL_QUEUE_LOCKING) snprintf(q->items, sl, "%s/entries",
                                                 path);
    else snprintf(q->items, sl, "%s", path);
  }
  if (q->taken != NULL) snprintf(q->taken, sl, "%s/taken", path);
  q->side = malloc(sl);
  q->puts = malloc(sl);
  char *wait = malloc(sl), *full = malloc(sl);
  if (q->root == NULL || q->side == NULL || q->puts == NULL || wait == NULL ||
      full == NULL ||
      q->items == NULL || (q->format == ZKL_QUEUE_LOCKING && !q->taken)) {
    rc = ZKL_ENOMEM;
  } else {
    snprintf(q->side, sl, "%s%s", path, SIDE_SUFFIX);
    snprintf(q->puts, sl, "%s%s/puts", path, SIDE_SUFFIX);
    /* a line per format: a head waits for items of its own format only,
     * so consumers of two formats on one path must not share a line */
    snprintf(wait, sl, "%s%s/%s", path, SIDE_SUFFIX,
             q->format == ZKL_QUEUE_QN      ? "wait"
             : q->format == ZKL_QUEUE_KAZOO ? "wait-kazoo"
                                            : "wait-locking");
    snprintf(full, sl, "%s%s/full", path, SIDE_SUFFIX);
    rc = zkl__calls_init(&q->calls, s, "queue");
    if (rc == 0) {
      rc = zkl__contender_init(&q->line, s, &zkl__driver_mutex, wait, NULL, 0,
                               &q->calls.own.cancel_gen);
      if (rc == 0) {
        rc = zkl__contender_init(&q->pline, s, &zkl__driver_mutex, full, NULL,
                                 0, &q->calls.own.cancel_gen);
        if (rc != 0) zkl__contender_fini(&q->line);
      }
      /* the lines are zkl's own: names a joiner can compute, so that one
       * joins a long line without listing it (contend.h) */
      q->line.tagged = q->pline.tagged = 1;
      if (rc != 0) zkl__calls_fini(&q->calls);
    }
  }
  free(wait);
  free(full);
  if (rc != 0) {
    free(q->root);
    free(q->items);
    free(q->taken);
    free(q->side);
    free(q->puts);
    free(q);
    return zkl__fail(rc, rc == ZKL_ENOMEM ? "no memory for a queue"
                                          : "cannot make the queue's mutex");
  }
  *out = q;
  return 0;
}

static void kick(void *arg) { zkl_queue_cancel(arg); }

void zkl_queue_destroy(zkl_queue_t *q) {
  if (q == NULL) return;
  zkl__calls_drain(&q->calls, kick, q);
  for (int i = 0; i < q->n_stale; i++) {
    zkl__janitor_add_owned(q->s, q->stale[i], NULL, 0);
    free(q->stale[i]);
  }
  for (size_t i = 0; i < q->n_claims; i++) { /* given up: claimable again */
    char path[CHILD_MAX];
    claim_path(q, q->claims[i].name, path);
    if (q->claims[i].sid == zkl_session_id(q->s))
      zkl__janitor_add_owned(q->s, path, q->id, 32);
  }
  free(q->claims);
  listing_clear(q);
  zkl__contender_fini(&q->line);
  zkl__contender_fini(&q->pline);
  zkl__calls_fini(&q->calls);
  free(q->items);
  free(q->taken);
  free(q->root);
  free(q->side);
  free(q->puts);
  free(q);
}

int zkl_queue_cancel(zkl_queue_t *q) {
  zkl__clear_error();
  if (q == NULL) return null_queue();
  zkl__owner_cancel(&q->calls.own);
  zkl__contend_cancel(&q->line);
  zkl__contend_cancel(&q->pline);
  return 0;
}

/* Checks and borrows the payloads of a put (copied when async). */
static int put_args(zkl_queue_t *q, const zkl_buf_t *items, size_t n,
                    int copy, qcall_t **out, int64_t timeout_ms) {
  *out = NULL;
  if (q == NULL) return null_queue();
  if (items == NULL || n == 0 || n > BATCH_MAX)
    return zkl__fail(ZKL_EINVAL, "a put takes 1..%d items, not %zu%s",
                     BATCH_MAX, n, items == NULL ? " (items is NULL)" : "");
  size_t total = 0;
  for (size_t i = 0; i < n; i++) {
    if (items[i].data == NULL && items[i].len > 0)
      return zkl__fail(ZKL_EINVAL, "item %zu: data is NULL, len %zu", i,
                       items[i].len);
    if (items[i].len > ZKL_QUEUE_MAX_BYTES ||
        (total += items[i].len) > ZKL_QUEUE_MAX_BYTES)
      return zkl__fail(ZKL_EINVAL, "the payload%s of %zu bytes or more: "
                       "more than ZKL_QUEUE_MAX_BYTES (%d), what ZooKeeper's "
                       "default request limit (jute.maxbuffer, 1 MiB) "
                       "leaves", n > 1 ? "s come to" : " is", total,
                       ZKL_QUEUE_MAX_BYTES);
  }
  qcall_t *x = qcall_new(q, Q_PUT, timeout_ms);
  if (x == NULL) return ZKL_ENOMEM;
  x->bufs = malloc(n * sizeof *x->bufs);
  x->copy = copy ? malloc(total > 0 ? total : 1) : NULL;
  if (x->bufs == NULL || (copy && x->copy == NULL)) {
    qcall_free(x);
    return zkl__fail(ZKL_ENOMEM, "no memory for a put");
  }
  char *at = x->copy;
  for (size_t i = 0; i < n; i++) {
    x->bufs[i] = items[i];
    if (copy && items[i].len > 0) {
      memcpy(at, items[i].data, items[i].len);
      x->bufs[i].data = at;
      at += items[i].len;
    }
  }
  x->nbufs = n;
  *out = x;
  return 0;
}

int zkl_queue_put_batch(zkl_queue_t *q, const zkl_buf_t *items, size_t n,
                        int64_t timeout_ms) {
  zkl__clear_error();
  qcall_t *x;
  int rc = put_args(q, items, n, 0, &x, timeout_ms);
  if (rc != 0) return rc;
  rc = run_blocking(q, x);
  qcall_free(x);
  return rc;
}

int zkl_queue_put(zkl_queue_t *q, const void *data, size_t len,
                  int64_t timeout_ms) {
  zkl_buf_t b = {data, len};
  return zkl_queue_put_batch(q, &b, 1, timeout_ms);
}

int zkl_queue_put_batch_async(zkl_queue_t *q, const zkl_buf_t *items,
                              size_t n, int64_t timeout_ms, zkl_done_fn cb,
                              void *arg) {
  zkl__clear_error();
  if (q != NULL && cb == NULL)
    return zkl__fail(ZKL_EINVAL, "the callback is NULL");
  qcall_t *x;
  int rc = put_args(q, items, n, 1, &x, timeout_ms);
  if (rc != 0) return rc;
  x->call.cb = cb;
  x->call.arg = arg;
  return run_async(q, x);
}

int zkl_queue_put_async(zkl_queue_t *q, const void *data, size_t len,
                        int64_t timeout_ms, zkl_done_fn cb, void *arg) {
  zkl_buf_t b = {data, len};
  return zkl_queue_put_batch_async(q, &b, 1, timeout_ms, cb, arg);
}

static int take_args(zkl_queue_t *q, size_t max, int64_t timeout_ms,
                     qcall_t **out) {
  *out = NULL;
  if (q == NULL) return null_queue();
  if (max == 0 || max > BATCH_MAX)
    return zkl__fail(ZKL_EINVAL, "a take takes 1..%d items, not %zu",
                     BATCH_MAX, max);
  qcall_t *x = qcall_new(q, Q_TAKE, timeout_ms);
  if (x == NULL) return ZKL_ENOMEM;
  x->want = max;
  *out = x;
  return 0;
}

int zkl_queue_take_batch(zkl_queue_t *q, size_t max, int64_t timeout_ms,
                         zkl_item_t **items, size_t *n) {
  zkl__clear_error();
  if (items == NULL || n == NULL)
    return zkl__fail(ZKL_EINVAL, "items or n is NULL");
  *items = NULL;
  *n = 0;
  qcall_t *x;
  int rc = take_args(q, max, timeout_ms, &x);
  if (rc != 0) return rc;
  rc = run_blocking(q, x);
  if (rc == 0) {
    *items = x->items;
    *n = x->got;
    x->items = NULL;
  }
  qcall_free(x);
  return rc;
}

int zkl_queue_take(zkl_queue_t *q, int64_t timeout_ms, zkl_item_t *item) {
  zkl__clear_error();
  if (item == NULL) return zkl__fail(ZKL_EINVAL, "item is NULL");
  memset(item, 0, sizeof *item);
  zkl_item_t *v;
  size_t n;
  int rc = zkl_queue_take_batch(q, 1, timeout_ms, &v, &n);
  if (rc == 0) {
    *item = v[0];
    free(v);
  }
  return rc;
}

int zkl_queue_take_async(zkl_queue_t *q, size_t max, int64_t timeout_ms,
                         zkl_items_fn cb, void *arg) {
  zkl__clear_error();
  if (q != NULL && cb == NULL)
    return zkl__fail(ZKL_EINVAL, "the callback is NULL");
  qcall_t *x;
  int rc = take_args(q, max, timeout_ms, &x);
  if (rc != 0) return rc;
  x->icb = cb;
  x->call.arg = arg;
  return run_async(q, x);
}

/* peek, size, remove: wait up to a session timeout for a connection */
static qcall_t *short_call(zkl_queue_t *q, int kind) {
  return qcall_new(q, kind, zkl_session_timeout(q->s));
}

int zkl_queue_peek(zkl_queue_t *q, zkl_item_t *item) {
  zkl__clear_error();
  if (q == NULL || item == NULL)
    return zkl__fail(ZKL_EINVAL, "queue or item is NULL");
  memset(item, 0, sizeof *item);
  qcall_t *x = short_call(q, Q_PEEK);
  if (x == NULL) return ZKL_ENOMEM;
  int rc = run_blocking(q, x);
  if (rc == 0) {
    *item = x->items[0];
    x->got = 0;
  }
  qcall_free(x);
  return rc;
}

int zkl_queue_list(zkl_queue_t *q, size_t max, zkl_item_t **items,
                   size_t *n) {
  zkl__clear_error();
  if (q == NULL || items == NULL || n == NULL)
    return zkl__fail(ZKL_EINVAL, "queue, items or n is NULL");
  *items = NULL;
  *n = 0;
  qcall_t *x = short_call(q, Q_LIST);
  if (x == NULL) return ZKL_ENOMEM;
  x->want = max;
  int rc = run_blocking(q, x);
  if (rc == 0 && x->got > 0) {
    *items = x->items;
    *n = x->got;
    x->items = NULL;
  }
  qcall_free(x);
  return rc;
}

int zkl_queue_size(zkl_queue_t *q, size_t *n) {
  zkl__clear_error();
  if (q == NULL || n == NULL)
    return zkl__fail(ZKL_EINVAL, "queue or n is NULL");
  *n = 0;
  qcall_t *x = short_call(q, Q_SIZE);
  if (x == NULL) return ZKL_ENOMEM;
  int rc = run_blocking(q, x);
  if (rc == 0) *n = x->size;
  qcall_free(x);
  return rc;
}

int zkl_queue_remove(zkl_queue_t *q, const char *name) {
  zkl__clear_error();
  if (q == NULL || name == NULL)
    return zkl__fail(ZKL_EINVAL, "queue or name is NULL");
  ref_t r;
  if (strlen(name) > NAME_MAX_LEN || item_parse(q->format, name, &r) != 0)
    return zkl__fail(ZKL_EINVAL, "%s is not an item name of this queue's "
                     "format (%s)", name,
                     q->format == ZKL_QUEUE_QN ? "qn-<seq>"
                                               : "entry-<prio>-<seq>");
  qcall_t *x = short_call(q, Q_REMOVE);
  if (x == NULL) return ZKL_ENOMEM;
  snprintf(x->name, sizeof x->name, "%s", name);
  int rc = run_blocking(q, x);
  qcall_free(x);
  return rc;
}

static int claim_args(zkl_queue_t *q, zkl_item_t *item) {
  if (q == NULL || item == NULL)
    return zkl__fail(ZKL_EINVAL, "queue or item is NULL");
  memset(item, 0, sizeof *item);
  if (q->taken == NULL)
    return zkl__fail(ZKL_EINVAL, "claims need the ZKL_QUEUE_LOCKING layout "
                     "(entries/ and taken/)");
  return 0;
}

int zkl_queue_claim(zkl_queue_t *q, int64_t timeout_ms, zkl_item_t *item) {
  zkl__clear_error();
  int rc = claim_args(q, item);
  if (rc != 0) return rc;
  qcall_t *x = qcall_new(q, Q_CLAIM, timeout_ms);
  if (x == NULL) return ZKL_ENOMEM;
  x->want = 1;
  rc = run_blocking(q, x);
  if (rc == 0) {
    *item = x->items[0];
    x->got = 0;
  }
  qcall_free(x);
  return rc;
}

int zkl_queue_claim_async(zkl_queue_t *q, int64_t timeout_ms,
                          zkl_items_fn cb, void *arg) {
  zkl__clear_error();
  zkl_item_t unused;
  int rc = claim_args(q, &unused);
  if (rc != 0) return rc;
  if (cb == NULL) return zkl__fail(ZKL_EINVAL, "the callback is NULL");
  qcall_t *x = qcall_new(q, Q_CLAIM, timeout_ms);
  if (x == NULL) return ZKL_ENOMEM;
  x->want = 1;
  x->icb = cb;
  x->call.arg = arg;
  return run_async(q, x);
}

/* The call of an ack or nack of item: 0 and *out, or the code. */
static int settle_args(zkl_queue_t *q, const zkl_item_t *item, int kind,
                       int where, qcall_t **out) {
  *out = NULL;
  if (q == NULL || item == NULL)
    return zkl__fail(ZKL_EINVAL, "queue or item is NULL");
  if (kind == Q_NACK && where != ZKL_QUEUE_HEAD && where != ZKL_QUEUE_TAIL)
    return zkl__fail(ZKL_EINVAL, "where is %d: ZKL_QUEUE_HEAD or "
                     "ZKL_QUEUE_TAIL", where);
  if (kind == Q_NACK && where == ZKL_QUEUE_TAIL &&
      (item->len > ZKL_QUEUE_MAX_BYTES || (item->data == NULL && item->len)))
    return zkl__fail(ZKL_EINVAL, "the item's data cannot be put again");
  pthread_mutex_lock(&q->calls.own.mu);
  int named = q->taken != NULL &&
              strnlen(item->name, sizeof item->name) <= NAME_MAX_LEN;
  int mine = named && (claim_find(q, item->name) >= 0 ||
                       claim_was(q, item->name, (int64_t)item->token));
  pthread_mutex_unlock(&q->calls.own.mu);
  if (!mine)
    return zkl__fail(ZKL_EPERM, "%.*s is not claimed through this object",
                     NAME_MAX_LEN, item->name);
  qcall_t *x = qcall_new(q, kind, zkl_session_timeout(q->s));
  if (x == NULL) return ZKL_ENOMEM;
  snprintf(x->name, sizeof x->name, "%s", item->name);
  x->itoken = item->token;
  x->where = where;
  if (kind == Q_NACK && where == ZKL_QUEUE_TAIL) {
    x->bufs = malloc(sizeof *x->bufs);
    x->copy = malloc(item->len > 0 ? item->len : 1);
    if (x->bufs == NULL || x->copy == NULL) {
      qcall_free(x);
      return zkl__fail(ZKL_ENOMEM, "no memory");
    }
    if (item->len > 0) memcpy(x->copy, item->data, item->len);
    x->bufs[0] = (zkl_buf_t){x->copy, item->len};
    x->nbufs = 1;
  }
  *out = x;
  return 0;
}

static int settle(zkl_queue_t *q, const zkl_item_t *item, int kind,
                  int where) {
  zkl__clear_error();
  qcall_t *x;
  int rc = settle_args(q, item, kind, where, &x);
  if (rc != 0) return rc;
  rc = run_blocking(q, x);
  qcall_free(x);
  return rc;
}

int zkl_queue_ack(zkl_queue_t *q, const zkl_item_t *item) {
  return settle(q, item, Q_ACK, ZKL_QUEUE_HEAD);
}

int zkl_queue_nack(zkl_queue_t *q, const zkl_item_t *item, int where) {
  return settle(q, item, Q_NACK, where);
}

static int settle_async(zkl_queue_t *q, const zkl_item_t *item, int kind,
                        int where, zkl_done_fn cb, void *arg) {
  zkl__clear_error();
  if (q != NULL && cb == NULL)
    return zkl__fail(ZKL_EINVAL, "the callback is NULL");
  qcall_t *x;
  int rc = settle_args(q, item, kind, where, &x);
  if (rc != 0) return rc;
  x->call.cb = cb;
  x->call.arg = arg;
  return run_async(q, x);
}

int zkl_queue_ack_async(zkl_queue_t *q, const zkl_item_t *item,
                        zkl_done_fn cb, void *arg) {
  return settle_async(q, item, Q_ACK, ZKL_QUEUE_HEAD, cb, arg);
}

int zkl_queue_nack_async(zkl_queue_t *q, const zkl_item_t *item, int where,
                         zkl_done_fn cb, void *arg) {
  return settle_async(q, item, Q_NACK, where, cb, arg);
}

int zkl_queue_claim_health(zkl_queue_t *q, const zkl_item_t *item) {
  zkl__clear_error();
  if (q == NULL || item == NULL)
    return zkl__fail(ZKL_EINVAL, "queue or item is NULL");
  pthread_mutex_lock(&q->calls.own.mu);
  ptrdiff_t i = strnlen(item->name, sizeof item->name) <= NAME_MAX_LEN
                    ? claim_find(q, item->name) : -1;
  int64_t sid = i >= 0 ? q->claims[i].sid : 0;
  int stale = i >= 0 && (uint64_t)q->claims[i].czxid != item->token;
  int ended = i < 0 && claim_was(q, item->name, (int64_t)item->token);
  pthread_mutex_unlock(&q->calls.own.mu);
  if (ended)
    return zkl__fail(ZKL_ELOST, "this claim of %s is gone: the object "
                     "claimed the item again since", item->name);
  if (i < 0)
    return zkl__fail(ZKL_EPERM, "%.*s is not claimed through this object",
                     NAME_MAX_LEN, item->name);
  if (stale)
    return zkl__fail(ZKL_ELOST, "this claim of %s is gone: the object "
                     "claimed the item again since", item->name);
  if (sid != zkl_session_id(q->s))
    return zkl__fail(ZKL_ELOST, "the claim on %s went with its session",
                     item->name);
  int h = zkl__session_health(q->s);
  if (h == ZKL_ELOST)
    return zkl__fail(h, "the claim on %s went with its session", item->name);
  if (h != 0)
    return zkl__fail(h, "the claim on %s is in doubt: the connection is "
                     "down", item->name);
  return 0;
}

void zkl_item_free(zkl_item_t *item) {
  if (item == NULL) return;
  free(item->data);
  memset(item, 0, sizeof *item);
}

void zkl_items_free(zkl_item_t *items, size_t n) {
  if (items == NULL) return;
  for (size_t i = 0; i < n; i++) free(items[i].data);
  free(items);
}
