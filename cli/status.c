/* cli/status.c - `zkl status PATH`: the contenders at PATH in queue order,
 * as a table or as JSON. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "listing.h"
#include "text.h"

static void print_table(const cli_listing_t *l) {
  if (l->n == 0) {
    puts("no contenders");
    return;
  }
  int w = (int)strlen("NODE");
  for (size_t i = 0; i < l->n; i++) {
    int nl = (int)strlen(l->v[i].name);
    if (nl > w) w = nl;
  }
  printf("%-3s %-8s %-5s %-12s %-18s %-*s %s\n", "POS", "KIND", "HOLDS",
         "TOKEN", "SESSION", w, "NODE", "OWNER");
  for (size_t i = 0; i < l->n; i++) {
    const cli_entry_t *e = &l->v[i];
    char pos[16], session[24];
    if (e->position > 0) snprintf(pos, sizeof pos, "%d", e->position);
    else snprintf(pos, sizeof pos, "-");
    snprintf(session, sizeof session, "0x%" PRIx64, (uint64_t)e->owner);
    printf("%-3s %-8s %-5s %-12" PRId64 " %-18s %-*s ", pos,
           cli_kind_name(e->kind), e->holds ? "yes" : "no", e->czxid, session,
           w, e->name);
    cli_put_escaped(stdout, e->data, (size_t)e->data_len);
    putchar('\n');
  }
}

static void print_json(const cli_listing_t *l) {
  fputs("[", stdout);
  for (size_t i = 0; i < l->n; i++) {
    const cli_entry_t *e = &l->v[i];
    fputs(i == 0 ? "\n  {" : ",\n  {", stdout);
    if (e->position > 0) printf("\"position\": %d", e->position);
    else fputs("\"position\": null", stdout);
    printf(", \"kind\": \"%s\", \"holds\": %s, \"node\": ",
           cli_kind_name(e->kind), e->holds ? "true" : "false");
    cli_put_json_string(stdout, e->name);
    fputs(", \"owner\": ", stdout);
    cli_put_json_escaped(stdout, e->data, (size_t)e->data_len);
    printf(", \"session\": \"0x%" PRIx64 "\", \"token\": %" PRId64 "}",
           (uint64_t)e->owner, e->czxid);
  }
  fputs(l->n > 0 ? "\n]\n" : "]\n", stdout);
}

int cli_status_run(const cli_opts_t *o) {
  zkl_session_t *s = NULL;
  int rc = cli_connect(o, NULL, NULL, &s);
  if (rc != 0) return rc;
  cli_listing_t l;
  int zrc = cli_listing_read(zkl_session_zhandle(s), o->path, &l);
  zkl_session_close(s);
  if (zrc != 0) {
    fprintf(stderr, "zkl: cannot list %s: %s\n", o->path, zkl_strerror(zrc));
    return cli_exit_code(zrc);
  }
  if (o->json) print_json(&l);
  else print_table(&l);
  cli_listing_free(&l);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    perror("zkl: stdout");
    return CLI_EX_SOFTWARE;
  }
  return 0;
}
