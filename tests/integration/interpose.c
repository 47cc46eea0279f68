/* tests/integration/interpose.c - the suite's own zoo_aget_children(),
 * found ahead of libzookeeper's (an executable's definitions come first
 * in the lookup), so that a test can have the client fail the next
 * listing of a path as it is sent: what the client does when the handle
 * expired between two sends.  Every other call goes to the client's. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"

typedef int (*children_fn)(zhandle_t *, const char *, int,
                           strings_completion_t, const void *);

static pthread_mutex_t fail_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t real_once = PTHREAD_ONCE_INIT;
static children_fn real_children;
static char fail_path[512];
static int fail_rc, failed;

static void real_find(void) {
  void *f = dlsym(RTLD_NEXT, "zoo_aget_children");
  if (f == NULL) {
    fprintf(stderr, "interpose: no zoo_aget_children after ours\n");
    abort();
  }
  memcpy(&real_children, &f, sizeof f); /* object to function pointer */
}

void it_fail_next_listing(const char *path, int zrc) {
  pthread_mutex_lock(&fail_mu);
  snprintf(fail_path, sizeof fail_path, "%s", path);
  fail_rc = zrc;
  failed = 0;
  pthread_mutex_unlock(&fail_mu);
}

int it_listings_failed(void) {
  pthread_mutex_lock(&fail_mu);
  int n = failed;
  fail_path[0] = '\0'; /* one not taken is forgotten */
  pthread_mutex_unlock(&fail_mu);
  return n;
}

int zoo_aget_children(zhandle_t *zh, const char *path, int watch,
                      strings_completion_t completion, const void *data) {
  pthread_mutex_lock(&fail_mu);
  int fail = fail_path[0] != '\0' && path != NULL &&
             strcmp(path, fail_path) == 0;
  if (fail) {
    fail_path[0] = '\0';
    failed++;
  }
  int rc = fail_rc;
  pthread_mutex_unlock(&fail_mu);
  if (fail) return rc;
  pthread_once(&real_once, real_find);
  return real_children(zh, path, watch, completion, data);
}
