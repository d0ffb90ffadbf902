//! Placing the plot's labels (limits, maxima) so that none leaves its area or covers
//! another. Text is measured without a font: [`CHAR_EM`] of the font size per
//! character, wider than DejaVu Sans's digits (0.636 em) and most of its letters, so a
//! box drawn in a real font lies within the one reserved here.

/// Width of one character as a fraction of the font size (conservative, see the module).
pub const CHAR_EM: f64 = 0.66;
/// Space kept around each label, px (the white halo is 1.5 px wide).
const PAD: f64 = 2.0;

/// A text box: left, top, right, bottom in px.
pub type BoxPx = [f64; 4];

/// Labels placed so far and the area they must stay in.
pub struct Placer {
    area: BoxPx,
    placed: Vec<BoxPx>,
}

/// A placed label: where to write it (`text-anchor="start"`, baseline `y`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spot {
    /// Left end of the text, px.
    pub x: f64,
    /// Baseline, px.
    pub y: f64,
}

/// The box of `chars` characters at `font` px starting at `x`, baseline `y`.
pub fn text_box(x: f64, y: f64, chars: usize, font: f64) -> BoxPx {
    [
        x - PAD,
        y - font - PAD,
        x + chars as f64 * font * CHAR_EM + PAD,
        y + 0.3 * font + PAD,
    ]
}

fn overlap(a: &BoxPx, b: &BoxPx) -> bool {
    a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3]
}

impl Placer {
    /// Labels must stay within `area` (left, top, right, bottom, px).
    pub fn new(area: BoxPx) -> Placer {
        Placer {
            area,
            placed: Vec::new(),
        }
    }

    /// Places `text` at `font` px: left end at `want_x` (moved left or right to stay in
    /// the area), baseline `want_y`, else the nearest free row in direction `dir` (-1:
    /// up, 1: down) and then the other way. When no row is free the label goes where it
    /// was asked (inside the area): the caller has too many labels for the height.
    pub fn place(&mut self, text: &str, font: f64, want_x: f64, want_y: f64, dir: f64) -> Spot {
        let chars = text.chars().count();
        let w = chars as f64 * font * CHAR_EM;
        let x = want_x.min(self.area[2] - PAD - w).max(self.area[0] + PAD);
        let (top, bottom) = (self.area[1] + font + PAD, self.area[3] - 0.3 * font - PAD);
        let clamp = |y: f64| y.max(top).min(bottom);
        let step = font + 1.0;
        let start = clamp(want_y);
        let fits = |y: f64, placed: &[BoxPx]| {
            let b = text_box(x, y, chars, font);
            !placed.iter().any(|p| overlap(p, &b))
        };
        let mut found = None;
        'dirs: for d in [dir, -dir] {
            let mut y = start;
            while (top..=bottom).contains(&y) {
                if fits(y, &self.placed) {
                    found = Some(y);
                    break 'dirs;
                }
                y += d * step;
            }
        }
        let y = found.unwrap_or(start);
        self.placed.push(text_box(x, y, chars, font));
        Spot { x, y }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_stay_inside_and_apart() {
        let mut p = Placer::new([0.0, 0.0, 200.0, 100.0]);
        let a = p.place("max 2974 µs", 11.0, 190.0, 50.0, -1.0);
        let b = p.place("max 2974 µs", 11.0, 190.0, 50.0, -1.0);
        assert!(a.x + 11.0 * 11.0 * CHAR_EM <= 200.0);
        assert!(a.x >= 0.0);
        assert!(b.y < a.y, "{a:?} {b:?}");
        assert!(!overlap(
            &text_box(a.x, a.y, 11, 11.0),
            &text_box(b.x, b.y, 11, 11.0)
        ));
        // Near the top: the next label goes below.
        let c = p.place("x", 11.0, 0.0, 0.0, -1.0);
        let d = p.place("x", 11.0, 0.0, 0.0, -1.0);
        assert!(c.y >= 11.0 && d.y > c.y, "{c:?} {d:?}");
    }
}
