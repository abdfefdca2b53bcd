import unittest

from durations import format_duration, parse_duration


class DurationsTest(unittest.TestCase):
    def test_seconds_and_minutes(self):
        self.assertEqual(parse_duration("45s"), 45)
        self.assertEqual(parse_duration("2m5s"), 125)

    def test_hours(self):
        self.assertEqual(parse_duration("1h30m"), 5400)

    def test_not_a_duration(self):
        for text in ["", "5", "5x", "m5", "1h 2m"]:
            with self.assertRaises(ValueError):
                parse_duration(text)

    def test_format(self):
        self.assertEqual(format_duration(5400), "1h30m")
        self.assertEqual(format_duration(0), "0s")

    def test_round_trip(self):
        for seconds in [1, 59, 61, 3600, 3661]:
            self.assertEqual(parse_duration(format_duration(seconds)), seconds)


if __name__ == "__main__":
    unittest.main()
