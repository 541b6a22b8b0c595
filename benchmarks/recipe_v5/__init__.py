"""The recipe_v5 study (see its README.md)."""
