"""The drift_bounds study (see its README.md)."""
