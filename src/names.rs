//! Names declared once: [`named!`] turns one line per value (its doc comment, its variant,
//! the name every place writes) into an enum whose reading, writing, listing and
//! serialization all come from that line, so no two places can spell a value differently.
//!
//! A leaf below every other: it imports nothing, and what it generates names only `std` and
//! `serde`.

/// Declares an enum of named values from one line per value:
///
/// ```ignore
/// crate::names::named! {
///     /// Which stages the arbiter reviews.
///     pub enum ArbiterMode: "an arbiter mode" {
///         /// No review.
///         Off = "off",
///         /// Every stage.
///         Full = "full",
///     }
/// }
/// ```
///
/// It gives the enum (`Debug`, `Clone`, `Copy`, `PartialEq`, `Eq`, `Hash`, and whatever
/// attributes are written on it), `ALL` and `NAMES` in the order declared, `as_str` and
/// `parse`, `Display`, `FromStr` (whose error is `` `x` is not <what> (a, b, …) ``), and
/// `Serialize`/`Deserialize` as the name, with serde's own error for an unknown one
/// (`` unknown variant `x`, expected one of `a`, `b` ``).
macro_rules! named {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident : $what:literal {
            $( $(#[$vmeta:meta])* $variant:ident = $word:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// Every value, in the order declared.
            pub const ALL: [$name; [$($word),+].len()] = [$($name::$variant),+];

            /// Every name, in the order of `ALL`.
            pub const NAMES: [&'static str; [$($word),+].len()] = [$($word),+];

            /// The name every place reads and writes.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $word, )+
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

pub(crate) use named;

#[cfg(test)]
mod tests {
    named! {
        /// A fact for the test.
        #[derive(Default)]
        pub enum Colour: "a colour" {
            /// The default.
            #[default]
            Red = "red",
            /// Another.
            DarkBlue = "dark_blue",
            /// A third.
            White = "white",
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
}
