"""The contract as code: the golden cases of shared-schema/, the protocol-hygiene cases, how an answer is judged, declared deviations."""
from harness.contract.cases import (  # the package's public names, used by the rest of the harness
    Case, case, cases, error, generator, greetings, json_body, schema_sql
)

__all__ = ["Case", "case", "cases", "error", "generator", "greetings", "json_body", "schema_sql"]
