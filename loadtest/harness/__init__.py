"""The harness: manifest -> build -> start -> verify -> load -> results.json -> report.

Packages by concern, each importing only those listed before it (config.py and ports.py under them all):
  accounting  CPU time and memory per process, CPU layout and pinning, GC pauses, statistics
  contract    the golden cases, the protocol-hygiene cases, how an answer is judged, deviations
  stacks      discovery of */stack.toml, toolchains, build / unit tests / start / stop
  services    Redis, MariaDB, memcached as local processes, and as a client
  verify      a stack proven against the contract, backends taken away
  loadgen     wrk (closed loop), oha (open loop), merging several clients' results
  reports     results.json, the one store of a run's figures, and report.md / report.html
  bench       a whole benchmark run: settings, plan, ceilings, the runs per stack
  ab, soak    `make ab` and `make soak`
  hosts       multi-host runs: OpenSSH, simulated hosts, what runs on each host
  docs        the docs test and the generated figure blocks
Beside them: __main__ (the command line), provision (`make setup`), skeleton (`make new-stack`),
compare (`make compare`).
"""
