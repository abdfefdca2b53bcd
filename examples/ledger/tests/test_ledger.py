import unittest

from ledger import entry_line, ledger, total_line


class LedgerTest(unittest.TestCase):
    def test_entry_line(self):
        self.assertEqual(entry_line("rent", 950), "rent            950.00")

    def test_long_names_are_cut(self):
        self.assertEqual(entry_line("a" * 20, 1.5), "a" * 12 + "      1.50")

    def test_total_line(self):
        self.assertEqual(total_line([1, 2.5]), "TOTAL             3.50")

    def test_ledger(self):
        self.assertEqual(
            ledger([("rent", 950), ("food", 120.5)]),
            "rent            950.00\nfood            120.50\nTOTAL          1070.50",
        )


if __name__ == "__main__":
    unittest.main()
