import unittest

from web.slugs import is_valid_slug


class WholeTextTest(unittest.TestCase):
    def test_spaces_and_punctuation(self):
        self.assertFalse(is_valid_slug("hello world"))
        self.assertFalse(is_valid_slug("hello!"))
        self.assertFalse(is_valid_slug("hello-"))

    def test_still_valid(self):
        self.assertTrue(is_valid_slug("a"))
        self.assertTrue(is_valid_slug("a-b-c"))
