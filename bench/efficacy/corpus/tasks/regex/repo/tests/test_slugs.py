import unittest

from web.slugs import is_valid_slug


class SlugTest(unittest.TestCase):
    def test_valid(self):
        self.assertTrue(is_valid_slug("hello-world-2"))

    def test_capitals(self):
        self.assertFalse(is_valid_slug("Hello"))
