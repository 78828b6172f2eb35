import unittest

from pager.pages import page_count


class PageCountTest(unittest.TestCase):
    def test_partial_last_page(self):
        self.assertEqual(page_count(5, 2), 3)

    def test_exact_pages(self):
        self.assertEqual(page_count(4, 2), 2)
