"""The teachers_preservation study (see its README.md)."""
