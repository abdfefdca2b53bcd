//! Values a probe's subject reported, compared outside its process.
//!
//! The code under review runs in the subject, so it must not decide an assertion: a return
//! value whose `__eq__` is always true would pass every comparison. The subject reports plain
//! data only ([`Value`]); git triad compares it here with Python's rules for plain data
//! (`1 == 1.0 == True`, a tuple is not a list, sets and dicts ignore order). An object is
//! compared by its type and fields; a foreign value that is not plain data is never equal
//! to anything.

use std::cmp::Ordering;

use serde_json::Value as Json;

/// A value as the subject reported it.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value {
    /// `None`.
    None,
    /// A `bool`.
    Bool(bool),
    /// An `int`, as its decimal digits (any size).
    Int(String),
    /// A `float`.
    Float(f64),
    /// A `str`.
    Str(String),
    /// A `bytes`, as hex.
    Bytes(String),
    /// A `list`.
    List(Vec<Value>),
    /// A `tuple`.
    Tuple(Vec<Value>),
    /// A `set` or `frozenset`.
    Set(Vec<Value>),
    /// A `dict`, in insertion order.
    Dict(Vec<(Value, Value)>),
    /// An enum member: its type and name.
    Enum(String, String),
    /// An object with a `__dict__`: its type and fields, sorted by name.
    Object(String, Vec<(String, Value)>),
    /// Anything else: only its type is known.
    Opaque(String),
}

impl Value {
    /// Reads a reported value; anything malformed is opaque.
    pub(super) fn from_json(j: &Json) -> Value {
        let v = &j["v"];
        let list = || {
            v.as_array()
                .map(|a| a.iter().map(Value::from_json).collect())
                .unwrap_or_default()
        };
        let text = || v.as_str().unwrap_or_default().to_string();
        let kind = || j["type"].as_str().unwrap_or("?").to_string();
        match j["t"].as_str().unwrap_or_default() {
            "none" => Value::None,
            "bool" => Value::Bool(v.as_bool().unwrap_or_default()),
            "int" => Value::Int(text()),
            "float" => text()
                .parse()
                .map_or_else(|_| Value::Opaque("float".into()), Value::Float),
            "str" => Value::Str(text()),
            "bytes" => Value::Bytes(text()),
            "list" => Value::List(list()),
            "tuple" => Value::Tuple(list()),
            "set" => Value::Set(list()),
            "dict" => Value::Dict(
                v.as_array()
                    .map(|a| {
                        a.iter()
                            .map(|p| (Value::from_json(&p[0]), Value::from_json(&p[1])))
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
            "enum" => Value::Enum(kind(), text()),
            "object" => Value::Object(
                kind(),
                v.as_array()
                    .map(|a| {
                        a.iter()
                            .map(|p| {
                                (
                                    p[0].as_str().unwrap_or_default().to_string(),
                                    Value::from_json(&p[1]),
                                )
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
            _ => Value::Opaque(kind()),
        }
    }

    /// The value as Python would print it (bounded by the caller).
    pub(super) fn render(&self) -> String {
        let join = |items: &[Value]| {
            items
                .iter()
                .map(Value::render)
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            Value::None => "None".into(),
            Value::Bool(true) => "True".into(),
            Value::Bool(false) => "False".into(),
            Value::Int(d) => d.clone(),
            Value::Float(f) => python_float(*f),
            Value::Str(s) => format!("{s:?}").replace('"', "'"),
            Value::Bytes(h) => format!("bytes.fromhex('{h}')"),
            Value::List(v) => format!("[{}]", join(v)),
            Value::Tuple(v) if v.len() == 1 => format!("({},)", v[0].render()),
            Value::Tuple(v) => format!("({})", join(v)),
            Value::Set(v) if v.is_empty() => "set()".into(),
            Value::Set(v) => format!("{{{}}}", join(v)),
            Value::Dict(v) => format!(
                "{{{}}}",
                v.iter()
                    .map(|(k, x)| format!("{}: {}", k.render(), x.render()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Value::Enum(t, n) => format!("<{t}.{n}>"),
            Value::Object(t, f) => format!(
                "{t}({})",
                f.iter()
                    .map(|(k, x)| format!("{k}={}", x.render()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Value::Opaque(t) => format!("<a {t}, not plain data>"),
        }
    }

    /// Whether the value is plain data all through (no opaque part).
    pub(super) fn plain(&self) -> bool {
        match self {
            Value::Opaque(_) => false,
            Value::List(v) | Value::Tuple(v) | Value::Set(v) => v.iter().all(Value::plain),
            Value::Dict(v) => v.iter().all(|(k, x)| k.plain() && x.plain()),
            Value::Object(_, f) => f.iter().all(|(_, x)| x.plain()),
            _ => true,
        }
    }

    /// Python's truth value, where plain data decides it (`None` for an object or an opaque
    /// value, whose own `__bool__` would decide).
    pub(super) fn truthy(&self) -> Option<bool> {
        Some(match self {
            Value::None => false,
            Value::Bool(b) => *b,
            Value::Int(d) => !d.trim_start_matches('-').trim_start_matches('0').is_empty(),
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::Bytes(h) => !h.is_empty(),
            Value::List(v) | Value::Tuple(v) | Value::Set(v) => !v.is_empty(),
            Value::Dict(v) => !v.is_empty(),
            Value::Enum(..) => true,
            Value::Object(..) | Value::Opaque(_) => return None,
        })
    }

    /// `self == other` by Python's rules for plain data; a value that is not plain data is
    /// equal to nothing.
    pub(super) fn equals(&self, other: &Value) -> bool {
        use Value::*;
        match (self, other) {
            (Opaque(_), _) | (_, Opaque(_)) => false,
            (None, None) => true,
            (Str(a), Str(b)) | (Bytes(a), Bytes(b)) => a == b,
            (List(a), List(b)) | (Tuple(a), Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.equals(y))
            }
            (Set(a), Set(b)) => {
                a.iter().all(|x| b.iter().any(|y| x.equals(y)))
                    && b.iter().all(|y| a.iter().any(|x| x.equals(y)))
            }
            (Dict(a), Dict(b)) => {
                a.len() == b.len()
                    && a.iter().all(|(k, v)| {
                        b.iter()
                            .find(|(k2, _)| k.equals(k2))
                            .is_some_and(|(_, v2)| v.equals(v2))
                    })
            }
            (Enum(t, n), Enum(t2, n2)) => t == t2 && n == n2,
            (Object(t, f), Object(t2, f2)) => {
                t == t2
                    && f.len() == f2.len()
                    && f.iter()
                        .zip(f2)
                        .all(|((k, x), (k2, y))| k == k2 && x.equals(y))
            }
            _ => self.numeric_cmp(other) == Some(Ordering::Equal),
        }
    }

    /// `self < other` and kin by Python's rules for plain data (numbers, strings, bytes,
    /// lists and tuples of them); `None` where Python would raise or a method would decide.
    pub(super) fn order(&self, other: &Value) -> Option<Ordering> {
        use Value::*;
        match (self, other) {
            (Str(a), Str(b)) => Some(a.cmp(b)),
            (Bytes(a), Bytes(b)) => Some(a.cmp(b)),
            (List(a), List(b)) | (Tuple(a), Tuple(b)) => {
                for (x, y) in a.iter().zip(b) {
                    if !x.equals(y) {
                        return x.order(y);
                    }
                }
                Some(a.len().cmp(&b.len()))
            }
            _ => self.numeric_cmp(other),
        }
    }

    /// `self in other` by Python's rules for plain data.
    pub(super) fn within(&self, other: &Value) -> Option<bool> {
        match (self, other) {
            (Value::Str(a), Value::Str(b)) => Some(b.contains(a.as_str())),
            (Value::Bytes(a), Value::Bytes(b)) => {
                Some(b.match_indices(a.as_str()).any(|(i, _)| i % 2 == 0))
            }
            (_, Value::List(v) | Value::Tuple(v) | Value::Set(v)) => {
                Some(v.iter().any(|x| self.equals(x)))
            }
            (_, Value::Dict(v)) => Some(v.iter().any(|(k, _)| self.equals(k))),
            _ => None,
        }
    }

    /// Compares two numbers (`bool`, `int`, `float`) exactly where both are integers, else
    /// as floats; `None` when either is not a number.
    fn numeric_cmp(&self, other: &Value) -> Option<Ordering> {
        match (self.as_integer(), other.as_integer()) {
            (Some(a), Some(b)) => Some(compare_decimal(&a, &b)),
            _ => self.as_float()?.partial_cmp(&other.as_float()?),
        }
    }

    /// A `bool` or `int` as decimal digits.
    fn as_integer(&self) -> Option<String> {
        match self {
            Value::Bool(b) => Some(u8::from(*b).to_string()),
            Value::Int(d) => Some(d.clone()),
            _ => None,
        }
    }

    /// A number as a float.
    fn as_float(&self) -> Option<f64> {
        match self {
            Value::Float(f) => Some(*f),
            v => v.as_integer()?.parse().ok(),
        }
    }
}

/// Compares two integers written in decimal (any size).
fn compare_decimal(a: &str, b: &str) -> Ordering {
    let (neg_a, a) = a.strip_prefix('-').map_or((false, a), |d| (true, d));
    let (neg_b, b) = b.strip_prefix('-').map_or((false, b), |d| (true, d));
    let a = a.trim_start_matches('0');
    let b = b.trim_start_matches('0');
    let zero = |d: &str| d.is_empty();
    let magnitude = a.len().cmp(&b.len()).then_with(|| a.cmp(b));
    match (neg_a && !zero(a), neg_b && !zero(b)) {
        (false, false) => magnitude,
        (true, true) => magnitude.reverse(),
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
    }
}

/// A float as Python's `repr` writes it.
fn python_float(f: f64) -> String {
    if f.is_nan() {
        "nan".into()
    } else if f.is_infinite() {
        if f > 0.0 { "inf" } else { "-inf" }.into()
    } else if f == f.trunc() && f.abs() < 1e16 {
        format!("{f:.1}")
    } else {
        format!("{f}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn v(j: Json) -> Value {
        Value::from_json(&j)
    }

    #[test]
    fn plain_data_compares_as_python_does() {
        let one = v(json!({"t": "int", "v": "1"}));
        let one_f = v(json!({"t": "float", "v": "1.0"}));
        let t = v(json!({"t": "bool", "v": true}));
        assert!(one.equals(&one_f) && one.equals(&t));
        let list = v(json!({"t": "list", "v": [{"t": "int", "v": "1"}]}));
        let tuple = v(json!({"t": "tuple", "v": [{"t": "int", "v": "1"}]}));
        assert!(!list.equals(&tuple), "a tuple is not a list");
        let s1 = v(json!({"t": "set", "v": [{"t": "int", "v": "1"}, {"t": "int", "v": "2"}]}));
        let s2 = v(json!({"t": "set", "v": [{"t": "int", "v": "2"}, {"t": "int", "v": "1"}]}));
        assert!(s1.equals(&s2));
        let big = v(json!({"t": "int", "v": "123456789012345678901234567890"}));
        let bigger = v(json!({"t": "int", "v": "123456789012345678901234567891"}));
        assert_eq!(big.order(&bigger), Some(Ordering::Less));
        assert_eq!(
            v(json!({"t": "int", "v": "-5"})).order(&v(json!({"t": "int", "v": "3"}))),
            Some(Ordering::Less)
        );
        let nan = v(json!({"t": "float", "v": "nan"}));
        assert!(!nan.equals(&nan));
        assert_eq!(
            v(json!({"t": "str", "v": "ab"})).within(&v(json!({"t": "str", "v": "cabd"}))),
            Some(true)
        );
    }

    #[test]
    fn a_foreign_value_equals_nothing() {
        let evil = v(json!({"t": "opaque", "type": "AlwaysEqual"}));
        let six = v(json!({"t": "int", "v": "6"}));
        assert!(!evil.equals(&six) && !six.equals(&evil) && !evil.equals(&evil));
        assert_eq!(evil.truthy(), None);
        assert_eq!(evil.render(), "<a AlwaysEqual, not plain data>");
        let p = v(json!({"t": "object", "type": "P", "v": [["x", {"t": "int", "v": "1"}]]}));
        assert!(p.equals(&p.clone()));
        assert_eq!(p.render(), "P(x=1)");
    }

    #[test]
    fn values_render_as_python_prints_them() {
        let d = v(
            json!({"t": "dict", "v": [[{"t": "str", "v": "a"}, {"t": "list", "v": [{"t": "float", "v": "2.0"}, {"t": "none"}]}]]}),
        );
        assert_eq!(d.render(), "{'a': [2.0, None]}");
        assert_eq!(
            v(json!({"t": "tuple", "v": [{"t": "bool", "v": false}]})).render(),
            "(False,)"
        );
    }
}
