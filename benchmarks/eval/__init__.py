"""The eval study (see its README.md)."""
