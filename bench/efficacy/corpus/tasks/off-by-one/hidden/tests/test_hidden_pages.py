import unittest

from pager.pages import paginate


class PaginateTest(unittest.TestCase):
    def test_full_pages(self):
        self.assertEqual(paginate([1, 2, 3, 4, 5], 1, 2), [1, 2])
        self.assertEqual(paginate([1, 2, 3, 4, 5], 2, 2), [3, 4])

    def test_last_page(self):
        self.assertEqual(paginate([1, 2, 3, 4, 5], 3, 2), [5])

    def test_past_the_end(self):
        self.assertEqual(paginate([1, 2, 3], 4, 2), [])
