/* The library's version, for programs that check at run time what they linked against. */
#include "simdbloom.h"

unsigned sbloom_version(void)
{
    return SIMDBLOOM_VERSION_NUMBER;
}

const char *sbloom_version_string(void)
{
    return SIMDBLOOM_VERSION_STRING;
}
