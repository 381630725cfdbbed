"""``python -m frozen_search`` runs the CLI."""

from frozen_search.cli import main

main()
