#!/usr/bin/env python3
"""Imports its sibling through the skill root, the way skill-creator's package_skill does."""
import sys

from scripts.helper import say

if __name__ == "__main__":
    print(say(sys.argv[1] if len(sys.argv) > 1 else "nothing"))
