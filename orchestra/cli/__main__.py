import sys

from orchestra.cli import main

sys.exit(main())
