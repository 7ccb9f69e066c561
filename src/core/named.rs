//! Enums whose every value has a stable name — on the wire, in the CLI, in
//! a share link — written once: [`named!`](crate::core::named::named) gives
//! `ALL`, `as_str`, `Display` and `FromStr` (whose error names every value
//! it expected) from one table of `Variant => "name"`.

/// Defines an enum from `Variant => "name"` lines, with `ALL` (every value,
/// in declaration order), `as_str` (the name), `Display` (the name) and
/// `FromStr` (by name; an unknown one is ``unknown <what> "x": expected a,
/// b or c``). Its attributes (doc, derives, serde) are the caller's.
macro_rules! named {
    ($(#[$meta:meta])* $vis:vis enum $name:ident ($what:literal) {
        $($(#[$vmeta:meta])* $variant:ident => $text:literal,)*
    }) => {
        $(#[$meta])*
        $vis enum $name {
            $($(#[$vmeta])* $variant,)*
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: [$name; [$($text),*].len()] = [$($name::$variant,)*];

            /// The stable name.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = String;

            fn from_str(s: &str) -> Result<Self, String> {
                $name::ALL.into_iter().find(|v| v.as_str() == s).ok_or_else(|| {
                    $crate::core::named::unknown($what, s, &[$($text),*])
                })
            }
        }
    };
}
pub(crate) use named;

/// `unknown <what> "<got>": expected a, b or c`.
pub(crate) fn unknown(what: &str, got: &str, names: &[&str]) -> String {
    let expected = match names {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    };
    format!("unknown {what} {got:?}: expected {expected}")
}

#[cfg(test)]
mod tests {
    #[cfg(target_family = "wasm")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    super::named! {
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        enum Mode("mode") {
            Fast => "fast",
            SlowAndSure => "slow-and-sure",
        }
    }

    #[test]
    fn a_named_enum_reads_back_every_name_and_refuses_others_naming_them_all() {
        for m in Mode::ALL {
            assert_eq!(m.as_str().parse::<Mode>(), Ok(m));
            assert_eq!(m.to_string(), m.as_str());
        }
        assert_eq!(Mode::SlowAndSure.as_str(), "slow-and-sure");
        assert_eq!(
            "Fast".parse::<Mode>(),
            Err(r#"unknown mode "Fast": expected fast or slow-and-sure"#.to_owned())
        );
    }
}
