"""The mpnet study (see its README.md)."""
