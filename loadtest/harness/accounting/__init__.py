"""Accounting for a load: CPU time and memory per process, CPU layout and pinning, GC pauses, statistics."""
