#!/usr/bin/env python3
"""The sandbox's stand-in for NeMo-RL's examples/run_sft.py (see ../nemo_rl_standin.py)."""

import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from nemo_rl_standin import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main("sft"))
