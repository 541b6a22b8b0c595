"""The budget study (see its README.md)."""
