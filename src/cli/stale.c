/*
 * Temporary files that an interrupted save (a crash, a kill, a power cut) left beside a filter.
 * They are never read, but they take space and confuse whoever lists the directory, so the
 * commands that touch a filter name them, and `simdbloom info --clean` removes them. The names
 * are the library's (src/os/save.c): "NAME.tmp.XXXXXX" beside NAME, or ".sbloom-tmp.XXXXXX" when
 * that would be too long. Removing one while another process is in the middle of saving the
 * same filter makes that save fail (it never damages the filter): clean when no writer runs.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "filters.h"

/* 1 if name is prefix followed by exactly six letters or digits. */
static int temporary_name(const char *name, const char *prefix)
{
    size_t len = strlen(prefix);
    if (strncmp(name, prefix, len) != 0 || strlen(name) != len + 6)
        return 0;
    for (size_t i = len; i < len + 6; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
            return 0;
    }
    return 1;
}

/* Calls fn(directory, name) for each stale temporary file of the filter at path; returns the
 * count. */
static size_t each_temporary(const char *path, int (*fn)(const char *dir, const char *name))
{
    char resolved[PATH_MAX];
    const char *file = realpath(path, resolved) ? resolved : path;
    const char *slash = strrchr(file, '/');
    char dir[PATH_MAX], prefix[PATH_MAX + 8];
    if (slash) {
        size_t len = slash == file ? 1 : (size_t)(slash - file);
        if (len >= sizeof dir)
            return 0;
        memcpy(dir, file, len);
        dir[len] = '\0';
    } else {
        strcpy(dir, ".");
    }
    snprintf(prefix, sizeof prefix, "%s.tmp.", slash ? slash + 1 : file);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (temporary_name(e->d_name, prefix) || temporary_name(e->d_name, ".sbloom-tmp.")) {
            count++;
            if (fn && fn(dir, e->d_name) != 0)
                break;
        }
    }
    closedir(d);
    return count;
}

static int name_one(const char *dir, const char *name)
{
    fprintf(stderr, "simdbloom: warning: %s/%s is left over from an interrupted save\n", dir, name);
    return 0;
}

size_t stale_temporaries_warn(const char *path)
{
    size_t count = each_temporary(path, name_one);
    if (count > 0)
        fprintf(stderr, "simdbloom: (never read; 'simdbloom info --clean %s' removes %s)\n", path,
                count == 1 ? "it" : "them");
    return count;
}

static int remove_one(const char *dir, const char *name)
{
    char full[PATH_MAX + NAME_MAX + 2];
    snprintf(full, sizeof full, "%s/%s", dir, name);
    if (unlink(full) == 0)
        fprintf(stderr, "simdbloom: removed %s\n", full);
    else
        perror(full);
    return 0;
}

size_t stale_temporaries_clean(const char *path)
{
    return each_temporary(path, remove_one);
}
