#include "mblin/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void mbl_status_clear(mbl_status *st)
{
    if (!st) return;
    st->code = 0;
    st->msg[0] = '\0';
}

int mbl_error(mbl_status *st, int code, const char *fmt, ...)
{
    if (!st) return code;
    st->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->msg, sizeof st->msg, fmt, ap);
    va_end(ap);
    /* keep the message on one line */
    for (char *p = st->msg; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    return code;
}

int mbl_error_prefix(mbl_status *st, const char *fmt, ...)
{
    if (!st) return MBL_EARG;
    char pre[MBL_MSG_MAX], old[MBL_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    memcpy(old, st->msg, sizeof old);
    size_t np = strlen(pre);
    /* a message that already starts with the prefix (a file name before its ":line:col") keeps it once */
    if (np && !strncmp(old, pre, np) && old[np] == ':') return st->code;
    if (np > sizeof st->msg - 3) np = sizeof st->msg - 3;
    memcpy(st->msg, pre, np);
    st->msg[np] = ':';
    st->msg[np + 1] = ' ';
    size_t room = sizeof st->msg - np - 3, no = strlen(old);
    if (no > room) no = room;
    memcpy(st->msg + np + 2, old, no);
    st->msg[np + 2 + no] = '\0';
    return st->code;
}

const char *mbl_strerror(int code)
{
    switch (code) {
    case MBL_OK: return "ok";
    case MBL_ENOMEM: return "out of memory";
    case MBL_EDIM: return "dimension mismatch";
    case MBL_ESINGULAR: return "singular matrix";
    case MBL_ENOCONV: return "no convergence";
    case MBL_EPARSE: return "parse error";
    case MBL_EDOMAIN: return "domain error";
    case MBL_EMODEL: return "invalid model";
    case MBL_EIO: return "i/o error";
    case MBL_ELIB: return "library error";
    case MBL_EARG: return "invalid argument";
    case MBL_ECANCELLED: return "cancelled";
    case MBL_EPERM: return "not permitted";
    default: return "unknown error";
    }
}

const char *mbl_version(void) { return MBLIN_VERSION_STRING; }
