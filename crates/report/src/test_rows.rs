//! Rows the report crate's tests build by hand.

use metrics::OwnershipRow;

/// An `ownership.csv` row of an eager/range run on topic `t`.
pub(crate) fn own(
    partition: u32,
    start_s: f64,
    end_s: f64,
    owner: &str,
    state: &str,
) -> OwnershipRow {
    OwnershipRow {
        protocol: "eager".into(),
        assignor: "range".into(),
        static_membership: false,
        topic: "t".into(),
        partition,
        start_s,
        end_s,
        owner: owner.into(),
        state: state.into(),
    }
}
