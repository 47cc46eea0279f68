/* lib/recipes/barrier.c - the barrier and the double barrier (see
 * zkl/barrier.h for the formats and what zkl adds to the peers'
 * protocols).
 *
 * Both objects are made of calls of the call base (core/call.c), each run
 * as an operation of the object's one contender, `c`, which makes no node
 * of its own: its waiter is what a wait waits on (an existence watch on
 * the barrier's node, on `ready`, or on the member a leaver waits for). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zookeeper/zookeeper.h>

#include "core/contend.h"
#include "zkl/barrier.h"

#define READY "ready"
#define NAME_LEN 36     /* a member: a UUID as Curator writes it          */
#define MAKE_TRIES 8    /* a create that meets a missing parent, or a lost
                           answer, before it gives up                     */
#define DROP_GRACE_NS 500000000LL /* a give-up's delete: its answer's wait */
#define CHECKS_MAX 4096 /* the members one `ready` multi checks (about
                           200 KB of request, well under jute.maxbuffer) */

/* ---- shared by both objects ------------------------------------------------------ */

/* The part both objects start with. */
typedef struct bobj {
  zkl__calls_t calls; /* one call at a time; the cancel generation */
  zkl_session_t *s;
  char *path;
  zkl__contender_t c; /* its operations are the calls; it makes no node */
} bobj_t;

enum { B_SET, B_REMOVE, B_WAIT, D_ENTER, D_LEAVE, D_COUNT };

typedef struct bcall {
  zkl__call_t call; /* first: the call base */
  bobj_t *o;
  int kind;
  pt_t pt, pt_sub;
  int rc, zrc, tries, made_parents;
  int saved;                 /* a result kept across a clean-up's waits */
  int unsure;                /* a member create's outcome is unknown    */
  int64_t unsure_sid;        /* on this session                         */
  int64_t until;             /* drop_member's wait                       */
  int checked;               /* a give-up's checked delete was sent      */
  int doubt;                 /* a give-up that could not check its delete:
                                an opening may have counted our node      */
  unsigned epoch;
  zkl__zcall_t *z, *z2, **zs;
  size_t nzs;
  struct String_vector kids; /* a double barrier's members, sorted    */
  size_t n;                  /* how many (without `ready`)            */
  int ready;                 /* `ready` was there at the last look     */
  char watch[NAME_LEN + 32]; /* the member a leaver waits for         */
} bcall_t;

static int bobj_init(bobj_t *b, zkl_session_t *s, const char *path,
                     const char *what, const void *data, size_t len) {
  b->s = s;
  b->path = strdup(path);
  int rc = b->path == NULL ? ZKL_ENOMEM : zkl__calls_init(&b->calls, s, what);
  if (rc == 0) {
    rc = zkl__contender_init(&b->c, s, &zkl__driver_mutex, path, data, len,
                             &b->calls.own.cancel_gen);
    if (rc != 0) zkl__calls_fini(&b->calls);
  }
  if (rc != 0) free(b->path);
  return rc;
}

static void bobj_fini(bobj_t *b) {
  zkl__contender_fini(&b->c);
  zkl__calls_fini(&b->calls);
  free(b->path);
}

static int map_zrc(bobj_t *b, int zrc, const char *what) {
  return zkl__zrc_fail(b->s, zrc, what, b->path);
}

static int lost_answer(int zrc) {
  return zrc == ZCONNECTIONLOSS || zrc == ZOPERATIONTIMEOUT;
}

static int not_connected(bcall_t *x, int rc) {
  if (rc != ZKL_ETIMEDOUT) return rc;
  if (x->kind == B_SET || x->kind == B_REMOVE || x->kind == D_COUNT)
    return zkl__fail(ZKL_ESUSPENDED, "not connected to ZooKeeper within a "
                     "session timeout");
  return x->call.deadline == ZKL__TRY
             ? zkl__fail(ZKL_ESUSPENDED, "not connected to ZooKeeper")
             : zkl__fail(ZKL_ETIMEDOUT, "not connected to ZooKeeper before "
                         "the deadline");
}

/* The waiter watches `path`'s parent-relative `name` (NULL: path itself);
 * the strings must outlive the wait. */
static void watch_begin(bcall_t *x, const char *parent, const char *name) {
  bobj_t *b = x->o;
  zkl__session_lock(b->s);
  if (name == NULL) zkl__waiter_register(b->s, &b->c.w, parent);
  else zkl__waiter_register_child(b->s, &b->c.w, parent, name);
  x->epoch = zkl__session_epoch(b->s);
  zkl__session_unlock(b->s);
}

/* After an await: 1 look again, or the call's end (ETIMEDOUT/ECANCELED
 * with a detail). */
static int after_wait(bcall_t *x, int why, const char *what) {
  if (why == ZKL_ETIMEDOUT)
    return zkl__fail(ZKL_ETIMEDOUT, "%s %s: not before the deadline", what,
                     x->o->path);
  if (why == ZKL_ECANCELED)
    return zkl__fail(ZKL_ECANCELED, "%s %s: canceled", what, x->o->path);
  return 1;
}

static void bcall_release(zkl__call_t *c) {
  bcall_t *x = (bcall_t *)c;
  zkl__zk_parents_end(x->zs, x->nzs);
  zkl__zk_children_free(&x->kids);
  free(c->detail);
  free(x);
}

static bcall_t *bcall_new(bobj_t *b, int kind, int64_t timeout_ms) {
  bcall_t *x = calloc(1, sizeof *x);
  if (x == NULL) {
    zkl__fail(ZKL_ENOMEM, "no memory for a barrier call");
    return NULL;
  }
  zkl__call_init(&x->call, &b->calls, b, timeout_ms);
  x->call.release = bcall_release;
  x->o = b;
  x->kind = kind;
  return x;
}

/* ---- the barrier -------------------------------------------------------------------- */

struct zkl_barrier {
  bobj_t b; /* first */
};

static int set_step(zkl__op_t *op, void *ctx) {
  bcall_t *x = ctx;
  bobj_t *b = x->o;
  pt_t *pt = &x->pt;
  PT_BEGIN(pt);
  PT_CALL(pt, x->rc, zkl__op_connected(op, x->call.deadline));
  if (x->rc != 0) PT_RETURN(pt, not_connected(x, x->rc));
  for (x->tries = 0;; x->tries++) {
    if (x->tries > 0) {
      x->zs = zkl__zk_parents_send(b->s, b->path, &x->nzs);
      if (x->zs == NULL) PT_RETURN(pt, zkl__fail(ZKL_ENOMEM, "no memory"));
    }
    x->z = zkl__zk_create_send(b->s, b->path, "", 0, 0);
    PT_AWAIT_ANSWER(op, pt, x->z, ZKL__FOREVER);
    x->zrc = zkl__zk_create_wait(x->z, ZKL__TRY, NULL, NULL);
    x->z = NULL;
    zkl__zk_parents_end(x->zs, x->nzs);
    x->zs = NULL;
    if (x->zrc == ZOK || x->zrc == ZNODEEXISTS) PT_RETURN(pt, 0);
    if (x->zrc != ZNONODE || x->tries + 1 >= MAKE_TRIES)
      PT_RETURN(pt, map_zrc(b, x->zrc, "set the barrier"));
  }
  PT_END(pt);
  return 0;
}

static int remove_step(zkl__op_t *op, void *ctx) {
  bcall_t *x = ctx;
  bobj_t *b = x->o;
  pt_t *pt = &x->pt;
  PT_BEGIN(pt);
  PT_CALL(pt, x->rc, zkl__op_connected(op, x->call.deadline));
  if (x->rc != 0) PT_RETURN(pt, not_connected(x, x->rc));
  x->z = zkl__zk_delete_send(b->s, b->path);
  PT_AWAIT_ANSWER(op, pt, x->z, ZKL__FOREVER);
  x->zrc = zkl__zk_wait(x->z, ZKL__TRY);
  x->z = NULL;
  if (x->zrc == ZOK) PT_RETURN(pt, 0);
  if (x->zrc == ZNONODE)
    PT_RETURN(pt, zkl__fail(ZKL_ENOENT, "the barrier %s was not set",
                            b->path));
  PT_RETURN(pt, map_zrc(b, x->zrc, "remove the barrier"));
  PT_END(pt);
  return 0;
}

static int wait_step(zkl__op_t *op, void *ctx) {
  bcall_t *x = ctx;
  bobj_t *b = x->o;
  pt_t *pt = &x->pt;
  PT_BEGIN(pt);
  for (;;) {
    PT_CALL(pt, x->rc, zkl__op_connected(op, x->call.deadline));
    if (x->rc != 0) PT_RETURN(pt, not_connected(x, x->rc));
    watch_begin(x, b->path, NULL);
    x->z = zkl__zk_exists_send(b->s, b->path, 1);
    PT_AWAIT_ANSWER(op, pt, x->z, x->call.dl);
    x->zrc = zkl__zk_exists_wait(x->z, ZKL__TRY, NULL);
    x->z = NULL;
    if (x->zrc == ZNONODE) {
      zkl__op_unwait(op);
      PT_RETURN(pt, 0);
    }
    if (x->zrc != ZOK) {
      zkl__op_unwait(op);
      if (lost_answer(x->zrc)) continue;
      PT_RETURN(pt, map_zrc(b, x->zrc, "wait on the barrier"));
    }
    PT_CALL(pt, x->zrc, zkl__op_await(op, x->epoch, x->call.deadline));
    x->rc = after_wait(x, x->zrc, "the barrier");
    if (x->rc != 1) PT_RETURN(pt, x->rc);
  }
  PT_END(pt);
  return 0;
}

static zkl__step_fn barrier_step(int kind) {
  return kind == B_SET ? set_step : kind == B_REMOVE ? remove_step : wait_step;
}

static int null_barrier(void) {
  return zkl__fail(ZKL_EINVAL, "barrier is NULL");
}

static int barrier_run(zkl_barrier_t *b, int kind, int64_t timeout_ms) {
  zkl__clear_error();
  if (b == NULL) return null_barrier();
  bcall_t *x = bcall_new(&b->b, kind, timeout_ms);
  if (x == NULL) return ZKL_ENOMEM;
  int rc = zkl__call_blocking(&x->call, &b->b.c, barrier_step(kind));
  bcall_release(&x->call);
  return rc;
}

static int barrier_async(zkl_barrier_t *b, int kind, int64_t timeout_ms,
                         zkl_done_fn cb, void *arg) {
  zkl__clear_error();
  if (b == NULL) return null_barrier();
  if (cb == NULL) return zkl__fail(ZKL_EINVAL, "the callback is NULL");
  bcall_t *x = bcall_new(&b->b, kind, timeout_ms);
  if (x == NULL) return ZKL_ENOMEM;
  x->call.cb = cb;
  x->call.arg = arg;
  return zkl__call_async(&x->call, &b->b.c, barrier_step(kind));
}

int zkl_barrier_create(zkl_barrier_t **out, zkl_session_t *s,
                       const char *path) {
  zkl__clear_error();
  if (out == NULL) return zkl__fail(ZKL_EINVAL, "out is NULL");
  *out = NULL;
  int rc = zkl__check_recipe_args(s, path, NULL, 0);
  if (rc != 0) return rc;
  if (strcmp(path, "/") == 0)
    return zkl__fail(ZKL_EINVAL, "a barrier cannot be at /");
  zkl_barrier_t *b = calloc(1, sizeof *b);
  if (b == NULL) return zkl__fail(ZKL_ENOMEM, "no memory for a barrier");
  rc = bobj_init(&b->b, s, path, "barrier", NULL, 0);
  if (rc != 0) {
    free(b);
    return zkl__fail(rc, "no memory for a barrier");
  }
  *out = b;
  return 0;
}

int zkl_barrier_set(zkl_barrier_t *b) {
  return barrier_run(b, B_SET, b != NULL ? zkl_session_timeout(b->b.s) : 0);
}
int zkl_barrier_remove(zkl_barrier_t *b) {
  return barrier_run(b, B_REMOVE,
                     b != NULL ? zkl_session_timeout(b->b.s) : 0);
}
int zkl_barrier_wait(zkl_barrier_t *b, int64_t timeout_ms) {
  return barrier_run(b, B_WAIT, timeout_ms);
}
int zkl_barrier_set_async(zkl_barrier_t *b, zkl_done_fn cb, void *arg) {
  return barrier_async(b, B_SET, b != NULL ? zkl_session_timeout(b->b.s) : 0,
                       cb, arg);
}
int zkl_barrier_remove_async(zkl_barrier_t *b, zkl_done_fn cb, void *arg) {
  return barrier_async(b, B_REMOVE,
                       b != NULL ? zkl_session_timeout(b->b.s) : 0, cb, arg);
}
int zkl_barrier_wait_async(zkl_barrier_t *b, int64_t timeout_ms,
                           zkl_done_fn cb, void *arg) {
  return barrier_async(b, B_WAIT, timeout_ms, cb, arg);
}

int zkl_barrier_cancel(zkl_barrier_t *b) {
  zkl__clear_error();
  if (b == NULL) return null_barrier();
  zkl__owner_cancel(&b->b.calls.own);
  zkl__contend_cancel(&b->b.c);
  return 0;
}

static void barrier_kick(void *arg) { zkl_barrier_cancel(arg); }

void zkl_barrier_destroy(zkl_barrier_t *b) {
  if (b == NULL) return;
  zkl__calls_drain(&b->b.calls, barrier_kick, b);
  bobj_fini(&b->b);
  free(b);
}

/* ---- the double barrier --------------------------------------------------------------- */

struct zkl_dbarrier {
  bobj_t b; /* first */
  int members;
  char *ready;             /* <path>/ready                              */
  char name[NAME_LEN + 1]; /* our member node's name                    */
  char *node;              /* <path>/<name>                             */
  /* under calls.own.mu: */
  int in;                  /* entered, not left                         */
  /* used by the call underway only: */
  int made;                /* our node is there (made on made_sid)      */
  int64_t made_sid;
};

static zkl_dbarrier_t *dbar(bcall_t *x) { return (zkl_dbarrier_t *)x->o; }

static int name_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lists the members (without `ready`, sorted) into x->kids / x->n, and
 * with `ready` whether it is there.  0, or a ZooKeeper code. */
static int members_take(bcall_t *x, zkl__zcall_t *z) {
  zkl__zk_children_free(&x->kids);
  x->n = 0;
  x->ready = 0;
  int zrc = zkl__zk_children_wait(z, ZKL__TRY, &x->kids);
  if (zrc == ZNONODE) return ZOK;
  if (zrc != ZOK) return zrc;
  size_t n = 0;
  for (int i = 0; i < x->kids.count; i++) {
    if (strcmp(x->kids.data[i], READY) == 0) x->ready = 1;
    else x->kids.data[n++] = x->kids.data[i];
  }
  x->n = n;
  if (n > 1) qsort(x->kids.data, n, sizeof *x->kids.data, name_cmp);
  return ZOK;
}

static int is_member(const bcall_t *x, const char *name) {
  return x->n > 0 && bsearch(&name, x->kids.data, x->n,
                             sizeof *x->kids.data, name_cmp) != NULL;
}

/* Makes our member node (and the path, a CONTAINER, and its parents when
 * missing).  A create whose answer was lost is sent again: the name is
 * ours alone, so ZNODEEXISTS on our session means it was made. */
static int make_member(zkl__op_t *op, bcall_t *x) {
  zkl_dbarrier_t *d = dbar(x);
  bobj_t *b = x->o;
  pt_t *pt = &x->pt_sub;
  PT_BEGIN(pt);
  for (x->tries = 0;; x->tries++) {
    PT_CALL(pt, x->rc, zkl__op_connected(op, x->call.deadline));
    if (x->rc != 0) PT_RETURN(pt, not_connected(x, x->rc));
    if (x->unsure && zkl_session_id(b->s) != x->unsure_sid) x->unsure = 0;
    x->unsure_sid = zkl_session_id(b->s);
    if (x->made_parents) {
      x->zs = zkl__zk_parents_send(b->s, d->node, &x->nzs);
      if (x->zs == NULL) PT_RETURN(pt, zkl__fail(ZKL_ENOMEM, "no memory"));
    }
    x->z = zkl__zk_create_send(b->s, d->node, b->c.data, b->c.data_len,
                               ZOO_EPHEMERAL);
    PT_AWAIT_ANSWER(op, pt, x->z, ZKL__FOREVER);
    {
      struct Stat st;
      memset(&st, 0, sizeof st);
      x->zrc = zkl__zk_create_wait(x->z, ZKL__TRY, NULL, &st);
      x->z = NULL;
      zkl__zk_parents_end(x->zs, x->nzs);
      x->zs = NULL;
      if (x->zrc == ZOK) {
        d->made = 1;
        d->made_sid = st.ephemeralOwner;
        PT_RETURN(pt, 0);
      }
    }
    if (x->zrc == ZNODEEXISTS) { /* an earlier try of ours made it */
      x->z = zkl__zk_exists_send(b->s, d->node, 0);
      PT_AWAIT_ANSWER(op, pt, x->z, x->call.dl);
      {
        struct Stat st;
        memset(&st, 0, sizeof st);
        x->zrc = zkl__zk_exists_wait(x->z, ZKL__TRY, &st);
        x->z = NULL;
        if (x->zrc == ZOK && st.ephemeralOwner == zkl_session_id(b->s)) {
          d->made = 1;
          d->made_sid = st.ephemeralOwner;
          PT_RETURN(pt, 0);
        }
      }
      if (x->zrc == ZOK) {
        /* made by an earlier session of ours (its create's answer lost,
         * the session declared lost by zkl before the server expired
         * it): the name is this object's alone, so it is ours to delete,
         * before it is counted as a member nobody is */
        x->z = zkl__zk_delete_send(b->s, d->node);
        PT_AWAIT_ANSWER(op, pt, x->z, x->call.dl);
        x->zrc = zkl__zk_wait(x->z, ZKL__TRY);
        x->z = NULL;
        if (x->zrc != ZOK && x->zrc != ZNONODE && !lost_answer(x->zrc))
          PT_RETURN(pt, map_zrc(b, x->zrc, "enter"));
        x->zrc = ZCONNECTIONLOSS; /* try again (counted) */
      }
    }
    if (x->zrc == ZNONODE) x->made_parents = 1;
    else if (lost_answer(x->zrc) || x->zrc == ZKL__ZTIMEDOUT) x->unsure = 1;
    else PT_RETURN(pt, map_zrc(b, x->zrc, "enter"));
    if (x->tries + 1 >= MAKE_TRIES)
      PT_RETURN(pt, map_zrc(b, x->zrc, "enter"));
  }
  PT_END(pt);
  return 0;
}

/* Deletes our member node (gone already is fine).  0; ZKL_ESUSPENDED: the
 * answer was lost, the janitor deletes it once the connection is back. */
static int drop_member(zkl__op_t *op, bcall_t *x) {
  zkl_dbarrier_t *d = dbar(x);
  bobj_t *b = x->o;
  pt_t *pt = &x->pt_sub;
  PT_BEGIN(pt);
  if (!d->made) PT_RETURN(pt, 0);
  if (d->made_sid != zkl_session_id(b->s) || zkl__session_gone(b->s)) {
    d->made = 0; /* it went with its session */
    PT_RETURN(pt, 0);
  }
  x->z = zkl__zk_delete_send(b->s, d->node);
  /* its answer until the call's deadline, or a moment past one that has
   * passed (a dead connection is declared so only 2/3 of a session
   * timeout later): not answered by then, the janitor takes over */
  x->until = x->call.dl;
  if (x->until != ZKL__FOREVER && x->until < zkl__now_ns() + DROP_GRACE_NS)
    x->until = zkl__now_ns() + DROP_GRACE_NS;
  PT_AWAIT_ANSWER(op, pt, x->z, x->until);
  x->zrc = zkl__zk_wait(x->z, ZKL__TRY);
  x->z = NULL;
  if (x->zrc == ZOK || x->zrc == ZNONODE || zkl__session_gone(b->s)) {
    d->made = 0;
    PT_RETURN(pt, 0);
  }
  zkl__janitor_add_owned(b->s, d->node, b->c.data, b->c.data_len);
  d->made = 0;
  PT_RETURN(pt, zkl__fail(ZKL_ESUSPENDED, "the connection went down as %s "
                          "was deleted: the janitor deletes it once it is "
                          "back", d->node));
  PT_END(pt);
  return 0;
}

/* `ready`, made only while every member counted is still there: one
 * multi of a check of each and the create.  0 made (or there), 1 a
 * member counted went meanwhile (count again), or a ZooKeeper code. */
static int make_ready(zkl__op_t *op, bcall_t *x) {
  zkl_dbarrier_t *d = dbar(x);
  bobj_t *b = x->o;
  pt_t *pt = &x->pt_sub;
  PT_BEGIN(pt);
  {
    size_t n = x->n < CHECKS_MAX ? x->n : CHECKS_MAX;
    zkl__mop_t *m = calloc(n + 2, sizeof *m);
    char **paths = calloc(n, sizeof *paths);
    int ok = m != NULL && paths != NULL;
    for (size_t i = 0; ok && i < n; i++) {
      size_t len = strlen(b->path) + strlen(x->kids.data[i]) + 2;
      paths[i] = malloc(len);
      if (paths[i] == NULL) ok = 0;
      else snprintf(paths[i], len, "%s/%s", b->path, x->kids.data[i]);
      m[i] = (zkl__mop_t){.type = ZOO_CHECK_OP, .path = paths[i],
                          .version = -1};
    }
    if (ok) {
      m[n] = (zkl__mop_t){.type = ZOO_CREATE_OP, .path = d->ready,
                          .data = "", .len = 0, .flags = 0};
      /* and the path's data version moves: a member giving up deletes
       * its node only at the version it read, so that it never leaves a
       * barrier this multi opened counting it (enter_step) */
      m[n + 1] = (zkl__mop_t){.type = ZOO_SETDATA_OP, .path = b->path,
                              .data = "", .len = 0, .version = -1};
      x->z = zkl__zk_multi_send(b->s, m, (int)n + 2);
      x->tries = (int)n; /* the create's index */
    }
    for (size_t i = 0; paths != NULL && i < n; i++) free(paths[i]);
    free(paths);
    free(m);
    if (!ok || x->z == NULL)
      PT_RETURN(pt, zkl__fail(ZKL_ENOMEM, "no memory"));
  }
  PT_AWAIT_ANSWER(op, pt, x->z, ZKL__FOREVER);
  {
    int *errs = calloc((size_t)x->tries + 2, sizeof *errs);
    x->zrc = zkl__zk_multi_wait(x->z, ZKL__TRY, errs, NULL);
    x->z = NULL;
    int create_rc = errs != NULL ? errs[x->tries] : x->zrc;
    free(errs);
    if (x->zrc == ZOK || create_rc == ZNODEEXISTS) PT_RETURN(pt, 0);
    if (x->zrc == ZNONODE) PT_RETURN(pt, 1); /* a check: a member went */
    PT_RETURN(pt, x->zrc);
  }
  PT_END(pt);
  return 0;
}

static int enter_step(zkl__op_t *op, void *ctx) {
  bcall_t *x = ctx;
  zkl_dbarrier_t *d = dbar(x);
  bobj_t *b = x->o;
  pt_t *pt = &x->pt;
  PT_BEGIN(pt);
  if (d->in) /* another thread's enter got in while this one waited */
    PT_RETURN(pt, zkl__fail(ZKL_EBUSY, "%s: this member is in already",
                            b->path));
  for (;;) {
    if (!d->made || d->made_sid != zkl_session_id(b->s)) {
      d->made = 0; /* a new session: the old node went with the old one */
      PT_CALL(pt, x->rc, make_member(op, x));
      if (x->rc != 0) goto out; /* not made: nothing to delete */
    }
    PT_CALL(pt, x->rc, zkl__op_connected(op, x->call.deadline));
    if (x->rc != 0) {
      x->rc = not_connected(x, x->rc);
      goto give_up;
    }
    watch_begin(x, d->ready, NULL);
    x->z2 = zkl__zk_exists_send(b->s, d->ready, 1);
    x->z = zkl__zk_children_send(b->s, b->path, 0);
    PT_AWAIT_ANSWER(op, pt, x->z, x->call.dl);
    {
      int erc = zkl__zk_exists_wait(x->z2, ZKL__TRY, NULL);
      x->z2 = NULL;
      x->zrc = members_take(x, x->z);
      x->z = NULL;
      if (x->zrc == ZOK && erc != ZOK && erc != ZNONODE) x->zrc = erc;
      if (x->zrc == ZOK && erc == ZOK) x->ready = 1;
    }
    if (x->zrc != ZOK) {
      zkl__op_unwait(op);
      if (lost_answer(x->zrc)) continue;
      x->rc = map_zrc(b, x->zrc, "enter"); /* ZKL__ZTIMEDOUT: ETIMEDOUT */
      goto give_up;
    }
    if (x->ready) {
      zkl__op_unwait(op);
      x->rc = 0;
      goto out;
    }
    if (!is_member(x, d->name)) { /* gone: its session, or deleted */
      zkl__op_unwait(op);
      d->made = 0;
      if (zkl__session_health(b->s) == ZKL_ELOST) {
        x->rc = zkl__fail(ZKL_ELOST, "enter %s: session lost", b->path);
        goto out;
      }
      continue;
    }
    if (x->n >= (size_t)d->members) {
      zkl__op_unwait(op);
      PT_CALL(pt, x->zrc, make_ready(op, x));
      if (x->zrc == 0) {
        x->rc = 0;
        goto out;
      }
      if (x->zrc == 1 || lost_answer(x->zrc)) continue;
      x->rc = map_zrc(b, x->zrc, "open");
      goto give_up;
    }
    PT_CALL(pt, x->zrc, zkl__op_await(op, x->epoch, x->call.deadline));
    x->rc = after_wait(x, x->zrc, "enter");
    if (x->rc != 1) goto give_up;
  }
give_up:
  /* Out, without a node, unless the barrier opened counting us: then in,
   * node kept, so that nobody went through counting a member that is
   * not there.  `ready` and the path's data version are read; the node
   * is deleted in one multi with a check of that version, which every
   * zkl member's `ready` multi moves: if one opened the barrier since,
   * the delete is undone and we are in. */
  x->saved = x->rc;
  if (d->made && d->made_sid == zkl_session_id(b->s) &&
      zkl__session_health(b->s) != 0) {
    /* our node may be counted by an opening we cannot see now: in doubt
     * (its delete below goes to the janitor if the connection is down) */
    x->doubt = 1;
  } else if (d->made && d->made_sid == zkl_session_id(b->s)) {
    /* the path's version first, then `ready`, in that order on the
     * server: an opening between the two reads shows as `ready`, one
     * after both as a moved version (the delete's check fails) */
    x->z2 = zkl__zk_exists_send(b->s, b->path, 0);
    x->z = zkl__zk_exists_send(b->s, d->ready, 0);
    x->until = x->call.dl;
    if (x->until != ZKL__FOREVER && x->until < zkl__now_ns() + DROP_GRACE_NS)
      x->until = zkl__now_ns() + DROP_GRACE_NS;
    PT_AWAIT_ANSWER(op, pt, x->z, x->until);
    {
      struct Stat st;
      memset(&st, 0, sizeof st);
      x->zrc = zkl__zk_exists_wait(x->z2, ZKL__TRY, &st);
      x->z2 = NULL;
      int erc = zkl__zk_exists_wait(x->z, ZKL__TRY, NULL);
      x->z = NULL;
      if (erc == ZOK && x->zrc == ZOK) { /* open: in after all */
        x->rc = 0;
        goto out;
      }
      if (erc == ZNONODE && x->zrc == ZOK) {
        zkl__mop_t m[2] = {
            {.type = ZOO_CHECK_OP, .path = b->path, .version = st.version},
            {.type = ZOO_DELETE_OP, .path = d->node, .version = -1},
        };
        x->z = zkl__zk_multi_send(b->s, m, 2);
        x->checked = 1;
      } else if (x->zrc != ZNONODE) { /* no path: no node of ours */
        x->doubt = 1; /* not read: cannot tell whether it opened */
      }
    }
    if (x->checked) {
      x->checked = 0;
      if (x->z == NULL) {
        x->rc = zkl__fail(ZKL_ENOMEM, "no memory");
        goto out; /* made: the janitor below */
      }
      PT_AWAIT_ANSWER(op, pt, x->z, x->until);
      {
        int errs[2] = {0, 0};
        x->zrc = zkl__zk_multi_wait(x->z, ZKL__TRY, errs, NULL);
        x->z = NULL;
        if (x->zrc == ZOK || (x->zrc == ZNONODE && errs[1] == ZNONODE)) {
          d->made = 0; /* out cleanly */
          x->rc = x->saved;
          goto out;
        }
        if (x->zrc == ZBADVERSION && errs[1] != ZBADVERSION) {
          x->rc = 0; /* a zkl member opened it counting us: in */
          goto out;
        }
      }
      /* no answer in time, or refused: it may have opened counting us
       * meanwhile; the node is deleted now or by the janitor */
      x->doubt = 1;
    }
  }
  PT_CALL(pt, x->rc, drop_member(op, x));
  if (x->rc == 0) x->rc = x->saved;
  if (x->doubt && zkl__session_health(b->s) == ZKL_ELOST) {
    x->rc = zkl__fail(ZKL_ELOST, "enter %s: gave up (%s) as the session "
                      "was lost: its node goes with it", b->path,
                      zkl_strerror(x->saved));
  } else if (x->doubt && x->rc != ZKL_ELOST) {
    /* only a checked delete says that no opening counted us: without
     * one, a member that gives up is in doubt, never plainly out */
    x->rc = zkl__fail(ZKL_ESUSPENDED, "enter %s: gave up (%s) without "
                      "being able to tell whether the barrier opened "
                      "counting this member; its node is deleted (now, or "
                      "by the janitor)", b->path, zkl_strerror(x->saved));
  }
  x->doubt = 0;
out:
  if (x->rc == 0) {
    pthread_mutex_lock(&b->calls.own.mu);
    d->in = 1;
    pthread_mutex_unlock(&b->calls.own.mu);
  } else if ((x->unsure && !d->made) || d->made) {
    /* a node that may be there (a create's answer lost): the janitor
     * deletes it if it is ours */
    if (x->unsure_sid == zkl_session_id(b->s) || d->made)
      zkl__janitor_add_owned(b->s, d->node, b->c.data, b->c.data_len);
    d->made = 0;
  }
  x->unsure = 0;
  PT_RETURN(pt, x->rc);
  PT_END(pt);
  return 0;
}

static int leave_step(zkl__op_t *op, void *ctx) {
  bcall_t *x = ctx;
  zkl_dbarrier_t *d = dbar(x);
  bobj_t *b = x->o;
  pt_t *pt = &x->pt;
  PT_BEGIN(pt);
  if (!d->in) /* another thread's leave took it out meanwhile */
    PT_RETURN(pt, zkl__fail(ZKL_EPERM, "%s: this member is not in",
                            b->path));
  if (d->made && d->made_sid != zkl_session_id(b->s)) {
    d->made = 0;
    x->rc = zkl__fail(ZKL_ELOST, "leave %s: the session that entered was "
                      "lost", b->path);
    goto out;
  }
  for (;;) {
    PT_CALL(pt, x->rc, zkl__op_connected(op, x->call.deadline));
    if (x->rc != 0) {
      x->rc = not_connected(x, x->rc);
      goto give_up;
    }
    x->z = zkl__zk_children_send(b->s, b->path, 0);
    PT_AWAIT_ANSWER(op, pt, x->z, x->call.dl);
    x->zrc = members_take(x, x->z);
    x->z = NULL;
    if (x->zrc != ZOK) {
      if (lost_answer(x->zrc)) continue;
      x->rc = map_zrc(b, x->zrc, "leave"); /* ZKL__ZTIMEDOUT: ETIMEDOUT */
      goto give_up;
    }
    {
      int mine = is_member(x, d->name);
      if (!mine && d->made) { /* gone without our delete */
        d->made = 0;
        if (zkl__session_health(b->s) == ZKL_ELOST ||
            d->made_sid != zkl_session_id(b->s)) {
          x->rc = zkl__fail(ZKL_ELOST, "leave %s: session lost", b->path);
          goto out;
        }
      }
      if (x->n == 0) break;
      if (x->n == 1 && mine) {
        PT_CALL(pt, x->rc, drop_member(op, x));
        if (x->rc != 0) goto out;
        break;
      }
      /* the lowest waits for the highest; the others go and wait for
       * the lowest */
      const char *w = mine && strcmp(x->kids.data[0], d->name) == 0
                          ? x->kids.data[x->n - 1]
                          : x->kids.data[0];
      snprintf(x->watch, sizeof x->watch, "%s", w);
    }
    if (strcmp(x->kids.data[0], d->name) != 0 && d->made) {
      PT_CALL(pt, x->rc, drop_member(op, x));
      if (x->rc != 0) goto out;
    }
    watch_begin(x, b->path, x->watch);
    {
      char *p = malloc(strlen(b->path) + strlen(x->watch) + 2);
      if (p == NULL) {
        zkl__op_unwait(op);
        x->rc = zkl__fail(ZKL_ENOMEM, "no memory");
        goto give_up;
      }
      sprintf(p, "%s/%s", b->path, x->watch);
      x->z = zkl__zk_exists_send(b->s, p, 1);
      free(p);
    }
    PT_AWAIT_ANSWER(op, pt, x->z, x->call.dl);
    x->zrc = zkl__zk_exists_wait(x->z, ZKL__TRY, NULL);
    x->z = NULL;
    if (x->zrc != ZOK) { /* gone already, or look again */
      zkl__op_unwait(op);
      if (x->zrc == ZNONODE || lost_answer(x->zrc)) continue;
      x->rc = map_zrc(b, x->zrc, "leave");
      goto give_up;
    }
    PT_CALL(pt, x->zrc, zkl__op_await(op, x->epoch, x->call.deadline));
    x->rc = after_wait(x, x->zrc, "leave");
    if (x->rc != 1) goto give_up;
  }
  /* everyone is out: the last one out takes `ready` away (each leaver
   * tries; one succeeds) */
  x->z = zkl__zk_delete_send(b->s, d->ready);
  PT_AWAIT_ANSWER(op, pt, x->z, ZKL__FOREVER);
  x->zrc = zkl__zk_wait(x->z, ZKL__TRY);
  x->z = NULL;
  if (lost_answer(x->zrc)) /* left behind, it would let the next round in */
    zkl__janitor_add(b->s, b->path, NULL, d->ready);
  x->rc = 0;
  goto out;
give_up:
  x->saved = x->rc;
  PT_CALL(pt, x->rc, drop_member(op, x));
  if (x->rc == 0) x->rc = x->saved;
out:
  pthread_mutex_lock(&b->calls.own.mu);
  d->in = 0;
  pthread_mutex_unlock(&b->calls.own.mu);
  PT_RETURN(pt, x->rc);
  PT_END(pt);
  return 0;
}

static int count_step(zkl__op_t *op, void *ctx) {
  bcall_t *x = ctx;
  bobj_t *b = x->o;
  pt_t *pt = &x->pt;
  PT_BEGIN(pt);
  for (;;) {
    PT_CALL(pt, x->rc, zkl__op_connected(op, x->call.deadline));
    if (x->rc != 0) PT_RETURN(pt, not_connected(x, x->rc));
    x->z = zkl__zk_children_send(b->s, b->path, 0);
    PT_AWAIT_ANSWER(op, pt, x->z, x->call.dl);
    x->zrc = members_take(x, x->z);
    x->z = NULL;
    if (x->zrc == ZOK) PT_RETURN(pt, 0);
    if (!lost_answer(x->zrc)) PT_RETURN(pt, map_zrc(b, x->zrc, "count"));
  }
  PT_END(pt);
  return 0;
}

static zkl__step_fn dbarrier_step(int kind) {
  return kind == D_ENTER ? enter_step : kind == D_LEAVE ? leave_step
                                                        : count_step;
}

static int null_dbarrier(void) {
  return zkl__fail(ZKL_EINVAL, "double barrier is NULL");
}

/* Whether the object may start `kind` now (in or not).  Looked at again
 * by the step itself only through d->in, which only the call underway
 * changes. */
static int dbarrier_state(zkl_dbarrier_t *d, int kind) {
  pthread_mutex_lock(&d->b.calls.own.mu);
  int in = d->in;
  pthread_mutex_unlock(&d->b.calls.own.mu);
  if (kind == D_ENTER && in)
    return zkl__fail(ZKL_EBUSY, "%s: this member is in already",
                     d->b.path);
  if (kind == D_LEAVE && !in)
    return zkl__fail(ZKL_EPERM, "%s: this member is not in", d->b.path);
  return 0;
}

static int dbarrier_run(zkl_dbarrier_t *d, int kind, int64_t timeout_ms,
                        bcall_t **keep) {
  zkl__clear_error();
  if (d == NULL) return null_dbarrier();
  int rc = dbarrier_state(d, kind);
  if (rc != 0) return rc;
  bcall_t *x = bcall_new(&d->b, kind, timeout_ms);
  if (x == NULL) return ZKL_ENOMEM;
  rc = zkl__call_blocking(&x->call, &d->b.c, dbarrier_step(kind));
  if (keep != NULL && rc == 0) *keep = x;
  else bcall_release(&x->call);
  return rc;
}

static int dbarrier_async(zkl_dbarrier_t *d, int kind, int64_t timeout_ms,
                          zkl_done_fn cb, void *arg) {
  zkl__clear_error();
  if (d == NULL) return null_dbarrier();
  if (cb == NULL) return zkl__fail(ZKL_EINVAL, "the callback is NULL");
  int rc = dbarrier_state(d, kind);
  if (rc != 0) return rc;
  bcall_t *x = bcall_new(&d->b, kind, timeout_ms);
  if (x == NULL) return ZKL_ENOMEM;
  x->call.cb = cb;
  x->call.arg = arg;
  return zkl__call_async(&x->call, &d->b.c, dbarrier_step(kind));
}

void zkl_dbarrier_opts_init(zkl_dbarrier_opts_t *opts) {
  if (opts != NULL) memset(opts, 0, sizeof *opts);
}

int zkl_dbarrier_create(zkl_dbarrier_t **out, zkl_session_t *s,
                        const char *path, int members,
                        const zkl_dbarrier_opts_t *opts) {
  zkl__clear_error();
  if (out == NULL) return zkl__fail(ZKL_EINVAL, "out is NULL");
  *out = NULL;
  const void *data = opts != NULL ? opts->data : NULL;
  size_t len = opts != NULL ? opts->data_len : 0;
  int rc = zkl__check_recipe_args(s, path, data, len);
  if (rc != 0) return rc;
  if (strcmp(path, "/") == 0)
    return zkl__fail(ZKL_EINVAL, "a double barrier cannot be at /");
  if (members < 1)
    return zkl__fail(ZKL_EINVAL, "a double barrier needs 1 member or more, "
                     "not %d", members);
  zkl_dbarrier_t *d = calloc(1, sizeof *d);
  if (d == NULL) return zkl__fail(ZKL_ENOMEM, "no memory for a barrier");
  d->members = members;
  {
    char prefix[ZKL__PREFIX_LEN + 1]; /* "_c_<uuid>-": its uuid */
    zkl__prefix_new(prefix);
    memcpy(d->name, prefix + 3, NAME_LEN);
    d->name[NAME_LEN] = '\0';
  }
  size_t pl = strlen(path);
  d->ready = malloc(pl + sizeof READY + 1);
  d->node = malloc(pl + NAME_LEN + 2);
  rc = d->ready == NULL || d->node == NULL
           ? ZKL_ENOMEM
           : bobj_init(&d->b, s, path, "double barrier", data, len);
  if (rc != 0) {
    free(d->ready);
    free(d->node);
    free(d);
    return zkl__fail(rc, "no memory for a double barrier");
  }
  snprintf(d->ready, pl + sizeof READY + 1, "%s/%s", path, READY);
  snprintf(d->node, pl + NAME_LEN + 2, "%s/%s", path, d->name);
  *out = d;
  return 0;
}

int zkl_dbarrier_enter(zkl_dbarrier_t *d, int64_t timeout_ms) {
  return dbarrier_run(d, D_ENTER, timeout_ms, NULL);
}
int zkl_dbarrier_leave(zkl_dbarrier_t *d, int64_t timeout_ms) {
  return dbarrier_run(d, D_LEAVE, timeout_ms, NULL);
}
int zkl_dbarrier_enter_async(zkl_dbarrier_t *d, int64_t timeout_ms,
                             zkl_done_fn cb, void *arg) {
  return dbarrier_async(d, D_ENTER, timeout_ms, cb, arg);
}
int zkl_dbarrier_leave_async(zkl_dbarrier_t *d, int64_t timeout_ms,
                             zkl_done_fn cb, void *arg) {
  return dbarrier_async(d, D_LEAVE, timeout_ms, cb, arg);
}

int zkl_dbarrier_count(zkl_dbarrier_t *d, size_t *members, int *ready) {
  zkl__clear_error();
  if (d == NULL || members == NULL)
    return zkl__fail(ZKL_EINVAL, "double barrier or members is NULL");
  *members = 0;
  if (ready != NULL) *ready = 0;
  bcall_t *x = NULL;
  int rc = dbarrier_run(d, D_COUNT, zkl_session_timeout(d->b.s), &x);
  if (rc == 0) {
    *members = x->n;
    if (ready != NULL) *ready = x->ready;
    bcall_release(&x->call);
  }
  return rc;
}

int zkl_dbarrier_cancel(zkl_dbarrier_t *d) {
  zkl__clear_error();
  if (d == NULL) return null_dbarrier();
  zkl__owner_cancel(&d->b.calls.own);
  zkl__contend_cancel(&d->b.c);
  return 0;
}

static void dbarrier_kick(void *arg) { zkl_dbarrier_cancel(arg); }

void zkl_dbarrier_destroy(zkl_dbarrier_t *d) {
  if (d == NULL) return;
  zkl__calls_drain(&d->b.calls, dbarrier_kick, d);
  if (d->made && d->made_sid == zkl_session_id(d->b.s))
    zkl__janitor_add_owned(d->b.s, d->node, d->b.c.data, d->b.c.data_len);
  bobj_fini(&d->b);
  free(d->ready);
  free(d->node);
  free(d);
}
