//! A minimal JSON object writer for `stats --json`: the output is small and flat, so a
//! dependency on a serialization framework would buy nothing.

use std::fmt::Write as _;

/// Builds one JSON object; fields appear in the order they are added.
#[derive(Default)]
pub struct Object {
    body: String,
}

impl Object {
    /// An empty object.
    pub fn new() -> Object {
        Object::default()
    }

    fn key(&mut self, k: &str) {
        if !self.body.is_empty() {
            self.body.push(',');
        }
        string_into(&mut self.body, k);
        self.body.push(':');
    }

    /// An unsigned integer field.
    pub fn uint(mut self, k: &str, v: u64) -> Object {
        self.key(k);
        let _ = write!(self.body, "{v}");
        self
    }

    /// A number field; NaN and infinities (not JSON) become `null`.
    pub fn float(self, k: &str, v: f64) -> Object {
        self.opt_float(k, Some(v))
    }

    /// A number field that may be absent (`null`).
    pub fn opt_float(mut self, k: &str, v: Option<f64>) -> Object {
        self.key(k);
        match v {
            // `{}` on f64 never uses exponent notation, so it is always a JSON number.
            Some(x) if x.is_finite() => {
                let _ = write!(self.body, "{x}");
            }
            _ => self.body.push_str("null"),
        }
        self
    }

    /// A string field.
    pub fn str(mut self, k: &str, v: &str) -> Object {
        self.key(k);
        string_into(&mut self.body, v);
        self
    }

    /// A nested object field.
    pub fn object(mut self, k: &str, v: Object) -> Object {
        self.key(k);
        self.body.push_str(&v.finish());
        self
    }

    /// An array-of-objects field.
    pub fn array(mut self, k: &str, items: impl IntoIterator<Item = Object>) -> Object {
        self.key(k);
        self.body.push('[');
        for (i, item) in items.into_iter().enumerate() {
            if i > 0 {
                self.body.push(',');
            }
            self.body.push_str(&item.finish());
        }
        self.body.push(']');
        self
    }

    /// The object's text.
    pub fn finish(self) -> String {
        format!("{{{}}}", self.body)
    }
}

/// Appends `s` as a JSON string literal.
fn string_into(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_valid_json() {
        let o = Object::new()
            .uint("a", 7)
            .float("b", 0.5)
            .opt_float("c", None)
            .float("d", f64::NAN)
            .str("e", "q\"\\\n\u{1}")
            .array("f", [Object::new().uint("x", 1), Object::new()])
            .object("g", Object::new());
        assert_eq!(
            o.finish(),
            r#"{"a":7,"b":0.5,"c":null,"d":null,"e":"q\"\\\n\u0001","f":[{"x":1},{}],"g":{}}"#
        );
    }
}
