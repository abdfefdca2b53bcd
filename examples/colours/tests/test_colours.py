import unittest

from colours import luminance, parse_hex, text_colour, to_hex


class ColoursTest(unittest.TestCase):
    def test_long_form(self):
        self.assertEqual(parse_hex("#1e90ff"), (30, 144, 255))
        self.assertEqual(parse_hex("#FFA500"), (255, 165, 0))

    def test_short_form(self):
        self.assertEqual(parse_hex("#fff"), (255, 255, 255))
        self.assertEqual(parse_hex("#0a0"), (0, 170, 0))

    def test_not_a_colour(self):
        for text in ["", "fff", "#ff", "#12345", "#ggg", "#1e90fg"]:
            with self.assertRaises(ValueError):
                parse_hex(text)

    def test_to_hex(self):
        self.assertEqual(to_hex((30, 144, 255)), "#1e90ff")
        self.assertEqual(parse_hex(to_hex((1, 2, 3))), (1, 2, 3))

    def test_text_colour(self):
        self.assertEqual(luminance((255, 255, 255)), 1.0)
        self.assertEqual(text_colour("#ffffff"), "#000000")
        self.assertEqual(text_colour("#000080"), "#ffffff")


if __name__ == "__main__":
    unittest.main()
