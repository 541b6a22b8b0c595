"""The polarity_cluster study (see its README.md)."""
