"""The transfer study (see its README.md)."""
