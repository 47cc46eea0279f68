/* cli/zkl.c - the zkl command-line tool: flock(1)-like locks, leader
 * election, queues, counters, barriers and semaphores on ZooKeeper for
 * shell scripts.  See zkl(1) (cli/zkl.1). */
#include <stdio.h>
#include <stdlib.h>

#include "child.h"
#include "cli.h"

static int run(const cli_opts_t *o) {
  switch (o->command) {
  case CLI_CMD_LOCK: return cli_lock_run(o);
  case CLI_CMD_ELECT: return o->observe ? cli_observe_run(o) : cli_elect_run(o);
  case CLI_CMD_STATUS: return cli_status_run(o);
  case CLI_CMD_QUEUE: return cli_queue_run(o);
  case CLI_CMD_COUNTER: return cli_counter_run(o);
  case CLI_CMD_BARRIER: return cli_barrier_run(o);
  case CLI_CMD_SEM: return cli_sem_run(o);
  case CLI_CMD_NONE: break;
  }
  return CLI_EX_SOFTWARE;
}

int main(int argc, char **argv) {
  cli_child_fds_init(); /* before anything opens a descriptor */
  cli_opts_t o;
  char err[512];
  int rc = cli_opts_parse(&o, argc, argv, getenv("ZKL_SERVERS"), err,
                          sizeof err);
  if (rc != 0) {
    fprintf(stderr, "%s\n", err);
  } else if (o.action == CLI_HELP) {
    fputs(cli_help(o.command), stdout);
  } else if (o.action == CLI_VERSION) {
    printf("zkl %s (libzkl %s)\n", ZKL_VERSION_STRING, zkl_version());
  } else {
    rc = run(&o);
  }
  cli_child_fds_fini();
  if (fflush(stdout) != 0 && rc == 0) rc = CLI_EX_SOFTWARE;
  return rc;
}
