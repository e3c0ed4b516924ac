"""Stacks: found by discovery (every */stack.toml), their toolchains, and building, testing, starting and stopping them."""
from harness.stacks.manifest import MANIFEST, ManifestError, Stack, StackError, discover, parse, select
from harness.stacks.process import Running, build, log_path, start, unit_test

__all__ = ["MANIFEST", "ManifestError", "Stack", "StackError", "discover", "parse", "select",
           "Running", "build", "log_path", "start", "unit_test"]
