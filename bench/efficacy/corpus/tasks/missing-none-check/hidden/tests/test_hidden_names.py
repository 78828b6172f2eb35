import unittest

from accounts.names import User, display_name


class NoNicknameTest(unittest.TestCase):
    def test_no_nickname(self):
        self.assertEqual(display_name(User("Grace Hopper")), "Grace Hopper")

    def test_blank_nickname(self):
        self.assertEqual(display_name(User("Grace Hopper", "  ")), "Grace Hopper")
