"""The project's Markdown: the figure tables generated from a published run, and the docs test's rules."""
