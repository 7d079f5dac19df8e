//! A hand-written SVG chart of a bits-per-key sweep: data blocks read per absent get
//! (measured points, the filters' expected figure and the textbook curve, log scale) and
//! filter memory, both against bits per key.

use std::fmt::Write as _;

use super::W1Report;
use super::driver::probes_per_absent_get;
use bloomkv::filter::monkey::textbook_fpr;

const W: f64 = 420.0;
const H: f64 = 300.0;
const PAD: f64 = 50.0;

struct Panel {
    x0: f64,
    x_max: f64,
    y_min: f64,
    y_max: f64,
    log: bool,
}

impl Panel {
    fn x(&self, v: f64) -> f64 {
        self.x0 + PAD + v / self.x_max * (W - 1.5 * PAD)
    }
    fn y(&self, v: f64) -> f64 {
        let t = if self.log {
            (v.max(self.y_min).log10() - self.y_min.log10())
                / (self.y_max.log10() - self.y_min.log10())
        } else {
            (v - self.y_min) / (self.y_max - self.y_min)
        };
        H - PAD - t.clamp(0.0, 1.0) * (H - 1.5 * PAD)
    }

    fn axes(&self, s: &mut String, title: &str, y_label: &str, ticks: &[f64]) {
        let (l, r, b, t) = (
            self.x(0.0),
            self.x(self.x_max),
            self.y(self.y_min),
            PAD * 0.5,
        );
        let _ = write!(
            s,
            r#"<path d="M{l},{t} V{b} H{r}" fill="none" stroke="black"/><text x="{}" y="18" text-anchor="middle" font-weight="bold">{title}</text><text x="{}" y="{}" text-anchor="middle">bits per key</text><text x="{}" y="{}" transform="rotate(-90 {} {})" text-anchor="middle">{y_label}</text>"#,
            (l + r) / 2.0,
            (l + r) / 2.0,
            H - 12.0,
            self.x0 + 14.0,
            H / 2.0,
            self.x0 + 14.0,
            H / 2.0
        );
        let mut bits = 0.0;
        while bits <= self.x_max {
            let _ = write!(
                s,
                r#"<text x="{}" y="{}" text-anchor="middle" font-size="10">{bits}</text>"#,
                self.x(bits),
                b + 14.0
            );
            bits += 2.0;
        }
        for &v in ticks {
            let _ = write!(
                s,
                r##"<text x="{}" y="{}" text-anchor="end" font-size="10">{v}</text><path d="M{l},{y} H{r}" stroke="#ddd"/>"##,
                l - 4.0,
                self.y(v) + 3.0,
                y = self.y(v)
            );
        }
    }

    fn polyline(&self, s: &mut String, pts: &[(f64, f64)], style: &str) {
        let d: Vec<String> = pts
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", self.x(x), self.y(y)))
            .collect();
        let _ = write!(
            s,
            r#"<polyline points="{}" fill="none" {style}/>"#,
            d.join(" ")
        );
    }

    fn dots(&self, s: &mut String, pts: &[(f64, f64)], color: &str) {
        for &(x, y) in pts {
            let _ = write!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{color}"/>"#,
                self.x(x),
                self.y(y)
            );
        }
    }
}

/// The sweep chart as an SVG document.
pub fn sweep_chart(reports: &[W1Report]) -> String {
    let x_max = reports.iter().map(|r| r.bits_per_key).fold(2.0, f64::max);
    let probes = probes_per_absent_get(reports).max(1.0);
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{H}" font-family="sans-serif" font-size="12"><rect width="100%" height="100%" fill="white"/>"#,
        2.0 * W
    );
    // Left: blocks per absent get, log scale from 1e-4 to the unfiltered probes.
    let left = Panel {
        x0: 0.0,
        x_max,
        y_min: 1e-4,
        y_max: 10f64.powf(probes.log10().ceil().max(1.0)),
        log: true,
    };
    let mut ticks = vec![];
    let mut t = left.y_min;
    while t <= left.y_max * 1.001 {
        ticks.push(t);
        t *= 10.0;
    }
    left.axes(&mut s, "data blocks per absent get", "blocks (log)", &ticks);
    let theory: Vec<(f64, f64)> = (0..=(x_max * 4.0) as usize)
        .map(|i| {
            let b = i as f64 / 4.0;
            (b, probes * textbook_fpr(b))
        })
        .collect();
    left.polyline(&mut s, &theory, r##"stroke="#888" stroke-dasharray="4 3""##);
    let expected: Vec<(f64, f64)> = reports
        .iter()
        .map(|r| (r.bits_per_key, r.absent.expected_blocks_per_get))
        .collect();
    left.polyline(&mut s, &expected, r##"stroke="#e67e22""##);
    let measured: Vec<(f64, f64)> = reports
        .iter()
        .map(|r| (r.bits_per_key, r.absent.measured_blocks_per_get))
        .collect();
    left.dots(&mut s, &measured, "#1f77b4");
    let _ = write!(
        s,
        r##"<g font-size="11"><circle cx="{x}" cy="40" r="3.5" fill="#1f77b4"/><text x="{tx}" y="44">measured</text><path d="M{x0},56 h16" stroke="#e67e22"/><text x="{tx}" y="60">expected (filters' FPR)</text><path d="M{x0},72 h16" stroke="#888" stroke-dasharray="4 3"/><text x="{tx}" y="76">theory {probes:.2} x e^(-b ln2^2)</text></g>"##,
        x = W - 190.0,
        x0 = W - 198.0,
        tx = W - 178.0
    );
    // Right: filter memory.
    let mib: Vec<(f64, f64)> = reports
        .iter()
        .map(|r| (r.bits_per_key, r.filter_bytes as f64 / (1 << 20) as f64))
        .collect();
    let top = mib.iter().map(|p| p.1).fold(1.0, f64::max);
    let right = Panel {
        x0: W,
        x_max,
        y_min: 0.0,
        y_max: (top * 1.1).ceil(),
        log: false,
    };
    let step = (right.y_max / 5.0).ceil().max(1.0);
    let ticks: Vec<f64> = (0..=5)
        .map(|i| i as f64 * step)
        .filter(|&v| v <= right.y_max)
        .collect();
    right.axes(&mut s, "filter memory", "MiB", &ticks);
    right.polyline(&mut s, &mib, r##"stroke="#2ca02c""##);
    right.dots(&mut s, &mib, "#2ca02c");
    s.push_str("</svg>\n");
    s
}

/// One run's bars in [`runs_chart`].
fn run_row(s: &mut String, y: f64, label: &str, bars: &[(f64, f64, &str)]) {
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#,
        PAD * 3.4,
        y + 13.0,
        xml_text(label)
    );
    for (i, &(x0, len, text)) in bars.iter().enumerate() {
        let color = if i == 0 { "#1f77b4" } else { "#2ca02c" };
        let _ = write!(
            s,
            r#"<rect x="{x0:.1}" y="{y:.1}" width="{:.1}" height="18" fill="{color}"/><text x="{:.1}" y="{:.1}" font-size="11">{text}</text>"#,
            len.max(1.0),
            x0 + len.max(1.0) + 4.0,
            y + 13.0
        );
    }
}

/// `text` with the characters XML gives a meaning escaped.
fn xml_text(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The runs of one `kvctl bench` (configured, no filters, other allocation; or one run) side
/// by side as an SVG document: data blocks per absent get (log scale: with filters they are
/// hundreds of times fewer) and absent gets per second.
pub fn runs_chart(reports: &[W1Report]) -> String {
    let row_h = 34.0;
    let height = 70.0 + row_h * reports.len() as f64;
    let left0 = PAD * 3.6;
    let span = W - PAD * 1.4;
    let right0 = left0 + W;
    // Room after the right bars for their labels.
    let width = right0 + span + 90.0;
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12"><rect width="100%" height="100%" fill="white"/>"#
    );
    let _ = write!(
        s,
        r#"<text x="{}" y="20" font-weight="bold">data blocks per absent get (log)</text><text x="{}" y="20" font-weight="bold">absent gets per second</text>"#,
        left0, right0
    );
    let blocks: Vec<f64> = reports
        .iter()
        .map(|r| r.absent.measured_blocks_per_get)
        .collect();
    // Log scale from 1e-4 blocks (a bar's foot) up to the largest figure.
    let (floor, top) = (1e-4f64, blocks.iter().copied().fold(1.0, f64::max));
    let log_len = |v: f64| {
        ((v.max(floor).log10() - floor.log10()) / (top.log10() - floor.log10())).clamp(0.0, 1.0)
            * span
    };
    let rates: Vec<f64> = reports
        .iter()
        .map(|r| r.phase("get_absent").map_or(0.0, |p| p.ops_per_sec()))
        .collect();
    let fastest = rates.iter().copied().fold(1.0, f64::max);
    for (i, r) in reports.iter().enumerate() {
        let y = 36.0 + row_h * i as f64;
        let b = format!("{:.4}", blocks[i]);
        let q = format!("{:.0}/s", rates[i]);
        run_row(
            &mut s,
            y,
            &r.label,
            &[
                (left0, log_len(blocks[i]), &b),
                (right0, rates[i] / fastest * span, &q),
            ],
        );
    }
    let _ = write!(
        s,
        r#"<text x="{left0}" y="{}" font-size="10">{} keys, {}; measured over the get_absent phase</text>"#,
        height - 10.0,
        reports.first().map_or(0, |r| r.keys),
        reports.first().map_or("", |r| r.workload)
    );
    s.push_str("</svg>\n");
    s
}
