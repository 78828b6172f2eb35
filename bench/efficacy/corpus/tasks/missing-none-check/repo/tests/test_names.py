import unittest

from accounts.names import User, display_name


class DisplayNameTest(unittest.TestCase):
    def test_nickname_wins(self):
        self.assertEqual(display_name(User("Ada Lovelace", " ada ")), "ada")
