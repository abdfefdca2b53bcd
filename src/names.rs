//! Names declared once: [`named!`] turns one line per value (its doc comment, its variant,
//! the name every place writes) into an enum whose reading, writing, listing and
//! serialization all come from that line, so no two places can spell a value differently.
//!
//! A leaf below every other: it imports nothing, and what it generates names only `std` and
//! `serde`.

/// Declares an enum of named values from one line per value: its doc comment and its
/// variant, whose name every place writes is the variant's own identifier in the case the
/// declaration says (`snake_case`: `RetriesExhausted` is `retries_exhausted`;
/// `SCREAMING_SNAKE_CASE`: `NeedsInfo` is `NEEDS_INFO`). The identifier is the name, so
/// the two can never disagree and no name is written out anywhere else:
///
/// ```ignore
/// crate::names::named! {
///     /// Which stages the arbiter reviews.
///     pub enum ArbiterMode: "an arbiter mode", written snake_case {
///         /// No review.
///         Off,
///         /// Every stage.
///         Full,
///     }
/// }
/// ```
///
/// It gives the enum (`Debug`, `Clone`, `Copy`, `PartialEq`, `Eq`, `Hash`, and whatever
/// attributes are written on it), `ALL` and `NAMES` in the order declared, `as_str` (a
/// `const fn`: each name is made at compile time) and `parse`, `Display`, `FromStr` (whose
/// error is `` `x` is not <what> (a, b, …) ``), and `Serialize`/`Deserialize` as the name,
/// with serde's own error for an unknown one (`` unknown variant `x`, expected one of `a`,
/// `b` ``).
macro_rules! named {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident : $what:literal, written snake_case {
            $( $(#[$vmeta:meta])* $variant:ident, )+
        }
    ) => {
        $crate::names::named! { @enum false, $(#[$meta])* $vis $name $what { $( $(#[$vmeta])* $variant, )+ } }
    };
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident : $what:literal, written SCREAMING_SNAKE_CASE {
            $( $(#[$vmeta:meta])* $variant:ident, )+
        }
    ) => {
        $crate::names::named! { @enum true, $(#[$meta])* $vis $name $what { $( $(#[$vmeta])* $variant, )+ } }
    };
    (
        @enum $screaming:literal, $(#[$meta:meta])* $vis:vis $name:ident $what:literal {
            $( $(#[$vmeta:meta])* $variant:ident, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// Every value, in the order declared.
            pub const ALL: [$name; [$(stringify!($variant)),+].len()] = [$($name::$variant),+];

            /// Every name, in the order of `ALL`.
            pub const NAMES: [&'static str; [$(stringify!($variant)),+].len()] =
                [$($name::$variant.as_str()),+];

            /// The name every place reads and writes.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => {
                        const LEN: usize = $crate::names::cased_len(stringify!($variant));
                        const BYTES: [u8; LEN] =
                            $crate::names::cased(stringify!($variant), $screaming);
                        const NAME: &str = $crate::names::ascii(&BYTES);
                        NAME
                    } )+
                }
            }

            /// The value `word` names, exactly as written; `None` for any other text.
            pub fn parse(word: &str) -> Option<$name> {
                $name::ALL.into_iter().find(|v| v.as_str() == word)
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                $name::parse(s).ok_or_else(|| {
                    format!("`{s}` is not {} ({})", $what, $name::NAMES.join(", "))
                })
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct Name;
                impl ::serde::de::Visitor<'_> for Name {
                    type Value = $name;
                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        f.write_str("variant identifier")
                    }
                    fn visit_str<E: ::serde::de::Error>(self, word: &str) -> Result<$name, E> {
                        $name::parse(word).ok_or_else(|| E::unknown_variant(word, &$name::NAMES))
                    }
                }
                d.deserialize_str(Name)
            }
        }
    };
}

/// The length of `ident` (an identifier in UpperCamelCase) written with a `_` before
/// every capital but the first.
pub const fn cased_len(ident: &str) -> usize {
    let b = ident.as_bytes();
    let mut n = b.len();
    let mut i = 1;
    while i < b.len() {
        if b[i].is_ascii_uppercase() {
            n += 1;
        }
        i += 1;
    }
    n
}

/// `ident` (UpperCamelCase) in snake_case, or in SCREAMING_SNAKE_CASE when `screaming`:
/// a `_` before every capital but the first. `N` is [`cased_len`] of it.
pub const fn cased<const N: usize>(ident: &str, screaming: bool) -> [u8; N] {
    let b = ident.as_bytes();
    let mut out = [0u8; N];
    let (mut i, mut j) = (0, 0);
    while i < b.len() {
        if i > 0 && b[i].is_ascii_uppercase() {
            out[j] = b'_';
            j += 1;
        }
        out[j] = if screaming {
            b[i].to_ascii_uppercase()
        } else {
            b[i].to_ascii_lowercase()
        };
        i += 1;
        j += 1;
    }
    out
}

/// `bytes` as text: an identifier's letters, digits and `_`, which are ASCII.
pub const fn ascii(bytes: &'static [u8]) -> &'static str {
    match std::str::from_utf8(bytes) {
        Ok(s) => s,
        Err(_) => panic!("a Rust identifier is ASCII"),
    }
}

pub(crate) use named;

#[cfg(test)]
mod tests {
    named! {
        /// A fact for the test.
        #[derive(Default)]
        pub enum Colour: "a colour", written snake_case {
            /// The default.
            #[default]
            Red,
            /// Another.
            DarkBlue,
            /// A third.
            White,
        }
    }

    #[test]
    fn every_name_reads_back_writes_as_itself_and_nothing_else_reads() {
        for c in Colour::ALL {
            assert_eq!(Colour::parse(c.as_str()), Some(c));
            assert_eq!(c.as_str().parse::<Colour>(), Ok(c));
            assert_eq!(c.to_string(), c.as_str());
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.as_str()));
            assert_eq!(serde_json::from_str::<Colour>(&json).unwrap(), c);
        }
        assert_eq!(Colour::NAMES, ["red", "dark_blue", "white"]);
        assert_eq!(Colour::default(), Colour::Red);
        assert_eq!(Colour::parse("Red"), None);
        assert_eq!(
            "green".parse::<Colour>().unwrap_err(),
            "`green` is not a colour (red, dark_blue, white)"
        );
        // serde says what its derive says of an unknown variant.
        let e = serde_json::from_str::<Colour>("\"green\"").unwrap_err();
        assert!(
            e.to_string().starts_with(
                "unknown variant `green`, expected one of `red`, `dark_blue`, `white`"
            ),
            "{e}"
        );
    }

    named! {
        /// Words of the other case.
        pub enum Shout: "a shout", written SCREAMING_SNAKE_CASE {
            /// One word.
            Approve,
            /// Several.
            NeedsMoreInfo,
        }
    }

    #[test]
    fn a_name_is_its_identifier_in_the_declared_case() {
        assert_eq!(Shout::NAMES, ["APPROVE", "NEEDS_MORE_INFO"]);
        assert_eq!(Shout::parse("NEEDS_MORE_INFO"), Some(Shout::NeedsMoreInfo));
        assert_eq!(Shout::parse("needs_more_info"), None);
        assert_eq!((super::cased_len("A"), super::cased_len("AbCd")), (1, 5));
    }
}
