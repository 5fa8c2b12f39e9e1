//! `--format csv|parquet|csv,parquet|both` of `run` and `sweep`: which files hold the tables.

/// The table formats to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Formats {
    /// The CSV files (the default).
    pub csv: bool,
    /// Parquet files beside them (`<table>.parquet`).
    pub parquet: bool,
}

impl Formats {
    /// Parses `--format`: `csv`, `parquet`, `both`, or a comma list of `csv` and `parquet`.
    pub fn parse(text: &str) -> Result<Formats, String> {
        let mut formats = Formats { csv: false, parquet: false };
        for part in text.split(',').map(str::trim) {
            match part {
                "csv" => formats.csv = true,
                "parquet" => formats.parquet = true,
                "both" => formats = Formats { csv: true, parquet: true },
                other => {
                    return Err(format!(
                        "--format {text}: unknown format `{other}`; allowed: csv, parquet, \
                         csv,parquet, both"
                    ))
                }
            }
        }
        Ok(formats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_parse_and_unknown_ones_are_named() {
        assert_eq!(Formats::parse("csv"), Ok(Formats { csv: true, parquet: false }));
        assert_eq!(Formats::parse("parquet"), Ok(Formats { csv: false, parquet: true }));
        assert_eq!(Formats::parse("csv,parquet"), Ok(Formats { csv: true, parquet: true }));
        assert_eq!(Formats::parse("both"), Ok(Formats { csv: true, parquet: true }));
        let e = Formats::parse("csv,json").unwrap_err();
        assert!(e.contains("unknown format `json`"), "{e}");
    }
}
