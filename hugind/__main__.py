import os
import sys

# `python -m hugind` puts the working directory first on sys.path. There, an agent's
# checkout could shadow a module hugind imports later (a `yaml.py`, an `httpx/`), and
# each run's writes would mark the warm server stale. hugind itself is imported by now.
if sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from hugind.entry import main

main()
