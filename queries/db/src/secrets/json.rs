//! A value written as JSON with every string redacted as it is written: what
//! [`Redactor::json_except`] does to a JSON tree, without the tree.
//!
//! `serve` writes a 145 KB reply per `build` without `known_hash`; turning it into a
//! `serde_json::Value` first (an `IndexMap` and a `String` per object and string) and writing
//! that out took two thirds of the turn (`BENCHMARKS.md`, "What a host sees"). This serializer
//! sits between the value's `Serialize` impl and `serde_json`'s writer and hands every string
//! through the redactor on its way; nothing else is copied. No crate wraps a serializer to
//! rewrite its strings (`serde-transcode` converts between formats, `serde_with` changes one
//! field's type), hence this one.
//!
//! It is exactly as strong as the tree's walk: what the tree holds as a string (a `str`, a
//! `char`, a unit variant's name, a `Display` collected to a string, an object's string at
//! any depth) is redacted, map keys and field names are not, and a string directly under a
//! verbatim key stays as it is (an object or array under such a key is redacted all through).
//! One difference, in no reply `serve` writes: a type that writes the same key twice (a
//! `#[serde(flatten)]` field's member named like its own) has both members written here,
//! where the tree kept one.

use serde::ser::{self, Serialize, Serializer};

use super::Redactor;

impl Redactor {
    /// `value` as one line of JSON with every string redacted but those directly under the
    /// object keys in `verbatim`: `serde_json::to_string` of the tree
    /// [`Redactor::json_except`] leaves, written in one pass.
    ///
    /// # Errors
    /// What `serde_json::to_string(value)` fails with (a map with keys that are not
    /// strings, a `Serialize` impl's own error).
    pub fn json_string_except<T: Serialize + ?Sized>(
        &self,
        value: &T,
        verbatim: &[&str],
    ) -> Result<String, serde_json::Error> {
        let mut out = Vec::with_capacity(128);
        let rules = Rules { redactor: self, verbatim };
        value.serialize(Redacting {
            inner: &mut serde_json::Serializer::new(&mut out),
            rules: &rules,
            keep: false,
        })?;
        String::from_utf8(out).map_err(ser::Error::custom)
    }
}

/// What every level of the walk reads.
struct Rules<'r> {
    redactor: &'r Redactor,
    verbatim: &'r [&'r str],
}

impl Rules<'_> {
    fn is_verbatim(&self, key: &str) -> bool {
        self.verbatim.contains(&key)
    }
}

/// `inner` with its strings redacted; `keep` when the value is directly under a verbatim key
/// (so a string stays as it is, and an `Option` or newtype passes that on to its content).
struct Redacting<'r, S> {
    inner: S,
    rules: &'r Rules<'r>,
    keep: bool,
}

/// A value to serialize through [`Redacting`]: an element, a field, a map's value.
struct Redacted<'r, T: ?Sized> {
    value: &'r T,
    rules: &'r Rules<'r>,
    keep: bool,
}

impl<T: Serialize + ?Sized> Serialize for Redacted<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(Redacting { inner: serializer, rules: self.rules, keep: self.keep })
    }
}

/// A sequence, tuple, map or struct being written: its members go through [`Redacted`].
struct Compound<'r, C> {
    inner: C,
    rules: &'r Rules<'r>,
    /// A map's last key was a verbatim one.
    keep_value: bool,
}

impl<'r, C> Compound<'r, C> {
    fn new<E>(inner: Result<C, E>, rules: &'r Rules<'r>) -> Result<Self, E> {
        Ok(Compound { inner: inner?, rules, keep_value: false })
    }

    /// A value under `key`: kept when the key is a verbatim one (`None`: an element).
    fn member<'v, T: ?Sized>(&self, key: Option<&str>, value: &'v T) -> Redacted<'v, T>
    where
        'r: 'v,
    {
        Redacted { value, rules: self.rules, keep: key.is_some_and(|key| self.rules.is_verbatim(key)) }
    }
}

/// Serializer methods for values that are neither strings nor containers: written as they are.
macro_rules! as_they_are {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {
        $(fn $method(self, $($arg: $ty),*) -> Result<S::Ok, S::Error> {
            self.inner.$method($($arg),*)
        })*
    };
}

impl<'r, S: Serializer> Serializer for Redacting<'r, S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Compound<'r, S::SerializeSeq>;
    type SerializeTuple = Compound<'r, S::SerializeTuple>;
    type SerializeTupleStruct = Compound<'r, S::SerializeTupleStruct>;
    type SerializeTupleVariant = Compound<'r, S::SerializeTupleVariant>;
    type SerializeMap = Compound<'r, S::SerializeMap>;
    type SerializeStruct = Compound<'r, S::SerializeStruct>;
    type SerializeStructVariant = Compound<'r, S::SerializeStructVariant>;

    fn serialize_str(self, v: &str) -> Result<S::Ok, S::Error> {
        if self.keep {
            self.inner.serialize_str(v)
        } else {
            self.inner.serialize_str(&self.rules.redactor.text(v))
        }
    }

    fn serialize_char(self, v: char) -> Result<S::Ok, S::Error> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }

    fn serialize_unit_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
    ) -> Result<S::Ok, S::Error> {
        if self.keep {
            return self.inner.serialize_unit_variant(name, index, variant);
        }
        // Written as a string, so redacted as one.
        match self.rules.redactor.text(variant) {
            std::borrow::Cow::Borrowed(_) => self.inner.serialize_unit_variant(name, index, variant),
            std::borrow::Cow::Owned(redacted) => self.inner.serialize_str(&redacted),
        }
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
        // `Some(x)` is written as `x`: a string under a verbatim key stays one.
        self.inner.serialize_some(&Redacted { value, rules: self.rules, keep: self.keep })
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        self.inner.serialize_newtype_struct(name, &Redacted { value, rules: self.rules, keep: self.keep })
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        // `{"variant": value}`: the value is under the key `variant`.
        let value = Redacted { value, rules: self.rules, keep: self.rules.is_verbatim(variant) };
        self.inner.serialize_newtype_variant(name, index, variant, &value)
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Self::SerializeSeq, S::Error> {
        Compound::new(self.inner.serialize_seq(len), self.rules)
    }

    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple, S::Error> {
        Compound::new(self.inner.serialize_tuple(len), self.rules)
    }

    fn serialize_tuple_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleStruct, S::Error> {
        Compound::new(self.inner.serialize_tuple_struct(name, len), self.rules)
    }

    fn serialize_tuple_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleVariant, S::Error> {
        Compound::new(self.inner.serialize_tuple_variant(name, index, variant, len), self.rules)
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        Compound::new(self.inner.serialize_map(len), self.rules)
    }

    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Self::SerializeStruct, S::Error> {
        Compound::new(self.inner.serialize_struct(name, len), self.rules)
    }

    fn serialize_struct_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStructVariant, S::Error> {
        Compound::new(self.inner.serialize_struct_variant(name, index, variant, len), self.rules)
    }

    as_they_are! {
        serialize_bool(v: bool);
        serialize_i8(v: i8);
        serialize_i16(v: i16);
        serialize_i32(v: i32);
        serialize_i64(v: i64);
        serialize_i128(v: i128);
        serialize_u8(v: u8);
        serialize_u16(v: u16);
        serialize_u32(v: u32);
        serialize_u64(v: u64);
        serialize_u128(v: u128);
        serialize_f32(v: f32);
        serialize_f64(v: f64);
        serialize_bytes(v: &[u8]);
        serialize_none();
        serialize_unit();
        serialize_unit_struct(name: &'static str);
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// The sequences and tuples: elements, none under a key.
macro_rules! elements {
    ($($kind:ident::$method:ident),*) => {
        $(impl<C: ser::$kind> ser::$kind for Compound<'_, C> {
            type Ok = C::Ok;
            type Error = C::Error;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), C::Error> {
                self.inner.$method(&self.member(None, value))
            }
            fn end(self) -> Result<C::Ok, C::Error> {
                self.inner.end()
            }
        })*
    };
}

elements!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

/// The structs: fields under their names.
macro_rules! fields {
    ($($kind:ident),*) => {
        $(impl<C: ser::$kind> ser::$kind for Compound<'_, C> {
            type Ok = C::Ok;
            type Error = C::Error;
            fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), C::Error> {
                self.inner.serialize_field(key, &self.member(Some(key), value))
            }
            fn skip_field(&mut self, key: &'static str) -> Result<(), C::Error> {
                self.inner.skip_field(key)
            }
            fn end(self) -> Result<C::Ok, C::Error> {
                self.inner.end()
            }
        })*
    };
}

fields!(SerializeStruct, SerializeStructVariant);

impl<C: ser::SerializeMap> ser::SerializeMap for Compound<'_, C> {
    type Ok = C::Ok;
    type Error = C::Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), C::Error> {
        // The key as the tree would hold it (serde_json makes every key a string); keys are
        // names, written as they are.
        self.keep_value = matches!(serde_json::to_value(key), Ok(serde_json::Value::String(name)) if self.rules.is_verbatim(&name));
        self.inner.serialize_key(key)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), C::Error> {
        let value = Redacted { value, rules: self.rules, keep: self.keep_value };
        self.keep_value = false;
        self.inner.serialize_value(&value)
    }
    fn end(self) -> Result<C::Ok, C::Error> {
        self.inner.end()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Serialize;
    use serde_json::json;

    use super::Redactor;

    /// What the tree's walk writes: the reference the one pass must equal.
    fn through_tree(redactor: &Redactor, value: &impl Serialize, verbatim: &[&str]) -> String {
        let mut tree = serde_json::to_value(value).unwrap();
        redactor.json_except(&mut tree, verbatim);
        serde_json::to_string(&tree).unwrap()
    }

    #[derive(Serialize)]
    enum Kind {
        Plain,
        // A variant's name is written as a string, so it is redacted like one.
        #[serde(rename = "see ?token=abc123")]
        Credential,
        #[serde(rename = "text")]
        Text(String),
        Other(String),
        Pair(String, u8),
        Fields {
            text: String,
            source: String,
        },
    }

    #[derive(Serialize)]
    #[serde(tag = "type")]
    enum Tagged {
        #[serde(rename = "x?sig=tagged")]
        Signed { text: String },
    }

    #[derive(Serialize)]
    struct Newtype(String);

    #[derive(Serialize)]
    struct Extra {
        text: String,
        note: String,
    }

    #[derive(Serialize)]
    struct Block {
        id: String,
        text: String,
        source: Option<String>,
        wrapped: Option<Newtype>,
        kinds: Vec<Kind>,
    }

    #[derive(Serialize)]
    struct Reply {
        id: serde_json::Value,
        blocks: Vec<Block>,
        // An object or array under a verbatim key is redacted all through.
        nested: BTreeMap<&'static str, serde_json::Value>,
        map: BTreeMap<String, String>,
        letter: char,
        count: u64,
        ratio: f64,
        tagged: Tagged,
        tuple: (String, Newtype),
        bytes: serde_bytes_like::Bytes,
        // The reply's own `text`, as a flattened member.
        #[serde(flatten)]
        extra: Extra,
    }

    /// `serialize_bytes`, as a byte buffer would call it (the tree holds numbers).
    mod serde_bytes_like {
        pub struct Bytes(pub Vec<u8>);
        impl serde::Serialize for Bytes {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_bytes(&self.0)
            }
        }
    }

    fn reply(secret: &str) -> Reply {
        let url = format!("https://h/r.md?token={secret}");
        let block = |text: &str| Block {
            id: format!("rule:{url}"),
            text: format!("{text} {secret}"),
            source: Some(url.clone()),
            wrapped: Some(Newtype(secret.to_owned())),
            kinds: vec![
                Kind::Plain,
                Kind::Credential,
                Kind::Text(secret.to_owned()),
                Kind::Other(secret.to_owned()),
                Kind::Pair(secret.to_owned(), 1),
                Kind::Fields { text: secret.to_owned(), source: url.clone() },
            ],
        };
        Reply {
            id: json!(format!("req {secret}")),
            blocks: vec![block("a"), block("b")],
            nested: BTreeMap::from([
                ("text", json!({ "text": secret, "other": [secret, { "text": [secret] }] })),
                ("list", json!([secret])),
            ]),
            map: BTreeMap::from([("text".to_owned(), secret.to_owned()), ("url".to_owned(), url.clone())]),
            letter: 'x',
            count: 7,
            ratio: 0.5,
            tagged: Tagged::Signed { text: secret.to_owned() },
            tuple: (url.clone(), Newtype(url.clone())),
            bytes: serde_bytes_like::Bytes(vec![1, 2]),
            extra: Extra { text: secret.to_owned(), note: url },
        }
    }

    #[test]
    fn one_pass_writes_what_the_tree_walk_writes() {
        // A GitHub-shaped key assembled at run time (no key-shaped literal in the source) and
        // a secret-named environment variable's value.
        let key = format!("ghp_{}", "a".repeat(36));
        let redactors = [Redactor::default(), Redactor::new([("RULES_TOKEN", "rtok-0123456789")])];
        for redactor in &redactors {
            for secret in [key.as_str(), "rtok-0123456789", "nothing-secret"] {
                let value = reply(secret);
                for verbatim in [&["text"][..], &[], &["text", "id"]] {
                    let written = redactor.json_string_except(&value, verbatim).unwrap();
                    assert_eq!(written, through_tree(redactor, &value, verbatim), "{secret} {verbatim:?}");
                }
            }
        }
        // The comparison is not vacuous: the key is redacted everywhere but the kept strings.
        let written = Redactor::default().json_string_except(&reply(&key), &["text"]).unwrap();
        let kept = written.matches(key.as_str()).count();
        // Two block texts, two `Text` variants, two `Fields` texts, the nested object's, the
        // map's, the tagged variant's and the flattened `text`.
        assert_eq!(kept, 10, "{written}");
        assert!(written.contains("[REDACTED:github_token]") && written.contains("[REDACTED:url_param]"));
        assert!(!written.contains("abc123") && !written.contains("sig=tagged"), "{written}");
    }

    #[test]
    fn errors_are_serde_jsons() {
        let map = BTreeMap::from([((1, 2), "x")]);
        assert!(Redactor::default().json_string_except(&map, &[]).is_err());
        assert!(serde_json::to_string(&map).is_err());
    }
}
