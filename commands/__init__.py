"""The commands: ``course`` (lessons, checks, exams) and ``autograder`` (release, grade, the gradebook).

Each only parses arguments, calls one library function of ``course``, ``autograder``, ``gradebook``
or ``service`` and formats what it returns; nothing below imports from here. ``common`` holds what
both share (their ``main()``, the parser, the gradebook options, the console, the errors a user may
see); ``course`` is one module; ``autograder/`` a module per group of subcommands, each defined
beside its handler.
"""
