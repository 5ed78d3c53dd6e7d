import sys

from dialeval.cli.main import main

sys.exit(main())
