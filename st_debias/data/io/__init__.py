"""Reading corpora, encoding and caching sentence embeddings, and the build report of a data run."""
