import unittest

from files.names import base_name


class ExtensionOnlyTest(unittest.TestCase):
    def test_letters_of_the_extension_stay(self):
        self.assertEqual(base_name("stats.csv"), "stats")
        self.assertEqual(base_name("docs.csv"), "docs")

    def test_no_extension(self):
        self.assertEqual(base_name("costs"), "costs")
