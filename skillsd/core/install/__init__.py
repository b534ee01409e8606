"""What an install records: install sources, skill folder digests, the lock file."""
