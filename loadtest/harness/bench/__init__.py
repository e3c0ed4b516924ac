"""The benchmark: manifest -> build -> start -> verify -> load -> results.json -> report.

Modules, in the order data flows through them: settings (what to run), plan (the time budget),
cpus (pinning), stats (medians, spreads, verdicts), loadgen_wrk / loadgen_oha (closed and open loop),
calibrate (ceilings), measure (one load run with its accounting), run (the whole run),
machine (what it ran on), results (results.json), report_md / report_html (the reports).
"""
