"""The negation_fit study (see its README.md)."""
