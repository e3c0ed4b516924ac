"""`make soak`: one stack at a fixed rate for a long time, in windows; its verdicts, report and comparison."""
from harness.soak.conclusions import conclude
from harness.soak.files import SCHEMA, SCHEMA_VERSION, is_soak, read, report_again, results_dir, write
from harness.soak.runner import main, run_soak
from harness.soak.settings import (
    THRESHOLD_KNOBS, SoakSettings, enough_connections, peak_from_results, too_few_connections
)

__all__ = ["conclude", "SCHEMA", "SCHEMA_VERSION", "is_soak", "read", "report_again", "results_dir", "write", "main", "run_soak", "SoakSettings", "THRESHOLD_KNOBS", "enough_connections", "peak_from_results", "too_few_connections"]
