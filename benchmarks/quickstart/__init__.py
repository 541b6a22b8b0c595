"""The quickstart study (see its README.md)."""
