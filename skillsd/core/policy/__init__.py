"""What may happen: config, permissions, workspace trust, the state file, sessions."""
