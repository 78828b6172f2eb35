import unittest

from billing.money import format_money


class MoneyTest(unittest.TestCase):
    def test_dollars_and_cents(self):
        self.assertEqual(format_money(1234), "$12.34")
