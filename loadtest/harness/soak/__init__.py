"""`make soak`: one stack at a fixed rate for a long time, in windows; its verdicts, report and comparison."""
from harness.soak.runner import (  # the package's public names, used by the rest of the harness
    SCHEMA, SCHEMA_VERSION, THRESHOLD_KNOBS, SoakSettings, conclude, enough_connections, is_soak, main,
    peak_from_results, read, rejudge, report_again, results_dir, run_soak, too_few_connections, write
)

__all__ = ["names", "SCHEMA", "SCHEMA_VERSION", "SoakSettings", "THRESHOLD_KNOBS", "conclude", "enough_connections", "is_soak", "main", "peak_from_results", "read", "rejudge", "report_again", "results_dir", "run_soak", "too_few_connections", "write"]
