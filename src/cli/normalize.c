/*
 * --normalize url: the canonical form of a URL, so that spellings of one address dedup as one
 * key. The rules (RFC 3986, section 6.2.2, plus scheme-based port defaults):
 *
 *   1. scheme and host are lowercased            HTTP://Example.COM/  -> http://example.com/
 *   2. a default port is dropped (http 80,        http://a.com:80/x    -> http://a.com/x
 *      https 443, ftp 21), and an empty one        http://a.com:/x      -> http://a.com/x
 *   3. the fragment is dropped                    http://a.com/x#top   -> http://a.com/x
 *   4. "." and ".." path segments are resolved    http://a.com/a/./b/../c -> http://a.com/a/c
 *   5. percent-escape hex digits are uppercased   %2f -> %2F
 *   6. escapes of unreserved characters (letters, digits, - . _ ~) are decoded: %7Euser -> ~user
 *   7. an empty path becomes "/"                  http://a.com         -> http://a.com/
 *
 * Userinfo, path and query are otherwise left as they are (case included); rules 5 and 6 apply to
 * path and query, before rule 4 (so %2E%2E is a ".." segment). A line that is not
 * "scheme://authority..." passes through unchanged. The normal form is the key; the line written
 * out is the line as it came.
 */
#include <ctype.h>
#include <string.h>

#include "normalize.h"

static int is_unreserved(int c)
{
    return isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

static int hex_value(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = tolower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Rules 5 and 6 over in[0, len) appended to out; returns the new out length. */
static size_t percent_normalize(const char *in, size_t len, char *out, size_t at)
{
    for (size_t i = 0; i < len; i++) {
        int hi, lo;
        if (in[i] == '%' && i + 2 < len && (hi = hex_value((unsigned char)in[i + 1])) >= 0 &&
            (lo = hex_value((unsigned char)in[i + 2])) >= 0) {
            int c = hi * 16 + lo;
            if (is_unreserved(c)) {
                out[at++] = (char)c;
            } else {
                out[at++] = '%';
                out[at++] = (char)toupper((unsigned char)in[i + 1]);
                out[at++] = (char)toupper((unsigned char)in[i + 2]);
            }
            i += 2;
        } else {
            out[at++] = in[i];
        }
    }
    return at;
}

/* Rule 4 on the path out[start, end) (which begins with '/'), in place; returns the new end. */
static size_t remove_dot_segments(char *out, size_t start, size_t end)
{
    size_t write = start; /* the result so far is out[start, write), always "/..." or empty */
    size_t read = start + 1;
    int trailing = 0;
    while (read <= end) {
        size_t seg_end = read;
        while (seg_end < end && out[seg_end] != '/')
            seg_end++;
        size_t seg_len = seg_end - read;
        int last = seg_end >= end;
        if (seg_len == 1 && out[read] == '.') {
            trailing = last;
        } else if (seg_len == 2 && out[read] == '.' && out[read + 1] == '.') {
            while (write > start && out[write - 1] != '/')
                write--; /* drop the last segment... */
            if (write > start)
                write--; /* ...and its slash */
            trailing = last;
        } else {
            out[write++] = '/';
            memmove(out + write, out + read, seg_len);
            write += seg_len;
            trailing = 0;
        }
        read = seg_end + 1;
    }
    if (trailing || write == start)
        out[write++] = '/';
    return write;
}

static const char *default_port(const char *scheme, size_t len)
{
    if (len == 4 && strncmp(scheme, "http", 4) == 0)
        return "80";
    if (len == 5 && strncmp(scheme, "https", 5) == 0)
        return "443";
    if (len == 3 && strncmp(scheme, "ftp", 3) == 0)
        return "21";
    return NULL;
}

size_t url_normalize(const char *in, size_t len, char *out)
{
    /* scheme ":" "//" */
    size_t i = 0;
    if (len == 0 || !isalpha((unsigned char)in[0]))
        return 0;
    while (i < len &&
           (isalnum((unsigned char)in[i]) || in[i] == '+' || in[i] == '-' || in[i] == '.'))
        i++;
    if (i + 3 > len || in[i] != ':' || in[i + 1] != '/' || in[i + 2] != '/')
        return 0;
    size_t scheme_len = i, at = 0;
    for (size_t k = 0; k < scheme_len; k++)
        out[at++] = (char)tolower((unsigned char)in[k]);
    memcpy(out + at, "://", 3);
    at += 3;
    i += 3;

    /* authority: [userinfo "@"] host [":" port] */
    size_t auth_end = i;
    while (auth_end < len && in[auth_end] != '/' && in[auth_end] != '?' && in[auth_end] != '#')
        auth_end++;
    size_t host = i;
    for (size_t k = i; k < auth_end; k++)
        if (in[k] == '@')
            host = k + 1;
    memcpy(out + at, in + i, host - i); /* userinfo as it is */
    at += host - i;
    size_t port = auth_end; /* the ':' of the port, outside any [IPv6] brackets */
    for (size_t k = auth_end; k > host; k--) {
        if (in[k - 1] == ']')
            break;
        if (in[k - 1] == ':') {
            port = k - 1;
            break;
        }
    }
    for (size_t k = host; k < port; k++)
        out[at++] = (char)tolower((unsigned char)in[k]);
    if (port < auth_end) {
        const char *digits = in + port + 1;
        size_t ndigits = auth_end - port - 1;
        const char *dflt = default_port(out, scheme_len);
        int is_default = dflt && strlen(dflt) == ndigits && memcmp(digits, dflt, ndigits) == 0;
        if (ndigits > 0 && !is_default) {
            memcpy(out + at, in + port, ndigits + 1);
            at += ndigits + 1;
        }
    }

    /* path, then query; the fragment is dropped */
    size_t path_end = auth_end;
    while (path_end < len && in[path_end] != '?' && in[path_end] != '#')
        path_end++;
    size_t path_start = at;
    if (path_end == auth_end) {
        out[at++] = '/';
    } else {
        at = percent_normalize(in + auth_end, path_end - auth_end, out, at);
        at = remove_dot_segments(out, path_start, at);
    }
    size_t query_end = path_end;
    while (query_end < len && in[query_end] != '#')
        query_end++;
    at = percent_normalize(in + path_end, query_end - path_end, out, at);
    return at;
}
