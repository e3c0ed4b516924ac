"""The verifier: builds and starts each stack, proves it against the contract, takes backends away."""
from harness.verify.runner import (  # the package's public names, used by the rest of the harness
    ACROSS_NETWORK, BACKEND_ERROR_CASES, CHECKS, STOPPED_ANSWERING, check_backend_errors, check_cases,
    check_concurrency, check_connection_close, check_date, check_http10, check_keep_alive, check_no_caching,
    check_outages, check_pipelining, check_sleep_waits, check_start_with_backend_down, result_path, run_checks,
    verify_all, verify_stack
)

__all__ = ["ACROSS_NETWORK", "BACKEND_ERROR_CASES", "CHECKS", "STOPPED_ANSWERING", "check_backend_errors", "check_cases", "check_concurrency", "check_connection_close", "check_date", "check_http10", "check_keep_alive", "check_no_caching", "check_outages", "check_pipelining", "check_sleep_waits", "check_start_with_backend_down", "result_path", "run_checks", "verify_all", "verify_stack"]
