"""Paired ratio of variant A to variant B over one or more interleave reports (JSON), pooled.

usage: python3 pair.py A B REPORT.json [REPORT.json ...]

Each round's ops/s of A over the same round's of B; the median over all rounds of all reports. The 95 % interval is
a bootstrap of that median, as the runner's: the processes resampled (each report's processes are its own), then
each chosen process's rounds. CPU and WAL columns: median differences (A minus B).
"""
import json, random, statistics, sys

a, b, files = sys.argv[1], sys.argv[2], sys.argv[3:]
pairs = []
for n, f in enumerate(files):
    windows = {(w['variant'], w['round']): w for w in json.load(open(f))['windows']}
    for (variant, r), wa in sorted(windows.items()):
        if variant == a and (b, r) in windows:
            wb = windows[(b, r)]
            pairs.append(((n, wa.get('process', 1)), wa['opsPerSecond'] / wb['opsPerSecond'],
                          wa['serviceCpuMsPerOp'] - wb['serviceCpuMsPerOp'], wa['databaseCpuMsPerOp'] - wb['databaseCpuMsPerOp'],
                          wa['machineCpuMsPerOp'] - wb['machineCpuMsPerOp'], (wa.get('walBytesPerOp') or 0) - (wb.get('walBytesPerOp') or 0)))

processes = {}
for p in pairs:
    processes.setdefault(p[0], []).append(p[1])
keys = list(processes)
random.seed(1)
medians = []
for _ in range(10000):
    sample = []
    for _ in keys:
        rounds = processes[random.choice(keys)]
        sample += [random.choice(rounds) for _ in rounds]
    medians.append(statistics.median(sample))
medians.sort()
med = lambda i: statistics.median(p[i] for p in pairs)
print(f"{a} vs {b}: {med(1) * 100:.1f} % (95 % interval {medians[250] * 100:.1f} … {medians[9750] * 100:.1f}), "
      f"{len(pairs)} pairs, {len(keys)} processes; service {med(2):+.3f}, database {med(3):+.3f}, machine {med(4):+.3f} ms/op; "
      f"WAL {med(5):+.0f} B/op; processes {min(statistics.median(v) for v in processes.values()) * 100:.1f} … "
      f"{max(statistics.median(v) for v in processes.values()) * 100:.1f} %")
