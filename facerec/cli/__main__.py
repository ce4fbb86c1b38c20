import sys

from facerec.cli import main

sys.exit(main())
