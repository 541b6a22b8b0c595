"""The minimal_pairs_margin study (see its README.md)."""
