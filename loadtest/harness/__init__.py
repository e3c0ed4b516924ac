"""The load-test harness: backing services, stack discovery, the contract verifier."""
