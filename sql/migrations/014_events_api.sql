-- 014_events_api: GET /v1/events and GET /v1/events/:id (docs/contract.md section 13).
--
-- A page of an account's events in a mode, newest first, is a keyset walk of
-- (account_id, mode, created_at, id), with the type filter in its own index so that a rare
-- type costs a page as much as a common one; created_gte and created_lt bound the same
-- range. Page 1 and page 1,000 read the same number of index entries. events_account
-- (002) is the first index without its id: replaced.
DROP INDEX events_account;
CREATE INDEX events_list ON events (account_id, mode, created_at, id);
CREATE INDEX events_list_type ON events (account_id, mode, type, created_at, id);
