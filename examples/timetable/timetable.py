"""A bus stop's timetable: departures as "HH:MM" times, and the next one to catch."""


def minutes(time):
    """Minutes after midnight of a "HH:MM" time: minutes("07:45") is 465."""
    hours, mins = time.split(":")
    return int(hours) * 60 + int(mins)


def clock(total):
    """The "HH:MM" of `total` minutes after midnight, wrapping at midnight: clock(465) is
    "07:45", clock(1445) is "00:05"."""
    return "%02d:%02d" % divmod(total % (24 * 60), 60)


def next_departure(departures, now):
    """The first of `departures` (a sorted list of "HH:MM" times) at or after `now`, or None
    when the last one has left."""
    times = [minutes(t) for t in departures]
    target = minutes(now)
    lo, hi = 0, len(times)
    while lo < hi:
        mid = (lo + hi) // 2
        if times[mid] < target:
            lo = mid
        else:
            hi = mid
    return departures[lo] if lo < len(departures) else None


def wait(departures, now):
    """Minutes to wait at `now` for the next departure, or None when none is left today."""
    leaving = next_departure(departures, now)
    return None if leaving is None else minutes(leaving) - minutes(now)
