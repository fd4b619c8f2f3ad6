"""``python -m service.cli`` runs the ``regua`` command line."""

from service.cli import main

main()
