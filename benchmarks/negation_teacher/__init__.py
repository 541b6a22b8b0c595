"""The negation_teacher study (see its README.md)."""
