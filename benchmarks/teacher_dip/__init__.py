"""The teacher_dip study (see its README.md)."""
