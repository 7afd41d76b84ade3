"""The exit code of a missing optional dependency, in a module that needs no extra: the
package exits with it when typer or rich is missing, before it imports :mod:`.running`
(whose ``EXIT_CODES`` has it too)."""

MISSING_EXTRA = 18
"""The exit code of a missing optional dependency."""
