"""The selection study (see its README.md)."""
