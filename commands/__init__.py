"""The commands: ``course`` (lessons, checks, exams) and ``autograder`` (release, grade, the gradebook).

Each only parses arguments, calls one library function of ``course``, ``autograder`` or ``gradebook``
and formats what it returns; nothing below imports from here.
"""
