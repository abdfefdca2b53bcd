import unittest

from leaderboard import best_of, board, latest, rank, top

GAME = [("ann", 30), ("bob", 50), ("cy", 40), ("ann", 45), ("dee", 20)]


class LeaderboardTest(unittest.TestCase):
    def test_top(self):
        self.assertEqual(top(list(GAME), 2), [("bob", 50), ("ann", 45)])

    def test_ties_keep_their_order(self):
        self.assertEqual(top([("a", 5), ("b", 7), ("c", 5)]), [("b", 7), ("a", 5), ("c", 5)])

    def test_top_leaves_the_scores_alone(self):
        scores = list(GAME)
        top(scores)
        self.assertEqual(scores, GAME)

    def test_latest_after_the_board(self):
        scores = list(GAME)
        board(scores)
        self.assertEqual(latest(scores, 2), [("ann", 45), ("dee", 20)])

    def test_rank(self):
        self.assertEqual(best_of(GAME, "ann"), 45)
        self.assertEqual(rank(GAME, "bob"), 1)
        self.assertEqual(rank(GAME, "ann"), 2)
        self.assertIsNone(rank(GAME, "eve"))

    def test_board(self):
        self.assertEqual(board(list(GAME), 1), ["1. bob  50"])


if __name__ == "__main__":
    unittest.main()
