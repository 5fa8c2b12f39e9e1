//! `SimTime`: a point or span of virtual time in integer nanoseconds.
//!
//! One type serves for instants and durations (an instant is the span since the run began), so
//! arithmetic stays exact and cheap. Display is human: `0s`, `250ms`, `1.5s`, `1m02.5s`,
//! `1h00m05s`.

use std::fmt;
use std::ops::{Add, AddAssign, Mul, Sub, SubAssign};
use std::str::FromStr;

/// Virtual time in nanoseconds since the start of the run (or a span of it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(u64);

const NANOS_PER_MICRO: u64 = 1_000;
const NANOS_PER_MILLI: u64 = 1_000_000;
const NANOS_PER_SEC: u64 = 1_000_000_000;
const NANOS_PER_MIN: u64 = 60 * NANOS_PER_SEC;
const NANOS_PER_HOUR: u64 = 60 * NANOS_PER_MIN;
/// 2^52: from there on every `f64` is a whole number.
const WHOLE_F64: f64 = 4_503_599_627_370_496.0;

impl SimTime {
    /// The start of every run.
    pub const ZERO: SimTime = SimTime(0);
    /// The largest representable time (about 584 years): "never".
    pub const MAX: SimTime = SimTime(u64::MAX);

    /// From whole nanoseconds.
    pub const fn from_nanos(nanos: u64) -> SimTime {
        SimTime(nanos)
    }
    /// From whole microseconds.
    pub const fn from_micros(micros: u64) -> SimTime {
        SimTime(micros * NANOS_PER_MICRO)
    }
    /// From whole milliseconds (Kafka's unit for every `*.ms` property).
    pub const fn from_millis(millis: u64) -> SimTime {
        SimTime(millis * NANOS_PER_MILLI)
    }
    /// From whole seconds.
    pub const fn from_secs(secs: u64) -> SimTime {
        SimTime(secs * NANOS_PER_SEC)
    }
    /// From fractional seconds, rounded to the nearest nanosecond. Panics on a negative or
    /// non-finite value: callers validate user input before converting.
    #[inline]
    pub fn from_secs_f64(secs: f64) -> SimTime {
        let nanos = secs * NANOS_PER_SEC as f64;
        // Checked off the common path: a drawn gap's conversion stays a few instructions.
        if !(0.0..WHOLE_F64).contains(&nanos) {
            assert!(secs.is_finite() && secs >= 0.0, "SimTime::from_secs_f64({secs})");
        }
        SimTime::from_nanos_f64(nanos)
    }
    /// From fractional nanoseconds: `nanos.round() as u64` (half away from zero; negative and
    /// NaN give 0, too large [`SimTime::MAX`]), without the library call of `f64::round` below
    /// 2^52, where the fraction `x - trunc(x)` is exact and rounding adds one when it is at
    /// least one half (a random time is drawn for every record of a stochastic run).
    #[inline]
    pub fn from_nanos_f64(nanos: f64) -> SimTime {
        if (0.0..WHOLE_F64).contains(&nanos) {
            // Through `i64`: one instruction each way on x86-64 (the value fits).
            let whole = nanos as i64;
            SimTime((whole + i64::from(nanos - whole as f64 >= 0.5)) as u64)
        } else {
            SimTime(nanos.round() as u64)
        }
    }
    /// From a `std::time::Duration` (saturating at [`SimTime::MAX`]).
    pub fn from_duration(d: std::time::Duration) -> SimTime {
        SimTime(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
    }

    /// Whole nanoseconds.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Whole milliseconds, truncated.
    pub const fn as_millis(self) -> u64 {
        self.0 / NANOS_PER_MILLI
    }
    /// Milliseconds as a float (for reports).
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_MILLI as f64
    }
    /// Seconds as a float (for reports).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }
    /// `self - earlier`, or zero when `earlier` is later.
    pub const fn saturating_sub(self, earlier: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(earlier.0))
    }
    /// `self + span`, saturating at [`SimTime::MAX`].
    pub const fn saturating_add(self, span: SimTime) -> SimTime {
        SimTime(self.0.saturating_add(span.0))
    }
    /// `self + span`, or `None` on overflow.
    pub fn checked_add(self, span: SimTime) -> Option<SimTime> {
        self.0.checked_add(span.0).map(SimTime)
    }
    /// Whether this is time zero.
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
}

impl Add for SimTime {
    type Output = SimTime;
    fn add(self, rhs: SimTime) -> SimTime {
        SimTime(self.0.checked_add(rhs.0).expect("SimTime overflow"))
    }
}
impl AddAssign for SimTime {
    fn add_assign(&mut self, rhs: SimTime) {
        *self = *self + rhs;
    }
}
impl Sub for SimTime {
    type Output = SimTime;
    fn sub(self, rhs: SimTime) -> SimTime {
        SimTime(self.0.checked_sub(rhs.0).expect("SimTime underflow: time went backwards"))
    }
}
impl SubAssign for SimTime {
    fn sub_assign(&mut self, rhs: SimTime) {
        *self = *self - rhs;
    }
}
impl Mul<u64> for SimTime {
    type Output = SimTime;
    fn mul(self, rhs: u64) -> SimTime {
        SimTime(self.0.checked_mul(rhs).expect("SimTime overflow"))
    }
}

/// Writes `value / unit` with up to nine decimals, trailing zeros trimmed.
fn write_fraction(f: &mut fmt::Formatter<'_>, value: u64, unit: u64, pad2: bool) -> fmt::Result {
    let whole = value / unit;
    let frac = value % unit;
    if pad2 {
        write!(f, "{whole:02}")?;
    } else {
        write!(f, "{whole}")?;
    }
    if frac != 0 {
        let digits = unit.ilog10() as usize;
        let text = format!("{frac:0digits$}");
        write!(f, ".{}", text.trim_end_matches('0'))?;
    }
    Ok(())
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        if n == 0 {
            return f.write_str("0s");
        }
        if n < NANOS_PER_MICRO {
            return write!(f, "{n}ns");
        }
        if n < NANOS_PER_MILLI {
            write_fraction(f, n, NANOS_PER_MICRO, false)?;
            return f.write_str("us");
        }
        if n < NANOS_PER_SEC {
            write_fraction(f, n, NANOS_PER_MILLI, false)?;
            return f.write_str("ms");
        }
        if n < NANOS_PER_MIN {
            write_fraction(f, n, NANOS_PER_SEC, false)?;
            return f.write_str("s");
        }
        if n >= NANOS_PER_HOUR {
            write!(f, "{}h{:02}m", n / NANOS_PER_HOUR, (n % NANOS_PER_HOUR) / NANOS_PER_MIN)?;
        } else {
            write!(f, "{}m", n / NANOS_PER_MIN)?;
        }
        write_fraction(f, n % NANOS_PER_MIN, NANOS_PER_SEC, true)?;
        f.write_str("s")
    }
}

/// A duration string that is not a valid non-negative human duration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseSimTimeError {
    /// The text that failed to parse.
    pub input: String,
    /// Why it failed (from humantime's grammar: a number followed by a unit, e.g. `250ms`).
    pub reason: String,
}

impl fmt::Display for ParseSimTimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not a duration ({}); write a number and a unit, e.g. \"250ms\", \"45s\", \"5m\", \"1h\"",
            self.input, self.reason
        )
    }
}

impl std::error::Error for ParseSimTimeError {}

/// Parses a human duration (`"250ms"`, `"1m 30s"`, `"45s"`) with humantime. Also accepts
/// everything [`SimTime`]'s `Display` prints, so times round-trip.
impl FromStr for SimTime {
    type Err = ParseSimTimeError;
    fn from_str(s: &str) -> Result<SimTime, ParseSimTimeError> {
        let trimmed = s.trim();
        if trimmed == "0" {
            return Ok(SimTime::ZERO);
        }
        // `1m02.5s` is humantime-compatible only with a separating space before the seconds.
        humantime::parse_duration(trimmed)
            .or_else(|_| humantime::parse_duration(&respace(trimmed)))
            .map(SimTime::from_duration)
            .map_err(|e| ParseSimTimeError { input: s.to_string(), reason: e.to_string() })
    }
}

/// Inserts a space after each unit so `1h02m03.5s` parses as `1h 02m 03.5s`; fractional
/// seconds are then converted by hand because humantime rejects decimals.
fn respace(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c.is_ascii_alphabetic() && chars.peek().is_some_and(|n| n.is_ascii_digit()) {
            out.push(' ');
        }
    }
    expand_decimal_seconds(&out)
}

/// humantime has no decimals: `2.5s` becomes `2s 500ms`, `1.5ms` becomes `1ms 500us`.
fn expand_decimal_seconds(s: &str) -> String {
    s.split_whitespace()
        .map(|part| {
            let Some((whole, rest)) = part.split_once('.') else {
                return part.to_string();
            };
            let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
            let unit = &rest[digits.len()..];
            let (sub_unit, scale) = match unit {
                "s" => ("ns", 9),
                "ms" => ("ns", 6),
                "us" => ("ns", 3),
                _ => return part.to_string(),
            };
            if digits.is_empty() || digits.len() > scale {
                return part.to_string();
            }
            let frac: u64 = format!("{digits:0<scale$}").parse().unwrap_or(0);
            format!("{whole}{unit} {frac}{sub_unit}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast rounding gives `f64::round`'s result, at halves, near whole numbers, at the
    /// ends of its range and outside it.
    #[test]
    fn from_nanos_f64_rounds_like_f64_round() {
        let mut values = vec![
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            0.49999999999999994,
            4_503_599_627_370_495.5,
            WHOLE_F64,
            WHOLE_F64 + 1.0,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -0.5,
            -3.7,
        ];
        let mut x: f64 = 1e-3;
        while x < 1e17 {
            values.extend([x, x.next_up(), x.next_down(), x.floor() + 0.5, x.floor() - 0.5]);
            x *= 1.37;
        }
        for x in values {
            assert_eq!(SimTime::from_nanos_f64(x).as_nanos(), x.round() as u64, "{x:e}");
            let secs = x / 1e9;
            if secs.is_finite() && secs >= 0.0 {
                let expected = (secs * NANOS_PER_SEC as f64).round() as u64;
                assert_eq!(SimTime::from_secs_f64(secs).as_nanos(), expected, "{secs:e} s");
            }
        }
    }

    #[test]
    #[should_panic(expected = "SimTime::from_secs_f64(-0.001)")]
    fn from_secs_f64_refuses_negative_seconds() {
        SimTime::from_secs_f64(-0.001);
    }

    #[test]
    fn display_is_human() {
        let cases = [
            (SimTime::ZERO, "0s"),
            (SimTime::from_nanos(7), "7ns"),
            (SimTime::from_micros(15), "15us"),
            (SimTime::from_millis(250), "250ms"),
            (SimTime::from_micros(1500), "1.5ms"),
            (SimTime::from_millis(2500), "2.5s"),
            (SimTime::from_secs(45), "45s"),
            (SimTime::from_millis(62_500), "1m02.5s"),
            (SimTime::from_secs(600), "10m00s"),
            (SimTime::from_secs(3605), "1h00m05s"),
            (SimTime::from_millis(3_723_250), "1h02m03.25s"),
        ];
        for (t, text) in cases {
            assert_eq!(t.to_string(), text, "display of {} ns", t.as_nanos());
        }
    }

    #[test]
    fn parses_humantime_and_own_display() {
        let cases = [
            ("250ms", SimTime::from_millis(250)),
            ("45s", SimTime::from_secs(45)),
            ("5m", SimTime::from_secs(300)),
            ("1m 30s", SimTime::from_secs(90)),
            ("1m02.5s", SimTime::from_millis(62_500)),
            ("1h02m03.25s", SimTime::from_millis(3_723_250)),
            ("2.5s", SimTime::from_millis(2500)),
            ("1.5ms", SimTime::from_micros(1500)),
            ("0", SimTime::ZERO),
        ];
        for (text, t) in cases {
            assert_eq!(text.parse::<SimTime>(), Ok(t), "parse of {text}");
        }
    }

    #[test]
    fn display_round_trips() {
        for nanos in [1, 999, 1_000, 1_234_567, 59_999_999_999, 60_000_000_001, 7_384_123_000_000] {
            let t = SimTime::from_nanos(nanos);
            assert_eq!(t.to_string().parse::<SimTime>(), Ok(t), "round trip of {t}");
        }
    }

    #[test]
    fn rejects_garbage_with_a_hint() {
        for bad in ["", "fast", "-5s", "10 parsecs"] {
            let err = bad.parse::<SimTime>().unwrap_err();
            assert!(err.to_string().contains("e.g. \"250ms\""), "{err}");
        }
    }

    #[test]
    fn conversions() {
        assert_eq!(SimTime::from_secs_f64(1.25).as_millis(), 1250);
        assert_eq!(SimTime::from_millis(1500).as_secs_f64(), 1.5);
        assert_eq!(SimTime::from_secs(3) - SimTime::from_secs(1), SimTime::from_secs(2));
        assert_eq!(SimTime::from_secs(1).saturating_sub(SimTime::from_secs(3)), SimTime::ZERO);
        assert_eq!(SimTime::from_millis(5) * 3, SimTime::from_millis(15));
    }

    #[test]
    #[should_panic(expected = "time went backwards")]
    fn subtraction_below_zero_is_a_bug() {
        let _ = SimTime::from_secs(1) - SimTime::from_secs(2);
    }
}
