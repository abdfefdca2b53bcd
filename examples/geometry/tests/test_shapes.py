import unittest

from geometry import rect_area


class ShapesTest(unittest.TestCase):
    def test_rect_area(self):
        self.assertEqual(rect_area(2, 3), 6)


if __name__ == "__main__":
    unittest.main()
