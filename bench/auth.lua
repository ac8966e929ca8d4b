-- wrk script of bench/run: every request carries the benchmark's API key. (wrk itself
-- counts the answers that are not 2xx/3xx; bench/run fails a case that has any.)
--
--   BENCH_KEY=sk_test_... wrk -s bench/auth.lua ...
local key = os.getenv("BENCH_KEY")
if key == nil or key == "" then
  error("BENCH_KEY is not set")
end
wrk.headers["Authorization"] = "Bearer " .. key
wrk.headers["Accept"] = "application/json"
