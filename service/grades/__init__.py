"""The staff's pages on grades: the gradebook, a student's record and diffs, statistics, overrides,
regrades, the submission that counts, similarity and exports (``views``)."""
