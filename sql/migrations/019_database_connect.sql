-- 019_database_connect: only the site's own role connects to the site's database (issue
-- 36, docs/operations.md "Many sites on one host").
--
-- A database made by `createdb -O ROLE` grants CONNECT and TEMPORARY to PUBLIC, and
-- Debian's pg_hba.conf (`local all all peer`) lets the system user market-A log in as the
-- role market-A: so one site's role could connect to another site's database, read its
-- schema, make temporary tables there and send NOTIFY market_auth, market_catalogue or
-- market_webhooks into it (emptying that site's key and page caches, waking its drainer)
-- at will. Here the database takes both from PUBLIC and gives them to its owner, and to
-- the role running the migrations (the role of MARKET_DB, which the pool and the drainer
-- use as well) when that is another one: every other role, the default site's and every
-- other site's, is then refused at connection ("permission denied for database"), and
-- so cannot NOTIFY into it either.
--
-- Decisions:
--   * A migration rather than a step of `market-admin site create`: every database gets
--     it, the default site's (market-migrate) and the sites' existing before this version
--     (the package's upgrade runs `market-admin site upgrade`), each once, recorded in
--     schema_migrations as any other. The owner may run both statements on its database,
--     so no superuser is needed; a superuser (tools/stack, the tests' clusters) is never
--     checked for CONNECT, so its own sessions are unaffected.
--   * When the role running it can act as neither the owner nor a superuser, it cannot
--     revoke anything: it says so (a WARNING with the statements for the owner to run)
--     and the migrations carry on, rather than leave a site unable to start on an upgrade.
--   * The role running it is granted CONNECT explicitly when it is not the owner (a member
--     of the owning role): a member without INHERIT has none of the owner's privileges,
--     and would lock itself out with PUBLIC's gone.
--   * What an administrator granted to other roles explicitly (a monitoring role, say) is
--     left as it is; only PUBLIC loses CONNECT and TEMPORARY.
--   * The names go through format('%I'), never spliced: a database or role name may hold
--     any character (site names hold hyphens).
DO $$
DECLARE
    db name := current_database();
    db_owner name;
    is_super boolean;
BEGIN
    SELECT pg_get_userbyid(d.datdba) INTO db_owner FROM pg_database d WHERE d.datname = db;
    SELECT r.rolsuper INTO is_super FROM pg_roles r WHERE r.rolname = current_user;
    IF NOT (is_super OR pg_has_role(current_user, db_owner, 'USAGE')) THEN
        RAISE WARNING '%', format('the database %I still grants CONNECT to PUBLIC: the role %I '
            'is not its owner %I, so any role of the server may connect to it. As its owner or '
            'a superuser: REVOKE CONNECT, TEMPORARY ON DATABASE %I FROM PUBLIC; GRANT CONNECT, '
            'TEMPORARY ON DATABASE %I TO %I', db, current_user, db_owner, db, db, current_user);
        RETURN;
    END IF;
    EXECUTE format('REVOKE CONNECT, TEMPORARY ON DATABASE %I FROM PUBLIC', db);
    EXECUTE format('GRANT CONNECT, TEMPORARY ON DATABASE %I TO %I', db, db_owner);
    IF NOT is_super AND current_user <> db_owner THEN
        EXECUTE format('GRANT CONNECT, TEMPORARY ON DATABASE %I TO %I', db, current_user);
    END IF;
END
$$;
