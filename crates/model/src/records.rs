//! The arrival and end-of-processing times of a run of consecutive records of one partition,
//! as the model reports them (`ConsumerNote::Processed`, `Observation::Processed`): listed
//! record by record, or, when the log's arrivals are exactly evenly spaced and processing
//! takes a constant time, as two arithmetic progressions. A backlog batch of 500 records is
//! then five numbers instead of two vectors of 500: no per-record work where a closed form
//! is exact. Both forms mean the same thing: equality compares the times.

use sim_core::SimTime;

/// The times of records `0..len()` of a run (see the module doc).
#[derive(Clone, Debug)]
pub enum RecordTimes {
    /// Record by record.
    Listed {
        /// Arrival time of each record.
        arrivals: Vec<SimTime>,
        /// End of processing of each record.
        ends: Vec<SimTime>,
    },
    /// Record `i` arrives at `arrival + i x arrival_step` and is processed by
    /// `end + i x end_step`.
    Linear {
        /// Records.
        count: u64,
        /// Arrival of the first record.
        arrival: SimTime,
        /// Spacing of the arrivals.
        arrival_step: SimTime,
        /// End of processing of the first record.
        end: SimTime,
        /// Time between two ends of processing.
        end_step: SimTime,
    },
}

impl RecordTimes {
    /// Listed times (`arrivals` and `ends` have the same length).
    pub fn listed(arrivals: Vec<SimTime>, ends: Vec<SimTime>) -> RecordTimes {
        debug_assert_eq!(arrivals.len(), ends.len(), "one arrival and one end per record");
        RecordTimes::Listed { arrivals, ends }
    }

    /// Records in the run.
    pub fn len(&self) -> u64 {
        match self {
            RecordTimes::Listed { ends, .. } => ends.len() as u64,
            RecordTimes::Linear { count, .. } => *count,
        }
    }

    /// True when the run has no record.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Arrival time of record `i`.
    pub fn arrival(&self, i: u64) -> SimTime {
        match self {
            RecordTimes::Listed { arrivals, .. } => arrivals[i as usize],
            RecordTimes::Linear { arrival, arrival_step, .. } => *arrival + times(*arrival_step, i),
        }
    }

    /// End of processing of record `i`.
    pub fn end(&self, i: u64) -> SimTime {
        match self {
            RecordTimes::Listed { ends, .. } => ends[i as usize],
            RecordTimes::Linear { end, end_step, .. } => *end + times(*end_step, i),
        }
    }

    /// `(arrival, end)` of records `from..to`.
    pub fn pairs(&self, from: u64, to: u64) -> impl Iterator<Item = (SimTime, SimTime)> + '_ {
        (from..to).map(move |i| (self.arrival(i), self.end(i)))
    }

    /// The times as two lists.
    pub fn into_lists(self) -> (Vec<SimTime>, Vec<SimTime>) {
        match self {
            RecordTimes::Listed { arrivals, ends } => (arrivals, ends),
            linear => {
                let n = linear.len();
                (
                    linear.pairs(0, n).map(|p| p.0).collect(),
                    linear.pairs(0, n).map(|p| p.1).collect(),
                )
            }
        }
    }
}

impl PartialEq for RecordTimes {
    fn eq(&self, other: &RecordTimes) -> bool {
        self.len() == other.len() && self.pairs(0, self.len()).eq(other.pairs(0, other.len()))
    }
}

/// `step x i`, panicking on overflow like `SimTime` addition.
fn times(step: SimTime, i: u64) -> SimTime {
    SimTime::from_nanos(step.as_nanos().checked_mul(i).expect("SimTime overflow"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> SimTime {
        SimTime::from_millis(v)
    }

    #[test]
    fn linear_times_are_the_listed_progressions() {
        // Arrivals every 10 ms from 100 ms, processing 2 ms each from 500 ms: record 3
        // arrives at 130 ms and ends at 500 + 4 x 2 = 508 ms.
        let linear = RecordTimes::Linear {
            count: 4,
            arrival: ms(100),
            arrival_step: ms(10),
            end: ms(502),
            end_step: ms(2),
        };
        assert_eq!(linear.len(), 4);
        assert_eq!((linear.arrival(3), linear.end(3)), (ms(130), ms(508)));
        let listed = RecordTimes::listed(
            vec![ms(100), ms(110), ms(120), ms(130)],
            vec![ms(502), ms(504), ms(506), ms(508)],
        );
        assert_eq!(linear, listed);
        assert_eq!(linear.clone().into_lists(), listed.clone().into_lists());
        let other = RecordTimes::listed(
            vec![ms(100), ms(110), ms(120), ms(131)],
            vec![ms(502), ms(504), ms(506), ms(508)],
        );
        assert_ne!(linear, other);
        assert_eq!(
            linear.pairs(1, 3).collect::<Vec<_>>(),
            vec![(ms(110), ms(504)), (ms(120), ms(506))]
        );
    }
}
