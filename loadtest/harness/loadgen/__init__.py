"""The load generators: wrk (closed loop), oha (open loop), and merging several clients' results."""
