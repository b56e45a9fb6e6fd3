/* Error codes and their names. */
#include "simdbloom.h"

const char *sbloom_strerror(int code)
{
    switch (code) {
    case SBLOOM_OK:
        return "success";
    case SBLOOM_E_NULL:
        return "a required pointer argument is NULL";
    case SBLOOM_E_INVALID:
        return "invalid argument (items must be > 0, rate must be in (0,1))";
    case SBLOOM_E_NOMEM:
        return "out of memory";
    case SBLOOM_E_TOO_LARGE:
        return "filter too large (over 64 GiB, or the size overflows)";
    case SBLOOM_E_LAYOUT:
        return "unknown layout";
    case SBLOOM_E_ISA:
        return "instruction set unknown or not supported by this CPU";
    default:
        return code > 0 ? "not an error code" : "unknown error";
    }
}
