//! A PEG parser mirroring the CPython 3.12 grammar rules reachable from the calculator's
//! tokens, including its two-pass error reporting.
//!
//! CPython parses once without its `invalid_*` rules; on failure it parses again with them
//! to find a specific message ("Perhaps you forgot a comma?", "cannot use starred expression
//! here"), and fetching the end of input inside open parentheses raises "'(' was never
//! closed" at once. Which message wins depends on which tokens each pass fetches, so the
//! rules below fetch tokens in the grammar's order and memoise the same rules CPython
//! memoises (sharing entries across the invalid-rule switch, as CPython does).

use super::bigint::BigInt;
use super::lexer::{Tok, Token};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// Parser nesting limit (CPython's parser stack) and syntax-tree depth limit (its
/// compiler's recursion limit); both are approximations of CPython's limits.
const MAX_NESTING: u32 = 6000;
const MAX_TREE_DEPTH: u32 = 2000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Pow,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum UnOp {
    Neg,
    Pos,
}

#[derive(Debug)]
pub(super) enum Arg {
    None,
    Plain(E),
    Star(E),
    DoubleStar(E),
}

#[derive(Debug)]
pub(super) enum Node {
    Int(BigInt),
    Float(f64),
    Ellipsis,
    EmptyTuple,
    Unary(UnOp, E),
    Binary(BinOp, E, E),
    Call(E, Rc<Arg>),
}

#[derive(Debug)]
pub(super) struct Expr {
    pub node: Node,
    depth: u32,
}

pub(super) type E = Rc<Expr>;

/// Why parsing stopped early.
#[derive(Debug, PartialEq)]
pub(super) enum Abort {
    Syntax(&'static str),
    NeverClosed,
    TooDeep,
}

type P<T> = Result<Option<(T, usize)>, Abort>;

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Rule {
    Expression,
    Disjunction,
    Term,
    Factor,
    Primary,
}

struct Parser<'t> {
    toks: &'t [Token],
    invalid: bool,
    memo: HashMap<(Rule, usize), Option<(E, usize)>>,
    memo_args: HashMap<usize, Option<(Rc<Arg>, usize)>>,
    memo_named: HashSet<usize>,
    nesting: u32,
}

/// Parses a token list as `eval` input. `Err(None)` is a generic "invalid syntax".
pub(super) fn parse(toks: &[Token]) -> Result<E, Option<Abort>> {
    for invalid in [false, true] {
        let mut p = Parser {
            toks,
            invalid,
            memo: HashMap::new(),
            memo_args: HashMap::new(),
            memo_named: HashSet::new(),
            nesting: 0,
        };
        match p.eval_input() {
            Ok(Some((e, _))) => return Ok(e),
            Ok(None) => {}
            Err(a) => return Err(Some(a)),
        }
    }
    Err(None)
}

fn leaf(node: Node) -> E {
    Rc::new(Expr { node, depth: 1 })
}

fn node(node: Node, children: &[&E]) -> Result<E, Abort> {
    let depth = 1 + children.iter().map(|c| c.depth).max().unwrap_or(0);
    if depth > MAX_TREE_DEPTH {
        return Err(Abort::TooDeep);
    }
    Ok(Rc::new(Expr { node, depth }))
}

impl Parser<'_> {
    fn tok(&self, i: usize) -> Result<&Tok, Abort> {
        let t = &self.toks[i.min(self.toks.len() - 1)].tok;
        if *t == Tok::Unclosed {
            Err(Abort::NeverClosed)
        } else {
            Ok(t)
        }
    }

    fn is(&self, i: usize, want: &Tok) -> Result<bool, Abort> {
        Ok(self.tok(i)? == want)
    }

    fn enter(&mut self) -> Result<(), Abort> {
        self.nesting += 1;
        if self.nesting > MAX_NESTING {
            Err(Abort::TooDeep)
        } else {
            Ok(())
        }
    }

    fn memoised(&mut self, rule: Rule, p: usize, f: fn(&mut Self, usize) -> P<E>) -> P<E> {
        if let Some(hit) = self.memo.get(&(rule, p)) {
            return Ok(hit.clone());
        }
        self.enter()?;
        let result = f(self, p);
        self.nesting -= 1;
        let result = result?;
        self.memo.insert((rule, p), result.clone());
        Ok(result)
    }

    fn eval_input(&mut self) -> P<E> {
        let Some((e, mut q)) = self.expression(0)? else {
            return Ok(None);
        };
        self.tok(q)?; // `','` of `expressions`
        while self.is(q, &Tok::Newline)? {
            q += 1;
        }
        Ok(self.is(q, &Tok::EndMarker)?.then_some((e, q)))
    }

    fn expression(&mut self, p: usize) -> P<E> {
        self.memoised(Rule::Expression, p, |s, p| {
            if s.invalid {
                s.invalid_expression(p)?;
            }
            let Some((e, q)) = s.disjunction(p)? else {
                return Ok(None);
            };
            s.tok(q)?; // `'if'`
            Ok(Some((e, q)))
        })
    }

    fn invalid_expression(&mut self, p: usize) -> Result<(), Abort> {
        self.tok(p)?; // `!(NAME STRING | SOFT_KEYWORD)`
        if let Some((_, q)) = self.disjunction(p)? {
            let saved = std::mem::replace(&mut self.invalid, false);
            let b = self.disjunction(q).and_then(|b| {
                if let Some((_, r)) = &b {
                    self.tok(*r)?;
                }
                Ok(b)
            });
            self.invalid = saved;
            if let Some((_, r)) = b?
                && self.toks[r - 1].level != 0
            {
                return Err(Abort::Syntax("invalid syntax. Perhaps you forgot a comma?"));
            }
            self.tok(q)?; // `'if'` of the second alternative
        }
        Ok(())
    }

    /// A left-associative chain `operand (op operand)*` of one precedence level, whose
    /// operators `op_of` names; a trailing operator without an operand ends the chain.
    fn left_assoc(
        &mut self,
        p: usize,
        operand: fn(&mut Self, usize) -> P<E>,
        op_of: fn(&Tok) -> Option<BinOp>,
    ) -> P<E> {
        let Some((mut acc, mut q)) = operand(self, p)? else {
            return Ok(None);
        };
        while let Some(op) = op_of(self.tok(q)?) {
            let Some((rhs, r)) = operand(self, q + 1)? else {
                break;
            };
            acc = node(Node::Binary(op, acc.clone(), rhs.clone()), &[&acc, &rhs])?;
            q = r;
        }
        Ok(Some((acc, q)))
    }

    /// `disjunction` down to `sum`: one memo entry stands for the whole chain.
    fn disjunction(&mut self, p: usize) -> P<E> {
        self.memoised(Rule::Disjunction, p, |s, p| {
            s.left_assoc(p, Self::term, |t| match t {
                Tok::Plus => Some(BinOp::Add),
                Tok::Minus => Some(BinOp::Sub),
                _ => None,
            })
        })
    }

    fn term(&mut self, p: usize) -> P<E> {
        self.memoised(Rule::Term, p, |s, p| {
            s.left_assoc(p, Self::factor, |t| match t {
                Tok::Star => Some(BinOp::Mul),
                Tok::Slash => Some(BinOp::Div),
                Tok::DoubleSlash => Some(BinOp::FloorDiv),
                _ => None,
            })
        })
    }

    fn factor(&mut self, p: usize) -> P<E> {
        self.memoised(Rule::Factor, p, |s, p| {
            let op = match s.tok(p)? {
                Tok::Plus => Some(UnOp::Pos),
                Tok::Minus => Some(UnOp::Neg),
                _ => None,
            };
            if let Some(op) = op
                && let Some((x, q)) = s.factor(p + 1)?
            {
                return Ok(Some((node(Node::Unary(op, x.clone()), &[&x])?, q)));
            }
            s.power(p)
        })
    }

    fn power(&mut self, p: usize) -> P<E> {
        let Some((a, q)) = self.primary(p)? else {
            return Ok(None);
        };
        if self.is(q, &Tok::DoubleStar)?
            && let Some((b, r)) = self.factor(q + 1)?
        {
            return Ok(Some((
                node(Node::Binary(BinOp::Pow, a.clone(), b.clone()), &[&a, &b])?,
                r,
            )));
        }
        Ok(Some((a, q)))
    }

    fn primary(&mut self, p: usize) -> P<E> {
        self.memoised(Rule::Primary, p, |s, p| {
            let Some((mut acc, mut q)) = s.atom(p)? else {
                return Ok(None);
            };
            loop {
                if s.is(q, &Tok::Dot)? {
                    s.tok(q + 1)?; // NAME
                }
                s.genexp(q)?;
                if s.is(q, &Tok::LParen)? {
                    let (arg, r) = match s.arguments(q + 1)? {
                        Some((a, r)) => (a, r),
                        None => (Rc::new(Arg::None), q + 1),
                    };
                    if s.is(r, &Tok::RParen)? {
                        let kids: Vec<&E> = match &*arg {
                            Arg::None => vec![&acc],
                            Arg::Plain(x) | Arg::Star(x) | Arg::DoubleStar(x) => vec![&acc, x],
                        };
                        acc = node(Node::Call(acc.clone(), arg.clone()), &kids)?;
                        q = r + 1;
                        continue;
                    }
                }
                break;
            }
            Ok(Some((acc, q)))
        })
    }

    fn atom(&mut self, p: usize) -> P<E> {
        let leaf_at = |n| Ok(Some((leaf(n), p + 1)));
        match self.tok(p)? {
            Tok::Int(i) => leaf_at(Node::Int(i.clone())),
            Tok::Float(x) => leaf_at(Node::Float(*x)),
            Tok::Ellipsis => leaf_at(Node::Ellipsis),
            Tok::LParen => {
                if let Some(t) = self.tuple(p)? {
                    return Ok(Some(t));
                }
                if let Some(g) = self.group(p)? {
                    return Ok(Some(g));
                }
                self.genexp(p)?;
                Ok(None)
            }
            _ => Ok(None),
        }
    }

    /// Only the empty tuple exists without commas.
    fn tuple(&mut self, p: usize) -> P<E> {
        if let Some((_, r)) = self.star_named_expression(p + 1)? {
            self.tok(r)?; // `','`
        }
        Ok(self
            .is(p + 1, &Tok::RParen)?
            .then(|| (leaf(Node::EmptyTuple), p + 2)))
    }

    fn group(&mut self, p: usize) -> P<E> {
        self.tok(p + 1)?; // `'yield'`
        if let Some((e, r)) = self.named_expression(p + 1)?
            && self.is(r, &Tok::RParen)?
        {
            return Ok(Some((e, r + 1)));
        }
        if self.invalid {
            if let Some((_, r)) = self.starred_expression(p + 1)?
                && self.is(r, &Tok::RParen)?
            {
                return Err(Abort::Syntax("cannot use starred expression here"));
            }
            if self.is(p + 1, &Tok::DoubleStar)?
                && let Some((_, r)) = self.expression(p + 2)?
                && self.is(r, &Tok::RParen)?
            {
                return Err(Abort::Syntax("cannot use double starred expression here"));
            }
        }
        Ok(None)
    }

    /// A generator expression never parses here (there is no `for`), but trying one
    /// fetches tokens and may raise, as in CPython.
    fn genexp(&mut self, p: usize) -> Result<(), Abort> {
        if !self.is(p, &Tok::LParen)? {
            return Ok(());
        }
        self.tok(p + 1)?; // assignment_expression's NAME
        if let Some((_, r)) = self.expression(p + 1)? {
            self.tok(r)?; // `!':='`, `for_if_clauses`
        }
        if self.invalid
            && let Some((_, r)) = self.starred_expression(p + 1)?
        {
            self.tok(r)?;
        }
        Ok(())
    }

    fn star_named_expression(&mut self, p: usize) -> P<E> {
        if self.is(p, &Tok::Star)?
            && let Some(x) = self.disjunction(p + 1)?
        {
            return Ok(Some(x));
        }
        self.named_expression(p)
    }

    fn named_expression(&mut self, p: usize) -> P<E> {
        self.tok(p)?; // assignment_expression's NAME
        if self.invalid {
            self.invalid_named_expression(p)?;
        }
        let Some((e, r)) = self.expression(p)? else {
            return Ok(None);
        };
        self.tok(r)?; // `!':='`
        Ok(Some((e, r)))
    }

    fn invalid_named_expression(&mut self, p: usize) -> Result<(), Abort> {
        if !self.memo_named.insert(p) {
            return Ok(());
        }
        if let Some((_, r)) = self.expression(p)? {
            self.tok(r)?; // `':='`
        }
        // `!(list | tuple | genexp | 'True' | 'None' | 'False') bitwise_or '='`
        let mut lookahead = false;
        if self.is(p, &Tok::LParen)? {
            lookahead = self.tuple(p)?.is_some();
            if !lookahead {
                self.genexp(p)?;
            }
        }
        if !lookahead && let Some((_, r)) = self.disjunction(p)? {
            self.tok(r)?; // `'='`
        }
        Ok(())
    }

    fn starred_expression(&mut self, p: usize) -> P<E> {
        if !self.is(p, &Tok::Star)? {
            return Ok(None);
        }
        self.expression(p + 1)
    }

    fn arguments(&mut self, p: usize) -> P<Rc<Arg>> {
        if let Some(hit) = self.memo_args.get(&p) {
            return Ok(hit.clone());
        }
        let mut result = None;
        if let Some((a, r)) = self.args(p)?
            && self.is(r, &Tok::RParen)?
        {
            result = Some((Rc::new(a), r));
        }
        if result.is_none() && self.invalid {
            if let Some((_, r)) = self.args(p)? {
                self.tok(r)?;
            }
            if let Some((_, r)) = self.expression(p)? {
                self.tok(r)?;
            }
        }
        self.memo_args.insert(p, result.clone());
        Ok(result)
    }

    fn args(&mut self, p: usize) -> P<Arg> {
        if let Some((e, r)) = self.starred_expression(p)? {
            self.tok(r)?; // `','`
            return Ok(Some((Arg::Star(e), r)));
        }
        self.tok(p)?; // NAME
        if let Some((e, r)) = self.expression(p)? {
            self.tok(r)?; // `!':='`, `!'='`, `','`
            return Ok(Some((Arg::Plain(e), r)));
        }
        // kwargs: `kwarg_or_starred` then `kwarg_or_double_starred`.
        if self.invalid {
            self.invalid_kwarg(p)?;
        }
        if let Some((e, r)) = self.starred_expression(p)? {
            self.tok(r)?;
            return Ok(Some((Arg::Star(e), r)));
        }
        if self.invalid {
            self.invalid_kwarg(p)?;
        }
        if self.is(p, &Tok::DoubleStar)?
            && let Some((e, r)) = self.expression(p + 1)?
        {
            self.tok(r)?;
            return Ok(Some((Arg::DoubleStar(e), r)));
        }
        Ok(None)
    }

    fn invalid_kwarg(&mut self, p: usize) -> Result<(), Abort> {
        self.tok(p)?;
        if let Some((_, r)) = self.expression(p)? {
            self.tok(r)?; // `'='`
        }
        if self.is(p, &Tok::DoubleStar)?
            && let Some((_, r)) = self.expression(p + 1)?
        {
            self.tok(r)?;
        }
        Ok(())
    }
}
