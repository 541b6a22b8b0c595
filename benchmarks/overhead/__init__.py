"""The overhead study (see its README.md)."""
