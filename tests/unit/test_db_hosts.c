/* db_hosts: the hosts of a connection string one by one, by libpq's own rules for
 * matching host, hostaddr and port lists; anything libpq would refuse, or that cannot be
 * split, is left to libpq (false). */
#include <string.h>

#include "db_hosts.h"
#include "unit.h"

START_TEST(one_host_or_none_is_one_entry)
{
    db_hosts h;
    ck_assert(db_hosts_parse("host=db.example port=5433 dbname=market", &h));
    ck_assert_int_eq(h.n, 1);
    ck_assert_str_eq(h.host[0].host, "db.example");
    ck_assert_str_eq(h.host[0].port, "5433");
    ck_assert_str_eq(h.host[0].hostaddr, "");
    ck_assert_int_eq(h.connect_timeout_s, -1);
    ck_assert(!h.writable_wanted);
    ck_assert(db_hosts_parse("dbname=market", &h));
    ck_assert_int_eq(h.n, 1);
    ck_assert_str_eq(h.host[0].host, "");
    ck_assert_str_eq(h.host[0].port, "");
}
END_TEST

START_TEST(one_port_serves_every_host)
{
    db_hosts h;
    ck_assert(db_hosts_parse("host=pg1,pg2,pg3 port=6432 target_session_attrs=read-write", &h));
    ck_assert_int_eq(h.n, 3);
    ck_assert_str_eq(h.host[0].host, "pg1");
    ck_assert_str_eq(h.host[2].host, "pg3");
    for (int i = 0; i < 3; i++)
        ck_assert_str_eq(h.host[i].port, "6432");
    ck_assert(h.writable_wanted);
    ck_assert(db_hosts_parse("host=a,b target_session_attrs=primary", &h));
    ck_assert(h.writable_wanted);
    ck_assert(db_hosts_parse("host=a,b target_session_attrs=prefer-standby", &h));
    ck_assert(!h.writable_wanted);
}
END_TEST

START_TEST(lists_pair_up_by_position)
{
    db_hosts h;
    ck_assert(db_hosts_parse("host=pg1,pg2 hostaddr=10.0.0.1,10.0.0.2 port=5432,5433", &h));
    ck_assert_int_eq(h.n, 2);
    ck_assert_str_eq(h.host[1].host, "pg2");
    ck_assert_str_eq(h.host[1].hostaddr, "10.0.0.2");
    ck_assert_str_eq(h.host[1].port, "5433");
    ck_assert_str_eq(h.host[0].port, "5432");
    /* hostaddr alone counts the hosts */
    ck_assert(db_hosts_parse("hostaddr=10.0.0.1,10.0.0.2", &h));
    ck_assert_int_eq(h.n, 2);
    ck_assert_str_eq(h.host[0].hostaddr, "10.0.0.1");
    ck_assert_str_eq(h.host[1].host, "");
}
END_TEST

START_TEST(a_uri_lists_its_hosts_too)
{
    db_hosts h;
    ck_assert(db_hosts_parse(
        "postgresql://pg1:5432,pg2:5433/market?target_session_attrs=read-write&connect_timeout=5",
        &h));
    ck_assert_int_eq(h.n, 2);
    ck_assert_str_eq(h.host[0].host, "pg1");
    ck_assert_str_eq(h.host[1].port, "5433");
    ck_assert_int_eq(h.connect_timeout_s, 5);
    ck_assert(h.writable_wanted);
}
END_TEST

START_TEST(connect_timeout_is_read_as_libpq_does)
{
    db_hosts h;
    ck_assert(db_hosts_parse("host=a connect_timeout=1", &h));
    ck_assert_int_eq(h.connect_timeout_s, 2); /* libpq's minimum */
    ck_assert(db_hosts_parse("host=a connect_timeout=0", &h));
    ck_assert_int_eq(h.connect_timeout_s, 0); /* no limit */
    ck_assert(db_hosts_parse("host=a connect_timeout=-3", &h));
    ck_assert_int_eq(h.connect_timeout_s, 0);
    ck_assert(db_hosts_parse("host=a connect_timeout=' 7 '", &h));
    ck_assert_int_eq(h.connect_timeout_s, 7);
    ck_assert(!db_hosts_parse("host=a connect_timeout=soon", &h));
}
END_TEST

START_TEST(what_cannot_be_split_is_left_to_libpq)
{
    db_hosts h;
    ck_assert(!db_hosts_parse("host=a,b port=1,2,3", &h));        /* ports do not match */
    ck_assert(!db_hosts_parse("host=a,b hostaddr=10.0.0.1", &h)); /* nor addresses */
    ck_assert(!db_hosts_parse("host=a,,b", &h));                  /* an empty entry */
    ck_assert(!db_hosts_parse("host=a,b port=5432,", &h));
    ck_assert(!db_hosts_parse("host=a,b,c,d,e,f,g,h,i", &h)); /* more than DB_HOSTS_MAX */
    ck_assert(db_hosts_parse("host=a,b,c,d,e,f,g,h", &h));
    ck_assert_int_eq(h.n, DB_HOSTS_MAX);
    ck_assert(!db_hosts_parse("host=a frobnicate=1", &h)); /* libpq refuses it */
    ck_assert(!db_hosts_parse("host='a", &h));
    char long_host[300];
    memset(long_host, 'x', sizeof long_host);
    memcpy(long_host, "host=", 5);
    long_host[sizeof long_host - 1] = '\0';
    ck_assert(!db_hosts_parse(long_host, &h)); /* a name longer than any DNS name */
}
END_TEST

START_TEST(conninfo_value_reads_one_keyword)
{
    char out[64];
    ck_assert(
        db_conninfo_value("host=/run/pg dbname=shop1 password=secret", "dbname", out, sizeof out));
    ck_assert_str_eq(out, "shop1");
    ck_assert(db_conninfo_value("postgresql://u@db.example:5433/shop2", "host", out, sizeof out));
    ck_assert_str_eq(out, "db.example");
    ck_assert(db_conninfo_value("dbname=x", "host", out, sizeof out));
    ck_assert_str_eq(out, "");
    char tiny[4];
    ck_assert(db_conninfo_value("dbname=longname", "dbname", tiny, sizeof tiny));
    ck_assert_str_eq(tiny, "lon");
    ck_assert(!db_conninfo_value("dbname='unterminated", "dbname", out, sizeof out));
    ck_assert_str_eq(out, "");
}
END_TEST

Suite *db_hosts_suite(void)
{
    Suite *s = suite_create("db_hosts");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, one_host_or_none_is_one_entry);
    tcase_add_test(tc, one_port_serves_every_host);
    tcase_add_test(tc, lists_pair_up_by_position);
    tcase_add_test(tc, a_uri_lists_its_hosts_too);
    tcase_add_test(tc, connect_timeout_is_read_as_libpq_does);
    tcase_add_test(tc, what_cannot_be_split_is_left_to_libpq);
    tcase_add_test(tc, conninfo_value_reads_one_keyword);
    suite_add_tcase(s, tc);
    return s;
}
