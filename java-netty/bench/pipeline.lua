-- 16 requests per write (pipelining); wrk counts every response.
init = function(args)
  local r = {}
  for i = 1, 16 do r[i] = wrk.format(nil, wrk.path) end
  req = table.concat(r)
end
request = function() return req end
