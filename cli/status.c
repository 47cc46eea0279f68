/* cli/status.c - `zkl status PATH`: the contenders at PATH in queue order,
 * as a table or as JSON, from the library's zkl_contenders(). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "text.h"

#define DATA_SHOWN 1024 /* bytes of a node's data shown at most */

static size_t shown(const zkl_contender_t *e) {
  return e->data_len < DATA_SHOWN ? e->data_len : DATA_SHOWN;
}

static void print_table(const zkl_contender_t *v, size_t n) {
  if (n == 0) {
    puts("no contenders");
    return;
  }
  int w = (int)strlen("NODE");
  for (size_t i = 0; i < n; i++) {
    int nl = (int)strlen(v[i].name);
    if (nl > w) w = nl;
  }
  printf("%-3s %-8s %-5s %-12s %-18s %-*s %s\n", "POS", "KIND", "HOLDS",
         "TOKEN", "SESSION", w, "NODE", "OWNER");
  for (size_t i = 0; i < n; i++) {
    const zkl_contender_t *e = &v[i];
    char pos[16], session[24];
    if (e->position > 0) snprintf(pos, sizeof pos, "%d", e->position);
    else snprintf(pos, sizeof pos, "-");
    snprintf(session, sizeof session, "0x%" PRIx64, (uint64_t)e->session);
    printf("%-3s %-8s %-5s %-12" PRIu64 " %-18s %-*s ", pos,
           zkl_kind_name(e->kind), e->holds ? "yes" : "no", e->token,
           session, w, e->name);
    cli_put_escaped(stdout, e->data, shown(e));
    putchar('\n');
  }
}

static void print_json(const zkl_contender_t *v, size_t n) {
  fputs("[", stdout);
  for (size_t i = 0; i < n; i++) {
    const zkl_contender_t *e = &v[i];
    fputs(i == 0 ? "\n  {" : ",\n  {", stdout);
    if (e->position > 0) printf("\"position\": %d", e->position);
    else fputs("\"position\": null", stdout);
    printf(", \"kind\": \"%s\", \"holds\": %s, \"node\": ",
           zkl_kind_name(e->kind), e->holds ? "true" : "false");
    cli_put_json_string(stdout, e->name);
    fputs(", \"owner\": ", stdout);
    cli_put_json_escaped(stdout, e->data, shown(e));
    printf(", \"session\": \"0x%" PRIx64 "\", \"token\": %" PRIu64 "}",
           (uint64_t)e->session, e->token);
  }
  fputs(n > 0 ? "\n]\n" : "]\n", stdout);
}

int cli_status_run(const cli_opts_t *o) {
  zkl_session_t *s = NULL;
  int rc = cli_connect(o, NULL, NULL, &s);
  if (rc != 0) return rc;
  zkl_contender_t *v = NULL;
  size_t n = 0;
  rc = zkl_contenders(s, o->path, -1, &v, &n);
  if (rc != 0) {
    fprintf(stderr, "zkl: cannot list %s: %s\n", o->path, zkl_last_error());
    zkl_session_close(s);
    return cli_exit_code(rc);
  }
  zkl_session_close(s);
  if (o->json) print_json(v, n);
  else print_table(v, n);
  zkl_contenders_free(v, n);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    perror("zkl: stdout");
    return CLI_EX_SOFTWARE;
  }
  return 0;
}
