import unittest

from settings.ports import ConfigError, parse_port


class BadPortTest(unittest.TestCase):
    def test_not_a_number(self):
        with self.assertRaises(ConfigError):
            parse_port("http")

    def test_out_of_range(self):
        with self.assertRaises(ConfigError):
            parse_port("70000")

    def test_edges(self):
        self.assertEqual(parse_port("1"), 1)
        self.assertEqual(parse_port("65535"), 65535)
