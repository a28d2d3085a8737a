"""Files that let coding agents use babysit: a slash command and a skill document."""
