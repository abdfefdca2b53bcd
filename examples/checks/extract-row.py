"""extract-row: one format_row used by both line functions, behaviour unchanged."""
import ast
import pathlib
import sys

tree = pathlib.Path(sys.argv[1])
sys.path.insert(0, str(tree))
import ledger  # noqa: E402

assert ledger.format_row("rent", 950) == "rent            950.00"
assert ledger.entry_line("a" * 20, 1.5) == "a" * 12 + "      1.50"
assert ledger.ledger([("x", 1)]) == "x                 1.00\nTOTAL             1.00"
module = ast.parse((tree / "ledger.py").read_text())
funcs = {f.name: f for f in module.body if isinstance(f, ast.FunctionDef)}
for name in ("entry_line", "total_line"):
    calls = [n for n in ast.walk(funcs[name]) if isinstance(n, ast.Call)]
    assert any(getattr(c.func, "id", None) == "format_row" for c in calls), name
