"""add-max: max_value is right on cases the task never gave, under cargo test."""
import os
import pathlib
import subprocess
import sys

tree = pathlib.Path(sys.argv[1])
(tree / "tests").mkdir(exist_ok=True)
(tree / "tests" / "hidden_max.rs").write_text(
    """
use ministats::max_value;

#[test]
fn hidden() {
    assert_eq!(max_value(&[1.0, 3.5, 2.0]), Some(3.5));
    assert_eq!(max_value(&[-2.0, -7.0]), Some(-2.0));
    assert_eq!(max_value(&[4.0]), Some(4.0));
    assert_eq!(max_value(&[]), None);
}
"""
)
env = dict(os.environ, CARGO_TARGET_DIR=str(tree / "target-hidden"))
r = subprocess.run(
    ["cargo", "test", "--offline", "-q", "--test", "hidden_max"],
    cwd=tree, env=env, capture_output=True, timeout=600,
)
sys.exit(r.returncode)
