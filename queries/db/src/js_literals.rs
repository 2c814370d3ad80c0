//! Texts inside a JavaScript bundle, found by what they are rather than where: every string
//! literal whose decoded text has a recorded length and blake3. Agents' own sentences are
//! read this way from the user's installation (never copied into this repository).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::installation::AssetRecord;

/// L2: every asset of `table` found in `bytes` as a JavaScript string literal (`"…"`,
/// `'…'`, or a template literal without substitutions) whose decoded text has the
/// recorded length and blake3. Literals are tried at every quote character, so no
/// tokenizer is needed: a start inside code or another literal decodes to text that
/// matches nothing.
pub fn extract(bytes: &[u8], table: &BTreeMap<String, AssetRecord>) -> BTreeMap<String, Arc<str>> {
    let mut wanted: HashMap<(usize, [u8; 32]), Vec<&str>> = HashMap::new();
    for (name, record) in table {
        if let Ok(hash) = blake3::Hash::from_hex(&record.blake3) {
            wanted.entry((record.bytes, *hash.as_bytes())).or_default().push(name);
        }
    }
    let lengths: Vec<usize> = wanted.keys().map(|(len, _)| *len).collect();
    let (Some(&shortest), Some(&longest)) = (lengths.iter().min(), lengths.iter().max()) else {
        return BTreeMap::new();
    };
    let mut found = BTreeMap::new();
    // Bun puts the bundle after its runtime, each module opening with `// @bun`: what comes
    // before the first one is machine code (when there is no such marker, all is scanned).
    let from = memchr::memmem::find(bytes, b"// @bun").unwrap_or(0);
    for start in memchr::memchr3_iter(b'"', b'\'', b'`', &bytes[from..]).map(|i| i + from) {
        let Some(raw) = literal_body(bytes, start) else { continue };
        // A decoded text is never longer than its source, and an escape is at most
        // ten source bytes per decoded byte.
        if raw.len() < shortest || raw.len() > longest.saturating_mul(10) {
            continue;
        }
        let Some(text) = decode(raw, bytes[start] == b'`') else { continue };
        if !lengths.contains(&text.len()) {
            continue;
        }
        let key = (text.len(), *blake3::hash(text.as_bytes()).as_bytes());
        if let Some(names) = wanted.remove(&key) {
            let text: Arc<str> = Arc::from(text);
            for name in names {
                found.insert(name.to_owned(), Arc::clone(&text));
            }
            if wanted.is_empty() {
                break;
            }
        }
    }
    found
}

/// The source bytes between the quote at `start` and its closing quote; `None` when it
/// does not close on the same line (`"`, `'`) or holds a `${` substitution (template).
pub fn literal_body(bytes: &[u8], start: usize) -> Option<&[u8]> {
    let quote = bytes[start];
    let mut at = start + 1;
    loop {
        let offset = memchr::memchr3(quote, b'\\', if quote == b'`' { b'$' } else { b'\n' }, &bytes[at..])?;
        let i = at + offset;
        match bytes[i] {
            b'\\' => at = i + 2,
            b'$' if bytes.get(i + 1) == Some(&b'{') => return None,
            b'$' => at = i + 1,
            b'\n' => return None,
            _ => return Some(&bytes[start + 1..i]),
        }
        if at >= bytes.len() {
            return None;
        }
    }
}

/// A literal's value: JavaScript's escapes decoded (`\n`, `\t`, `\xHH`, `\uHHHH` with
/// surrogate pairs, `\u{…}`, line continuations, any other escaped character as itself);
/// in a template literal a raw CR LF reads as LF. `None` for invalid UTF-8 or a lone
/// surrogate, which no recorded text contains.
pub fn decode(raw: &[u8], template: bool) -> Option<String> {
    let raw = std::str::from_utf8(raw).ok()?;
    let mut units: Vec<u16> = Vec::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    let push = |units: &mut Vec<u16>, c: char| {
        let mut buf = [0u16; 2];
        units.extend_from_slice(c.encode_utf16(&mut buf));
    };
    while let Some(c) = chars.next() {
        if c == '\r' && template {
            if chars.peek() == Some(&'\n') {
                chars.next();
            }
            units.push(u16::from(b'\n'));
            continue;
        }
        if c != '\\' {
            push(&mut units, c);
            continue;
        }
        let escaped = chars.next()?;
        let hex = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, n: usize| -> Option<u32> {
            let digits: String = (0..n).map(|_| chars.next()).collect::<Option<String>>()?;
            u32::from_str_radix(&digits, 16).ok()
        };
        match escaped {
            'n' => units.push(0x0a),
            't' => units.push(0x09),
            'r' => units.push(0x0d),
            'b' => units.push(0x08),
            'f' => units.push(0x0c),
            'v' => units.push(0x0b),
            '0' if !chars.peek().is_some_and(char::is_ascii_digit) => units.push(0),
            'x' => units.push(u16::try_from(hex(&mut chars, 2)?).ok()?),
            'u' if chars.peek() == Some(&'{') => {
                chars.next();
                let digits: String = chars.by_ref().take_while(|&c| c != '}').collect();
                push(&mut units, char::from_u32(u32::from_str_radix(&digits, 16).ok()?)?);
            }
            'u' => units.push(u16::try_from(hex(&mut chars, 4)?).ok()?),
            '\n' | '\u{2028}' | '\u{2029}' => {}
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
            }
            other => push(&mut units, other),
        }
    }
    String::from_utf16(&units).ok()
}
