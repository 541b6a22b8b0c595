"""The recipe_v6 study (see its README.md)."""
