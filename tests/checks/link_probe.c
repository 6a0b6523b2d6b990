/*
 * link_probe.c - the smallest PMIx client program, for the build checks.
 *
 * It is compiled like any program that uses our public headers and linked
 * with the shared libpmix. check-headers.sh looks at which pmix headers its
 * compilation uses, check-linkage.sh at which libpmix.so.2 it loads. It
 * needs no server: it prints the library's version string and exits.
 */
#include <stdio.h>

#include <pmix.h>

int main(void)
{
    const char *version = PMIx_Get_version();

    if (version == NULL) {
        return 1;
    }
    printf("%s\n", version);
    return 0;
}
