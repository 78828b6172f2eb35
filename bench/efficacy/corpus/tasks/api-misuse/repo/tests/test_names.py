import unittest

from files.names import base_name


class BaseNameTest(unittest.TestCase):
    def test_simple(self):
        self.assertEqual(base_name("sales.csv"), "sales")
