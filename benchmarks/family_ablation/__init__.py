"""The family_ablation study (see its README.md)."""
