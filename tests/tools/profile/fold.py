#!/usr/bin/env python3
"""Reads `perf script` output (call graphs) and prints the top frames by inclusive and by self CPU, and the CPU by
component (the assembly or library a frame belongs to, JIT and GC kept apart), as Markdown tables.
Usage: perf script -i perf.data | tests/tools/profile/fold.py [TOP]"""
import collections, re, sys

top = int(sys.argv[1]) if len(sys.argv) > 1 else 30
samples = []
stack = None
for line in sys.stdin:
    line = line.rstrip('\n')
    if not line.strip():
        if stack is not None:
            samples.append(stack)
        stack = None
        continue
    if not line.startswith((' ', '\t')):
        stack = []  # a sample's header line
        continue
    if stack is None:
        continue
    parts = line.strip().split(' ', 1)
    if len(parts) < 2:
        continue
    rest = parts[1]
    m = re.match(r'(.*) \(([^()]*)\)$', rest)
    symbol, module = (m.group(1), m.group(2)) if m else (rest, '')
    symbol = re.sub(r'\+0x[0-9a-f]+$', '', symbol)
    symbol = re.sub(r'\[OptimizedTier1\]|\[Optimized\]|\[Tier0\]|\[Tier1\]|\[PreJIT\]|\[QuickJitted\]|\[OSR\]|\[Instrumented[^\]]*\]', '', symbol).strip()
    stack.append((symbol, module))
if stack:
    samples.append(stack)

def component(symbol, module):
    if module.startswith('[kernel') or module == '[unknown]' and symbol.startswith(('[k]',)):
        return 'kernel'
    if 'kernel' in module:
        return 'kernel'
    if 'libclrjit' in module:
        return 'JIT (libclrjit)'
    if 'libcoreclr' in module:
        if re.search(r'(?i)gc|mark|sweep|plan_phase|relocate|memclr|allocate', symbol):
            return 'GC and allocation (libcoreclr)'
        return 'runtime (libcoreclr)'
    m = re.match(r'(?:instance |static |void |\[[^\]]*\] )*([A-Za-z_][\w.`]*?)(?:\.[A-Za-z_<][^.(]*)?(?:\(|$)', symbol)
    name = symbol
    for prefix, label in [('Npgsql', 'Npgsql'), ('Microsoft.EntityFrameworkCore', 'EF Core'), ('Microsoft.AspNetCore', 'ASP.NET Core'),
                          ('Jint', 'Jint (expressions)'), ('Acornima', 'Jint (expressions)'), ('System.Text.Json', 'System.Text.Json'),
                          ('WorkflowService', 'WorkflowService'), ('Serilog', 'Serilog'), ('Microsoft.Extensions', 'Microsoft.Extensions'),
                          ('OpenTelemetry', 'OpenTelemetry'), ('System.Net', 'System.Net'), ('System.Threading', 'System.Threading'),
                          ('Microsoft.Data.Sqlite', 'Microsoft.Data.Sqlite'), ('System.Collections', 'System.Collections'),
                          ('Polly', 'Polly'), ('System.', 'System (other)')]:
        if prefix in name:
            return label
    if module.endswith('.so') or '.so.' in module:
        return module.rsplit('/', 1)[-1]
    return 'other managed'

total = len(samples)
inclusive = collections.Counter()
selfc = collections.Counter()
components = collections.Counter()
for s in samples:
    if not s:
        continue
    leaf = s[0]
    selfc[leaf[0]] += 1
    components[component(*leaf)] += 1
    for sym in {f[0] for f in s}:
        inclusive[sym] += 1

def table(title, counter, n):
    print(f'\n### {title}\n\n| % of samples | frame |\n| ---: | --- |')
    for sym, c in counter.most_common(n):
        print(f'| {100.0 * c / total:.1f} | `{sym[:150]}` |')

print(f'{total} samples')
print('\n### CPU by component (the leaf frame\'s)\n\n| % of samples | component |\n| ---: | --- |')
for comp, c in components.most_common():
    print(f'| {100.0 * c / total:.1f} | {comp} |')
table('Top frames by self CPU', selfc, top)
interesting = collections.Counter({k: v for k, v in inclusive.items()
                                   if re.search(r'WorkflowService|Npgsql|AspNetCore|Jint|Json|EntityFramework|Serilog', k)})
table('Top managed frames by inclusive CPU (this service, its libraries)', interesting, top)
