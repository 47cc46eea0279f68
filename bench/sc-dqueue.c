/* bench/sc-dqueue.c - scenarios 9 and 10: the distributed queue
 * (zkl_queue_*) against the queue recipe by hand (floor.c) and, merged from
 * bench/kazoo_bench.py, kazoo's Queue and LockingQueue.
 *
 * S9  throughput, one client alone: a fixed number of items per run
 *     (--items, payloads of 100 bytes), floor and zkl in turns over --reps
 *     runs (the order rotating), the median run's items/s:
 *       put        one item per call: a create (floor); zkl_queue_put
 *       put-B      B items per call (--batch): one multi of B creates
 *                  (floor); zkl_queue_put_batch
 *       take       one item per call from a queue holding the run's items:
 *                  the listing read once (again when it runs out), then
 *                  per item a getData and a delete, each after the other's
 *                  answer (floor, the recipe) or both sent together
 *                  (floor-pipe); zkl_queue_take
 *       take-B     up to B items per call: the reads and deletes of B items
 *                  sent together (floor); the B reads, then ONE multi
 *                  deleting them (floor-multi: one write per batch, not
 *                  per item); zkl_queue_take_batch
 *       claim+ack  at-least-once, kazoo's LockingQueue layout: create
 *                  taken/<item> and read the item (floor: one after the
 *                  other; floor-pipe: together), then one multi deletes
 *                  both; zkl_queue_claim + zkl_queue_ack (ZKL_QUEUE_LOCKING)
 *     The queue is filled or emptied before each run, outside the measured
 *     window.  A run that lasts RUN_CAP_S stops; its rate counts what it
 *     did.
 * S10 the herd: C consumers (--consumers, each on a session of its own)
 *     block in a take on an empty queue; one producer puts --puts items one
 *     by one, the next only once every consumer waits again: the item
 *     consumed, then no request, no watch notification and the watch count
 *     unchanged for two sampling intervals, with the watch count where it stood after a
 *     first put (unmeasured), or all that for SETTLE_HOLD_MS.  Per put,
 *     what the server did (requests, bytes, watch notifications: the
 *     watchers its events triggered; pings of the idle sessions included, a
 *     few per second) and the time from the put to a consumer having the
 *     item.  floor: the recipe's take (every waiting
 *     consumer watches the children: a put wakes them all); zkl:
 *     zkl_queue_take; zkl-claim: zkl_queue_claim + zkl_queue_ack.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

#define PAYLOAD_BYTES 100
#define RUN_CAP_S 20          /* S9: a run stops after this long          */
#define OP_TIMEOUT_MS 10000   /* S9: every zkl call's deadline            */
#define FILL_CHUNK 500        /* creates or deletes per multi of the setup */
#define WARM_ITEMS 10         /* S9: put and taken once before measuring  */

static void payload_fill(char *p) {
  for (int i = 0; i < PAYLOAD_BYTES; i++) p[i] = (char)('a' + i % 26);
}

/* ---- setup on the admin session: outside every measured window ---------- */

/* Deletes every child of dir (multis of FILL_CHUNK).  0 or a code. */
static int dir_clear(const char *dir) {
  struct String_vector kids = {0, NULL};
  int zrc = zoo_get_children(bench_admin, dir, 0, &kids);
  if (zrc != ZOK) return zrc == ZNONODE ? ZOK : zrc;
  char(*paths)[320] = calloc(FILL_CHUNK, sizeof *paths);
  zoo_op_t *ops = calloc(FILL_CHUNK, sizeof *ops);
  zoo_op_result_t *res = calloc(FILL_CHUNK, sizeof *res);
  if (paths == NULL || ops == NULL || res == NULL) zrc = ZSYSTEMERROR;
  for (int i = 0; zrc == ZOK && i < kids.count; i += FILL_CHUNK) {
    int n = kids.count - i < FILL_CHUNK ? kids.count - i : FILL_CHUNK;
    for (int j = 0; j < n; j++) {
      snprintf(paths[j], sizeof paths[j], "%s/%s", dir, kids.data[i + j]);
      zoo_delete_op_init(&ops[j], paths[j], -1);
    }
    zrc = zoo_multi(bench_admin, n, ops, res);
  }
  deallocate_String_vector(&kids);
  free(paths);
  free(ops);
  free(res);
  return zrc;
}

/* Makes dir hold exactly n items "<prefix><seq>" (multis of FILL_CHUNK). */
static int dir_fill(const char *dir, const char *prefix, int n,
                    const char *payload) {
  int have = bench_children(bench_admin, dir);
  if (have > n) {
    int zrc = dir_clear(dir);
    if (zrc != ZOK) return zrc;
    have = 0;
  }
  if (have < 0) return ZNONODE;
  char path[320];
  snprintf(path, sizeof path, "%s/%s", dir, prefix);
  zoo_op_t *ops = calloc(FILL_CHUNK, sizeof *ops);
  zoo_op_result_t *res = calloc(FILL_CHUNK, sizeof *res);
  int zrc = ops != NULL && res != NULL ? ZOK : ZSYSTEMERROR;
  while (zrc == ZOK && have < n) {
    int k = n - have < FILL_CHUNK ? n - have : FILL_CHUNK;
    for (int j = 0; j < k; j++)
      zoo_create_op_init(&ops[j], path, payload, PAYLOAD_BYTES,
                         &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT_SEQUENTIAL,
                         NULL, 0);
    zrc = zoo_multi(bench_admin, k, ops, res);
    have += k;
  }
  free(ops);
  free(res);
  return zrc;
}

/* ---- S9 ------------------------------------------------------------------------ */

enum { K_PUT, K_PUT_BATCH, K_TAKE, K_TAKE_BATCH, K_CLAIM, N_KINDS };
enum { I_FLOOR, I_PIPE, I_MULTI, I_ZKL, N_IMPLS };
static const char *const impl_names[N_IMPLS] = {"floor", "floor-pipe",
                                                "floor-multi", "zkl"};

/* Which implementations a kind of run has. */
static int has_impl(int kind, int impl) {
  if (impl == I_PIPE) return kind == K_TAKE || kind == K_CLAIM;
  if (impl == I_MULTI) return kind == K_TAKE_BATCH;
  return 1;
}

static void kind_name(int kind, int batch, char *buf, size_t len) {
  switch (kind) {
  case K_PUT: snprintf(buf, len, "put"); break;
  case K_PUT_BATCH: snprintf(buf, len, "put-%d", batch); break;
  case K_TAKE: snprintf(buf, len, "take"); break;
  case K_TAKE_BATCH: snprintf(buf, len, "take-%d", batch); break;
  default: snprintf(buf, len, "claim+ack");
  }
}

typedef struct tp {
  const bench_opts_t *o;
  zhandle_t *zh;             /* the floor's session                      */
  floor_queue_t fq, fqc;     /* qn- items; entries/ + taken/ (claims)     */
  zkl_session_t *s;
  zkl_queue_t *q, *qc;       /* ZKL_QUEUE_QN; ZKL_QUEUE_LOCKING          */
  char fdir[256], fcroot[256], fcdir[256], fctaken[256];
  char zdir[256], zcroot[256], zcdir[256], zctaken[256];
  char payload[PAYLOAD_BYTES];
  zkl_buf_t *bufs;           /* a batch: B times the payload              */
} tp_t;

/* What one implementation did over the runs of one kind. */
typedef struct tally {
  samples_t rates;  /* items/s, one per run                          */
  samples_t lat;    /* µs per call                                    */
  srv_counters_t srv;
  double cpu_us;
  long items;
  int srv_ok, runs;
} tp_tally_t;

static int check_item(const zkl_item_t *it) {
  if (it->len == PAYLOAD_BYTES) return 0;
  bench_fail("S9: an item of %zu bytes (%s), not %d", it->len, it->name,
             PAYLOAD_BYTES);
  return -1;
}

/* One call of kind/impl, at most `left` items; *did the items it moved.
 * 0, or -1 (reported). */
static int tp_op(tp_t *t, int kind, int impl, int left, int *did) {
  int batch = left < t->o->batch ? left : t->o->batch;
  int zrc, rc;
  *did = 0;
  if (impl != I_ZKL) {
    switch (kind) {
    case K_PUT: zrc = floor_queue_put(&t->fq, t->payload, PAYLOAD_BYTES);
      *did = 1;
      break;
    case K_PUT_BATCH:
      zrc = floor_queue_put_batch(&t->fq, t->payload, PAYLOAD_BYTES, batch);
      *did = batch;
      break;
    case K_TAKE: zrc = floor_queue_take(&t->fq, impl == I_PIPE);
      *did = 1;
      break;
    case K_TAKE_BATCH:
      zrc = floor_queue_take_batch(&t->fq, batch, impl == I_MULTI, did);
      break;
    default: zrc = floor_queue_claim_ack(&t->fqc, impl == I_PIPE);
      *did = 1;
    }
    if (zrc == ZOK) return 0;
    *did = 0;
    bench_fail("S9 %s: %s", impl_names[impl],
               zrc == 1 ? "the queue ran out" : zerror(zrc));
    return -1;
  }
  zkl_item_t it, *v = NULL;
  size_t n = 0;
  switch (kind) {
  case K_PUT: rc = zkl_queue_put(t->q, t->payload, PAYLOAD_BYTES,
                                 OP_TIMEOUT_MS);
    *did = rc == 0;
    break;
  case K_PUT_BATCH:
    rc = zkl_queue_put_batch(t->q, t->bufs, (size_t)batch, OP_TIMEOUT_MS);
    *did = rc == 0 ? batch : 0;
    break;
  case K_TAKE:
    rc = zkl_queue_take(t->q, OP_TIMEOUT_MS, &it);
    if (rc == 0) {
      *did = 1;
      if (check_item(&it) != 0) rc = -1;
      zkl_item_free(&it);
    }
    break;
  case K_TAKE_BATCH:
    rc = zkl_queue_take_batch(t->q, (size_t)batch, OP_TIMEOUT_MS, &v, &n);
    *did = (int)n;
    for (size_t i = 0; rc == 0 && i < n; i++)
      if (check_item(&v[i]) != 0) rc = -1;
    zkl_items_free(v, n);
    break;
  default:
    rc = zkl_queue_claim(t->qc, OP_TIMEOUT_MS, &it);
    if (rc == 0) {
      if (check_item(&it) != 0) rc = -1;
      int arc = zkl_queue_ack(t->qc, &it);
      if (arc != 0) {
        bench_fail("S9 zkl_queue_ack: %s: %s", zkl_strerror(arc),
                   zkl_last_error());
        rc = -1;
      }
      *did = 1;
      zkl_item_free(&it);
    }
  }
  if (rc == 0) return 0;
  if (rc != -1)
    bench_fail("S9 zkl: %s: %s", zkl_strerror(rc), zkl_last_error());
  return -1;
}

/* Before a run: a put starts from an empty queue, the rest from one that
 * holds the run's items. */
static int tp_prepare(tp_t *t, int kind, int impl) {
  const char *dir = kind == K_CLAIM ? (impl == I_ZKL ? t->zcdir : t->fcdir)
                                    : (impl == I_ZKL ? t->zdir : t->fdir);
  const char *prefix = kind == K_CLAIM ? "entry-100-" : "qn-";
  int zrc = kind == K_PUT || kind == K_PUT_BATCH
                ? dir_clear(dir)
                : dir_fill(dir, prefix, t->o->items, t->payload);
  if (zrc != ZOK) bench_fail("S9: preparing %s: %s", dir, zerror(zrc));
  return zrc == ZOK ? 0 : -1;
}

static int tp_run(tp_t *t, int kind, int impl, tp_tally_t *ty) {
  if (tp_prepare(t, kind, impl) != 0) return -1;
  floor_queue_forget(&t->fq); /* no listing from before the setup */
  floor_queue_forget(&t->fqc);
  srv_counters_t a, b, d;
  int counted = srv_sample(t->o->hosts, &a) == 0;
  double cpu0 = bench_cpu_us();
  int64_t t0 = bench_now_ns(), cap = t0 + (int64_t)RUN_CAP_S * 1000000000;
  int done = 0, bad = 0;
  while (done < t->o->items && !bad) {
    int64_t t1 = bench_now_ns();
    if (t1 > cap) break;
    int did;
    bad = tp_op(t, kind, impl, t->o->items - done, &did) != 0;
    samples_add(&ty->lat, (double)(bench_now_ns() - t1) / 1e3);
    done += did;
  }
  double elapsed = (double)(bench_now_ns() - t0) / 1e9;
  ty->cpu_us += bench_cpu_us() - cpu0;
  if (counted && srv_sample(t->o->hosts, &b) == 0) {
    srv_delta(&a, &b, &d);
    srv_add(&ty->srv, &d);
  } else {
    ty->srv_ok = 0;
  }
  if (done < t->o->items && !bad)
    bench_note("S9 %s: a run stopped after %d s with %d of %d items",
               impl_names[impl], RUN_CAP_S, done, t->o->items);
  samples_add(&ty->rates, elapsed > 0 ? done / elapsed : NAN);
  ty->items += done;
  ty->runs++;
  return bad ? -1 : 0;
}

static void tp_report(const char *kase, const char *impl, tp_tally_t *ty) {
  result_add("9", kase, impl, "items/s", "1/s",
             samples_quantile(&ty->rates, 0.5), NAN, ty->items);
  result_add_samples("9", kase, impl, "latency", "us", &ty->lat);
  if (ty->srv_ok) srv_report("9", kase, impl, "item", &ty->srv, ty->items);
  if (ty->items > 0)
    result_add("9", kase, impl, "cpu/item", "us", ty->cpu_us / ty->items,
               NAN, ty->items);
}

/* A few puts and takes of every implementation and layout, unmeasured:
 * the connections and zkl's side nodes (<path>.zkl) made. */
static int tp_warm(tp_t *t) {
  int did, bad = 0;
  const int kinds[] = {K_PUT, K_TAKE};
  for (int impl = I_FLOOR; impl < N_IMPLS && !bad; impl += I_ZKL)
    for (int k = 0; k < 2 && !bad; k++) {
      for (int i = 0; i < WARM_ITEMS && !bad; i++)
        bad = tp_op(t, kinds[k], impl, 1, &did) != 0;
    }
  for (int impl = I_FLOOR; impl < N_IMPLS && !bad; impl += I_ZKL) {
    const char *dir = impl == I_ZKL ? t->zcdir : t->fcdir;
    bad = dir_fill(dir, "entry-100-", WARM_ITEMS, t->payload) != ZOK;
    for (int i = 0; i < WARM_ITEMS && !bad; i++)
      bad = tp_op(t, K_CLAIM, impl, 1, &did) != 0;
  }
  if (!bad && t->q != NULL) { /* zkl's claims layout made by zkl's put */
    zkl_item_t it;
    bad = zkl_queue_put(t->qc, t->payload, PAYLOAD_BYTES, OP_TIMEOUT_MS) != 0 ||
          zkl_queue_take(t->qc, OP_TIMEOUT_MS, &it) != 0;
    if (!bad) zkl_item_free(&it);
  }
  return bad ? -1 : 0;
}

void sc_queue_throughput(const bench_opts_t *o) {
  tp_t t;
  memset(&t, 0, sizeof t);
  t.o = o;
  payload_fill(t.payload);
  bench_path(t.fdir, sizeof t.fdir, o->root, "s9-floor", NULL);
  bench_path(t.fcroot, sizeof t.fcroot, o->root, "s9-floor-claim", NULL);
  bench_path(t.fcdir, sizeof t.fcdir, t.fcroot, "entries", NULL);
  bench_path(t.fctaken, sizeof t.fctaken, t.fcroot, "taken", NULL);
  bench_path(t.zdir, sizeof t.zdir, o->root, "s9-zkl", NULL);
  bench_path(t.zcroot, sizeof t.zcroot, o->root, "s9-zkl-claim", NULL);
  bench_path(t.zcdir, sizeof t.zcdir, t.zcroot, "entries", NULL);
  bench_path(t.zctaken, sizeof t.zctaken, t.zcroot, "taken", NULL);
  const char *dirs[] = {t.fdir, t.fcdir, t.fctaken, t.zdir, t.zcdir,
                        t.zctaken};
  for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
    bench_mkpath(bench_admin, dirs[i]);
  t.bufs = calloc((size_t)o->batch, sizeof *t.bufs);
  for (int i = 0; t.bufs != NULL && i < o->batch; i++)
    t.bufs[i] = (zkl_buf_t){t.payload, PAYLOAD_BYTES};
  t.zh = floor_open(o->hosts, 10000);
  t.s = bench_zkl_open(o->hosts, 0);
  zkl_queue_opts_t qo, qco;
  zkl_queue_opts_init(&qo);
  zkl_queue_opts_init(&qco);
  qco.format = ZKL_QUEUE_LOCKING;
  if (t.zh != NULL) {
    floor_queue_init(&t.fq, t.zh, t.fdir, "qn-", NULL);
    floor_queue_init(&t.fqc, t.zh, t.fcdir, "entry-100-", t.fctaken);
  }
  if (t.bufs == NULL || t.zh == NULL || t.s == NULL ||
      zkl_queue_create(&t.q, t.s, t.zdir, &qo) != 0 ||
      zkl_queue_create(&t.qc, t.s, t.zcroot, &qco) != 0 || tp_warm(&t) != 0) {
    bench_fail("S9: setup failed");
    goto out;
  }
  int bad = 0;
  for (int kind = 0; kind < N_KINDS && !bad; kind++) {
    char kase[24];
    kind_name(kind, o->batch, kase, sizeof kase);
    int impls[N_IMPLS], n = 0;
    for (int i = 0; i < N_IMPLS; i++)
      if (has_impl(kind, i)) impls[n++] = i;
    tp_tally_t ty[N_IMPLS];
    memset(ty, 0, sizeof ty);
    for (int i = 0; i < N_IMPLS; i++) ty[i].srv_ok = 1;
    for (int r = 0; r < o->reps && !bad; r++)
      for (int k = 0; k < n && !bad; k++) { /* the order rotating */
        int impl = impls[(r + k) % n];
        bad = tp_run(&t, kind, impl, &ty[impl]) != 0;
      }
    for (int k = 0; k < n; k++) {
      int impl = impls[k];
      if (!bad) tp_report(kase, impl_names[impl], &ty[impl]);
      samples_free(&ty[impl].rates);
      samples_free(&ty[impl].lat);
    }
    printf("  S9 %s done\n", kase);
  }
out:
  zkl_queue_destroy(t.q);
  zkl_queue_destroy(t.qc);
  zkl_session_close(t.s);
  if (t.zh != NULL) {
    floor_close(t.zh);
    floor_queue_fini(&t.fq);
    floor_queue_fini(&t.fqc);
  }
  free(t.bufs);
}

/* ---- S10 ------------------------------------------------------------------------ */

#define HERD_SESSION_MS 30000 /* consumers' sessions: pings every 10 s    */
#define HERD_WAIT_MS 120000   /* a consumer's blocking take               */
#define HERD_CAP_S 60         /* the puts of one C and impl: at most (s)  */
#define SETTLE_CAP_MS 10000   /* a put's settling at most                 */
#define BLOCKED_HOLD_MS 300   /* quiet this long: every consumer blocked  */
#define SETTLE_HOLD_MS 50     /* quiet this long: settled, whatever the
                                 watch count                             */
#define STOP_ITEM "stop"

enum { H_FLOOR, H_ZKL, H_CLAIM, N_HERD };
static const char *const herd_names[N_HERD] = {"floor", "zkl", "zkl-claim"};

typedef struct herd herd_t;

typedef struct hconsumer {
  herd_t *h;
  pthread_t th;
  zhandle_t *zh;       /* floor */
  floor_queue_t fq;
  zkl_session_t *s;    /* zkl   */
  zkl_queue_t *q;
} hconsumer_t;

struct herd {
  int impl, c;
  const char *hosts;
  char root[256], dir[256], taken[256];
  hconsumer_t *cs;
  atomic_int entered, consumed, exited, errors, stop;
  atomic_llong t_last; /* when the last item reached its consumer */
};

static void *hconsumer_main(void *arg) {
  hconsumer_t *k = arg;
  herd_t *h = k->h;
  atomic_fetch_add(&h->entered, 1);
  while (!atomic_load(&h->stop)) {
    zkl_item_t it;
    memset(&it, 0, sizeof it);
    char *data = NULL;
    size_t len = 0;
    int rc;
    if (h->impl == H_FLOOR) {
      int n = 0;
      rc = floor_queue_take_wait(&k->fq, HERD_WAIT_MS, &h->stop, &data, &n);
      if (rc == -1) continue; /* past the wait, or told to stop */
      if (rc != ZOK) {
        bench_fail("S10 floor consumer: %s", zerror(rc));
        break;
      }
      len = (size_t)n;
    } else {
      rc = h->impl == H_ZKL ? zkl_queue_take(k->q, HERD_WAIT_MS, &it)
                            : zkl_queue_claim(k->q, HERD_WAIT_MS, &it);
      if (rc == ZKL_ETIMEDOUT) continue;
      if (rc == ZKL_ECANCELED) break;
      if (rc != 0) {
        bench_fail("S10 %s consumer: %s: %s", herd_names[h->impl],
                   zkl_strerror(rc), zkl_last_error());
        break;
      }
      data = it.data;
      len = it.len;
    }
    int64_t t = bench_now_ns();
    int last = len == strlen(STOP_ITEM) && memcmp(data, STOP_ITEM, len) == 0;
    if (h->impl == H_CLAIM && (rc = zkl_queue_ack(k->q, &it)) != 0) {
      bench_fail("S10 zkl_queue_ack: %s: %s", zkl_strerror(rc),
                 zkl_last_error());
      atomic_fetch_add(&h->errors, 1);
    }
    if (h->impl == H_FLOOR) free(data);
    else zkl_item_free(&it);
    if (last) break;
    atomic_store(&h->t_last, t);
    atomic_fetch_add(&h->consumed, 1);
  }
  atomic_fetch_add(&h->exited, 1);
  return NULL;
}

/* Waits until `consumed` items are consumed (no sampling meanwhile: a
 * sample costs the server, and the delivery is being timed), then samples
 * the server until it is quiet: the watch count unchanged, no request and
 * no watch notification for `intervals` sampling intervals, and either the watch count
 * at `watches` or all that for hold_ms.  *last is the previous sample on
 * entry, the final one on return; *samples counts the samples taken.  0,
 * or -1 past cap_ms. */
static int herd_quiet(herd_t *h, const char *hosts, int consumed,
                      double watches, int intervals, int hold_ms,
                      int pause_ms, int cap_ms, srv_counters_t *last,
                      int *samples) {
  int64_t start = bench_now_ns(), cap = start + (int64_t)cap_ms * 1000000;
  while (atomic_load(&h->consumed) < consumed) {
    if (bench_now_ns() > cap) return -1;
    struct timespec ts = {0, 50000};
    nanosleep(&ts, NULL);
  }
  int64_t since = 0;
  int quiet = 0;
  for (;;) {
    srv_counters_t s, d;
    int64_t now = bench_now_ns();
    if (srv_sample(hosts, &s) == 0) {
      (*samples)++;
      srv_delta(last, &s, &d);
      int ok = s.watches == last->watches && d.packets_received < 0.5 &&
               !(d.notifications > 0.5);
      if (!ok) quiet = 0;
      else if (quiet++ == 0) since = now;
      *last = s;
      if (quiet >= intervals &&
          (s.watches == watches || now - since >= (int64_t)hold_ms * 1000000))
        return 0;
    }
    if (bench_now_ns() > cap) return -1;
    bench_sleep_ms(pause_ms);
  }
}

/* The producer: a raw session or a zkl one, and what it puts with. */
typedef struct producer {
  zhandle_t *zh;
  floor_queue_t fq;
  zkl_session_t *s;
  zkl_queue_t *q;
} producer_t;

static int herd_put(herd_t *h, producer_t *p, const char *data, int len) {
  if (h->impl == H_FLOOR) {
    int zrc = floor_queue_put(&p->fq, data, len);
    if (zrc != ZOK) bench_fail("S10 floor put: %s", zerror(zrc));
    return zrc == ZOK ? 0 : -1;
  }
  int rc = zkl_queue_put(p->q, data, (size_t)len, OP_TIMEOUT_MS);
  if (rc != 0)
    bench_fail("S10 zkl_queue_put: %s: %s", zkl_strerror(rc),
               zkl_last_error());
  return rc;
}

/* One stop item per consumer, in one request. */
static int herd_stop_items(herd_t *h, producer_t *p) {
  if (h->impl == H_FLOOR)
    return floor_queue_put_batch(&p->fq, STOP_ITEM, (int)strlen(STOP_ITEM),
                                 h->c) == ZOK ? 0 : -1;
  zkl_buf_t *b = calloc((size_t)h->c, sizeof *b);
  if (b == NULL) return -1;
  for (int i = 0; i < h->c; i++) b[i] = (zkl_buf_t){STOP_ITEM, strlen(STOP_ITEM)};
  int rc = zkl_queue_put_batch(p->q, b, (size_t)h->c, OP_TIMEOUT_MS);
  free(b);
  return rc;
}

static int consumer_open(herd_t *h, hconsumer_t *k) {
  k->h = h;
  if (h->impl == H_FLOOR) {
    if ((k->zh = floor_open(h->hosts, HERD_SESSION_MS)) == NULL) return -1;
    floor_queue_init(&k->fq, k->zh, h->dir, "qn-", NULL);
    return 0;
  }
  if ((k->s = bench_zkl_open(h->hosts, HERD_SESSION_MS)) == NULL) return -1;
  zkl_queue_opts_t qo;
  zkl_queue_opts_init(&qo);
  if (h->impl == H_CLAIM) qo.format = ZKL_QUEUE_LOCKING;
  return zkl_queue_create(&k->q, k->s, h->root, &qo);
}

static void consumer_close(herd_t *h, hconsumer_t *k) {
  if (h->impl == H_FLOOR) {
    if (k->zh != NULL) {
      floor_close(k->zh); /* before the queue: its watcher's context */
      floor_queue_fini(&k->fq);
    }
    return;
  }
  zkl_queue_destroy(k->q);
  zkl_session_close(k->s);
}

/* Ends the consumers: a stop item each, then (past a bound) the stop flag
 * and a cancel for those still waiting. */
static void herd_end(herd_t *h, producer_t *p, int started) {
  if (herd_stop_items(h, p) != 0)
    bench_note("S10 %s: the stop items could not be put", herd_names[h->impl]);
  int64_t deadline = bench_now_ns() + (int64_t)(30000 + 100 * h->c) * 1000000;
  while (atomic_load(&h->exited) < started && bench_now_ns() < deadline)
    bench_sleep_ms(10);
  if (atomic_load(&h->exited) < started) {
    bench_fail("S10 %s C=%d: %d consumers did not stop", herd_names[h->impl],
               h->c, started - atomic_load(&h->exited));
    atomic_store(&h->stop, 1);
    for (int i = 0; i < started; i++) {
      if (h->impl == H_FLOOR) floor_queue_stop(&h->cs[i].fq);
      else zkl_queue_cancel(h->cs[i].q);
    }
  }
  for (int i = 0; i < started; i++) pthread_join(h->cs[i].th, NULL);
}

static void herd_run(const bench_opts_t *o, int impl, int c, int *fails) {
  herd_t h;
  memset(&h, 0, sizeof h);
  h.impl = impl;
  h.c = c;
  h.hosts = o->hosts;
  char leaf[64], kase[24];
  snprintf(leaf, sizeof leaf, "s10-%s-%d", herd_names[impl], c);
  snprintf(kase, sizeof kase, "C=%d", c);
  bench_path(h.root, sizeof h.root, o->root, leaf, NULL);
  if (impl == H_CLAIM) {
    bench_path(h.dir, sizeof h.dir, h.root, "entries", NULL);
    bench_path(h.taken, sizeof h.taken, h.root, "taken", NULL);
    bench_mkpath(bench_admin, h.taken);
  } else {
    snprintf(h.dir, sizeof h.dir, "%s", h.root);
  }
  bench_mkpath(bench_admin, h.dir);
  h.cs = calloc((size_t)c, sizeof *h.cs);
  producer_t p;
  memset(&p, 0, sizeof p);
  int opened = 0, started = 0;
  samples_t lat = {0};
  if (h.cs == NULL) goto out;
  if (impl == H_FLOOR) {
    if ((p.zh = floor_open(o->hosts, 10000)) == NULL) goto fail;
    floor_queue_init(&p.fq, p.zh, h.dir, "qn-", NULL);
  } else {
    zkl_queue_opts_t qo;
    zkl_queue_opts_init(&qo);
    if (impl == H_CLAIM) qo.format = ZKL_QUEUE_LOCKING;
    if ((p.s = bench_zkl_open(o->hosts, 0)) == NULL ||
        zkl_queue_create(&p.q, p.s, h.root, &qo) != 0)
      goto fail;
    /* the producer's side nodes (<path>.zkl/puts) made, unmeasured */
    zkl_item_t it;
    if (zkl_queue_put(p.q, "warm", 4, OP_TIMEOUT_MS) != 0 ||
        zkl_queue_take(p.q, OP_TIMEOUT_MS, &it) != 0)
      goto fail;
    zkl_item_free(&it);
  }
  srv_counters_t before;
  if (srv_sample(o->hosts, &before) != 0) goto fail;
  for (; opened < c; opened++)
    if (consumer_open(&h, &h.cs[opened]) != 0) goto fail;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  for (; started < c; started++)
    if (pthread_create(&h.cs[started].th, &attr, hconsumer_main,
                       &h.cs[started]) != 0)
      break;
  pthread_attr_destroy(&attr);
  if (started < c) goto fail;
  /* every consumer blocked: in its take, the watches set, all quiet; then
   * one put, unmeasured: the line (zkl) as it stands after a put */
  srv_counters_t last = before;
  int samples = 0;
  while (atomic_load(&h.entered) < c) bench_sleep_ms(5);
  int64_t until = bench_now_ns() + (int64_t)(30000 + 30 * c) * 1000000;
  while (srv_sample(o->hosts, &last) == 0 && last.watches < before.watches + c &&
         bench_now_ns() < until)
    bench_sleep_ms(20);
  char payload[PAYLOAD_BYTES];
  payload_fill(payload);
  if (herd_quiet(&h, o->hosts, 0, -1, 3, BLOCKED_HOLD_MS, 20, 30000 + 30 * c,
                 &last, &samples) != 0 ||
      last.watches < before.watches + c ||
      herd_put(&h, &p, payload, PAYLOAD_BYTES) != 0 ||
      herd_quiet(&h, o->hosts, 1, -1, 3, BLOCKED_HOLD_MS, 20, 30000 + 30 * c,
                 &last, &samples) != 0) {
    bench_fail("S10 %s C=%d: the consumers did not all block (watches %.0f, "
               "%.0f before them, %d consumed)", herd_names[impl], c,
               last.watches, before.watches, atomic_load(&h.consumed));
    goto fail;
  }
  srv_counters_t b0 = last;
  samples = 0;
  int unsettled = 0, done = 0;
  int64_t cap = bench_now_ns() + (int64_t)HERD_CAP_S * 1000000000;
  for (; done < o->puts && bench_now_ns() < cap; done++) {
    int64_t t = bench_now_ns();
    if (herd_put(&h, &p, payload, PAYLOAD_BYTES) != 0) break;
    if (herd_quiet(&h, o->hosts, done + 2, b0.watches, 2, SETTLE_HOLD_MS, 2,
                   SETTLE_CAP_MS, &last, &samples) != 0) {
      unsettled++;
      if (atomic_load(&h.consumed) < done + 2) {
        bench_fail("S10 %s C=%d: put %d not consumed in %d ms",
                   herd_names[impl], c, done + 1, SETTLE_CAP_MS);
        break;
      }
    }
    samples_add(&lat, (double)(atomic_load(&h.t_last) - t) / 1e3);
  }
  if (done < o->puts)
    bench_note("S10 %s C=%d: %d of %d puts in %d s", herd_names[impl], c,
               done, o->puts, HERD_CAP_S);
  if (unsettled > 0)
    bench_note("S10 %s C=%d: %d puts were not followed by a quiet server "
               "within %d ms", herd_names[impl], c, unsettled, SETTLE_CAP_MS);
  if (done > 0) {
    srv_counters_t d;
    srv_delta_n(&b0, &last, samples, &d);
    result_add_samples("10", kase, herd_names[impl], "delivery", "us", &lat);
    srv_report("10", kase, herd_names[impl], "put", &d, done);
    result_add("10", kase, herd_names[impl], "notified/put", "",
               d.notifications / done, NAN, done);
    result_add("10", kase, herd_names[impl], "watches/waiter", "",
               (b0.watches - before.watches) / c, NAN, c);
  }
  printf("  S10 %s %s: %d puts\n", kase, herd_names[impl], done);
  goto out;
fail:
  bench_fail("S10 %s C=%d: setup failed (%d sessions, %d consumers)",
             herd_names[impl], c, opened, started);
  (*fails)++;
out:
  samples_free(&lat);
  if (started > 0) herd_end(&h, &p, started);
  for (int i = 0; h.cs != NULL && i < c; i++) /* a half-opened one too */
    consumer_close(&h, &h.cs[i]);
  if (p.zh != NULL) {
    floor_close(p.zh);
    floor_queue_fini(&p.fq);
  }
  zkl_queue_destroy(p.q);
  zkl_session_close(p.s);
  free(h.cs);
}

void sc_queue_herd(const bench_opts_t *o) {
  int fails = 0;
  for (int i = 0; i < o->n_consumers && fails == 0; i++)
    for (int impl = 0; impl < N_HERD && fails == 0; impl++)
      herd_run(o, impl, o->consumers[i], &fails);
}
