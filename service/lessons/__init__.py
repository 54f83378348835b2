"""Lessons' check questions on the site, for practice: the course's lessons listed (``views``), each
lesson's checks as one student gets them, its generated questions drawn for that student
(``questions``), each answer judged at once and kept, with a limit on how many a minute (``answers``);
counted in no score. Its model: LessonAnswer."""
