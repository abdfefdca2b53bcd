import unittest

from pager import page, page_count, page_label


class PagerTest(unittest.TestCase):
    def test_page_count(self):
        self.assertEqual(page_count(0, 10), 1)
        self.assertEqual(page_count(10, 10), 1)
        self.assertEqual(page_count(11, 10), 2)

    def test_first_page(self):
        self.assertEqual(page(list(range(25)), 1, 10), list(range(10)))

    def test_last_page_is_short(self):
        self.assertEqual(page(list(range(25)), 3, 10), [20, 21, 22, 23, 24])

    def test_label(self):
        self.assertEqual(page_label(2, 45), "Page 2 of 3")


if __name__ == "__main__":
    unittest.main()
