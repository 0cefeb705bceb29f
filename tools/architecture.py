#!/usr/bin/env python3
"""Checks the shape of src/ against the rules in docs/ARCHITECTURE.md.

Reports, from the source text alone (rustfmt's layout is assumed):
  * cycles between top-level modules (`crate::X` and `super::` references outside tests),
    except the one allowed among the core's value, eval and builtins;
  * lines of the core (src/value, src/eval, src/builtins) that name the task, module,
    testing or other upper layers, except the references listed in ALLOWED_CORE;
  * functions over 80 lines and files over 800 lines, test code not counted.

Usage: python3 tools/architecture.py [--root DIR] [--strict]
With --strict the exit status is 1 when anything is reported.
"""

import argparse
import os
import re
import sys
from collections import defaultdict

MAX_FUNCTION_LINES = 80
MAX_FILE_LINES = 800
CORE = ("value", "eval", "builtins")
ALLOWED_CYCLE = set(CORE)
# Upper layers the core must not name; `Value::Task`'s payload and the layer registration
# are the exceptions, listed with their reason.
UPPER = ("task", "module", "testing", "repl", "cli", "provider", "mcp", "xml", "runlog")
# An allowed reference is not an edge of the module graph either. The list of layers an
# interpreter starts with belongs above the core (a module that names both), never in it.
ALLOWED_CORE = {
    # (file under src/, the referenced path): why
    ("value/mod.rs", "task::Task"): "Value::Task's payload",
    ("eval/call.rs", "task"): "calling Value::Task's payload",
    ("eval/mod.rs", "task::Runtime"):
        "the TaskLibrary and its runtime, shared by every evaluation; the evaluator reads it"
        " when a global name is unbound",
    ("eval/home.rs", "task::ParkedTasks"):
        "a home's TaskLibrary, parked with its globals while another home runs",
    ("eval/state.rs", "task::state::TaskState"):
        "the task layer's part of one evaluation's state, swapped with it as a unit",
}

FN_RE = re.compile(
    r'^(\s*)(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?'
    r'(?:extern\s+"[^"]*"\s+)?fn\s+(\w+)')
CRATE_RE = re.compile(r'\bcrate::(\{|\w+)')


def strip_comment(line):
    """The line without a `//` comment (strings holding `//` are rare enough here)."""
    in_str = False
    i = 0
    while i < len(line) - 1:
        c = line[i]
        if c == '"' and (i == 0 or line[i - 1] != '\\'):
            in_str = not in_str
        elif not in_str and line[i:i + 2] == '//':
            return line[:i]
        i += 1
    return line


def block_end(lines, start, indent):
    """Index of the line closing the block opened at `start` (rustfmt: `indent}`)."""
    close = indent + '}'
    for j in range(start, len(lines)):
        if lines[j].rstrip() == close or (j == start and lines[j].rstrip().endswith('}')
                                            and lines[j].count('{') == lines[j].count('}')
                                            and '{' in lines[j]):
            return j
    return len(lines) - 1


def test_lines(lines):
    """Indices of lines inside `#[cfg(test)]` items."""
    hidden = set()
    i = 0
    while i < len(lines):
        if lines[i].strip() == '#[cfg(test)]' and i + 1 < len(lines):
            item = lines[i + 1]
            indent = item[:len(item) - len(item.lstrip())]
            if item.rstrip().endswith(';'):
                end = i + 1
            else:
                end = block_end(lines, i + 1, indent)
            hidden.update(range(i, end + 1))
            i = end + 1
        else:
            i += 1
    return hidden


def rust_files(src):
    for dirpath, _, names in os.walk(src):
        for name in sorted(names):
            if name.endswith('.rs'):
                path = os.path.join(dirpath, name)
                yield os.path.relpath(path, src)


def top_module(rel):
    first = rel.split(os.sep)[0]
    return first[:-3] if first.endswith('.rs') else first


def crate_refs(code):
    """Top-level modules a line names through `crate::`, with the path named."""
    refs = []
    for m in CRATE_RE.finditer(code):
        if m.group(1) == '{':
            depth, k, item = 1, m.end(), ''
            names = []
            while k < len(code) and depth:
                ch = code[k]
                if ch == '{':
                    depth += 1
                elif ch == '}':
                    depth -= 1
                if depth == 1 and ch == ',':
                    names.append(item)
                    item = ''
                elif depth >= 1 and not (depth == 1 and ch in '{}'):
                    item += ch
                k += 1
            names.append(item)
            for n in names:
                n = n.strip()
                if n:
                    refs.append((re.split(r'::|\W', n)[0], n))
        else:
            rest = code[m.start() + len('crate::'):]
            path = re.match(r'[\w:]+', rest).group(0)
            refs.append((m.group(1), path))
    return refs


def analyse(root):
    src = os.path.join(root, 'src')
    modules = {top_module(r) for r in rust_files(src)} - {'lib', 'main'}
    edges = defaultdict(list)  # (from, to) -> [file:line]
    core_refs = []
    long_fns = []
    big_files = []
    for rel in rust_files(src):
        if os.path.basename(rel) == 'tests.rs':
            continue
        with open(os.path.join(src, rel), encoding='utf-8') as f:
            lines = f.read().split('\n')
        hidden = test_lines(lines)
        counted = [i for i in range(len(lines)) if i not in hidden]
        if len(counted) > MAX_FILE_LINES:
            big_files.append((rel, len(counted)))
        owner = top_module(rel)
        in_core = owner in CORE
        for i in counted:
            code = strip_comment(lines[i])
            for target, path in crate_refs(code):
                allowed = any(f == rel.replace(os.sep, '/') and path.startswith(p)
                              for (f, p) in ALLOWED_CORE)
                if target in modules and target != owner and not allowed:
                    edges[(owner, target)].append(f'{rel}:{i + 1}')
                if in_core and target in UPPER and not allowed:
                    core_refs.append((rel, i + 1, path))
            m = FN_RE.match(lines[i])
            if m and not code.rstrip().endswith(';'):
                end = block_end(lines, i, m.group(1))
                length = end - i + 1
                if length > MAX_FUNCTION_LINES and i not in hidden:
                    long_fns.append((rel, i + 1, m.group(2), length))
    return modules, edges, core_refs, long_fns, big_files


def cycles(modules, edges):
    """Strongly connected components with more than one module (Tarjan)."""
    graph = defaultdict(set)
    for (a, b) in edges:
        graph[a].add(b)
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(modules):
        if v not in index:
            visit(v)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--root', default=os.path.join(os.path.dirname(__file__), '..'))
    ap.add_argument('--strict', action='store_true')
    args = ap.parse_args()
    modules, edges, core_refs, long_fns, big_files = analyse(args.root)
    findings = 0

    print('== cycles between top-level modules')
    for comp in cycles(modules, edges):
        if set(comp) <= ALLOWED_CYCLE:
            print(f'   allowed: {" ↔ ".join(comp)}')
            continue
        findings += 1
        print(f'   CYCLE of {len(comp)}: {", ".join(comp)}')
        members = set(comp)
        for (a, b), sites in sorted(edges.items()):
            if a in members and b in members:
                print(f'      {a} → {b}: {len(sites)} (e.g. {sites[0]})')

    print('== the core (value, eval, builtins) naming upper layers')
    for rel, line, path in core_refs:
        findings += 1
        print(f'   {rel}:{line}: crate::{path}')

    print(f'== functions over {MAX_FUNCTION_LINES} lines')
    for rel, line, name, length in sorted(long_fns, key=lambda x: -x[3]):
        findings += 1
        print(f'   {rel}:{line}: {name} ({length} lines)')

    print(f'== files over {MAX_FILE_LINES} lines (tests not counted)')
    for rel, n in sorted(big_files, key=lambda x: -x[1]):
        findings += 1
        print(f'   {rel}: {n}')

    print(f'{findings} finding(s)')
    return 1 if args.strict and findings else 0


if __name__ == '__main__':
    sys.exit(main())
