"""Plain-text ledger lines."""


def entry_line(name, amount):
    """One ledger entry: the name left-aligned in 12 columns, the amount right-aligned in 10."""
    return name[:12].ljust(12) + ("%.2f" % amount).rjust(10)


def total_line(amounts):
    """The total of the amounts, laid out like an entry named TOTAL."""
    return "TOTAL"[:12].ljust(12) + ("%.2f" % sum(amounts)).rjust(10)


def ledger(entries):
    """Every entry's line, then the total's."""
    lines = [entry_line(name, amount) for name, amount in entries]
    lines.append(total_line([amount for _, amount in entries]))
    return "\n".join(lines)
