"""The negation_meaning study (see its README.md)."""
