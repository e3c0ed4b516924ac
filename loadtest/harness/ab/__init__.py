"""`make ab`: one knob of one stack measured A B A B in one sitting."""
from harness.ab.files import SCHEMA, SCHEMA_VERSION, read, save_compact
from harness.ab.report import figures, render_md, summarize
from harness.ab.runner import Ab, AbSettings, main

__all__ = ["SCHEMA", "SCHEMA_VERSION", "read", "save_compact", "figures", "render_md", "summarize", "Ab", "AbSettings", "main"]
