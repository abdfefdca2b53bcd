"""A game's leaderboard. Scores are (player, points) pairs kept in the order they were
scored; the board shows the best of them, the latest, and where a player stands."""


def top(scores, n=3):
    """The `n` best (player, points) pairs of `scores`, most points first; equal points keep
    the order they were scored in. `scores` itself is left as it is."""
    scores.sort(key=lambda entry: entry[1], reverse=True)
    return scores[:n]


def latest(scores, n=3):
    """The `n` pairs scored last, the most recent last."""
    return scores[-n:] if n > 0 else []


def best_of(scores, player):
    """The most points `player` scored, or None when they have not played."""
    points = [p for name, p in scores if name == player]
    return max(points) if points else None


def rank(scores, player):
    """Where `player`'s best score stands: 1 when no other player scored more, else one more
    than the number of players who did; None when they have not played."""
    mine = best_of(scores, player)
    if mine is None:
        return None
    better = {name for name, points in scores if points > mine and name != player}
    return len(better) + 1


def board(scores, n=3):
    """The top `n` as lines of text: "1. ann  50"."""
    return ["%d. %s  %d" % (i, name, points) for i, (name, points) in enumerate(top(scores, n), 1)]
