"""`make ab`: one knob of one stack measured A B A B in one sitting."""
from harness.ab.runner import (  # the package's public names, used by the rest of the harness
    SCHEMA, SCHEMA_VERSION, SIDES, Ab, AbSettings, Refused, Usage, env_text, figures, golden_cases, main, number,
    parse_env, prove, read, render_md, save_compact, summarize, unread_knobs
)

__all__ = ["names", "Ab", "AbSettings", "Refused", "SCHEMA", "SCHEMA_VERSION", "SIDES", "Usage", "env_text", "figures", "golden_cases", "main", "number", "parse_env", "prove", "read", "render_md", "save_compact", "summarize", "unread_knobs"]
