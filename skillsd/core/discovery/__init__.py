"""Where skills are found: roots, agents' folders, plugins, personas, watching."""
