-- wrk script for benchmarks/api_bench.py: uploads, branch creations, and a JSON report.
--
-- Environment (set by api_bench.py):
--   BENCH_MODE   "get" (plain requests), "upload" (1 KiB POST to a new path each time)
--                or "branch" (POST a branch creation with a new name each time)
--   BENCH_PATH   for upload and branch: the collection path to POST to
--   BENCH_PREFIX prepended to every name (so repeated runs write new names)
-- Every thread numbers its requests, so no two requests write the same name.

local mode = os.getenv("BENCH_MODE") or "get"
local path = os.getenv("BENCH_PATH") or "/"
local prefix = os.getenv("BENCH_PREFIX") or ""
local body = string.rep("x", 1024)
local threads = {}
local counter = 0
thread_id = 0 -- a global: setup() overrides it in each thread's own Lua state

function setup(thread)
   thread:set("thread_id", #threads)
   table.insert(threads, thread)
end

function init(args)
   counter = 0
end

-- "get" mode defines no request(): wrk then sends its one prebuilt request, the fast path.
if mode == "upload" then
   function request()
      counter = counter + 1
      local name = string.format("%st%d-%d", prefix, thread_id, counter)
      wrk.headers["Content-Type"] = "application/octet-stream"
      return wrk.format("POST", path .. "?path=bench/" .. name, nil, body)
   end
elseif mode == "branch" then
   function request()
      counter = counter + 1
      local name = string.format("%st%d-%d", prefix, thread_id, counter)
      wrk.headers["Content-Type"] = "application/json"
      local json = string.format('{"name": "b-%s", "source": "main"}', name)
      return wrk.format("POST", path, nil, json)
   end
end

function done(summary, latency, requests)
   local errors = summary.errors.status + summary.errors.connect + summary.errors.read
      + summary.errors.write + summary.errors.timeout
   io.write(string.format(
      '{"requests": %d, "seconds": %.3f, "errors": %d, "p50_us": %d, "p99_us": %d}\n',
      summary.requests, summary.duration / 1e6, errors,
      latency:percentile(50), latency:percentile(99)))
end
