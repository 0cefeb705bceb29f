#!/usr/bin/env python3
"""Tests of tools/architecture.py on small made-up trees: each check can fail."""

import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))
import architecture  # noqa: E402


def tree(files):
    root = tempfile.mkdtemp()
    for path, text in files.items():
        full = os.path.join(root, 'src', path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, 'w', encoding='utf-8') as f:
            f.write(text)
    return root


def long_function(name, lines):
    body = ''.join(f'    let x{i} = {i};\n' for i in range(lines - 2))
    return f'fn {name}() {{\n{body}}}\n'


class Checks(unittest.TestCase):
    def test_a_cycle_outside_the_core_is_found_and_the_core_cycle_allowed(self):
        root = tree({
            'a.rs': 'use crate::b::X;\n',
            'b.rs': 'use crate::{a::Y, value::V};\n',
            'value/mod.rs': 'use crate::eval::E;\n',
            'eval/mod.rs': 'use crate::value::V;\n',
        })
        modules, edges, _, _, _ = architecture.analyse(root)
        found = architecture.cycles(modules, edges)
        self.assertIn(['a', 'b'], found)
        self.assertIn(['eval', 'value'], found)

    def test_the_core_naming_a_layer_is_found_unless_allowed(self):
        root = tree({
            'eval/mod.rs': 'use crate::task::Thing;\n// crate::task::Comment\n',
            'value/mod.rs': 'use crate::task::Task;\n',
            'task/mod.rs': '',
        })
        _, edges, core_refs, _, _ = architecture.analyse(root)
        self.assertEqual(core_refs, [('eval/mod.rs', 1, 'task::Thing')])
        self.assertNotIn(('value', 'task'), edges)

    def test_long_functions_and_big_files_count_no_test_code(self):
        tests = '#[cfg(test)]\nmod tests {\n' + long_function('t', 900) + '}\n'
        root = tree({
            'big.rs': long_function('long', 81) + long_function('short', 80) + tests,
            'huge.rs': ''.join(long_function(f'f{i}', 50) for i in range(17)),
        })
        _, _, _, long_fns, big_files = architecture.analyse(root)
        self.assertEqual([(f, n) for f, _, n, _ in long_fns], [('big.rs', 'long')])
        self.assertEqual([f for f, _ in big_files], ['huge.rs'])


if __name__ == '__main__':
    unittest.main()
