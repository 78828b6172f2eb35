import unittest

from shop.cart import Cart


class CartTest(unittest.TestCase):
    def test_total(self):
        cart = Cart([("pen", 2)])
        cart.add("book", 10)
        self.assertEqual(cart.total(), 12)
