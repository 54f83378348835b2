"""Hand marks: a mark and its history (``marks``), rubrics and their edits (``rubrics``), answers
marked as a group (``groups``) and empty answers marked at once (``empty_answers``)."""
