"""Offline paraphrase generators: word edits, corpus neighbours, a seq2seq model, syntactic rewrites."""
