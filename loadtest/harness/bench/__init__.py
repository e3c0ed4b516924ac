"""The benchmark: what to run (settings), its time budget (plan), the ceilings no stack can beat
(calibrate, nginx_ceiling), what it ran on (machine), and the whole run, stack by stack (run)."""
