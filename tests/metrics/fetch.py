#!/usr/bin/env python3
"""GETs each URL given: prints the body, or `status N` for an HTTP error."""
import sys
import urllib.error
import urllib.request

for url in sys.argv[1:]:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            sys.stdout.write(r.read().decode())
    except urllib.error.HTTPError as e:
        print("status", e.code)
