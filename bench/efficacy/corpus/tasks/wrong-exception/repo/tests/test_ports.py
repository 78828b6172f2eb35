import unittest

from settings.ports import parse_port


class PortTest(unittest.TestCase):
    def test_a_port(self):
        self.assertEqual(parse_port("8080"), 8080)
