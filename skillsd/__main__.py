import sys

from skillsd.cli import main

sys.exit(main())
