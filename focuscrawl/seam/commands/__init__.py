"""Project commands (``COMMANDS_MODULE``): ``crawl`` with an exit status that tells."""
