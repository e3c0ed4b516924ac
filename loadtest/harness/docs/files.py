"""The files of a checkout that the docs test reads: what git tracks, or would track."""
import os
import pathlib
import subprocess

SKIP_DIRS = {".git", ".venv", "node_modules", "target", "results", ".run", "__pycache__", ".pytest_cache",
             "vendor", "build", ".gradle", ".idea"}


def _walk(root: pathlib.Path):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for f in sorted(filenames):
            yield pathlib.Path(dirpath) / f


def project_files(root: pathlib.Path) -> list[pathlib.Path]:
    """The files git tracks (or would track) under root; every file outside SKIP_DIRS where root is no repository."""
    proc = subprocess.run(["git", "-C", str(root), "ls-files", "-co", "--exclude-standard"],
                          capture_output=True, text=True)
    if proc.returncode == 0 and (root / ".git").exists():
        return [root / line for line in proc.stdout.splitlines() if (root / line).is_file()]
    return list(_walk(root))


def markdown_files(root: pathlib.Path) -> list[pathlib.Path]:
    return sorted(p for p in project_files(root) if p.suffix == ".md")
