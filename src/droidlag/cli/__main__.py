"""`python -m droidlag.cli`: the droidlag command."""
import sys

from droidlag.cli import main

sys.exit(main())
