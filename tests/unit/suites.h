/* tests/unit/suites.h - the no-server unit test suites, one per module. */
#ifndef ZKL_UNIT_SUITES_H
#define ZKL_UNIT_SUITES_H

#include <check.h>

Suite *names_suite(void);  /* test-names.c: contender names, order, prefix */
Suite *path_suite(void);   /* test-path.c: which paths may be lock roots    */
Suite *errors_suite(void); /* test-errors.c: codes, texts, names, version   */
Suite *args_suite(void);   /* test-args.c: argument checks, driver, time    */
Suite *drivers_suite(void); /* test-drivers.c: the read/write drivers      */
Suite *inspect_suite(void); /* test-inspect.c: queue order from names     */
Suite *log_suite(void);     /* test-log.c: the log's routes and parsing    */

#endif /* ZKL_UNIT_SUITES_H */
