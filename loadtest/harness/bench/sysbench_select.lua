-- The /mysql ceiling for sysbench: the contract's prepared point SELECT with a random id in 1..10000,
-- one per event, one connection per sysbench thread. Used by loadtest/harness/bench/calibrate.py.
function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
  stmt = con:prepare("SELECT id, message FROM greeting WHERE id = ?")
  param = stmt:bind_create(sysbench.sql.type.INT)
  stmt:bind_param(param)
end

function event()
  param:set(sysbench.rand.uniform(1, 10000))
  stmt:execute()
end

function thread_done()
  stmt:close()
  con:disconnect()
end
