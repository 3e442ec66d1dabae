//! Counts with their unit noun in words people read ("1 cell", "3 cells", "1 simulation
//! done"): every command's progress, dry-run, run and report lines say a count through
//! [`count`], so none prints "1 cells" and the rule lives in one place.

/// `n` followed by `noun`, made plural unless `n` is 1: `count(1, "cell")` is `1 cell`,
/// `count(0, "cell")` is `0 cells`. English regular plurals only (`entry` → `entries`,
/// `pass` → `passes`); a noun whose plural is irregular takes [`count_with`].
pub fn count(n: impl TryInto<u64>, noun: &str) -> String {
    let n = wide(n);
    if n == 1 {
        return format!("1 {noun}");
    }
    format!("{n} {}", plural(noun))
}

/// `n` followed by `singular` when `n` is 1, else by `plural`.
pub fn count_with(n: impl TryInto<u64>, singular: &str, plural: &str) -> String {
    let n = wide(n);
    format!("{n} {}", if n == 1 { singular } else { plural })
}

/// Any count type (`usize`, `u32`, `u64`) as a `u64`.
fn wide(n: impl TryInto<u64>) -> u64 {
    n.try_into().unwrap_or(u64::MAX)
}

/// The regular English plural of `noun` (of its last word when it has several).
fn plural(noun: &str) -> String {
    let consonant_y = noun
        .strip_suffix('y')
        .filter(|stem| stem.chars().last().is_some_and(|c| !"aeiou".contains(c)));
    if let Some(stem) = consonant_y {
        format!("{stem}ies")
    } else if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|s| noun.ends_with(s))
    {
        format!("{noun}es")
    } else {
        format!("{noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_everything_else_plural() {
        assert_eq!(count(1u32, "cell"), "1 cell");
        assert_eq!(count(0u32, "cell"), "0 cells");
        assert_eq!(count(1400usize, "simulation"), "1400 simulations");
        assert_eq!(count(2u32, "HTTP failure"), "2 HTTP failures");
        assert_eq!(count(2u32, "entry"), "2 entries");
        assert_eq!(count(2u32, "day"), "2 days");
        assert_eq!(count(3u32, "pass"), "3 passes");
        assert_eq!(count_with(1u32, "is", "are"), "1 is");
        assert_eq!(count_with(2u32, "child", "children"), "2 children");
    }
}
