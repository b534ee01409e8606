"""The catalog: build, deltas, copies, search, suggestions, the prompt, model tools."""
