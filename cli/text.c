/* cli/text.c - printable escapes for node data, and JSON strings. */
#include "text.h"

/* The escape of one byte, as cli_put_escaped() writes it, into buf. */
static const char *escape_byte(unsigned c, char buf[5]) {
  switch (c) {
  case '\\': return "\\\\";
  case '\t': return "\\t";
  case '\n': return "\\n";
  case '\r': return "\\r";
  default: break;
  }
  if (c >= 0x20 && c < 0x7f) {
    buf[0] = (char)c;
    buf[1] = '\0';
  } else {
    snprintf(buf, 5, "\\x%02x", c);
  }
  return buf;
}

/* Escaped text is printable ASCII, so as JSON it needs only '"' and '\'
 * escaped once more. */
static void put_json_char(FILE *f, unsigned char c) {
  if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
  else if (c < 0x20 || c == 0x7f) fprintf(f, "\\u%04x", c);
  else fputc(c, f);
}

void cli_put_escaped(FILE *f, const void *data, size_t len) {
  const unsigned char *p = data;
  char buf[5];
  for (size_t i = 0; i < len; i++) fputs(escape_byte(p[i], buf), f);
}

void cli_put_json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    put_json_char(f, *p);
  fputc('"', f);
}

void cli_put_json_escaped(FILE *f, const void *data, size_t len) {
  const unsigned char *p = data;
  char buf[5];
  fputc('"', f);
  for (size_t i = 0; i < len; i++)
    for (const char *e = escape_byte(p[i], buf); *e; e++)
      put_json_char(f, (unsigned char)*e);
  fputc('"', f);
}
