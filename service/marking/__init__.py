"""Hand grading: the answers to mark (``answers``), marking one answer and rubrics (``views``),
marking a group at once (``groups``), students' review requests (``reviews``) and extensions
(``extensions``). Its models: ReviewRequest, ReviewMessage."""
