/* zkl/queue.h - a distributed FIFO queue shared by every process that uses
 * the same path on the same ZooKeeper ensemble.
 *
 * Layout: each item is a PERSISTENT_SEQUENTIAL child of the queue's path
 * holding the payload as its data, in one of two wire formats chosen per
 * object (zkl_queue_opts_t.format):
 *   ZKL_QUEUE_QN     `<path>/qn-<seq>`: ZooKeeper's own queue recipe (Java
 *                    and C) and Curator's SimpleDistributedQueue.
 *   ZKL_QUEUE_KAZOO  `<path>/entry-<prio>-<seq>`: kazoo's Queue, priority
 *                    000-999, lower first, then by sequence.
 *   ZKL_QUEUE_LOCKING  `<path>/entries/entry-<prio>-<seq>` and a claim per
 *                    item in process, `<path>/taken/<item name>`: kazoo's
 *                    LockingQueue.  The one layout with claims.
 * The head is the lowest; sequences are ordered with the wrap at 2^31
 * handled (as the lock's).  Children of any other shape are ignored (never
 * taken, never deleted).  The path itself is a PERSISTENT node (peers keep
 * it for ever); its missing parents are made as CONTAINER nodes.
 *
 * Beside the path, zkl keeps `<path>.zkl` (a CONTAINER the server removes
 * when unused): `wait/` is the line of blocked consumers (a zkl mutex
 * queue; only its head watches the queue, so a put wakes one consumer
 * however many wait; `wait-kazoo/` and `wait-locking/` are the lines of
 * the other formats, so that consumers of two formats on one path never
 * wait behind each other), `full/` the line of producers waiting for room
 * (soft_max), and `puts/` holds each pending put's marker (an ephemeral
 * node made in the same transaction as the item, so that a put whose
 * answer is lost is found again and never applied twice).
 *
 * Delivery, two modes:
 *  - zkl_queue_take() is at-most-once, as every peer's plain take: an item
 *    is read and deleted in one round trip and returned only to the
 *    consumer whose delete removed it; a consumer that dies after the
 *    delete loses the item.
 *  - zkl_queue_claim() / zkl_queue_ack() / zkl_queue_nack() are
 *    at-least-once (ZKL_QUEUE_LOCKING only): a claim is an ephemeral node
 *    in `taken/`, so an item whose consumer dies (its session ends) is
 *    claimable again at once, and a waiting consumer is woken for it; the
 *    claim node's czxid is the item's DELIVERY TOKEN, larger at every
 *    redelivery: fence the item's side effects with it.  ack deletes item
 *    and claim in one transaction and fails (ZKL_ELOST) when the claim is
 *    gone: the work may then be done twice.  kazoo's LockingQueue
 *    consumers and zkl's share one queue (a kazoo claim is skipped by zkl
 *    and the other way round).
 *
 * Threads: one call at a time per object.  A blocking call from a second
 * thread waits locally for the first (no ZooKeeper traffic); an async call
 * while another is underway is refused with ZKL_EBUSY.  For parallel
 * consumers in one process use one object per thread (or per loop
 * callback chain); they may share the session.  All functions are
 * thread-safe except zkl_queue_destroy(), which must be the last call.
 *
 * Deadlines: timeout_ms 0 = do not wait (poll), negative = no deadline.
 * Every request a timed call makes waits for its answer only until the
 * deadline, except that a put, once sent, waits for its outcome through a
 * connection loss (up to the session timeout more) so that it can tell
 * whether it was applied.
 */
#ifndef ZKL_QUEUE_H
#define ZKL_QUEUE_H

#include <stddef.h>
#include <stdint.h>
#include "zkl/session.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zkl_queue zkl_queue_t;

/* The wire format of a queue's items. */
typedef enum zkl_queue_format {
  ZKL_QUEUE_QN = 0,   /* qn-<seq>: ZooKeeper recipes, Curator        */
  ZKL_QUEUE_KAZOO = 1, /* entry-<prio>-<seq>: kazoo Queue            */
  ZKL_QUEUE_LOCKING = 2 /* entries/ + taken/: kazoo LockingQueue     */
} zkl_queue_format_t;

/* Where zkl_queue_nack() puts an item back. */
#define ZKL_QUEUE_HEAD 0 /* where it was: the next claim gets it again */
#define ZKL_QUEUE_TAIL 1 /* at the end, behind every item there now    */

/* Options for zkl_queue_create().  Start from zkl_queue_opts_init(). */
typedef struct zkl_queue_opts {
  zkl_queue_format_t format; /* default ZKL_QUEUE_QN                    */
  int priority;     /* kazoo formats: priority of what this object
                       puts, 0..999 (lower is taken first); default 100 */
  size_t max_items; /* a put is refused (ZKL_EFULL) while the queue holds
                       this many children or more; default 50000, which
                       keeps a listing under the 1 MB a Java client can
                       read (about 61,700 qn- names); 0 = no bound       */
  size_t soft_max;  /* a put WAITS while the queue holds this many
                       children or more (until its deadline, then
                       ZKL_EFULL; timeout 0: at once); the producers
                       waiting stand in a line at
                       `<path>.zkl/full` and only its head counts, every
                       50 ms.  Default 0: no soft bound                    */
} zkl_queue_opts_t;

/* One item taken from (or looked at in) a queue. */
typedef struct zkl_item {
  char *data;       /* the payload (malloc'ed; a NUL follows it)  */
  size_t len;       /* its bytes                                    */
  uint64_t token;   /* the item node's czxid: the zxid of the put,
                       increasing along the queue (the items of one
                       batch share it); for a claimed item the claim's
                       czxid: the delivery token, larger at every
                       redelivery                                     */
  char name[32];    /* its node's name, e.g. "qn-0000000042"       */
  int claimed;      /* zkl_queue_list(): someone holds a claim on it
                       (ZKL_QUEUE_LOCKING); 0 elsewhere              */
} zkl_item_t;

/* A payload to put (borrowed for the call). */
typedef struct zkl_buf {
  const void *data;
  size_t len;
} zkl_buf_t;

/* The largest payload of one put, and of all payloads of one batch: what
 * ZooKeeper's default request limit (jute.maxbuffer, 1 MiB) leaves for
 * data once paths and framing are counted. */
#define ZKL_QUEUE_MAX_BYTES 1000000

/* Fills *opts with the defaults.  Thread-safe. */
ZKL_EXTERN void zkl_queue_opts_init(zkl_queue_opts_t *opts);

/* Creates a queue object for the queue at `path` (absolute, as for
 * zkl_mutex_create(), and not "/").  No ZooKeeper call is made: the path
 * is made by the first put (a take waits for it to appear).
 *   0           *out is ready; free it with zkl_queue_destroy().
 *   ZKL_EINVAL  out, s or path is NULL, the path is invalid, or an
 *               option is out of range (zkl_last_error() says which).
 *   ZKL_ENOMEM / ZKL_ESYSTEM  allocation or mutex init failed.
 * On failure *out is NULL.  The path is copied.  The session must outlive
 * the queue object. */
ZKL_EXTERN int zkl_queue_create(zkl_queue_t **out, zkl_session_t *s,
                                const char *path,
                                const zkl_queue_opts_t *opts);

/* Appends one item (len bytes of data; data may be NULL when len is 0).
 * The item node and a marker are made in one transaction; should the
 * answer be lost to a connection loss, the marker tells, once the same
 * session is back, whether it was applied: the put is then either done
 * once or sent again, never twice.
 *   0               appended.
 *   ZKL_EFULL       the queue would hold more than max_items (as counted
 *                   at most 1 s ago, or at this put once it is half full),
 *                   or it held soft_max items or more until the deadline
 *                   (timeout 0: at once).
 *   ZKL_EINVAL      q is NULL, data is NULL with len > 0, or len is more
 *                   than ZKL_QUEUE_MAX_BYTES.
 *   ZKL_ETIMEDOUT   not connected before the deadline: nothing was sent.
 *   ZKL_ESUSPENDED  timeout 0 and not connected: nothing was sent.
 *   ZKL_ESUSPENDED  also: the put was sent, its answer lost, and the
 *                   connection stayed down for a session timeout: its
 *                   outcome is unknown (zkl_last_error() says so).
 *   ZKL_ELOST       the session was lost: if the put had been sent, its
 *                   outcome is unknown (zkl_last_error() says so).
 *   ZKL_ECANCELED   zkl_queue_cancel() (or destroy) before it was sent
 *                   (nothing appended), or while the outcome of a sent
 *                   put whose answer was lost was being found out
 *                   (unknown: zkl_last_error() says so).
 *   ZKL_EBUSY       timeout 0, and a call of another thread on the object
 *                   is underway.
 *   ZKL_EPROTO      the path or its `.zkl` side node kept vanishing under
 *                   the put (someone deletes them): nothing appended.
 *   other <0        ZooKeeper's code, e.g. ZNOAUTH (the path's ACL), or
 *                   ZNOCHILDRENFOREPHEMERALS (the path is not a queue).
 * On failure nothing was appended, except where the outcome is said to be
 * unknown. */
ZKL_EXTERN int zkl_queue_put(zkl_queue_t *q, const void *data, size_t len,
                             int64_t timeout_ms);

/* Appends n items (1..1000) atomically, in one request: all of them, in
 * the order given and with consecutive sequences, or none.  The payloads
 * together are at most ZKL_QUEUE_MAX_BYTES.  Codes and guarantees as for
 * zkl_queue_put() (ZKL_EINVAL also for items NULL or n out of range). */
ZKL_EXTERN int zkl_queue_put_batch(zkl_queue_t *q, const zkl_buf_t *items,
                                   size_t n, int64_t timeout_ms);

/* Takes the head item: reads and deletes it, and fills *item (free its
 * data with zkl_item_free()).  When the queue is empty it waits, herd-free
 * and in arrival order with the other waiting consumers (zkl's), until an
 * item comes or the deadline passes (timeout 0: no wait).  The listing is
 * kept between calls and read again only when it runs out or a watch
 * fired.
 *   0               *item is the caller's.
 *   ZKL_EEMPTY      timeout 0 and nothing to take.
 *   ZKL_ETIMEDOUT   nothing came before the deadline.
 *   ZKL_ESUSPENDED  timeout 0 and not connected.
 *   ZKL_ECANCELED   zkl_queue_cancel() (or destroy) while waiting.
 *   ZKL_ELOST       the session was lost and no new one comes.
 *   ZKL_EBUSY       timeout 0, and a call of another thread on the object
 *                   is underway.
 *   ZNOAUTH         nothing was taken, and an item this session may not
 *                   read (its ACL) was met: it is left in the queue (never
 *                   deleted unread: the delete is checked in the same
 *                   transaction), skipped from then on by this object, and
 *                   named in zkl_last_error(); zkl_queue_remove() can take
 *                   it out of the way.
 *   ZKL_EINVAL      q or item is NULL.  ZKL_ENOMEM.
 *   other <0        ZooKeeper's code (e.g. ZNOAUTH).
 * On failure *item is zeroed and nothing was taken: an item whose delete
 * was answered by a connection loss is looked for again (it is taken if
 * still there; if it is gone it was taken, by this call or another, and
 * is not returned: at most once). */
ZKL_EXTERN int zkl_queue_take(zkl_queue_t *q, int64_t timeout_ms,
                              zkl_item_t *item);

/* As zkl_queue_take(), but takes up to max items (1..1000) from the head
 * in one round trip: the reads and deletes of the first items are sent
 * together.  *items (free with zkl_items_free(*items, *n)) holds *n >= 1
 * items in queue order on success; NULL and 0 on failure.  It waits only
 * while there is nothing at all. */
ZKL_EXTERN int zkl_queue_take_batch(zkl_queue_t *q, size_t max,
                                    int64_t timeout_ms, zkl_item_t **items,
                                    size_t *n);

/* Reads the head item without taking it (a fresh listing).  Like size()
 * and remove(), it waits up to a session timeout for a connection, and
 * for another thread's call of the object.
 *   0 (*item filled, free with zkl_item_free()), ZKL_EEMPTY, ZKL_EINVAL,
 *   ZKL_ESUSPENDED (not connected within a session timeout), ZKL_ETIMEDOUT
 *   (another thread's call lasted that long), ZKL_ECANCELED
 *   (zkl_queue_cancel() meanwhile), ZKL_ELOST, ZKL_ENOMEM, ZooKeeper's. */
ZKL_EXTERN int zkl_queue_peek(zkl_queue_t *q, zkl_item_t *item);

/* Every item in queue order, claimed or not, with its data (for an
 * operator's view: `zkl queue ls`, `zkl status`): a fresh listing and a
 * read per item (sent together, 256 at a time), up to max items (0: all).
 * *items (free with zkl_items_free(*items, *n)) and *n (0 and NULL when
 * the queue is empty or has no path); token is the item's czxid, claimed
 * says whether a claim is held on it; an item this session may not read
 * (its ACL) is listed with data NULL and token 0.  Items taken meanwhile
 * are left out.  Codes as for zkl_queue_peek() (but never ZKL_EEMPTY). */
ZKL_EXTERN int zkl_queue_list(zkl_queue_t *q, size_t max, zkl_item_t **items,
                              size_t *n);

/* How many children the queue's path has (one read of its numChildren,
 * whatever the length; foreign children count too).  0 when the path does
 * not exist.  Codes as for zkl_queue_peek(). */
ZKL_EXTERN int zkl_queue_size(zkl_queue_t *q, size_t *n);

/* Removes the item called `name` (as in zkl_item_t.name), wherever it is
 * in the queue.
 *   0           removed.
 *   ZKL_ENOENT  no such item (taken or removed already).
 *   ZKL_EINVAL  q or name is NULL, or name is not an item of this
 *               object's format.
 *   others      as for zkl_queue_peek(). */
ZKL_EXTERN int zkl_queue_remove(zkl_queue_t *q, const char *name);

/* Claims the head item that nobody has claimed (ZKL_QUEUE_LOCKING): an
 * ephemeral `taken/<name>` node is made for it and the item read, in one
 * round trip; *item is filled (its token is the claim's czxid: the
 * delivery token), the item stays in the queue until zkl_queue_ack().
 * Waits as zkl_queue_take() does (herd-free, in arrival order); the head
 * of the line also watches `taken/`, so that an item whose claimer died
 * is claimed again at once (a busy consumer, which reads its kept listing
 * again once it is a second old, within a second).  An object may hold
 * several claims.
 *   0, ZKL_EEMPTY (timeout 0: nothing unclaimed), ZKL_ETIMEDOUT,
 *   ZKL_ESUSPENDED, ZKL_ECANCELED, ZKL_ELOST, ZKL_EBUSY, ZKL_ENOMEM,
 *   ZooKeeper's codes: as zkl_queue_take().
 *   ZKL_EINVAL      q or item is NULL, or the object's format is not
 *                   ZKL_QUEUE_LOCKING.
 * The claim lasts while the session does: zkl_queue_claim_health() says
 * whether it still holds (and the session's SUSPENDED / LOST say when it
 * is in doubt or gone). */
ZKL_EXTERN int zkl_queue_claim(zkl_queue_t *q, int64_t timeout_ms,
                               zkl_item_t *item);

/* Done with a claimed item: checks that the claim is still this object's
 * (the same node, made by this session), then deletes the item and the
 * claim in one transaction.
 *   0           acked: the item is gone for good.
 *   ZKL_ELOST   the claim is gone (the session was lost, or someone
 *               deleted the claim, and maybe another consumer took the
 *               item since): another consumer may process the item
 *               too; nothing was deleted by this call -- unless
 *               zkl_last_error() says the outcome is unknown (an earlier
 *               answer was lost, then the session: the item is gone,
 *               settled by this object or by another consumer since): do
 *               not undo the work then.
 *   ZKL_ENOENT  the item was removed by someone else while the claim
 *               was still this object's (a remove, a raw delete); the
 *               claim is deleted.
 *   ZKL_EPERM   item is not claimed through this object.
 *   ZKL_ESUSPENDED  not connected within a session timeout: the claim
 *               stays as it was -- or, when zkl_last_error() says its
 *               outcome is unknown (the answer was lost), it may have been
 *               applied: the claim is kept, and the next ack or nack of
 *               it finds out.
 *   ZKL_EINVAL, ZKL_EBUSY, ZKL_ENOMEM, ZooKeeper's codes.
 *   ZKL_ECANCELED   zkl_queue_cancel() while it waited for another
 *               thread's call of the object.
 * The object forgets the claim when the code is 0, ZKL_ELOST or
 * ZKL_ENOENT, and keeps it otherwise. */
ZKL_EXTERN int zkl_queue_ack(zkl_queue_t *q, const zkl_item_t *item);

/* Gives a claimed item back: where ZKL_QUEUE_HEAD (the claim is deleted;
 * the item keeps its place, so the next claim gets it), or ZKL_QUEUE_TAIL
 * (the item is put again at the end with item->data, and the old item
 * and the claim are deleted, in one transaction).  Codes as for
 * zkl_queue_ack() (ZKL_EINVAL also for another `where`). */
ZKL_EXTERN int zkl_queue_nack(zkl_queue_t *q, const zkl_item_t *item,
                              int where);

/* Whether a claim of this object still holds, from what the session
 * knows (no request):
 *   0               it does: the session that made it is connected and
 *                   was heard from within the session timeout.
 *   ZKL_ESUSPENDED  in doubt: the connection is down; stop the item's
 *                   side effects until it is back.
 *   ZKL_ELOST       gone with its session: another consumer gets it;
 *                   or gone since the object claimed the same item
 *                   again (its claim node was deleted by someone else).
 *   ZKL_EPERM       not a claim of this object.  ZKL_EINVAL. */
ZKL_EXTERN int zkl_queue_claim_health(zkl_queue_t *q, const zkl_item_t *item);

/* Makes a waiting take (and a put waiting for its connection) of this
 * object return ZKL_ECANCELED, on whichever thread or engine it runs.
 *   0, or ZKL_EINVAL (q is NULL). */
ZKL_EXTERN int zkl_queue_cancel(zkl_queue_t *q);

/* The completion of an async take: rc and the items taken (the callback
 * owns them: zkl_items_free(items, n)); items NULL and n 0 on failure. */
typedef void (*zkl_items_fn)(zkl_queue_t *q, int rc, zkl_item_t *items,
                             size_t n, void *arg);

/* zkl_queue_put() and zkl_queue_put_batch() started and returned at once
 * (the payloads are copied).  cb(q, rc, 0, arg) runs exactly once, later,
 * from zkl_session_dispatch(), with the codes of the blocking call (and
 * ZKL_ECANCELED if the object is destroyed before it is dispatched; the
 * outcome of a put already sent is then unknown).  The call returns 0
 * (accepted), ZKL_EBUSY (a call of the object is underway: an async call
 * lasts until its completion is dispatched), ZKL_ECANCELED (destroy has
 * begun), ZKL_EINVAL or ZKL_ENOMEM, and then cb is never called.
 * Thread-safe: from any thread, including from a completion. */
ZKL_EXTERN int zkl_queue_put_async(zkl_queue_t *q, const void *data,
                                   size_t len, int64_t timeout_ms,
                                   zkl_done_fn cb, void *arg);
ZKL_EXTERN int zkl_queue_put_batch_async(zkl_queue_t *q,
                                         const zkl_buf_t *items, size_t n,
                                         int64_t timeout_ms, zkl_done_fn cb,
                                         void *arg);

/* zkl_queue_take_batch() (max 1 for a single take) started and returned at
 * once; cb runs exactly once, later, from zkl_session_dispatch(), with the
 * codes of the blocking call.  Items taken but not yet dispatched when the
 * object is destroyed are lost (at most once): cb gets ZKL_ECANCELED and
 * no items.  Returns as zkl_queue_put_async(). */
ZKL_EXTERN int zkl_queue_take_async(zkl_queue_t *q, size_t max,
                                    int64_t timeout_ms, zkl_items_fn cb,
                                    void *arg);

/* zkl_queue_claim() started and returned at once; cb(q, rc, items, n,
 * arg) runs exactly once, later, from zkl_session_dispatch(), with the
 * claimed item (n 1) or the codes of the blocking call.  A claim whose
 * completion is orphaned by destroy is given up (its node deleted): the
 * item is claimable again.  Returns as zkl_queue_put_async(). */
ZKL_EXTERN int zkl_queue_claim_async(zkl_queue_t *q, int64_t timeout_ms,
                                     zkl_items_fn cb, void *arg);

/* zkl_queue_ack() and zkl_queue_nack() started and returned at once (item
 * is copied); cb(q, rc, 0, arg) runs exactly once, later, from
 * zkl_session_dispatch().  Returns as zkl_queue_put_async(). */
ZKL_EXTERN int zkl_queue_ack_async(zkl_queue_t *q, const zkl_item_t *item,
                                   zkl_done_fn cb, void *arg);
ZKL_EXTERN int zkl_queue_nack_async(zkl_queue_t *q, const zkl_item_t *item,
                                    int where, zkl_done_fn cb, void *arg);

/* Frees an item's data and zeroes it (NULL-safe). */
ZKL_EXTERN void zkl_item_free(zkl_item_t *item);
/* Frees n items and the array (NULL-safe). */
ZKL_EXTERN void zkl_items_free(zkl_item_t *items, size_t n);

/* Cancels what is underway (its completion comes with ZKL_ECANCELED),
 * waits for blocked calls to return and frees the object.  NULL-safe.  The
 * queue's items are untouched; the object's claims are given up (their
 * nodes deleted: the items are claimable again) and a put marker left is
 * deleted, by the session's janitor. */
ZKL_EXTERN void zkl_queue_destroy(zkl_queue_t *q);

#ifdef __cplusplus
}
#endif

#endif /* ZKL_QUEUE_H */
