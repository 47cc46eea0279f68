/* cli/statsfile.h - PRIVATE to the zkl tool: the counters files that
 * zkl_session_stats_export() writes, read back for `zkl status --stats`.
 * Pure logic (no server, no clock but the one passed in), unit-tested. */
#ifndef ZKL_CLI_STATSFILE_H
#define ZKL_CLI_STATSFILE_H

#include <stdio.h>
#include <zkl.h>

/* One file, parsed: the counters in zkl_session_stats_t's shape, and the
 * lines about the session.  has_* say what the file had. */
typedef struct cli_statsfile {
  zkl_session_stats_t st;
  unsigned long long session; /* the ZooKeeper session id                */
  long pid;                   /* the process that wrote it               */
  char hosts[512];
  char state[16];             /* connected, suspended, ...               */
  double written;             /* when (Unix time, seconds)               */
  double interval;            /* how often, seconds                      */
  int has_info, has_written;
  int counters;               /* how many counter lines were recognized  */
} cli_statsfile_t;

/* Parses the text of a counters file.
 *   0   *out filled (lines it does not know are skipped: later versions
 *       may add some).
 *   -1  not a zkl counters file: a line is malformed, or it has no
 *       zkl_session_info or no counters; err says which line and why. */
int cli_statsfile_parse(const char *text, cli_statsfile_t *out, char *err,
                        size_t err_len);

/* Is a file written at f->written stale at time `now` (Unix seconds)?
 * Stale: older than 3 intervals and 2 s: the process that wrote it has
 * probably died without removing it (SIGKILL). */
int cli_statsfile_stale(const cli_statsfile_t *f, double now);

/* A file as the table shows it: a heading line naming `name`, then a line
 * per group of counters. */
void cli_statsfile_print(FILE *out, const char *name,
                         const cli_statsfile_t *f, double now);

/* The same as a JSON object (no newline): "file", "pid", "session",
 * "hosts", "state", "written", "age_s", "interval_s", "stale", and
 * "counters" with zkl_session_stats_t's field names. */
void cli_statsfile_json(FILE *out, const char *name, const cli_statsfile_t *f,
                        double now);

#endif /* ZKL_CLI_STATSFILE_H */
