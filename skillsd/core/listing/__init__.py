"""What each agent shows its model: listings, profiles, settings edits, the use ledger."""
