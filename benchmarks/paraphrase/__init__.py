"""The paraphrase study (see its README.md)."""
