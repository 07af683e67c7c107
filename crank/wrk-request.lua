-- wrk-job.sh's script for every wrk run. Two jobs:
--
-- 1. The request. Without arguments wrk's own static request is kept (GET, wrk's Host, the -H headers). With
--    "-- BODY_BYTES FRAMING" (wrk passes what follows "--" to init) the request is a POST with a body of BODY_BYTES
--    bytes, framed with Content-Length ("content-length") or Transfer-Encoding: chunked ("chunked", in chunks of
--    CHUNK_BYTES). The request is built once here and handed to wrk as its static request (wrk.init calls
--    wrk.format() once after init), so wrk sends the same bytes on every request and calls no Lua per request,
--    exactly as for a GET: the load generator's cost per request does not change with the framing.
--
-- 2. The 95th percentile after wrk's own report (--latency prints 50/75/90/99 %), in the same shape
--    ("    95%  1230.00us"), which the published comparisons report and wrk's --latency leaves out.

-- A chunked client sends what it has as it writes; 16 KiB is a common write size (the size of a TLS record, and
-- of many stream copy loops), so a 100 KiB body goes as seven chunks and a 1 KiB one as one.
local CHUNK_BYTES = 16 * 1024

local function body_of(bytes)
  -- Printable and fixed, so a captured request is readable; the origin discards it.
  return string.rep("x", bytes)
end

local function chunked(body)
  local parts = {}
  local at = 1
  while at <= #body do
    local piece = body:sub(at, at + CHUNK_BYTES - 1)
    parts[#parts + 1] = string.format("%x\r\n%s\r\n", #piece, piece)
    at = at + #piece
  end
  parts[#parts + 1] = "0\r\n\r\n"
  return table.concat(parts)
end

function init(args)
  if #args == 0 then return end
  local bytes = tonumber(args[1])
  local framing = args[2] or "content-length"
  if bytes == nil or bytes < 0 or bytes ~= math.floor(bytes) then
    error("wrk-request.lua: body size must be a whole number of bytes, got '" .. tostring(args[1]) .. "'")
  end
  if framing ~= "content-length" and framing ~= "chunked" then
    error("wrk-request.lua: framing must be content-length or chunked, got '" .. framing .. "'")
  end
  if bytes == 0 then return end
  local body = body_of(bytes)
  -- wrk.headers holds Host (wrk's, from the URL) and every -H header; Host first, as wrk sends it.
  local lines = { "POST " .. wrk.path .. " HTTP/1.1", "Host: " .. wrk.headers["Host"] }
  for name, value in pairs(wrk.headers) do
    local lower = name:lower()
    if lower ~= "host" and lower ~= "content-length" and lower ~= "transfer-encoding" then
      lines[#lines + 1] = name .. ": " .. value
    end
  end
  lines[#lines + 1] = "Content-Type: application/octet-stream"
  local framed
  if framing == "chunked" then
    lines[#lines + 1] = "Transfer-Encoding: chunked"
    framed = chunked(body)
  else
    lines[#lines + 1] = "Content-Length: " .. #body
    framed = body
  end
  local request = table.concat(lines, "\r\n") .. "\r\n\r\n" .. framed
  wrk.format = function() return request end
end

done = function(summary, latency, requests)
  io.write(string.format("    95%%  %.2fus\n", latency:percentile(95)))
end
