import unittest

from pricing import apply_discount, with_tax


class PricingTest(unittest.TestCase):
    def test_discount(self):
        self.assertEqual(apply_discount(200, 25), 150)
        self.assertEqual(apply_discount(80, 0), 80)

    def test_tax(self):
        self.assertAlmostEqual(with_tax(100, 0.2), 120)


if __name__ == "__main__":
    unittest.main()
