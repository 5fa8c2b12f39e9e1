//! Statistics of a sweep cell: mean, sample standard deviation and the two-sided 95%
//! confidence interval of the mean from Student's t distribution.
//!
//! The t quantile is computed, not tabled: the t CDF through the regularized incomplete beta
//! function (continued fraction, Numerical Recipes 3rd ed. section 6.4) and `ln Γ` by Lanczos
//! (g = 7, 9 terms), then inverted by bisection. Pure functions of their inputs: summing in
//! input order keeps results independent of thread count when callers pass sorted values.

/// Mean, spread and 95% confidence interval of one metric over a cell's replications.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// Number of values.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (divisor n - 1); `None` when n < 2.
    pub std: Option<f64>,
    /// `(lo, hi)` of the 95% CI of the mean (`mean ± t(0.975, n-1) · std / √n`); `None` when n < 2.
    pub ci95: Option<(f64, f64)>,
}

/// Estimates mean, standard deviation and the 95% CI of `values` (which must not be empty).
pub fn estimate(values: &[f64]) -> Estimate {
    assert!(!values.is_empty(), "estimate of no values");
    let n = values.len();
    let mean = values.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return Estimate { n, mean, std: None, ci95: None };
    }
    let ss: f64 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
    let std = (ss / (n - 1) as f64).sqrt();
    let half = t_quantile(0.975, (n - 1) as f64) * std / (n as f64).sqrt();
    Estimate { n, mean, std: Some(std), ci95: Some((mean - half, mean + half)) }
}

/// The `p` quantile (0.5 < p < 1) of Student's t with `df` degrees of freedom.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    assert!(p > 0.5 && p < 1.0, "t_quantile needs 0.5 < p < 1, got {p}");
    assert!(df > 0.0, "t_quantile needs df > 0, got {df}");
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    while t_cdf(hi, df) < p {
        hi *= 2.0; // bounded: t(0.9999, 1) is about 3183
        assert!(hi < 1e12, "t quantile diverged for p={p}, df={df}");
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-13 * hi {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// `P(T <= t)` for Student's t with `df` degrees of freedom.
pub fn t_cdf(t: f64, df: f64) -> f64 {
    let x = df / (df + t * t);
    let tail = 0.5 * incomplete_beta(0.5 * df, 0.5, x);
    if t >= 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// The regularized incomplete beta function `I_x(a, b)`.
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// The continued fraction of the incomplete beta function (modified Lentz).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    d = 1.0 / if d.abs() < TINY { TINY } else { d };
    let mut h = d;
    for m in 1..=300 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        for aa in [
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ] {
            d = 1.0 + aa * d;
            d = 1.0 / if d.abs() < TINY { TINY } else { d };
            c = 1.0 + aa / c;
            c = if c.abs() < TINY { TINY } else { c };
            h *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// `ln Γ(x)` for x > 0 (Lanczos approximation, g = 7, n = 9; relative error below 1e-15).
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const COEF: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 - x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = COEF[0];
    for (i, c) in COEF.iter().enumerate().skip(1) {
        sum += c / (x + i as f64);
    }
    let t = x + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn t_quantiles_match_published_tables() {
        // Two-sided 95% critical values, NIST/SEMATECH e-Handbook of Statistical Methods,
        // table 1.3.6.7.2 (upper critical values of Student's t), column 0.975.
        for (df, expected) in
            [(1.0, 12.706), (2.0, 4.303), (7.0, 2.365), (9.0, 2.262), (30.0, 2.042), (100.0, 1.984)]
        {
            let t = t_quantile(0.975, df);
            assert!(close(t, expected, 0.0005), "df {df}: {t} vs {expected}");
        }
        // df = 1 is the Cauchy distribution: t = tan(π (p - 1/2)) exactly.
        let cauchy = (std::f64::consts::PI * 0.475).tan();
        assert!(close(t_quantile(0.975, 1.0), cauchy, 1e-9));
        // df = 2 has the closed form t = (2p - 1) sqrt(2 / (1 - (2p - 1)^2)) = 0.95 sqrt(2/0.0975).
        let closed = 0.95 * (2.0_f64 / 0.0975).sqrt();
        assert!(close(t_quantile(0.975, 2.0), closed, 1e-9));
    }

    #[test]
    fn ln_gamma_of_integers_is_log_factorial() {
        // Γ(5) = 4! = 24, Γ(1/2) = √π.
        assert!(close(ln_gamma(5.0), 24.0_f64.ln(), 1e-12));
        assert!(close(ln_gamma(0.5), std::f64::consts::PI.sqrt().ln(), 1e-12));
    }

    #[test]
    fn estimate_of_a_known_sample() {
        // values 2,4,4,4,5,5,7,9: mean 40/8 = 5; squared deviations 9+1+1+1+0+0+4+16 = 32;
        // sample variance 32/7, std = sqrt(32/7) = 2.1380899...; df 7, t = 2.3646243;
        // half width = 2.3646243 * 2.1380899 / sqrt(8) = 1.7874879.
        let e = estimate(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(e.n, 8);
        assert_eq!(e.mean, 5.0);
        assert!(close(e.std.unwrap(), (32.0_f64 / 7.0).sqrt(), 1e-12));
        let (lo, hi) = e.ci95.unwrap();
        assert!(close(lo, 5.0 - 1.787_488, 1e-5), "{lo}");
        assert!(close(hi, 5.0 + 1.787_488, 1e-5), "{hi}");
    }

    #[test]
    fn one_value_has_no_spread() {
        let e = estimate(&[3.5]);
        assert_eq!((e.n, e.mean, e.std, e.ci95), (1, 3.5, None, None));
        // Identical values: std 0 and a zero-width interval.
        let e = estimate(&[2.0, 2.0, 2.0]);
        assert_eq!(e.std, Some(0.0));
        assert_eq!(e.ci95, Some((2.0, 2.0)));
    }
}
