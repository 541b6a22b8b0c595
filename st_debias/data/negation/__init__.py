"""OssCSE's negation rows: the rule negator (spaCy) and the (anchor, paraphrase, negation) builder."""
