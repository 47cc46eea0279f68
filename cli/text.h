/* cli/text.h - PRIVATE to the zkl tool: bytes made safe to print. */
#ifndef ZKL_CLI_TEXT_H
#define ZKL_CLI_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* Writes data so that it prints on one line as plain ASCII: printable
 * ASCII as is, backslash as "\\", tab/newline/CR as "\t" "\n" "\r", any
 * other byte as "\xHH".  The same bytes always give the same text. */
void cli_put_escaped(FILE *f, const void *data, size_t len);

/* Writes s as a JSON string, quotes included: '"' and '\' escaped,
 * control characters as \u00XX; other bytes as they are (s must be UTF-8,
 * as ZooKeeper's node names are). */
void cli_put_json_string(FILE *f, const char *s);

/* cli_put_escaped() of data, as a JSON string. */
void cli_put_json_escaped(FILE *f, const void *data, size_t len);

#endif /* ZKL_CLI_TEXT_H */
