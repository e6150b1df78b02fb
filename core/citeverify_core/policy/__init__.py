"""The policy: the settings the engine reads, and the one way to load and merge them."""
