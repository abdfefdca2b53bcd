"""Plain data out of a process that runs code under review: the values the code computed,
read natively (no method of the value runs), for git triad to compare outside the process.

Used by git triad's probe and behaviour runners; see src/probe/value.rs for how the values
are read and compared.
"""

MAX_NODES = 5000
MAX_DEPTH = 30


def plain(value, depth=0, budget=None):
    """The value as plain data: exact builtin types read natively (no method of the value
    runs), an object by its type and fields, anything else by its type alone."""
    if budget is None:
        budget = [MAX_NODES]
    budget[0] -= 1
    kind = type(value)
    if budget[0] < 0 or depth > MAX_DEPTH:
        return {"t": "opaque", "type": "too large to read"}
    if value is None:
        return {"t": "none"}
    if kind is bool:
        return {"t": "bool", "v": value}
    if kind is int:
        return {"t": "int", "v": int.__repr__(value)}
    if kind is float:
        return {"t": "float", "v": float.__repr__(value)}
    if kind is str:
        return {"t": "str", "v": value}
    if kind is bytes:
        return {"t": "bytes", "v": bytes.hex(value)}
    if kind in (list, tuple, set, frozenset):
        items = list(value)
        tag = {list: "list", tuple: "tuple", set: "set", frozenset: "set"}[kind]
        return {"t": tag, "v": [plain(v, depth + 1, budget) for v in items]}
    if kind is dict:
        return {"t": "dict", "v": [[plain(k, depth + 1, budget), plain(v, depth + 1, budget)]
                                   for k, v in dict.items(value)]}
    name = getattr(kind, "__qualname__", "?")
    try:
        import enum
        if isinstance(value, enum.Enum):
            return {"t": "enum", "type": name, "v": object.__getattribute__(value, "_name_")}
    except BaseException:
        pass
    try:
        fields = object.__getattribute__(value, "__dict__")
    except BaseException:
        fields = None
    if type(fields) is dict and all(type(k) is str for k in dict.keys(fields)):
        return {"t": "object", "type": name,
                "v": [[k, plain(v, depth + 1, budget)] for k, v in sorted(dict.items(fields))]}
    return {"t": "opaque", "type": name}
