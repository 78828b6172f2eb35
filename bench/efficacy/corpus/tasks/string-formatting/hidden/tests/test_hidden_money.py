import unittest

from billing.money import format_money


class TrailingZeroTest(unittest.TestCase):
    def test_ten_cents(self):
        self.assertEqual(format_money(550), "$5.50")

    def test_whole_dollars(self):
        self.assertEqual(format_money(100000), "$1000.00")

    def test_nothing(self):
        self.assertEqual(format_money(0), "$0.00")
