#!/usr/bin/env python3
"""GETs each URL given: prints the body, or `status N` for an HTTP error.

    fetch.py [--accept MEDIA-RANGES] [--type] URL...

--accept sends an Accept header; --type prints the Content-Type first.
"""
import argparse
import sys
import urllib.error
import urllib.request

ap = argparse.ArgumentParser()
ap.add_argument("--accept")
ap.add_argument("--type", action="store_true")
ap.add_argument("urls", nargs="+")
args = ap.parse_args()
for url in args.urls:
    req = urllib.request.Request(url)
    if args.accept:
        req.add_header("Accept", args.accept)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            if args.type:
                print("type", r.headers.get("Content-Type"))
            sys.stdout.write(r.read().decode())
    except urllib.error.HTTPError as e:
        print("status", e.code)
