/* cli/listing.c - reading a path's children for `zkl status`. */
#include "listing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zookeeper/zookeeper.h>

#include "cli.h"

/* "path/name" into buf: 0, or -1 if it does not fit. */
static int child_path(char *buf, size_t len, const char *path,
                      const char *name) {
  int n = snprintf(buf, len, "%s/%s", path, name);
  return n > 0 && (size_t)n < len ? 0 : -1;
}

/* Reads one child into e: 0, 1 if it vanished, or ZooKeeper's code. */
static int read_child(zhandle_t *zh, const char *path, cli_entry_t *e) {
  char full[2048];
  if (child_path(full, sizeof full, path, e->name) != 0) return ZBADARGUMENTS;
  struct Stat st;
  char *buf = malloc(CLI_DATA_SHOWN);
  if (buf == NULL) return ZSYSTEMERROR;
  int len = CLI_DATA_SHOWN;
  int rc = zoo_get(zh, full, 0, buf, &len, &st);
  if (rc == ZNOAUTH) { /* not ours to read: the stat is still public */
    len = -1;
    rc = zoo_exists(zh, full, 0, &st);
  }
  if (rc != ZOK || len < 0) {
    free(buf);
    buf = NULL;
    len = 0;
  }
  if (rc == ZNONODE) return 1;
  if (rc != ZOK) return rc;
  e->data = buf;
  e->data_len = len;
  e->czxid = st.czxid;
  e->owner = st.ephemeralOwner;
  return 0;
}

int cli_listing_read(zhandle_t *zh, const char *path, cli_listing_t *out) {
  memset(out, 0, sizeof *out);
  struct String_vector sv = {0, NULL};
  int rc = zoo_get_children(zh, path, 0, &sv);
  if (rc == ZNONODE) return 0;
  if (rc != ZOK) return rc;
  out->v = calloc((size_t)sv.count + 1, sizeof *out->v);
  out->names = calloc((size_t)sv.count + 1, sizeof *out->names);
  if (out->v == NULL || out->names == NULL) rc = ZSYSTEMERROR;
  for (int32_t i = 0; rc == ZOK && i < sv.count; i++) {
    cli_entry_t *e = &out->v[out->n];
    memset(e, 0, sizeof *e);
    if ((out->names[out->n] = strdup(sv.data[i])) == NULL) {
      rc = ZSYSTEMERROR;
      break;
    }
    e->name = out->names[out->n];
    int r = read_child(zh, path, e);
    if (r == 0) out->n++;
    else if (r == 1) free(out->names[out->n]);
    else {
      free(out->names[out->n]);
      rc = r;
    }
  }
  deallocate_String_vector(&sv);
  if (rc != ZOK) {
    cli_listing_free(out);
    return rc;
  }
  cli_queue_order(out->v, out->n);
  return 0;
}

void cli_listing_free(cli_listing_t *l) {
  for (size_t i = 0; i < l->n; i++) {
    free(l->v[i].data);
    free(l->names[i]);
  }
  free(l->v);
  free(l->names);
  memset(l, 0, sizeof *l);
}
