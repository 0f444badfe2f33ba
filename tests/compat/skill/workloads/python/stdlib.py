# A broad sweep of standard modules a skill imports and uses briefly.
import argparse, base64, collections, dataclasses, decimal, difflib, email.message, fractions
import html.parser, inspect, itertools, logging, logging.handlers, pickle, re, shelve, statistics
import string, struct, textwrap, typing, unicodedata, unittest, xml.etree.ElementTree as ET
import sysconfig, venv, site, pydoc, sqlite3, dbm, tempfile, os

logging.basicConfig(level=logging.INFO)
logging.getLogger("x").info("hi")
ET.fromstring("<a><b>1</b></a>").find("b")
assert statistics.mean([1, 2, 3]) == 2
decimal.Decimal("1.1") + decimal.Decimal("2.2")
pickle.loads(pickle.dumps({"a": [1, 2]}))
with shelve.open(os.path.join(tempfile.mkdtemp(), "s")) as sh:
    sh["k"] = 1
msg = email.message.EmailMessage(); msg["Subject"] = "x"; msg.set_content("body")
base64.b64encode(msg.as_bytes())
sysconfig.get_paths()
