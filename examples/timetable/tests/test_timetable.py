import unittest

from timetable import clock, minutes, next_departure, wait

MORNING = ["06:15", "06:45", "07:15", "07:45", "08:30"]


class TimetableTest(unittest.TestCase):
    def test_minutes_and_clock(self):
        self.assertEqual(minutes("07:45"), 465)
        self.assertEqual(clock(465), "07:45")
        self.assertEqual(clock(1445), "00:05")

    def test_before_the_first_bus(self):
        self.assertEqual(next_departure(MORNING, "05:30"), "06:15")

    def test_between_two_buses(self):
        self.assertEqual(next_departure(MORNING, "07:00"), "07:15")

    def test_a_bus_leaving_now(self):
        self.assertEqual(next_departure(MORNING, "07:45"), "07:45")

    def test_after_the_last_bus(self):
        self.assertIsNone(next_departure(MORNING, "09:00"))

    def test_wait(self):
        self.assertEqual(wait(MORNING, "07:40"), 5)
        self.assertIsNone(wait(MORNING, "23:00"))


if __name__ == "__main__":
    unittest.main()
