"""Exams taken online: the student's and the staff's pages (``views``), attempts and their timing
(``sessions``), answers saved (``saves``), grading (``grading``), hand marking (``marking``), the
proctors' room (``room``), the question's text (``text``) and scores to the platform (``scores``).
Its models: OnlineExam, ExamAttempt, ExamAnswer, ExamLogEntry, ExamGrading."""
