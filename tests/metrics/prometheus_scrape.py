#!/usr/bin/env python3
"""A real Prometheus scraping ubtrace's --metrics endpoint.

Two ubtrace exporters stand in for two hosts: each traces its own ticker
(tests/testprogs/ticker, tick(i) once a millisecond) and counts the first
N ticks only, so its maps stop changing soon after the start while the
trace goes on for seconds. One Prometheus (Debian's, scraping every
second) collects both. Then, through Prometheus's HTTP API:

  * sum(ubtrace_early_total) is the sum of the two counts, and
    sum by (instance) gives each exporter's own;
  * a label: ubtrace_by_parity_total{parity="0"} on one exporter, named
    by the script's `// ubtrace:metric` comment, whose help text
    Prometheus's metadata API returns;
  * histogram_quantile(0.5, ...) of hist(arg0) lies in the bucket that
    holds the median tick number;

and each answer equals what the same ubtrace runs print as text at their
exit. Exit status 77 (skip) without prometheus.

    tests/metrics/prometheus_scrape.py --ubtrace build/ubtrace \\
        --testprogs build/tests/testprogs
"""
import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, timeout=2):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read().decode()


def query(prom, expr):
    url = f"http://127.0.0.1:{prom}/api/v1/query?" + urllib.parse.urlencode(
        {"query": expr})
    _, body = get(url)
    data = json.loads(body)
    if data.get("status") != "success":
        raise RuntimeError(f"query {expr}: {body}")
    return data["data"]["result"]


def wait_until(what, check, timeout):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            last = check()
            if last:
                return last
        except Exception as e:  # not up yet
            last = e
        time.sleep(0.3)
    raise RuntimeError(f"timed out waiting for {what} (last: {last})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ubtrace", required=True)
    ap.add_argument("--testprogs", required=True)
    args = ap.parse_args()
    prometheus = shutil.which("prometheus")
    if not prometheus:
        print("SKIP: prometheus is not installed")
        return 77

    tmp = tempfile.mkdtemp()
    procs = []
    try:
        ports = [free_port(), free_port()]
        prom_port = free_port()
        with open(os.path.join(tmp, "prometheus.yml"), "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "scrape_configs:\n  - job_name: ubtrace\n"
                    "    static_configs:\n      - targets: [" +
                    ", ".join(f"'127.0.0.1:{p}'" for p in ports) + "]\n")
        procs.append(subprocess.Popen(
            [prometheus, "--config.file=" + os.path.join(tmp, "prometheus.yml"),
             "--storage.tsdb.path=" + os.path.join(tmp, "data"),
             f"--web.listen-address=127.0.0.1:{prom_port}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_until("prometheus", lambda: get(
            f"http://127.0.0.1:{prom_port}/-/ready")[0] == 200, 30)

        # Exporter i counts ticks 0 .. first[i]-1, then nothing changes.
        first = [50, 20]
        exporters = []
        for port, n in zip(ports, first):
            script = ("// ubtrace:metric @by_parity labels(parity) "
                      "\"Ticks by parity\"\n"
                      f"uprobe:{args.testprogs}/ticker:tick /arg0 < {n}/ "
                      "{ @early = count(); @by_parity[arg0 % 2] = count(); "
                      "@tick_no = hist(arg0); }")
            exporters.append(subprocess.Popen(
                [args.ubtrace, "--metrics", f"127.0.0.1:{port}", "-e", script,
                 "-c", f"{args.testprogs}/ticker 9000"],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
        procs.extend(exporters)

        total = sum(first)
        def settled():
            r = query(prom_port, "sum(ubtrace_early_total)")
            return r and float(r[0]["value"][1]) == total
        wait_until("both exporters' counts in Prometheus", settled, 40)

        by_instance = {r["metric"]["instance"]: float(r["value"][1])
                       for r in query(prom_port,
                                      "sum by (instance) (ubtrace_early_total)")}
        parity = query(prom_port, 'ubtrace_by_parity_total{parity="0",instance="'
                       f'127.0.0.1:{ports[0]}"' + "}")
        median = query(prom_port, "histogram_quantile(0.5, ubtrace_tick_no_bucket"
                       f'{{instance="127.0.0.1:{ports[0]}"}})')

        _, body = get(f"http://127.0.0.1:{prom_port}/api/v1/metadata")
        meta = json.loads(body)["data"]
        # OpenMetrics names the family without _total, the 0.0.4 format
        # with it: Prometheus scrapes the former when offered.
        family = meta.get("ubtrace_by_parity") or meta.get(
            "ubtrace_by_parity_total") or [{}]

        # The same runs' own text output at exit.
        texts = []
        for e in exporters:
            out, _ = e.communicate(timeout=60)
            texts.append(out)
        ok = True

        def check(what, got, want):
            nonlocal ok
            good = got == want if not callable(want) else want(got)
            print(f"{'ok' if good else 'MISMATCH'}: {what}: {got}")
            ok &= good

        for port, text in zip(ports, texts):
            m = re.search(r"^@early: (\d+)$", text, re.M)
            check(f"exporter :{port} @early (text) = PromQL by instance",
                  by_instance.get(f"127.0.0.1:{port}"),
                  float(m.group(1)) if m else "missing")
        m = re.search(r"^@by_parity\[0\]: (\d+)$", texts[0], re.M)
        check('ubtrace_by_parity_total{parity="0"} = @by_parity[0]',
              float(parity[0]["value"][1]) if parity else None,
              float(m.group(1)) if m else "missing")
        check("sum(ubtrace_early_total) across the two", total, sum(first))
        # Prometheus asks for OpenMetrics first (its Accept header).
        check("scraped as OpenMetrics (family named without _total)",
              "ubtrace_by_parity" in meta, True)
        check("the annotation's help in Prometheus's metadata",
              (family[0].get("type"), family[0].get("help")),
              ("counter", "Ticks by parity"))
        # Ticks 0..49: the median, 24.5, is in hist's [16, 32) bucket.
        q = float(median[0]["value"][1]) if median else None
        check("histogram_quantile(0.5) in (15, 31]", q,
              lambda v: v is not None and 15 < v <= 31)
        return 0 if ok else 1
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
