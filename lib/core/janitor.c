/* lib/core/janitor.c - deletes the nodes a caller could not delete itself
 * because the connection was down (a release, a give-up), or whose create
 * it could not confirm, once the connection is back.  Each job is a task
 * the session's thread runs (session.c knows nothing of what it does);
 * the requests go through zkcall.c like every other. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zookeeper/zookeeper.h>

#include "core/core.h"

/* A node to delete, or with node == NULL, every child of root whose name
 * starts with prefix (a create whose outcome is unknown), or with tagged,
 * whose data starts with it. */
struct chore {
  zkl__task_t task; /* first: the session hands us back this pointer */
  char *root, *prefix, *node;
  int owned;        /* node: only if it is an ephemeral of this session */
  int tagged;       /* no node: prefix is a tag leading the data        */
  char *data;       /* owned: ... and its data is this (NULL: any)      */
  int len;
};

static void chore_free(zkl__task_t *t) {
  struct chore *c = (struct chore *)t;
  free(c->root);
  free(c->prefix);
  free(c->node);
  free(c->data);
  free(c);
}

/* Tells the log that the janitor deleted path. */
static void said_deleted(zkl_session_t *s, const char *path) {
  zkl__session_log(s, ZKL_LOG_INFO,
                   "deleted %s, left by a call that could not delete it "
                   "itself", path);
}

/* Deletes one node; already gone counts as done. */
static int delete_one(zkl_session_t *s, const char *path) {
  int zrc = zkl__zk_delete(s, ZKL__FOREVER, path);
  if (zrc == ZOK) said_deleted(s, path);
  return zrc == ZNONODE ? ZOK : zrc;
}

/* Deletes path if what it holds says it is ours: its data is `want`
 * (wlen bytes; with `lead`, only starts with it; NULL: any data), and, with
 * owner, it is an ephemeral node of that session.  Read and deleted at one
 * version: a node of that name made since is left alone.  Gone counts as
 * done. */
static int delete_if_ours(zkl_session_t *s, const char *path,
                          const char *want, int wlen, int lead,
                          int64_t owner) {
  struct Stat st;
  char *data = NULL;
  int len = 0;
  int zrc = zkl__zk_get(s, ZKL__FOREVER, path, 0, &data, &len, &st);
  int ours = zrc == ZOK && (owner == 0 || st.ephemeralOwner == owner) &&
             (want == NULL ||
              (data != NULL && (lead ? len >= wlen : len == wlen) &&
               memcmp(data, want, (size_t)wlen) == 0));
  free(data);
  if (ours) {
    zrc = zkl__zk_wait(zkl__zk_delete_version_send(s, path, st.version),
                       ZKL__FOREVER);
    if (zrc == ZOK) said_deleted(s, path);
    if (zrc == ZBADVERSION) zrc = ZOK;
  }
  return zrc == ZNONODE ? ZOK : zrc;
}

/* Does one chore with the connection up (the client answers every
 * request, so no deadline is needed).  0 done, ZKL_EAGAIN after a lost
 * connection, or a ZooKeeper code: refused for good (the session's end
 * removes the node). */
static int chore_run(zkl_session_t *s, zkl__task_t *t) {
  const struct chore *c = (const struct chore *)t;
  int zrc = ZOK;
  if (c->node != NULL && c->owned) {
    /* ours only while this session owns it: a node of that name made by
     * another session (ours went) is not ours to delete */
    zrc = delete_if_ours(s, c->node, c->data, c->len, 0, zkl_session_id(s));
  } else if (c->node != NULL) {
    zrc = delete_one(s, c->node);
  } else {
    /* a create of unknown outcome: make sure we read fresh state, then
     * delete whatever carries its prefix */
    struct String_vector kids = {0, NULL};
    zrc = zkl__zk_sync(s, ZKL__FOREVER, c->root);
    if (zrc == ZOK)
      zrc = zkl__zk_children(s, ZKL__FOREVER, c->root, 0, &kids);
    if (zrc == ZNONODE) zrc = ZOK; /* no root: nothing of ours in it */
    for (int i = 0; zrc == ZOK && i < kids.count; i++) {
      if (!c->tagged && !zkl__name_is_mine(kids.data[i], c->prefix))
        continue;
      size_t len = strlen(c->root) + strlen(kids.data[i]) + 2;
      char *path = malloc(len);
      if (path == NULL) {
        zrc = ZSYSTEMERROR;
        break;
      }
      snprintf(path, len, "%s/%s", c->root, kids.data[i]);
      zrc = c->tagged ? delete_if_ours(s, path, c->prefix,
                                       (int)strlen(c->prefix), 1, 0)
                      : delete_one(s, path);
      free(path);
    }
    zkl__zk_children_free(&kids);
  }
  if (zrc == ZCONNECTIONLOSS || zrc == ZOPERATIONTIMEOUT) return ZKL_EAGAIN;
  if (zrc != ZOK)
    zkl__session_log(s, ZKL_LOG_WARN,
                     "could not delete %s%s: %s (the session's end will)",
                     c->node != NULL ? c->node : c->root,
                     c->node != NULL ? "" : "'s node of a lost create",
                     zerror(zrc));
  return zrc;
}

int zkl__janitor_add_owned(zkl_session_t *s, const char *node,
                           const char *data, int len) {
  struct chore *c = calloc(1, sizeof *c);
  if (c == NULL) return ZKL_ENOMEM;
  c->task.run = chore_run;
  c->task.drop = chore_free;
  c->owned = 1;
  c->root = strdup("");
  c->prefix = strdup("");
  c->node = strdup(node);
  if (data != NULL && (c->data = malloc(len > 0 ? (size_t)len : 1)) != NULL)
    memcpy(c->data, data, (size_t)len);
  c->len = len;
  if (c->root == NULL || c->prefix == NULL || c->node == NULL ||
      (data != NULL && c->data == NULL)) {
    chore_free(&c->task);
    return ZKL_ENOMEM;
  }
  zkl__session_defer(s, &c->task);
  return 0;
}

/* Queues a chore on root: node, or with node NULL, every child whose name
 * (or, tagged, whose data) starts with prefix. */
static int add_chore(zkl_session_t *s, const char *root, const char *prefix,
                     const char *node, int tagged) {
  struct chore *c = calloc(1, sizeof *c);
  if (c == NULL) return ZKL_ENOMEM;
  c->task.run = chore_run;
  c->task.drop = chore_free;
  c->tagged = tagged;
  c->root = strdup(root);
  c->prefix = strdup(prefix != NULL ? prefix : ""); /* none for a node */
  c->node = node != NULL ? strdup(node) : NULL;
  if (c->root == NULL || c->prefix == NULL || (node != NULL && !c->node)) {
    chore_free(&c->task);
    return ZKL_ENOMEM;
  }
  zkl__session_defer(s, &c->task);
  return 0;
}

int zkl__janitor_add(zkl_session_t *s, const char *root, const char *prefix,
                     const char *node) {
  return add_chore(s, root, prefix, node, 0);
}

int zkl__janitor_add_tagged(zkl_session_t *s, const char *root,
                            const char *tag) {
  return add_chore(s, root, tag, NULL, 1);
}
