"""Text that someone we grade controls (a student's name, file name, output or message), made safe
to store, to print on a terminal and to open in a spreadsheet.

Both the lesson side (``course``) and the grader (``autograder``) write such text, so the rules
live here, once, below both.
"""
