"""The analysis core: framework tables, name resolution and the recording-state flow.

Nothing here knows about the CLI, output formats or editors.
"""
