"""``python -m pairbench`` runs the command-line interface."""

from pairbench.cli import entry_point

entry_point()
