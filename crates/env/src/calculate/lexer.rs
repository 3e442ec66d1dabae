//! Tokenizer for the calculator's slice of Python: numbers, `+ - * / // **`, parentheses,
//! `.` and `...`. It reports CPython's tokenizer errors (leading zeros, unmatched or too
//! deeply nested parentheses), which take precedence over every parser error.

use super::bigint::BigInt;

/// CPython's `MAXLEVEL`: parentheses nest at most this deep.
const MAX_PAREN_LEVEL: u32 = 200;

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok {
    Int(BigInt),
    Float(f64),
    Ellipsis,
    LParen,
    RParen,
    Plus,
    Minus,
    Star,
    DoubleStar,
    Slash,
    DoubleSlash,
    Dot,
    Newline,
    EndMarker,
    /// End of input inside parentheses: fetching it is the "was never closed" error.
    Unclosed,
}

#[derive(Clone, Debug)]
pub(super) struct Token {
    pub tok: Tok,
    /// Parenthesis depth after this token (CPython's `token->level`).
    pub level: u32,
}

const LEADING_ZEROS: &str = "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers";

/// Tokens of `src` (already restricted to the calculator alphabet), ending with
/// `Newline EndMarker`, `EndMarker` alone (blank input) or `Unclosed`.
/// On a tokenizer error, its message (without location).
pub(super) fn tokenize(src: &str) -> Result<Vec<Token>, &'static str> {
    let b = src.as_bytes();
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    let mut out = Vec::new();
    let mut level = 0u32;
    let mut i = 0;
    while i < b.len() {
        let (tok, next) = match b[i] {
            b' ' => {
                i += 1;
                continue;
            }
            b'0'..=b'9' => number(src, i)?,
            b'.' if at(i + 1).is_ascii_digit() => number(src, i)?,
            b'.' if at(i + 1) == b'.' && at(i + 2) == b'.' => (Tok::Ellipsis, i + 3),
            b'.' => (Tok::Dot, i + 1),
            b'(' => {
                if level >= MAX_PAREN_LEVEL {
                    return Err("too many nested parentheses");
                }
                level += 1;
                (Tok::LParen, i + 1)
            }
            b')' => {
                if level == 0 {
                    return Err("unmatched ')'");
                }
                level -= 1;
                (Tok::RParen, i + 1)
            }
            b'*' if at(i + 1) == b'*' => (Tok::DoubleStar, i + 2),
            b'*' => (Tok::Star, i + 1),
            b'/' if at(i + 1) == b'/' => (Tok::DoubleSlash, i + 2),
            b'/' => (Tok::Slash, i + 1),
            b'+' => (Tok::Plus, i + 1),
            b'-' => (Tok::Minus, i + 1),
            // The caller filtered the alphabet; anything else cannot form a token.
            _ => return Err("invalid syntax"),
        };
        out.push(Token { tok, level });
        i = next;
    }
    if level > 0 {
        out.push(Token {
            tok: Tok::Unclosed,
            level,
        });
    } else {
        if !out.is_empty() {
            out.push(Token {
                tok: Tok::Newline,
                level: 0,
            });
        }
        out.push(Token {
            tok: Tok::EndMarker,
            level: 0,
        });
    }
    Ok(out)
}

/// A number literal starting at `start` (a digit, or `.` before a digit).
fn number(src: &str, start: usize) -> Result<(Tok, usize), &'static str> {
    let b = src.as_bytes();
    let digits_from = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let float = |end: usize| {
        let text = &src[start..end];
        let text = if text.starts_with('.') {
            format!("0{text}")
        } else {
            text.to_string()
        };
        let text = if text.ends_with('.') {
            format!("{text}0")
        } else {
            text
        };
        (Tok::Float(text.parse().unwrap_or(f64::INFINITY)), end)
    };
    if b[start] == b'.' {
        return Ok(float(digits_from(start + 1)));
    }
    let mut i = start;
    if b[i] == b'0' {
        while i < b.len() && b[i] == b'0' {
            i += 1;
        }
        let after_zeros = i;
        i = digits_from(i);
        if i < b.len() && b[i] == b'.' {
            return Ok(float(digits_from(i + 1)));
        }
        if i > after_zeros {
            return Err(LEADING_ZEROS);
        }
        return Ok((Tok::Int(BigInt::zero()), i));
    }
    i = digits_from(i);
    if i < b.len() && b[i] == b'.' {
        return Ok(float(digits_from(i + 1)));
    }
    Ok((Tok::Int(BigInt::parse_decimal(&src[start..i])), i))
}
