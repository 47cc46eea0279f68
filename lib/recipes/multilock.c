/* lib/recipes/multilock.c - several mutexes held together, all or none
 * (see zkl/multilock.h).
 *
 * A lock is one call (core/call.c) run as an operation of the object's
 * home contender, which never makes a node of its own: it makes one mutex
 * node under every path in ONE multi, hands each node to that path's
 * contender (premade: the contention core queues it as it is, and says
 * ZKL__VANISHED if it goes instead of making another), starts the n
 * acquisitions on the session's engine and waits for all of them.  Every
 * node a contender waits for is older than its own; ours are all of one
 * transaction, so waits only ever point to older transactions and cannot
 * form a cycle.  If one node vanished, everything is given up and the
 * multi is made again; on any other failure everything is given up and
 * the failure reported.  An unlock releases the n nodes together. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zookeeper/zookeeper.h>

#include "core/contend.h"
#include "zkl/multilock.h"

#define VANISH_TRIES 5 /* multis made again after a node vanished        */
#define MAKE_TRIES 16  /* multis refused for a missing path              */
#define REWAITS 8      /* all granted, then the connection went: the n
                          acquisitions run again, each confirming its node
                          once the connection is back                   */

struct zkl_multilock {
  zkl__calls_t calls; /* one call at a time; calls.own.mu guards `held` */
  zkl_session_t *s;
  size_t n;
  zkl__contender_t home; /* runs the calls; makes no node              */
  zkl__contender_t *c;   /* one per path, in the order given; premade  */
  atomic_uint sub_cancel; /* stops the n acquisitions (not the user's)  */
  int held;
  /* the ends of the n sub-operations of the call underway: each records
   * its result and wakes the call under mu, so that the call, once it has
   * seen them all, knows nobody touches the object on their behalf */
  pthread_mutex_t mu;
};

typedef struct mcall mcall_t;

typedef struct sub {
  mcall_t *x;
  size_t i;
} sub_t;

struct mcall {
  zkl__call_t call; /* first: the call base */
  zkl_multilock_t *m;
  size_t n;         /* m->n (the record may outlive m: an orphan)      */
  int unlock;       /* the call: lock or unlock                         */
  pt_t pt;
  int rc, zrc, vanished, makes, lapses, stopped, saved, lost, rewaits;
  char prefix[ZKL__PREFIX_LEN + 1];
  zkl__zcall_t *z;
  zkl__zcall_t **pz, ***pzs; /* missing paths: each one's create, and its
                               parents' (pnzs of them)                  */
  size_t *pnzs;
  zkl__zcall_t **ez;         /* the last look: an exists per node      */
  size_t missing;   /* the path whose parent was missing                */
  size_t pending;   /* sub-operations not ended (m->mu)                 */
  int *rcs;         /* their results (PT_WAIT: not ended)               */
  char **details;
  sub_t *subs;
  uint64_t token;
};

/* ---- the n sub-operations ------------------------------------------------------ */

/* A sub-operation ended (on the engine's thread). */
static void sub_done(int rc, const char *detail, void *arg) {
  sub_t *u = arg;
  mcall_t *x = u->x;
  zkl_multilock_t *m = x->m;
  pthread_mutex_lock(&m->mu);
  x->rcs[u->i] = rc;
  if (rc != 0 && rc != ZKL__VANISHED && detail != NULL && detail[0] != '\0')
    x->details[u->i] = strdup(detail);
  x->pending--;
  zkl__contend_cancel(&m->home); /* wakes the call (no cancel) */
  pthread_mutex_unlock(&m->mu);
}

static int all_ended(mcall_t *x) {
  pthread_mutex_lock(&x->m->mu);
  size_t p = x->pending;
  pthread_mutex_unlock(&x->m->mu);
  return p == 0;
}

/* Has one of them failed (the others are stopped then)? */
static int one_failed(mcall_t *x) {
  int f = 0;
  pthread_mutex_lock(&x->m->mu);
  for (size_t i = 0; i < x->m->n && !f; i++)
    f = x->rcs[i] != PT_WAIT && x->rcs[i] != 0;
  pthread_mutex_unlock(&x->m->mu);
  return f;
}

enum { SUB_ACQUIRE, SUB_RELEASE, SUB_GIVE_UP };

/* Starts an acquisition, a release, or a give-up (a release that never
 * waits for a connection: the janitor deletes the node if it is down)
 * through each contender that has a node; x->pending counts them. */
static void subs_start(mcall_t *x, int what) {
  zkl_multilock_t *m = x->m;
  unsigned seen = atomic_load(&m->sub_cancel);
  pthread_mutex_lock(&m->mu);
  x->pending = 0;
  for (size_t i = 0; i < m->n; i++) {
    free(x->details[i]);
    x->details[i] = NULL;
    x->rcs[i] = 0;
    if (m->c[i].node == NULL) continue;
    x->rcs[i] = PT_WAIT;
    x->pending++;
  }
  pthread_mutex_unlock(&m->mu);
  for (size_t i = 0; i < m->n; i++) {
    if (m->c[i].node == NULL) continue;
    int rc = what != SUB_ACQUIRE
                 ? zkl__contend_release_start(&m->c[i], what == SUB_GIVE_UP,
                                              sub_done, &x->subs[i])
                 : zkl__contend_acquire_start(&m->c[i], x->call.deadline,
                                              seen, sub_done, &x->subs[i]);
    if (rc != 0) sub_done(rc, zkl_last_error(), &x->subs[i]);
  }
}

/* Stops the acquisitions underway (they give up their nodes). */
static void subs_stop(mcall_t *x) {
  zkl_multilock_t *m = x->m;
  x->stopped = 1;
  atomic_fetch_add(&m->sub_cancel, 1);
  for (size_t i = 0; i < m->n; i++) zkl__contend_cancel(&m->c[i]);
}

/* ---- the lock ------------------------------------------------------------------- */

/* The multi: a mutex node under every path, with one prefix. */
static zkl__zcall_t *make_nodes(mcall_t *x) {
  zkl_multilock_t *m = x->m;
  zkl__mop_t *ops = calloc(m->n, sizeof *ops);
  char **paths = calloc(m->n, sizeof *paths);
  zkl__zcall_t *z = NULL;
  int ok = ops != NULL && paths != NULL;
  for (size_t i = 0; ok && i < m->n; i++) {
    zkl__contender_t *c = &m->c[i];
    size_t len = c->root_len + 1 + ZKL__PREFIX_LEN + strlen(c->drv->marker) + 1;
    if ((paths[i] = malloc(len)) == NULL) {
      ok = 0;
      break;
    }
    snprintf(paths[i], len, "%s/%s%s", c->root, x->prefix, c->drv->marker);
    memcpy(c->prefix, x->prefix, sizeof c->prefix);
    ops[i] = (zkl__mop_t){.type = ZOO_CREATE_OP, .path = paths[i],
                          .data = c->data, .len = c->data_len,
                          .flags = ZOO_EPHEMERAL | ZOO_SEQUENCE};
  }
  if (ok) z = zkl__zk_multi_send(m->s, ops, (int)m->n);
  for (size_t i = 0; paths != NULL && i < m->n; i++) free(paths[i]);
  free(paths);
  free(ops);
  return z;
}

/* A multi whose outcome is unknown: whatever it made goes (the janitor,
 * by prefix, once the connection is back). */
static void unknown_to_janitor(mcall_t *x) {
  for (size_t i = 0; i < x->m->n; i++)
    zkl__janitor_add(x->m->s, x->m->c[i].root, x->prefix, NULL);
}

static int past_deadline(mcall_t *x, const char *what) {
  return zkl__fail(ZKL_ETIMEDOUT, "%s: %s not answered before the deadline",
                   x->m->c[0].root, what);
}

/* What the n acquisitions came to: 0 (all granted), ZKL__VANISHED (one
 * node went: start over), or the error to report. */
static int verdict(zkl__op_t *op, mcall_t *x) {
  zkl_multilock_t *m = x->m;
  int vanished = 0, first = 0;
  size_t at = 0;
  for (size_t i = 0; i < m->n; i++) {
    int rc = x->rcs[i];
    if (rc == ZKL__VANISHED) vanished = 1;
    /* the others' ECANCELED is our own stop's (the user's comes below) */
    else if (rc != 0 && first == 0 && (rc != ZKL_ECANCELED || !x->stopped)) {
      first = rc;
      at = i;
    }
  }
  if (zkl__op_canceled(op))
    return zkl__fail(ZKL_ECANCELED, "%s: the lock was canceled",
                     m->c[0].root);
  if (first != 0)
    return zkl__fail(first, "%s: %s", m->c[at].root,
                     x->details[at] != NULL ? x->details[at]
                                            : zkl_strerror(first));
  if (vanished) return ZKL__VANISHED;
  if (x->stopped) /* stopped, and nobody says why: a cancel */
    return zkl__fail(ZKL_ECANCELED, "%s: the lock was canceled",
                     m->c[0].root);
  return 0;
}

/* The rule for a grant, for all n nodes at once (each sub-operation
 * checked its own as it was granted, but the first may be long before the
 * last): made on the session we are on, the server heard from within the
 * session timeout, the deadline not passed. */
static int grant_rule(mcall_t *x) {
  zkl_multilock_t *m = x->m;
  if (x->call.deadline != ZKL__TRY && zkl__now_ns() >= x->call.deadline)
    return zkl__fail(ZKL_ETIMEDOUT, "%s: all granted only after the "
                     "deadline", m->c[0].root);
  for (size_t i = 0; i < m->n; i++) {
    int h = zkl__contend_hold_health(&m->c[i]); /* every node is there */
    if (h == ZKL_ELOST) return ZKL__VANISHED; /* with the session: again */
    if (h != 0)
      return zkl__fail(h, "%s: granted, but the connection is down",
                       m->c[i].root);
  }
  return 0;
}

/* Every path, with its missing parents, made as CONTAINER nodes (one
 * that exists fails alone), all sent at once: answered in order, so the
 * last create's answer means all are in. */
static int roots_send(mcall_t *x) {
  zkl_multilock_t *m = x->m;
  x->pz = calloc(m->n, sizeof *x->pz);
  x->pzs = calloc(m->n, sizeof *x->pzs);
  x->pnzs = calloc(m->n, sizeof *x->pnzs);
  if (x->pz == NULL || x->pzs == NULL || x->pnzs == NULL) return ZKL_ENOMEM;
  for (size_t i = 0; i < m->n; i++) {
    x->pzs[i] = zkl__zk_parents_send(m->s, m->c[i].root, &x->pnzs[i]);
    if (x->pzs[i] == NULL) return ZKL_ENOMEM;
    x->pz[i] = zkl__zk_create_send(m->s, m->c[i].root, "", 0, ZOO_CONTAINER);
  }
  return 0;
}

static void roots_end(mcall_t *x) {
  for (size_t i = 0; x->pz != NULL && i < x->n; i++) {
    if (x->pz[i] != NULL) zkl__zk_create_wait(x->pz[i], ZKL__TRY, NULL, NULL);
    if (x->pzs != NULL) zkl__zk_parents_end(x->pzs[i], x->pnzs[i]);
  }
  free(x->pz);
  free(x->pzs);
  free(x->pnzs);
  x->pz = NULL;
  x->pzs = NULL;
  x->pnzs = NULL;
}

/* The last look before a grant, one exists per node, all sent at once:
 * each acquisition confirmed its own node as it was granted, but the
 * first may have been granted long before the last, and a node deleted
 * by someone else since would leave that path to another holder. */
static int looks_send(mcall_t *x) {
  zkl_multilock_t *m = x->m;
  x->ez = calloc(m->n, sizeof *x->ez);
  if (x->ez == NULL) return ZKL_ENOMEM;
  for (size_t i = 0; i < m->n; i++)
    x->ez[i] = zkl__zk_exists_send(m->s, m->c[i].node, 0);
  return 0;
}

/* Their answers: 0 (all there), ZKL__VANISHED, or a code. */
static int looks_end(mcall_t *x) {
  int rc = 0;
  for (size_t i = 0; x->ez != NULL && i < x->m->n; i++) {
    struct Stat st;
    int zrc = zkl__zk_exists_wait(x->ez[i], x->call.dl, &st);
    x->ez[i] = NULL;
    if (rc != 0) continue;
    if (zrc == ZNONODE ||
        (zrc == ZOK && st.ephemeralOwner != x->m->c[i].session_id))
      rc = ZKL__VANISHED;
    else if (zrc == ZKL__ZTIMEDOUT)
      rc = past_deadline(x, "the last look at our nodes was");
    else if (zrc == ZCONNECTIONLOSS || zrc == ZOPERATIONTIMEOUT)
      rc = zkl__fail(ZKL_ESUSPENDED, "%s: the connection went down as the "
                     "locks were granted", x->m->c[i].root);
    else if (zrc != ZOK)
      rc = zkl__fail(zrc, "%s: cannot look at our node: %s",
                     x->m->c[i].root, zerror(zrc));
  }
  free(x->ez);
  x->ez = NULL;
  return rc;
}

/* A try's look: a listing of every path, all sent at once (in x->ez). */
static int peeks_send(mcall_t *x) {
  zkl_multilock_t *m = x->m;
  x->ez = calloc(m->n, sizeof *x->ez);
  if (x->ez == NULL) return ZKL_ENOMEM;
  for (size_t i = 0; i < m->n; i++)
    x->ez[i] = zkl__zk_children_send(m->s, m->c[i].root, 0);
  return 0;
}

/* Their answers: 0 (every path free now), ZKL_EBUSY, ZKL_ESUSPENDED (the
 * connection dropped: a try does not wait for it), or a code. */
static int peeks_end(mcall_t *x) {
  int rc = 0;
  for (size_t i = 0; x->ez != NULL && i < x->m->n; i++) {
    struct String_vector kids = {0, NULL};
    int zrc = zkl__zk_children_wait(x->ez[i], ZKL__TRY, &kids);
    x->ez[i] = NULL;
    if (rc == 0) {
      if (zrc == ZOK) rc = zkl__contend_busy(&x->m->c[i], &kids);
      else if (zrc == ZCONNECTIONLOSS || zrc == ZOPERATIONTIMEOUT)
        rc = zkl__fail(ZKL_ESUSPENDED, "%s: the connection dropped while "
                       "looking", x->m->c[i].root);
      else if (zrc != ZNONODE) /* no path yet: free */
        rc = zkl__fail(zrc, "%s: cannot list: %s", x->m->c[i].root,
                       zerror(zrc));
    }
    zkl__zk_children_free(&kids);
  }
  free(x->ez);
  x->ez = NULL;
  return rc;
}

static int lock_step(zkl__op_t *op, void *ctx) {
  mcall_t *x = ctx;
  zkl_multilock_t *m = x->m;
  pt_t *pt = &x->pt;
  PT_BEGIN(pt);
  pthread_mutex_lock(&m->calls.own.mu);
  x->rc = m->held;
  pthread_mutex_unlock(&m->calls.own.mu);
  if (x->rc)
    PT_RETURN(pt, zkl__fail(ZKL_EBUSY, "%s: the object holds its locks "
                            "already", m->c[0].root));
  if (x->call.deadline == ZKL__TRY) {
    /* a try looks before it writes: nothing made if a path is busy */
    PT_CALL(pt, x->rc, zkl__op_connected(op, ZKL__TRY));
    if (x->rc != 0)
      PT_RETURN(pt, zkl__fail(x->rc == ZKL_ELOST ? ZKL_ELOST : ZKL_ESUSPENDED,
                              "not connected to ZooKeeper"));
    if (peeks_send(x) != 0)
      PT_RETURN(pt, zkl__fail(ZKL_ENOMEM, "no memory"));
    PT_AWAIT_ANSWER(op, pt, x->ez[m->n - 1], ZKL__FOREVER);
    x->rc = peeks_end(x);
    if (x->rc != 0) PT_RETURN(pt, x->rc);
  }
  for (x->vanished = 0, x->makes = 0, x->lapses = 0;;) {
    PT_CALL(pt, x->rc, zkl__op_connected(op, x->call.deadline));
    if (x->rc == ZKL_ETIMEDOUT)
      x->rc = zkl__fail(x->call.deadline == ZKL__TRY ? ZKL_ESUSPENDED
                                                      : ZKL_ETIMEDOUT,
                        "not connected to ZooKeeper");
    else if (x->rc == ZKL_ECANCELED)
      x->rc = zkl__fail(ZKL_ECANCELED, "%s: the lock was canceled",
                        m->c[0].root);
    if (x->rc != 0) PT_RETURN(pt, x->rc);
    /* the n nodes, in one transaction */
    zkl__prefix_new(x->prefix);
    x->z = make_nodes(x);
    if (x->z == NULL) PT_RETURN(pt, zkl__fail(ZKL_ENOMEM, "no memory"));
    PT_AWAIT_ANSWER(op, pt, x->z, x->call.dl);
    {
      char **made = calloc(m->n, sizeof *made);
      int *errs = calloc(m->n, sizeof *errs);
      if (made == NULL || errs == NULL) {
        free(made);
        free(errs);
        zkl__zk_multi_wait(x->z, ZKL__TRY, NULL, NULL);
        x->z = NULL;
        unknown_to_janitor(x);
        PT_RETURN(pt, zkl__fail(ZKL_ENOMEM, "no memory"));
      }
      x->zrc = zkl__zk_multi_wait(x->z, x->call.dl, errs, made);
      x->z = NULL;
      x->missing = 0;
      for (size_t i = 0; i < m->n; i++)
        if (errs[i] != ZRUNTIMEINCONSISTENCY) x->missing = i;
      if (x->zrc == ZOK) {
        struct Stat st; /* the token below: the multi's zxid */
        memset(&st, 0, sizeof st);
        st.ephemeralOwner = zkl_session_id(m->s);
        for (size_t i = 0; i < m->n; i++) {
          zkl__contend_adopt(&m->c[i], made[i], &st);
          made[i] = NULL;
        }
      }
      for (size_t i = 0; i < m->n; i++) free(made[i]);
      free(made);
      free(errs);
    }
    if (x->zrc == ZKL__ZTIMEDOUT) { /* it may still be applied */
      unknown_to_janitor(x);
      PT_RETURN(pt, past_deadline(x, "the multi making the nodes was"));
    }
    if (x->zrc == ZCONNECTIONLOSS || x->zrc == ZOPERATIONTIMEOUT) {
      unknown_to_janitor(x); /* and a new multi, with a new prefix */
      continue;
    }
    if (x->zrc == ZNONODE && ++x->makes < MAKE_TRIES) {
      /* a path (or its parents) missing: all of them made (the multi
       * names only the first it found), then the multi again */
      if (roots_send(x) != 0) {
        roots_end(x);
        PT_RETURN(pt, zkl__fail(ZKL_ENOMEM, "no memory"));
      }
      PT_AWAIT_ANSWER(op, pt, x->pz[m->n - 1], x->call.dl);
      roots_end(x);
      continue;
    }
    if (x->zrc != ZOK) {
      int zrc = x->zrc;
      if ((zrc == ZSESSIONEXPIRED || zrc == ZINVALIDSTATE ||
           zrc == ZCLOSING) && ++x->lapses < MAKE_TRIES)
        continue; /* connected() waits for a new session, or says ELOST */
      PT_RETURN(pt, zkl__fail(zrc, "%s: cannot queue: %s",
                              m->c[x->missing].root, zerror(zrc)));
    }
    /* the token: our nodes' czxid (one for all), read from the first */
    for (;;) {
      x->z = zkl__zk_exists_send(m->s, m->c[0].node, 0);
      PT_AWAIT_ANSWER(op, pt, x->z, x->call.dl);
      {
        struct Stat st;
        memset(&st, 0, sizeof st);
        x->zrc = zkl__zk_exists_wait(x->z, x->call.dl, &st);
        x->z = NULL;
        if (x->zrc == ZOK)
          for (size_t i = 0; i < m->n; i++) {
            m->c[i].czxid = st.czxid;
            m->c[i].owner = st.ephemeralOwner;
            m->c[i].session_id = st.ephemeralOwner;
          }
      }
      if (x->zrc != ZCONNECTIONLOSS && x->zrc != ZOPERATIONTIMEOUT) break;
      PT_CALL(pt, x->rc, zkl__op_connected(op, x->call.deadline));
      if (x->rc != 0) break;
    }
    if (x->zrc != ZOK) {
      /* not read: the nodes go, and the lock is tried again (a node
       * gone, a session lost) or fails */
      x->rc = x->zrc == ZNONODE || x->rc == ZKL_ELOST ? ZKL__VANISHED
              : x->zrc == ZKL__ZTIMEDOUT || x->rc == ZKL_ETIMEDOUT
                  ? past_deadline(x, "the token's read was")
              : x->rc == ZKL_ECANCELED
                  ? zkl__fail(ZKL_ECANCELED, "%s: the lock was canceled",
                              m->c[0].root)
                  : zkl__fail(x->zrc, "%s: cannot read our node: %s",
                              m->c[0].root, zerror(x->zrc));
      /* never queued: deleted without the release mark (which would
       * tell the waiter behind that everything below it is gone) */
      for (size_t i = 0; i < m->n; i++) zkl__contend_forsake(&m->c[i]);
      if (x->rc != ZKL__VANISHED) PT_RETURN(pt, x->rc);
      goto again;
    }
    x->rewaits = 0;
  wait_all:
    /* n waits, one per queue, at once */
    x->stopped = 0;
    subs_start(x, SUB_ACQUIRE);
    PT_AWAIT(op, pt, all_ended(x) || zkl__op_canceled(op) || one_failed(x),
             ZKL__FOREVER);
    if (!all_ended(x)) {
      subs_stop(x);
      PT_AWAIT(op, pt, all_ended(x), ZKL__FOREVER);
    }
    x->rc = verdict(op, x);
    for (size_t i = 0; x->rc == 0 && i < m->n; i++)
      if (m->c[i].node == NULL) x->rc = ZKL__VANISHED; /* never partial */
    if (x->rc == 0 && m->n > 1) {
      if (looks_send(x) != 0) {
        x->rc = zkl__fail(ZKL_ENOMEM, "no memory");
      } else {
        PT_AWAIT_ANSWER(op, pt, x->ez[m->n - 1], x->call.dl);
        x->rc = looks_end(x);
      }
      if (x->rc == ZKL_ESUSPENDED && x->call.deadline != ZKL__TRY &&
          ++x->rewaits < REWAITS)
        goto wait_all; /* each acquisition confirms its node once back */
    }
    if (x->rc == 0) {
      x->rc = grant_rule(x);
      if (x->rc == ZKL_ESUSPENDED && x->call.deadline != ZKL__TRY &&
          ++x->rewaits < REWAITS)
        goto wait_all; /* each acquisition confirms its node once back */
    }
    if (x->rc == 0) {
      pthread_mutex_lock(&m->calls.own.mu);
      m->held = 1;
      x->token = (uint64_t)m->c[0].czxid;
      pthread_mutex_unlock(&m->calls.own.mu);
      PT_RETURN(pt, 0);
    }
    /* all or none: what was granted goes, released as holders (those
     * not granted gave their nodes up as they failed) */
    x->saved = x->rc;
    subs_start(x, SUB_GIVE_UP);
    PT_AWAIT(op, pt, all_ended(x), ZKL__FOREVER);
    x->rc = x->saved;
    if (x->rc != ZKL__VANISHED) PT_RETURN(pt, x->rc);
  again:
    if (++x->vanished >= VANISH_TRIES)
      PT_RETURN(pt, zkl__fail(ZKL_EPROTO, "%s: our nodes keep vanishing",
                              m->c[0].root));
  }
  PT_END(pt);
  return 0;
}

/* ---- the unlock --------------------------------------------------------------- */

static int unlock_step(zkl__op_t *op, void *ctx) {
  mcall_t *x = ctx;
  zkl_multilock_t *m = x->m;
  pt_t *pt = &x->pt;
  (void)op;
  PT_BEGIN(pt);
  pthread_mutex_lock(&m->calls.own.mu);
  x->rc = m->held;
  m->held = 0;
  pthread_mutex_unlock(&m->calls.own.mu);
  if (!x->rc)
    PT_RETURN(pt, zkl__fail(ZKL_EPERM, "%s: the object holds nothing",
                            m->c[0].root));
  x->lost = 0;
  for (size_t i = 0; i < m->n; i++) x->lost |= m->c[i].node == NULL;
  subs_start(x, SUB_RELEASE);
  PT_AWAIT(op, pt, all_ended(x), ZKL__FOREVER);
  {
    int rc = x->lost ? ZKL_ELOST : 0;
    size_t at = 0;
    for (size_t i = 0; i < m->n; i++) {
      int r = x->rcs[i];
      /* the worst: ZooKeeper's own, then ELOST, then ESUSPENDED */
      if (r == 0 || r == rc) continue;
      if (rc == 0 || (r != ZKL_ELOST && r != ZKL_ESUSPENDED) ||
          (r == ZKL_ELOST && rc == ZKL_ESUSPENDED)) {
        rc = r;
        at = i;
      }
    }
    if (rc == ZKL_ELOST)
      PT_RETURN(pt, zkl__fail(rc, "%s: a lock was gone before the unlock "
                              "(session lost, or a node deleted)",
                              m->c[at].root));
    if (rc == ZKL_ESUSPENDED)
      PT_RETURN(pt, zkl__fail(rc, "%s: the connection is down: the janitor "
                              "deletes the nodes once it is back",
                              m->c[at].root));
    if (rc != 0)
      PT_RETURN(pt, zkl__fail(rc, "%s: %s", m->c[at].root,
                              x->details[at] != NULL ? x->details[at]
                                                     : zerror(rc)));
  }
  PT_RETURN(pt, 0);
  PT_END(pt);
  return 0;
}

/* ---- calls ---------------------------------------------------------------------- */

static void mcall_release(zkl__call_t *c) {
  mcall_t *x = (mcall_t *)c;
  roots_end(x);
  free(x->ez); /* its requests' answers taken: only ever freed here */
  for (size_t i = 0; x->details != NULL && i < x->n; i++)
    free(x->details[i]);
  free(x->details);
  free(x->rcs);
  free(x->subs);
  free(c->detail);
  free(x);
}

/* Gives up what the object holds without a request (from dispatch): the
 * nodes go to the janitor, or with their session. */
static void give_up(zkl_multilock_t *m) {
  pthread_mutex_lock(&m->calls.own.mu);
  m->held = 0;
  pthread_mutex_unlock(&m->calls.own.mu);
  for (size_t i = 0; i < m->n; i++) zkl__contend_forsake(&m->c[i]);
}

/* The object's hold by the rule of every grant: 0, ZKL_ESUSPENDED or
 * ZKL_ELOST (the worst of its nodes'). */
static int hold_health(zkl_multilock_t *m) {
  int h = 0;
  for (size_t i = 0; i < m->n && h != ZKL_ELOST; i++) {
    int k = m->c[i].node == NULL ? ZKL_ELOST
                                 : zkl__contend_hold_health(&m->c[i]);
    if (k != 0) h = k;
  }
  return h;
}

/* At dispatch: a grant is reported only while it holds; one in doubt or
 * lost by then is given up and reported so. */
static void mcall_check(zkl__call_t *c) {
  mcall_t *x = (mcall_t *)c;
  if (x->unlock || c->rc != 0) return;
  int h = hold_health(x->m);
  if (h == 0) return;
  give_up(x->m);
  zkl__call_report(c, h, h == ZKL_ELOST
                             ? "granted, but the session was lost before the "
                               "completion was dispatched"
                             : "granted, but the connection went down before "
                               "the completion was dispatched: the locks are "
                               "given up");
}

static void mcall_deliver(zkl__call_t *c) {
  mcall_t *x = (mcall_t *)c;
  c->cb(c->obj, c->rc, c->rc == 0 ? x->token : 0, c->arg);
}

static int null_multilock(void) {
  return zkl__fail(ZKL_EINVAL, "multi-lock is NULL");
}

static mcall_t *mcall_new(zkl_multilock_t *m, int unlock,
                          int64_t timeout_ms) {
  mcall_t *x = calloc(1, sizeof *x);
  if (x != NULL) {
    x->m = m;
    x->n = m->n;
    x->rcs = calloc(m->n, sizeof *x->rcs);
    x->details = calloc(m->n, sizeof *x->details);
    x->subs = calloc(m->n, sizeof *x->subs);
  }
  if (x == NULL || x->rcs == NULL || x->details == NULL || x->subs == NULL) {
    if (x != NULL) {
      free(x->rcs);
      free(x->details);
      free(x->subs);
      free(x);
    }
    zkl__fail(ZKL_ENOMEM, "no memory for a multi-lock call");
    return NULL;
  }
  for (size_t i = 0; i < m->n; i++) x->subs[i] = (sub_t){x, i};
  zkl__call_init(&x->call, &m->calls, m, timeout_ms);
  x->call.release = mcall_release;
  x->call.deliver = mcall_deliver;
  x->call.check = mcall_check;
  x->unlock = unlock;
  return x;
}

static int run(zkl_multilock_t *m, int unlock, int64_t timeout_ms) {
  zkl__clear_error();
  if (m == NULL) return null_multilock();
  mcall_t *x = mcall_new(m, unlock, timeout_ms);
  if (x == NULL) return ZKL_ENOMEM;
  int rc = zkl__call_blocking(&x->call, &m->home,
                              unlock ? unlock_step : lock_step);
  mcall_release(&x->call);
  return rc;
}

static int run_async(zkl_multilock_t *m, int unlock, int64_t timeout_ms,
                     zkl_done_fn cb, void *arg) {
  zkl__clear_error();
  if (m == NULL) return null_multilock();
  if (cb == NULL) return zkl__fail(ZKL_EINVAL, "the callback is NULL");
  if (unlock) { /* refused at once, as the mutex's */
    pthread_mutex_lock(&m->calls.own.mu);
    int held = m->held;
    pthread_mutex_unlock(&m->calls.own.mu);
    if (!held)
      return zkl__fail(ZKL_EPERM, "%s: the object holds nothing",
                       m->c[0].root);
  }
  mcall_t *x = mcall_new(m, unlock, timeout_ms);
  if (x == NULL) return ZKL_ENOMEM;
  x->call.cb = cb;
  x->call.arg = arg;
  return zkl__call_async(&x->call, &m->home,
                         unlock ? unlock_step : lock_step);
}

/* ---- the public calls -------------------------------------------------------- */

void zkl_multilock_opts_init(zkl_multilock_opts_t *opts) {
  if (opts != NULL) memset(opts, 0, sizeof *opts);
}

static void contenders_fini(zkl_multilock_t *m, size_t made) {
  for (size_t i = 0; i < made; i++) zkl__contender_fini(&m->c[i]);
}

int zkl_multilock_create(zkl_multilock_t **out, zkl_session_t *s,
                         const char *const *paths, size_t n,
                         const zkl_multilock_opts_t *opts) {
  zkl__clear_error();
  if (out == NULL) return zkl__fail(ZKL_EINVAL, "out is NULL");
  *out = NULL;
  if (paths == NULL) return zkl__fail(ZKL_EINVAL, "paths is NULL");
  if (n == 0 || n > ZKL_MULTILOCK_MAX)
    return zkl__fail(ZKL_EINVAL, "%zu paths: a multi-lock takes 1 to %d", n,
                     ZKL_MULTILOCK_MAX);
  const void *data = opts != NULL ? opts->data : NULL;
  size_t len = opts != NULL ? opts->data_len : 0;
  for (size_t i = 0; i < n; i++) {
    int rc = zkl__check_recipe_args(s, paths[i], data, len);
    if (rc != 0) return rc;
    for (size_t j = 0; j < i; j++)
      if (strcmp(paths[i], paths[j]) == 0)
        return zkl__fail(ZKL_EINVAL, "%s is given twice", paths[i]);
  }
  zkl_multilock_t *m = calloc(1, sizeof *m);
  if (m == NULL) return zkl__fail(ZKL_ENOMEM, "no memory for a multi-lock");
  m->s = s;
  m->n = n;
  m->c = calloc(n, sizeof *m->c);
  int rc = m->c == NULL ? ZKL_ENOMEM
           : pthread_mutex_init(&m->mu, NULL) != 0 ? ZKL_ESYSTEM
                                                   : 0;
  if (rc != 0) {
    free(m->c);
    free(m);
    return zkl__fail(rc, "cannot make a multi-lock");
  }
  rc = zkl__calls_init(&m->calls, s, "multi-lock");
  int calls = rc == 0, home = 0;
  size_t made = 0;
  if (rc == 0) {
    rc = zkl__contender_init(&m->home, s, &zkl__driver_mutex, paths[0], data,
                             len, &m->calls.own.cancel_gen);
    home = rc == 0;
  }
  for (; rc == 0 && made < n; made++) {
    rc = zkl__contender_init(&m->c[made], s, &zkl__driver_mutex, paths[made],
                             data, len, &m->sub_cancel);
    if (rc != 0) break;
    m->c[made].premade = 1;
  }
  if (rc != 0) {
    contenders_fini(m, made);
    if (home) zkl__contender_fini(&m->home);
    if (calls) zkl__calls_fini(&m->calls);
    pthread_mutex_destroy(&m->mu);
    free(m->c);
    free(m);
    return zkl__fail(rc, rc == ZKL_ENOMEM ? "no memory for a multi-lock"
                                          : "cannot make a multi-lock");
  }
  *out = m;
  return 0;
}

int zkl_multilock_lock(zkl_multilock_t *m) { return run(m, 0, -1); }
int zkl_multilock_trylock(zkl_multilock_t *m) { return run(m, 0, 0); }
int zkl_multilock_timedlock(zkl_multilock_t *m, int64_t timeout_ms) {
  return run(m, 0, timeout_ms);
}
int zkl_multilock_unlock(zkl_multilock_t *m) { return run(m, 1, -1); }

int zkl_multilock_lock_async(zkl_multilock_t *m, int64_t timeout_ms,
                             zkl_done_fn cb, void *arg) {
  return run_async(m, 0, timeout_ms, cb, arg);
}
int zkl_multilock_unlock_async(zkl_multilock_t *m, zkl_done_fn cb,
                               void *arg) {
  return run_async(m, 1, -1, cb, arg);
}

int zkl_multilock_cancel(zkl_multilock_t *m) {
  zkl__clear_error();
  if (m == NULL) return null_multilock();
  zkl__owner_cancel(&m->calls.own);
  zkl__contend_cancel(&m->home);
  return 0;
}

int zkl_multilock_holding(zkl_multilock_t *m) {
  zkl__clear_error();
  if (m == NULL) return null_multilock();
  pthread_mutex_lock(&m->calls.own.mu);
  int held = m->held;
  int h = held ? hold_health(m) : 0;
  pthread_mutex_unlock(&m->calls.own.mu);
  if (!held) return 0;
  return h == 0 ? 1 : h;
}

size_t zkl_multilock_count(const zkl_multilock_t *m) {
  return m != NULL ? m->n : 0;
}

/* With own.mu held: the node behind paths[i] of the hold, or an error. */
static int held_node(zkl_multilock_t *m, size_t i) {
  if (i >= m->n)
    return zkl__fail(ZKL_EINVAL, "path %zu of %zu", i, m->n);
  if (!m->held || m->c[i].node == NULL)
    return zkl__fail(ZKL_EPERM, "%s: the object holds nothing",
                     m->c[i].root);
  return 0;
}

int zkl_multilock_token(zkl_multilock_t *m, size_t i, uint64_t *token) {
  zkl__clear_error();
  if (m == NULL) return null_multilock();
  if (token == NULL) return zkl__fail(ZKL_EINVAL, "token is NULL");
  pthread_mutex_lock(&m->calls.own.mu);
  int rc = held_node(m, i);
  if (rc == 0) *token = (uint64_t)m->c[i].czxid;
  pthread_mutex_unlock(&m->calls.own.mu);
  return rc;
}

int zkl_multilock_node(zkl_multilock_t *m, size_t i, char *buf, size_t len) {
  zkl__clear_error();
  if (m == NULL) return null_multilock();
  if (buf == NULL) return zkl__fail(ZKL_EINVAL, "buf is NULL");
  pthread_mutex_lock(&m->calls.own.mu);
  int rc = held_node(m, i);
  if (rc == 0 && (size_t)snprintf(buf, len, "%s", m->c[i].node) >= len)
    rc = zkl__fail(ZKL_EINVAL, "the buffer is too small for %s",
                   m->c[i].node);
  pthread_mutex_unlock(&m->calls.own.mu);
  return rc;
}

static void kick(void *arg) { zkl_multilock_cancel(arg); }

void zkl_multilock_destroy(zkl_multilock_t *m) {
  if (m == NULL) return;
  zkl__calls_drain(&m->calls, kick, m);
  /* what is still held is released (an async grant never dispatched too) */
  if (m->held)
    for (size_t i = 0; i < m->n; i++)
      if (m->c[i].node != NULL) zkl__contend_release(&m->c[i]);
  contenders_fini(m, m->n);
  zkl__contender_fini(&m->home);
  zkl__calls_fini(&m->calls);
  pthread_mutex_destroy(&m->mu);
  free(m->c);
  free(m);
}
