"""A stand-in for the `expecttest` package, which Debian does not ship and
torch.testing._internal.common_utils imports (its TestCase derives from
expecttest.TestCase). Only what torch_fx_suite.py's runs need: inline
expectations compared as they are written, never rewritten."""

import unittest

ACCEPT = False


class TestCase(unittest.TestCase):
    longMessage = True

    def assertExpectedInline(self, actual, expect, skip=0):  # noqa: N802
        if isinstance(actual, str) and isinstance(expect, str):
            actual, expect = actual.strip(), expect.strip()
        self.assertEqual(actual, expect)
