#!/usr/bin/env python3
"""GETs each URL given: prints the body, or `status N` for an HTTP error.

    fetch.py [--accept MEDIA-RANGES] [--type] [--wait] URL...

--accept sends an Accept header; --type prints the Content-Type first.
--wait retries while the connection is refused (the server is starting),
for 30 s at most: a safety net, not a timing.
"""
import argparse
import sys
import time
import urllib.error
import urllib.request

ap = argparse.ArgumentParser()
ap.add_argument("--accept")
ap.add_argument("--type", action="store_true")
ap.add_argument("--wait", action="store_true")
ap.add_argument("urls", nargs="+")
args = ap.parse_args()


def get(req):
    with urllib.request.urlopen(req, timeout=5) as r:
        if args.type:
            print("type", r.headers.get("Content-Type"))
        sys.stdout.write(r.read().decode())


deadline = time.monotonic() + 30
for url in args.urls:
    req = urllib.request.Request(url)
    if args.accept:
        req.add_header("Accept", args.accept)
    while True:
        try:
            get(req)
        except urllib.error.HTTPError as e:
            print("status", e.code)
        except urllib.error.URLError as e:
            refused = isinstance(e.reason, ConnectionRefusedError)
            if args.wait and refused and time.monotonic() < deadline:
                time.sleep(0.05)
                continue
            raise
        break
