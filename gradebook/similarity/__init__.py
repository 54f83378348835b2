"""Similarity between students' hand-ins: each file's fingerprints (``fingerprints``), the report of
pairs by assignment (``report``) and the matching fragments shown side by side (``fragments``)."""
