"""A hand-in, from upload to grade: the student's assignment and submission pages (``views``), the
JSON API (``api``), the stored upload (``uploads``), the job queue in the database (``queue``,
``wakeup``), the worker that grades in the sandbox (``worker``), live feedback (``live``) and the HTTP
client of ``autograder submit`` (``client``). Its models: Job, ClosedAssignment."""
