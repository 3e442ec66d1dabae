//! One visual identity per cell, fixed across every figure of a report: a colour and a marker
//! per guard (its label, so two configurations of one guard differ) and a line style (bar fill for bars) per
//! agent, assigned deterministically from the sorted sets of the report — the baseline guard
//! first and in black, the others in the order of the Okabe–Ito palette (Okabe & Ito 2008,
//! "Color Universal Design"), which stays distinguishable under the common colour-vision
//! deficiencies. Markers cycle on a different period than colours, so a colour repeats only
//! with another marker.
//!
//! Also the figure scale: every size is given in points and drawn at 300 dpi, so a PNG is
//! print-ready at its nominal width and the SVG has the same geometry.

use plotters::style::RGBColor;

/// Pixels per point at 300 dpi (1 pt = 1/72 in).
pub(crate) const PX_PER_PT: f64 = 300.0 / 72.0;

/// `pt` points in pixels at 300 dpi.
pub(crate) fn px(pt: f64) -> i32 {
    (pt * PX_PER_PT).round() as i32
}

/// Okabe–Ito: black, orange, sky blue, bluish green, vermillion, blue, reddish purple, and
/// yellow last (weakest on white).
pub(crate) const OKABE_ITO: [RGBColor; 8] = [
    RGBColor(0, 0, 0),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 158, 115),
    RGBColor(213, 94, 0),
    RGBColor(0, 114, 178),
    RGBColor(204, 121, 167),
    RGBColor(240, 228, 66),
];

/// Marker shapes, drawn the same in plots and legends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Marker {
    Circle,
    Square,
    Triangle,
    Diamond,
    TriangleDown,
    Cross,
}

const MARKERS: [Marker; 6] = [
    Marker::Circle,
    Marker::Square,
    Marker::Triangle,
    Marker::Diamond,
    Marker::TriangleDown,
    Marker::Cross,
];

/// Line dash pattern as (dash, gap) in points; `None` is solid.
pub(crate) type Dash = Option<(f64, f64)>;

const DASHES: [Dash; 4] = [None, Some((5.0, 3.0)), Some((1.5, 2.0)), Some((8.0, 2.5))];

/// How one cell is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Identity {
    pub color: RGBColor,
    pub marker: Marker,
    pub dash: Dash,
    /// The agent's index: bars, which have no line, show it as their fill (0 solid, 1 light,
    /// 2 and more outline only).
    pub agent: usize,
}

/// The identities of one report.
#[derive(Debug, Clone)]
pub(crate) struct Styles {
    guards: Vec<String>,
    agents: Vec<String>,
    baseline: String,
}

impl Styles {
    /// Assigns identities from every guard label and agent the figures will show.
    pub(crate) fn new<'a>(
        guards: impl IntoIterator<Item = &'a str>,
        agents: impl IntoIterator<Item = &'a str>,
        baseline: &str,
    ) -> Styles {
        let mut guards: Vec<String> = guards.into_iter().map(str::to_string).collect();
        guards.sort_by(|a, b| (a != baseline, a).cmp(&(b != baseline, b)));
        guards.dedup();
        let mut agents: Vec<String> = agents.into_iter().map(str::to_string).collect();
        agents.sort();
        agents.dedup();
        Styles {
            guards,
            agents,
            baseline: baseline.to_string(),
        }
    }

    /// The identity of a (guard label, agent) cell.
    pub(crate) fn of(&self, guard: &str, agent: &str) -> Identity {
        let gi = self.guards.iter().position(|g| g == guard).unwrap_or(0);
        // Black is the baseline's alone when the report has one.
        let has_base = self.guards.first().is_some_and(|g| *g == self.baseline);
        let color = if has_base && gi == 0 {
            OKABE_ITO[0]
        } else {
            let i = if has_base { gi - 1 } else { gi };
            OKABE_ITO[1 + i % (OKABE_ITO.len() - 1)]
        };
        let ai = self.agents.iter().position(|a| a == agent).unwrap_or(0);
        Identity {
            color,
            marker: MARKERS[gi % MARKERS.len()],
            dash: DASHES[ai % DASHES.len()],
            agent: ai,
        }
    }

    /// More than one agent: legends name the agent too.
    pub(crate) fn several_agents(&self) -> bool {
        self.agents.len() > 1
    }
}

/// `#RRGGBB`, as plotters writes colours into SVG.
pub(crate) fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baseline_is_black_and_assignment_ignores_input_order() {
        let a = Styles::new(["pg-raw", "baseline", "toolguard"], ["m"], "baseline");
        let b = Styles::new(["toolguard", "pg-raw", "baseline"], ["m"], "baseline");
        assert_eq!(a.of("baseline", "m").color, OKABE_ITO[0]);
        for g in ["baseline", "pg-raw", "toolguard"] {
            assert_eq!(a.of(g, "m"), b.of(g, "m"));
        }
        assert_ne!(a.of("pg-raw", "m").color, a.of("toolguard", "m").color);
        assert_ne!(a.of("pg-raw", "m").marker, a.of("toolguard", "m").marker);
    }

    #[test]
    fn agents_differ_by_dash_only() {
        let s = Styles::new(["g"], ["a1", "a2"], "baseline");
        let (x, y) = (s.of("g", "a1"), s.of("g", "a2"));
        assert_eq!((x.color, x.marker), (y.color, y.marker));
        assert_ne!(x.dash, y.dash);
        assert_eq!(hex(OKABE_ITO[1]), "#E69F00");
    }
}
