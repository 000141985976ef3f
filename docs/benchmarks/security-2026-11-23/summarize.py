#!/usr/bin/env python3
"""Tables of security-2026-11-23.md from the runner's JSON reports beside this script (<backend>-<apikey|none>-<pair>.json)."""
import glob, json, os, statistics

HERE = os.path.dirname(os.path.abspath(__file__))
SUSTAINED, SERIAL = "signal-roundtrip-sustained", "signal-roundtrip-latency-serial-1k"
REQUESTS_PER_OP = 3  # POST /instances, POST /instances/{id}/signals, GET /instances/{id}?waitFor=Completed


def load(backend, auth, pair):
    path = os.path.join(HERE, f"{backend}-{auth}-{pair}.json")
    if not os.path.exists(path):
        return None
    report = json.load(open(path))
    assert report["authentication"] == auth, path
    scenarios = {s["scenario"]: s for s in report["scenarios"]}
    for s in scenarios.values():
        assert s["failures"] == 0 and s["deadLettered"] == 0 and s["stuckInstances"] == 0, (path, s["name"])
    return scenarios


def cpu(s):
    return 1000 * s["serviceCpuSeconds"] / s["ops"]


def med(values):
    return statistics.median(values)


for backend, title in (("sqlite", "SQLite"), ("postgres", "PostgreSQL")):
    pairs = []
    for pair in range(1, 100):
        a, n = load(backend, "apikey", pair), load(backend, "none", pair)
        if a and n:
            pairs.append((pair, a, n))
    if not pairs:
        continue

    print(f"### {title}, `{SUSTAINED}` (10,000 ops at 64)\n")
    print("| pair | apikey | none | apikey / none |\n| --- | --- | --- | ---: |")
    ratio, extra = [], []
    for pair, a, n in pairs:
        x, y = a[SUSTAINED], n[SUSTAINED]
        ratio.append(x["throughputPerSecond"] / y["throughputPerSecond"])
        extra.append(1000 / x["throughputPerSecond"] - 1000 / y["throughputPerSecond"])
        cell = lambda s: f"{s['throughputPerSecond']:.0f} ops/s, p99 {s['latency']['p99']:.1f} ms, CPU {cpu(s):.2f} ms/op, other load {s['otherLoadPercent']:.0f} %"
        print(f"| {pair} | {cell(x)} | {cell(y)} | {ratio[-1]:.3f} |")
    ta = [a[SUSTAINED]["throughputPerSecond"] for _, a, _ in pairs]
    tn = [n[SUSTAINED]["throughputPerSecond"] for _, _, n in pairs]
    ca = [cpu(a[SUSTAINED]) for _, a, _ in pairs]
    cn = [cpu(n[SUSTAINED]) for _, _, n in pairs]
    dcpu = [x - y for x, y in zip(ca, cn)]
    print(f"| **median** | {med(ta):.0f} ops/s, CPU {med(ca):.2f} ms/op | {med(tn):.0f} ops/s, CPU {med(cn):.2f} ms/op | "
          f"**{med(ratio):.3f}** (pairs {min(ratio):.3f}–{max(ratio):.3f}) |\n")

    print(f"### {title}, `{SERIAL}` (1,000 ops, one at a time)\n")
    print("| pair | apikey | none | apikey − none, avg |\n| --- | --- | --- | ---: |")
    davg, dp50 = [], []
    for pair, a, n in pairs:
        x, y = a[SERIAL], n[SERIAL]
        davg.append(x["latency"]["avg"] - y["latency"]["avg"])
        dp50.append(x["latency"]["p50"] - y["latency"]["p50"])
        cell = lambda s: (f"avg {s['latency']['avg']:.2f} / p50 {s['latency']['p50']:.2f} / p99 {s['latency']['p99']:.2f} ms, "
                          f"CPU {cpu(s):.2f} ms/op, other load {s['otherLoadPercent']:.0f} %")
        print(f"| {pair} | {cell(x)} | {cell(y)} | {davg[-1]:+.2f} ms |")
    aa = [a[SERIAL]["latency"]["avg"] for _, a, _ in pairs]
    an = [n[SERIAL]["latency"]["avg"] for _, _, n in pairs]
    print(f"| **median** | avg {med(aa):.2f} ms | avg {med(an):.2f} ms | **{med(davg):+.2f} ms** (pairs {min(davg):+.2f} to {max(davg):+.2f}) |\n")

    print(f"Cost per request, {title} ({len(pairs)} pairs, {REQUESTS_PER_OP} requests per operation; medians of the per-pair differences):\n")
    print(f"- serial: {med(davg):+.3f} ms per operation (avg latency), {med(davg) / REQUESTS_PER_OP:+.3f} ms per request; "
          f"p50: {med(dp50):+.3f} ms per operation, {med(dp50) / REQUESTS_PER_OP:+.3f} ms per request")
    print(f"- sustained: throughput ratio {med(ratio):.3f}; the machine's time per operation {med(extra):+.3f} ms (1/throughput, apikey − none), "
          f"{med(extra) / REQUESTS_PER_OP:+.3f} ms per request")
    print(f"- sustained, the service's CPU: {med(dcpu):+.3f} ms per operation, {med(dcpu) / REQUESTS_PER_OP:+.3f} ms per request\n")
