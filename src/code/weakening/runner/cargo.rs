//! A `Cargo.toml`'s test targets and test profiles: the edits that keep `cargo test`
//! from running or checking tests the base ran.

use super::super::weakened_finding;
use crate::code::settings::{toml_at, toml_line};
use crate::code::Finding;

/// Compares a `Cargo.toml` with the base's.
pub(super) fn cargo(path: &str, before: Option<&str>, after: &str, out: &mut Vec<Finding>) {
    let parse = |t: &str| toml::from_str::<toml::Value>(t).ok();
    let Some(new) = parse(after) else {
        return;
    };
    let old = before
        .and_then(parse)
        .unwrap_or(toml::Value::Table(Default::default()));
    let off = |v: &toml::Value, at: &[&str], key: &str| {
        toml_at(v, at)
            .and_then(|t| t.get(key))
            .and_then(|b| b.as_bool())
            == Some(false)
    };
    let mut flag = |table: &str, nth: Option<usize>, key: &str, what: String, why: &str| {
        let line = toml_line(after, table, nth, key).unwrap_or(1);
        out.push(weakened_finding(
            path,
            line,
            format!("the change {what} in {path}: {why}"),
        ));
    };
    // With `[[test]]` targets listed, `autotests = false` is the choice to list them all.
    let listed = new
        .get("test")
        .and_then(|t| t.as_array())
        .is_some_and(|a| !a.is_empty());
    if off(&new, &["package"], "autotests") && !off(&old, &["package"], "autotests") && !listed {
        flag(
            "package",
            None,
            "autotests",
            "sets `autotests = false`".into(),
            "`cargo test` no longer finds the tests under `tests/` that no `[[test]]` lists",
        );
    }
    for key in ["test", "doctest", "harness"] {
        if off(&new, &["lib"], key) && !off(&old, &["lib"], key) {
            flag(
                "lib",
                None,
                key,
                format!("sets `{key} = false` on the library"),
                if key == "doctest" {
                    "`cargo test` no longer runs its doc tests"
                } else {
                    "`cargo test` no longer runs its unit tests"
                },
            );
        }
    }
    let targets = |v: &toml::Value, kind: &str| -> Vec<toml::Value> {
        v.get(kind)
            .and_then(|t| t.as_array())
            .cloned()
            .unwrap_or_default()
    };
    let id = |t: &toml::Value| {
        t.get("name")
            .or_else(|| t.get("path"))
            .and_then(|n| n.as_str())
            .unwrap_or("")
            .to_string()
    };
    for kind in ["test", "bin"] {
        let olds = targets(&old, kind);
        for (i, t) in targets(&new, kind).iter().enumerate() {
            let name = id(t);
            // A target new in the change ran no test of the base.
            let Some(base) = olds.iter().find(|o| id(o) == name) else {
                continue;
            };
            let was_off = |key: &str| base.get(key).and_then(|x| x.as_bool()) == Some(false);
            for key in ["test", "harness"] {
                if t.get(key).and_then(|x| x.as_bool()) == Some(false) && !was_off(key) {
                    flag(
                        kind,
                        Some(i),
                        key,
                        format!("sets `{key} = false` on the `[[{kind}]]` target `{name}`"),
                        "`cargo test` no longer runs its tests",
                    );
                }
            }
            let features = |t: &toml::Value| -> Vec<String> {
                t.get("required-features")
                    .and_then(|f| f.as_array())
                    .map(|a| {
                        a.iter()
                            .filter_map(|x| x.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let had = features(base);
            for f in features(t).into_iter().filter(|f| !had.contains(f)) {
                flag(
                    kind,
                    Some(i),
                    "required-features",
                    format!("makes the `[[{kind}]]` target `{name}` require the feature `{f}`"),
                    "`cargo test` skips it unless that feature is on",
                );
            }
        }
    }
    if off(&new, &["package"], "autotests") {
        let news: Vec<String> = targets(&new, "test").iter().map(id).collect();
        for gone in targets(&old, "test")
            .iter()
            .map(id)
            .filter(|n| !news.contains(n))
        {
            flag(
                "package",
                None,
                "autotests",
                format!("removes the `[[test]]` target `{gone}` while `autotests = false`"),
                "nothing runs its tests any more",
            );
        }
    }
    for profile in ["test", "dev"] {
        let at = ["profile", profile];
        for key in ["debug-assertions", "overflow-checks"] {
            if off(&new, &at, key) && !off(&old, &at, key) {
                flag(
                    &format!("profile.{profile}"),
                    None,
                    key,
                    format!("turns `{key}` off in `[profile.{profile}]`"), "the checks it enabled (`debug_assert!`, overflow panics) no longer fail the tests",
                );
            }
        }
    }
}
