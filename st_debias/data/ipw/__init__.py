"""DebCSE's inverse-propensity-weighted sampling: range neighbour search, propensities, the builder."""
