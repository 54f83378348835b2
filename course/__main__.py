import sys

from commands.course import main

sys.exit(main())
