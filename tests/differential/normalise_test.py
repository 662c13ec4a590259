#!/usr/bin/env python3
"""Checks each rule of differential.py's normaliser on bpftrace 0.17 output
written the way 0.17 writes it, and that text the rules must not touch is
left alone. Runs without bpftrace."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from differential import normalise  # noqa: E402

BAR = "@" * 52


class Rules(unittest.TestCase):
    def test_attaching_line_is_dropped(self):
        self.assertEqual(normalise("Attaching 1 probe...\nhi\n", ""), "hi\n")
        self.assertEqual(normalise("Attaching 3 probes...\nhi\n", ""), "hi\n")

    def test_other_lines_mentioning_attaching_stay(self):
        self.assertEqual(normalise("Attaching 1 probe... now\n", ""),
                         "Attaching 1 probe... now\n")

    def test_stats_values_become_records(self):
        script = "BEGIN { @s = stats(2); @k[1] = stats(-3); }"
        got = normalise("@s: count 2, average 6, total 12\n"
                        "@k[1]: count 1, average -3, total -3\n", script)
        self.assertEqual(got, "@s: { .count = 2, .average = 6, .total = 12 }\n"
                              "@k[1]: { .count = 1, .average = -3, .total = -3 }\n")

    def test_printf_text_that_looks_like_stats_stays(self):
        self.assertEqual(normalise("count 1, average 2, total 3\n", ""),
                         "count 1, average 2, total 3\n")

    def test_hist_header_loses_its_trailing_space(self):
        line = "[2, 4)                 1 |" + BAR + "|"
        self.assertEqual(normalise("@h: \n" + line + "\n\n", ""), "@h:\n" + line + "\n\n")
        self.assertEqual(normalise("@h[1, x]: \n" + line + "\n", ""),
                         "@h[1, x]:\n" + line + "\n")

    def test_empty_string_value_keeps_its_space(self):
        self.assertEqual(normalise("@s: \n@t: 1\n", ""), "@s: \n@t: 1\n")

    def test_one_wide_lhist_buckets(self):
        got = normalise("@l: \n"
                        "[4, 5)                 2 |" + BAR + "|\n"
                        "[5, 6)                 0 |" + " " * 52 + "|\n"
                        "[10, 20)               1 |" + "@" * 26 + " " * 26 + "|\n", "")
        self.assertEqual(got, "@l:\n"
                              "[4]                    2 |" + BAR + "|\n"
                              "[5]                    0 |" + " " * 52 + "|\n"
                              "[10, 20)               1 |" + "@" * 26 + " " * 26 + "|\n")

    def test_open_buckets_are_not_one_wide(self):
        text = "@l:\n(..., 0)               1 |" + BAR + "|\n[10, ...)              1 |" + BAR + "|\n"
        self.assertEqual(normalise(text, ""), text)

    def test_blank_line_after_avg_and_stats_maps(self):
        script = "BEGIN { @a[1] = avg(2); @s = stats(3); @x = 1; }"
        got = normalise("\n\n@a[1]: 2\n@a[2]: 5\n\n@s: count 1, average 3, total 3\n\n@x: 1\n",
                        script)
        self.assertEqual(got, "\n\n@a[1]: 2\n@a[2]: 5\n@s: { .count = 1, .average = 3, .total = 3 }\n@x: 1\n")

    def test_only_one_blank_line_goes(self):
        # print(@a) then two newlines printed by the script itself.
        script = "BEGIN { @a = avg(2); }"
        self.assertEqual(normalise("@a: 2\n\n\n\n", script), "@a: 2\n\n\n")

    def test_blank_lines_after_other_maps_stay(self):
        script = "BEGIN { @a = avg(2); @c = count(); }"
        self.assertEqual(normalise("@c: 2\n\nnext\n", script), "@c: 2\n\nnext\n")


if __name__ == "__main__":
    unittest.main()
