/* The part of the JSON writer's string escaping a buffered writer needs (src/core/json.c). */
#ifndef MBLIN_CORE_JSON_PLAIN_H
#define MBLIN_CORE_JSON_PLAIN_H

#include <stddef.h>

/* The length of s's leading run of characters mbl_json_string writes as they are (no '"', '\',
 * control character): strlen(s) when the whole string needs no escape. */
size_t core_json_plain_len(const char *s);

#endif
