/* --normalize url, rule by rule (src/cli/normalize.c). */
#include <stdlib.h>
#include <string.h>

#include "simdbloom.h"
#include "check.h"
#include "../src/cli/normalize.h"

static void expect(const char *in, const char *want)
{
    size_t len = strlen(in);
    char *out = malloc(len + 2);
    size_t got = url_normalize(in, len, out);
    int ok = want ? got == strlen(want) && memcmp(out, want, got) == 0 : got == 0;
    if (!ok)
        fprintf(stderr, "  %s -> %.*s, want %s\n", in, (int)got, out, want ? want : "(not a URL)");
    check_record(ok, __FILE__, __LINE__, in);
    free(out);
}

int main(void)
{
    /* 1. scheme and host lowercased; path and query keep their case */
    expect("HTTP://Example.COM/Path?Q=A", "http://example.com/Path?Q=A");
    expect("HtTpS://WWW.Debian.ORG/", "https://www.debian.org/");
    expect("http://User:Pass@Example.com/", "http://User:Pass@example.com/");
    /* 2. default and empty ports */
    expect("http://a.com:80/x", "http://a.com/x");
    expect("https://a.com:443/x", "https://a.com/x");
    expect("ftp://a.com:21/f", "ftp://a.com/f");
    expect("http://a.com:443/x", "http://a.com:443/x");
    expect("https://a.com:8443/x", "https://a.com:8443/x");
    expect("http://a.com:/x", "http://a.com/x");
    expect("http://[2001:DB8::1]:80/x", "http://[2001:db8::1]/x");
    expect("http://[2001:db8::1]/x", "http://[2001:db8::1]/x");
    /* 3. fragment dropped */
    expect("http://a.com/x#top", "http://a.com/x");
    expect("http://a.com/x?q=1#frag", "http://a.com/x?q=1");
    expect("http://a.com#frag", "http://a.com/");
    /* 4. dot segments */
    expect("http://a.com/a/./b/../c", "http://a.com/a/c");
    expect("http://a.com/a/b/..", "http://a.com/a/");
    expect("http://a.com/a/b/.", "http://a.com/a/b/");
    expect("http://a.com/../../x", "http://a.com/x");
    expect("http://a.com/..", "http://a.com/");
    expect("http://a.com/a/%2E%2E/b", "http://a.com/b");
    expect("http://a.com/a//b", "http://a.com/a//b");
    expect("http://a.com/.hidden/..x", "http://a.com/.hidden/..x");
    /* 5. hex digits uppercased */
    expect("http://a.com/a%2fb?x=%3d", "http://a.com/a%2Fb?x=%3D");
    /* 6. unreserved characters decoded, reserved kept escaped */
    expect("http://a.com/%7Euser/%41%62%2D%5F", "http://a.com/~user/Ab-_");
    expect("http://a.com/a%20b", "http://a.com/a%20b");
    expect("http://a.com/bad%zz%4", "http://a.com/bad%zz%4");
    /* 7. empty path */
    expect("http://a.com", "http://a.com/");
    expect("http://a.com?q=1", "http://a.com/?q=1");
    /* the sample's odd ones: &amp; is left as it is */
    expect("https://a.com/p?x=1&amp;y=2", "https://a.com/p?x=1&amp;y=2");
    /* not URLs: passed through */
    expect("", NULL);
    expect("just words", NULL);
    expect("mailto:someone@example.com", NULL);
    expect("1http://a.com/", NULL);
    expect("http:/a.com", NULL);
    return check_report();
}
