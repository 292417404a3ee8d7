/* mblin: the one JSON writer every output uses (reports, sweeps, comparisons, the command line).
 *
 * Strings are escaped as RFC 8259 asks: '"' and '\' with a backslash, newline and tab as \n and
 * \t, every other control character as \u00XX; bytes from 0x80 up are copied (names are UTF-8).
 * A NULL string is written as "". Numbers are written with 17 significant digits, enough to read
 * back the same double; a number that is not finite (JSON has no infinity or NaN) is null. */
#ifndef MBLIN_JSON_H
#define MBLIN_JSON_H

#include "mblin/export.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the JSON outputs' schemas (docs/schema/, one per command): every JSON object mblin writes
 * starts with "schema_version": MBL_JSON_SCHEMA_VERSION. Bumped when a key is removed or changes
 * meaning (type, unit, order); a key added leaves it as it is (docs/cli.md, "The JSON object"). */
#define MBL_JSON_SCHEMA_VERSION 1

/* s as a JSON string, with its quotes. */
MBL_API void mbl_json_string(FILE *f, const char *s);

/* x as a JSON number with `digits` significant digits (%.*g; 17 reads back exactly), or null when
 * not finite. zero_unsigned: a zero (either sign) is written as 0 (else -0 stays -0). */
MBL_API void mbl_json_number(FILE *f, double x, int digits, int zero_unsigned);

#ifdef __cplusplus
}
#endif

#endif
