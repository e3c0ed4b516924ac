"""results.json (the one store of a run's figures) and what is rendered from it: report.md, report.html, charts."""
