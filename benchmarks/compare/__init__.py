"""The compare study (see its README.md)."""
