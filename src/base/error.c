/* Error codes and their names, and the detail of the last failed read of a file. */
#include <stdarg.h>
#include <stdio.h>

#include "base.h"

/* One per thread: a caller reads it right after the call that failed. */
static _Thread_local char detail[256];

const char *sbloom_error_detail(void)
{
    return detail;
}

void sbloom_clear_detail(void)
{
    detail[0] = '\0';
}

int sbloom_fail_with(int code, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(detail, sizeof detail, format, args);
    va_end(args);
    return code;
}

const char *sbloom_strerror(int code)
{
    switch (code) {
    case SBLOOM_OK: return "success";
    case SBLOOM_E_NULL: return "a required pointer argument is NULL";
    case SBLOOM_E_INVALID:
        return "invalid argument (a count, rate, size, flag or buffer alignment out of range)";
    case SBLOOM_E_NOMEM: return "out of memory";
    case SBLOOM_E_TOO_LARGE: return "filter too large (over 64 GiB, or the size overflows)";
    case SBLOOM_E_LAYOUT: return "unknown layout, or an operation this layout does not support";
    case SBLOOM_E_ISA: return "instruction set unknown or not supported by this CPU";
    case SBLOOM_E_IO: return "file input/output failed";
    case SBLOOM_E_FORMAT: return "not a simdbloom filter file";
    case SBLOOM_E_VERSION: return "filter file of an unknown format version or hash function";
    case SBLOOM_E_CORRUPT: return "filter file damaged (a checksum or a field is wrong)";
    case SBLOOM_E_TRUNCATED: return "filter file truncated (size does not match its header)";
    case SBLOOM_E_INCOMPATIBLE: return "filters have different layouts or sizes";
    case SBLOOM_E_READONLY: return "filter is a read-only mapping";
    case SBLOOM_E_UNSUPPORTED: return "not supported by this build or host";
    case SBLOOM_E_NOT_REGULAR: return "not a regular file (a directory, FIFO, device or socket)";
    case SBLOOM_E_FACTOR:
        return "fold factor does not divide the block count (sbloom_fold_factors lists those "
               "that do)";
    case SBLOOM_E_LOCKED:
        return "another process holds a lock of the filter and does not let it go (stopped or "
               "stuck)";
    case SBLOOM_E_ABSENT: return "key not in the filter; nothing removed";
    case SBLOOM_E_FULL:
        return "fingerprint filter full: no room for the key (it holds far more keys than "
               "planned); the key was not added";
    default: return code > 0 ? "not an error code" : "unknown error";
    }
}
