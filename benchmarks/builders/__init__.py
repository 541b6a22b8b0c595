"""The builders study (see its README.md)."""
