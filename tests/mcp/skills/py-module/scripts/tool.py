# Imports a package of the skill's root: works when run as "python3 -m scripts.tool" from there.
import json
import os
import sys

from helpers.greet import greet

print(json.dumps({'greeting': greet(sys.argv[1] if len(sys.argv) > 1 else 'world'), 'cwd': os.getcwd()}))
