"""The cached study (see its README.md)."""
