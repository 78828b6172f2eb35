import unittest

from shop.cart import Cart


class SeparateCartsTest(unittest.TestCase):
    def test_carts_do_not_share_items(self):
        first = Cart()
        first.add("pen", 2)
        second = Cart()
        self.assertEqual(second.items, [])
        self.assertEqual(second.total(), 0)

    def test_the_given_list_is_not_changed(self):
        given = [("pen", 2)]
        Cart(given).add("book", 10)
        self.assertEqual(given, [("pen", 2)])
