import unittest

from slugs import slugify, unique_slug


class SlugsTest(unittest.TestCase):
    def test_words_joined_by_hyphens(self):
        self.assertEqual(slugify("Hello, World!"), "hello-world")

    def test_other_separator(self):
        self.assertEqual(slugify("Rust 2024 edition", sep="_"), "rust_2024_edition")

    def test_cut_without_trailing_separator(self):
        self.assertEqual(slugify("one two three", sep="_", max_length=8), "one_two")

    def test_unique(self):
        self.assertEqual(unique_slug("Hello World", {"hello-world"}), "hello-world-2")


if __name__ == "__main__":
    unittest.main()
