import sys

from starforge_runner.runner import main

sys.exit(main(sys.argv[1:]))
