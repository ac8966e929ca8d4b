/* netcheck_addr_public against the ranges its header documents, written octet by octet,
 * and consistency between an IPv4 address and the IPv6 forms that carry it.
 * Input: 16 bytes of an IPv6 address; its last (or for 6to4, bytes 2-5) 4 bytes are also
 * tried as IPv4. */
#include <arpa/inet.h>

#include "fuzz.h"
#include "netcheck.h"

static bool ref_v4_public(const uint8_t *p)
{
    uint8_t a = p[0], b = p[1], c = p[2];
    return !(a == 0 || a == 10 || a == 127 || a >= 224 || (a == 100 && (b & 0xC0) == 64) ||
             (a == 169 && b == 254) || (a == 172 && (b & 0xF0) == 16) ||
             (a == 192 && b == 0 && (c == 0 || c == 2)) || (a == 192 && b == 168) ||
             (a == 198 && (b & 0xFE) == 18) || (a == 198 && b == 51 && c == 100) ||
             (a == 203 && b == 0 && c == 113));
}

static bool ref_v6_public(const uint8_t *a)
{
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
    static const uint8_t nat64[12] = {0x00, 0x64, 0xFF, 0x9B};
    if (memcmp(a, mapped, 12) == 0 || memcmp(a, nat64, 12) == 0)
        return ref_v4_public(a + 12);
    if (a[0] == 0x20 && a[1] == 0x02)
        return ref_v4_public(a + 2);
    if ((a[0] & 0xE0) != 0x20)
        return false;
    /* Inside 2000::/3: 2001::/23, 2001:db8::/32 and 3fff::/20 are refused. */
    bool ietf = a[0] == 0x20 && a[1] == 0x01 && a[2] <= 0x01;
    bool doc = a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x0D && a[3] == 0xB8;
    bool doc2 = a[0] == 0x3F && a[1] == 0xFF && a[2] <= 0x0F;
    return !ietf && !doc && !doc2;
}

static bool v4_public(const uint8_t *p)
{
    struct sockaddr_in in;
    memset(&in, 0, sizeof in);
    in.sin_family = AF_INET;
    memcpy(&in.sin_addr, p, 4);
    return netcheck_addr_public((const struct sockaddr *)&in);
}

static bool v6_public(const uint8_t *p)
{
    struct sockaddr_in6 in6;
    memset(&in6, 0, sizeof in6);
    in6.sin6_family = AF_INET6;
    memcpy(&in6.sin6_addr, p, 16);
    return netcheck_addr_public((const struct sockaddr *)&in6);
}

/* The IPv4 address v4 and every IPv6 form that reaches it get the same answer. */
static void check_carriers(const uint8_t *v4)
{
    bool want = ref_v4_public(v4);
    FUZZ_CHECK(v4_public(v4) == want);
    uint8_t a[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
    memcpy(a + 12, v4, 4);
    FUZZ_CHECK(v6_public(a) == want);
    uint8_t nat64[16] = {0x00, 0x64, 0xFF, 0x9B};
    memcpy(nat64 + 12, v4, 4);
    FUZZ_CHECK(v6_public(nat64) == want);
    uint8_t six_to_four[16] = {0x20, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    memcpy(six_to_four + 2, v4, 4);
    FUZZ_CHECK(v6_public(six_to_four) == want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 16)
        return 0;
    FUZZ_CHECK(v6_public(data) == ref_v6_public(data));
    check_carriers(data + 12);
    check_carriers(data);
    struct sockaddr other;
    memset(&other, 0, sizeof other);
    other.sa_family = (sa_family_t)(data[0] == AF_INET || data[0] == AF_INET6 ? AF_UNIX : data[0]);
    FUZZ_CHECK(!netcheck_addr_public(&other));
    return 0;
}
