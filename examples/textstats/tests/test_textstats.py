import unittest

from textstats import line_count, word_count


class TextStatsTest(unittest.TestCase):
    def test_word_count(self):
        self.assertEqual(word_count("a b  c"), 3)
        self.assertEqual(word_count(""), 0)

    def test_line_count(self):
        self.assertEqual(line_count("a\nb\n"), 2)
        self.assertEqual(line_count(""), 0)


if __name__ == "__main__":
    unittest.main()
