//! Things chosen by name on the command line (environments, loads,
//! isolation modes, and any closed list like them): one list, one name each;
//! parsing, the list of valid names for error messages and (for enums made
//! with [`named_enum!`]) serde by name all come from that.

/// A closed list of values, each with the name the user types.
pub trait Named: Copy + 'static {
    /// Every value, in the order `names` lists them.
    const ALL: &'static [Self];

    fn name(&self) -> &'static str;

    /// The value called `s`, if there is one.
    fn parse(s: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|v| v.name() == s)
    }

    /// Every name, comma-separated: what an error message offers.
    fn names() -> String {
        Self::ALL.iter().map(Named::name).collect::<Vec<_>>().join(", ")
    }
}

/// An enum whose variants are named: `named_enum! { pub enum Load { Idle = "idle", Io = "io" } }`
/// makes the enum (Debug, Clone, Copy, PartialEq, Eq), its [`Named`] list,
/// and Serialize/Deserialize as the name.
#[macro_export]
macro_rules! named_enum {
    ($(#[$m:meta])* $vis:vis enum $T:ident { $($(#[$vm:meta])* $V:ident = $name:expr),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        $vis enum $T {
            $($(#[$vm])* $V),+
        }

        impl $crate::base::named::Named for $T {
            const ALL: &'static [Self] = &[$($T::$V),+];
            fn name(&self) -> &'static str {
                match self {
                    $($T::$V => $name),+
                }
            }
        }

        impl serde::Serialize for $T {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($crate::base::named::Named::name(self))
            }
        }

        impl<'de> serde::Deserialize<'de> for $T {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <String as serde::Deserialize>::deserialize(d)?;
                <$T as $crate::base::named::Named>::parse(&s).ok_or_else(|| {
                    <D::Error as serde::de::Error>::custom(format!(
                        "unknown '{s}'; valid: {}",
                        <$T as $crate::base::named::Named>::names()
                    ))
                })
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::Named;

    crate::named_enum! {
        /// A test list.
        enum Colour { Red = "red", DarkBlue = "dark-blue" }
    }

    #[test]
    fn parses_lists_and_round_trips_by_name() {
        assert_eq!(Colour::parse("dark-blue"), Some(Colour::DarkBlue));
        assert_eq!(Colour::parse("blue"), None);
        assert_eq!(Colour::names(), "red, dark-blue");
        assert_eq!(serde_json::to_string(&Colour::Red).unwrap(), "\"red\"");
        assert_eq!(serde_json::from_str::<Colour>("\"dark-blue\"").unwrap(), Colour::DarkBlue);
        let e = serde_json::from_str::<Colour>("\"green\"").unwrap_err().to_string();
        assert!(e.contains("unknown 'green'; valid: red, dark-blue"), "{e}");
    }
}
