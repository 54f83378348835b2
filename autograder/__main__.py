import sys

from commands.autograder import main

sys.exit(main())
