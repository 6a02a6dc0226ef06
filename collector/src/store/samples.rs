//! How a measurement's sample arrays are stored (`measurements.sample_iters`, `sample_times`).
//!
//! Encoding 0 (`sample_encoding = 0`, every row stored before migration 0010) is the array as
//! little-endian `f64`s. Encoding 1, written since, starts each blob with a tag:
//! - [`RAW`]: the little-endian `f64`s follow, for arrays holding any value that is not an
//!   exact integer;
//! - [`DELTAS`] or [`SECOND_DELTAS`]: every value is an integer of at most 2^53 in magnitude (as
//!   Criterion's iteration counts and nanosecond totals are), stored as zigzag LEB128 varints of
//!   its first or second differences, whichever is shorter. Linear sampling's iteration counts
//!   (`d, 2d, 3d, …`) take one byte each instead of eight; the times, two or three.
//!
//! Both are exact: decoding gives back the same bits. The samples are most of a run's bytes, so
//! this is most of what a store writes per run (the ingest and upload benches' profiles).

/// `measurements.sample_encoding` of rows written by [`encode`].
pub(super) const ENCODING: i64 = 1;

const RAW: u8 = 0;
const DELTAS: u8 = 1;
const SECOND_DELTAS: u8 = 2;

/// The largest magnitude stored as an integer: every integer up to it is an exact `f64`, and
/// second differences of such values cannot overflow an `i64`.
const MAX_INTEGER: f64 = 9_007_199_254_740_992.0; // 2^53

/// `values` in encoding 1. Two passes over the values and no allocation but the blob's: the
/// first checks that every value is an exact integer and sizes both difference forms, the
/// second writes the shorter in place (this runs for every sample array a store writes).
pub(super) fn encode(values: &[f64]) -> Vec<u8> {
    let (mut first_len, mut second_len) = (0usize, 0usize);
    let mut steps = Steps::default();
    for &value in values {
        let Some(integer) = exact_integer(value) else {
            let mut out = Vec::with_capacity(1 + 8 * values.len());
            out.push(RAW);
            for value in values {
                out.extend_from_slice(&value.to_le_bytes());
            }
            return out;
        };
        let (first, second) = steps.next(integer);
        first_len += varint_size(zigzag(first));
        second_len += varint_size(zigzag(second));
    }
    let second_form = second_len < first_len;
    let mut out = vec![0u8; 1 + first_len.min(second_len)];
    out[0] = if second_form { SECOND_DELTAS } else { DELTAS };
    let mut at = 1;
    let mut steps = Steps::default();
    for &value in values {
        #[allow(clippy::cast_possible_truncation)] // an exact integer (the first pass)
        let (first, second) = steps.next(value as i64);
        at = put_varint(
            &mut out,
            at,
            zigzag(if second_form { second } else { first }),
        );
    }
    out
}

/// Each value's first difference (the value less the one before it; the first value itself
/// first) and its entry in the second-difference form: the first two entries are the first
/// differences themselves, then each first difference less the one before it (decoding sums
/// them twice).
#[derive(Default)]
struct Steps {
    index: usize,
    previous: i64,
    previous_difference: i64,
}

impl Steps {
    fn next(&mut self, value: i64) -> (i64, i64) {
        // |values| <= 2^53, so |differences| <= 2^54 and theirs <= 2^55: no overflow.
        let difference = value.wrapping_sub(self.previous);
        let second = if self.index < 2 {
            difference
        } else {
            difference.wrapping_sub(self.previous_difference)
        };
        self.index += 1;
        self.previous = value;
        self.previous_difference = difference;
        (difference, second)
    }
}

/// A blob of `encoding` (the row's `sample_encoding`) as its `f64`s; `None` if it is not one.
pub(super) fn decode(encoding: i64, bytes: &[u8]) -> Option<Vec<f64>> {
    match encoding {
        0 => decode_f64s(bytes),
        ENCODING => {
            let (&tag, rest) = bytes.split_first()?;
            match tag {
                RAW => decode_f64s(rest),
                DELTAS => {
                    let first = read_varints(rest)?;
                    integrate(&first)
                }
                SECOND_DELTAS => {
                    let second = read_varints(rest)?;
                    // The first entry is the first value itself, the second the first difference.
                    let mut first = Vec::with_capacity(second.len());
                    let mut difference: i64 = 0;
                    for (i, value) in second.iter().enumerate() {
                        if i == 0 {
                            first.push(*value);
                        } else {
                            difference = difference.checked_add(*value)?;
                            first.push(difference);
                        }
                    }
                    integrate(&first)
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// Little-endian `f64`s (encoding 0, as rows stored before 0010 hold them).
#[cfg(test)]
fn encode_f64s(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn decode_f64s(bytes: &[u8]) -> Option<Vec<f64>> {
    let chunks = bytes.chunks_exact(8);
    if !chunks.remainder().is_empty() {
        return None;
    }
    Some(
        chunks
            .map(|chunk| {
                let mut array = [0u8; 8];
                array.copy_from_slice(chunk);
                f64::from_le_bytes(array)
            })
            .collect(),
    )
}

/// The value as an `i64` if it is an integer that converts back to the same bits (so not
/// `-0.0`), of magnitude at most 2^53.
fn exact_integer(value: f64) -> Option<i64> {
    if value.is_nan() || value.abs() > MAX_INTEGER {
        return None;
    }
    #[allow(clippy::cast_possible_truncation)] // checked to round-trip just below
    let integer = value as i64;
    #[allow(clippy::cast_precision_loss)] // |integer| <= 2^53: exact
    let back = integer as f64;
    (back.to_bits() == value.to_bits()).then_some(integer)
}

/// The running sums of `first` (the first value and the differences) as `f64`s, if each is an
/// integer of magnitude at most 2^53 (what [`encode`] wrote).
fn integrate(first: &[i64]) -> Option<Vec<f64>> {
    let mut value: i64 = 0;
    first
        .iter()
        .map(|difference| {
            value = value.checked_add(*difference)?;
            #[allow(clippy::cast_precision_loss)] // checked to be within 2^53 just below
            let float = value as f64;
            (float.abs() <= MAX_INTEGER).then_some(float)
        })
        .collect()
}

fn zigzag(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)).cast_unsigned()
}

fn unzigzag(value: u64) -> i64 {
    (value >> 1).cast_signed() ^ -((value & 1).cast_signed())
}

/// The bytes of `value` as a LEB128 varint.
fn varint_size(value: u64) -> usize {
    (64 - value.leading_zeros() as usize).max(1).div_ceil(7)
}

/// Writes `value` as a LEB128 varint into `out` at `at` (sized for it by [`varint_size`]);
/// returns where the next one goes.
fn put_varint(out: &mut [u8], mut at: usize, mut value: u64) -> usize {
    while value >= 0x80 {
        #[allow(clippy::cast_possible_truncation)] // the low seven bits
        let low = value as u8 & 0x7f;
        out[at] = low | 0x80;
        at += 1;
        value >>= 7;
    }
    #[allow(clippy::cast_possible_truncation)] // < 0x80
    let last = value as u8;
    out[at] = last;
    at + 1
}

#[cfg(test)]
fn write_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        #[allow(clippy::cast_possible_truncation)] // the low seven bits
        out.push((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    #[allow(clippy::cast_possible_truncation)] // < 0x80
    out.push(value as u8);
}

/// Zigzag LEB128 varints to their end; `None` if one is cut short or overlong.
fn read_varints(mut bytes: &[u8]) -> Option<Vec<i64>> {
    let mut out = Vec::with_capacity(bytes.len());
    while !bytes.is_empty() {
        let mut value: u64 = 0;
        let mut shift = 0u32;
        loop {
            let (&byte, rest) = bytes.split_first()?;
            bytes = rest;
            if shift == 63 && byte > 1 {
                return None; // more than 64 bits
            }
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                break;
            }
            shift += 7;
            if shift > 63 {
                return None;
            }
        }
        out.push(unzigzag(value));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::expect_used)]

    use super::*;

    /// The encoder as first written (0010): every difference collected, then the shorter
    /// form chosen. [`encode`] must write the same bytes.
    fn encode_reference(values: &[f64]) -> Vec<u8> {
        let Some(integers) = values
            .iter()
            .map(|&v| exact_integer(v))
            .collect::<Option<Vec<i64>>>()
        else {
            let mut out = vec![RAW];
            out.extend(values.iter().flat_map(|v| v.to_le_bytes()));
            return out;
        };
        let first = differences(&integers);
        let second = differences(&first);
        let second = [&first[..first.len().min(2)], &second[second.len().min(2)..]].concat();
        let varint_len =
            |values: &[i64]| -> usize { values.iter().map(|&v| varint_size(zigzag(v))).sum() };
        let (tag, chosen) = if varint_len(&second) < varint_len(&first) {
            (SECOND_DELTAS, second)
        } else {
            (DELTAS, first)
        };
        let mut out = vec![tag];
        for value in chosen {
            write_varint(&mut out, zigzag(value));
        }
        out
    }

    /// The first value, then each value less the one before it.
    fn differences(values: &[i64]) -> Vec<i64> {
        let mut out = Vec::with_capacity(values.len());
        let mut previous = 0i64;
        for &value in values {
            // |values| <= 2^55 here (second differences of values within 2^53): no overflow.
            out.push(value.wrapping_sub(previous));
            previous = value;
        }
        out
    }

    #[test]
    fn the_encoder_writes_what_the_first_one_wrote() {
        // Deterministic pseudo-random arrays (xorshift) of every shape the encoder tells apart.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let max = 2f64.powi(53);
        for case in 0..4000 {
            let len = (next() % 120) as usize;
            let values: Vec<f64> = (0..len)
                .map(|i| match case % 6 {
                    0 => ((i + 1) * 1000) as f64,
                    1 => ((next() % 1_000_000) as f64).round() + 1e6 * i as f64,
                    2 => (next() % 3) as f64 - 1.0,
                    3 => [max, -max, 0.0][(next() % 3) as usize],
                    4 => (next() >> 11) as f64 / 7.0,
                    _ => (next() % 255) as f64,
                })
                .collect();
            assert_eq!(encode(&values), encode_reference(&values), "{values:?}");
            round_trip(&values);
        }
    }

    fn round_trip(values: &[f64]) -> Vec<u8> {
        let encoded = encode(values);
        let decoded = decode(ENCODING, &encoded).expect("decodes");
        assert_eq!(
            decoded.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            values.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            "{values:?}"
        );
        encoded
    }

    #[test]
    fn linear_iteration_counts_take_a_byte_each_and_come_back_exactly() {
        let iters: Vec<f64> = (1..=100).map(|k| f64::from(k) * 203_758.0).collect();
        let encoded = round_trip(&iters);
        assert_eq!(encoded[0], SECOND_DELTAS);
        // The tag, the first value and the first difference (three bytes each), then 98 zeros.
        assert_eq!(encoded.len(), 1 + 3 + 3 + 98);
    }

    #[test]
    fn flat_sampling_takes_first_differences() {
        let iters = vec![8.0; 50];
        let encoded = round_trip(&iters);
        assert_eq!(encoded[0], DELTAS);
        assert_eq!(encoded.len(), 1 + 1 + 49);
        let times: Vec<f64> = (0..50).map(|i| 1_000.0 + f64::from(i % 7) * 13.0).collect();
        assert_eq!(round_trip(&times)[0], DELTAS);
    }

    #[test]
    fn what_is_not_an_exact_integer_is_stored_as_it_is() {
        for values in [
            vec![1.5, 2.0],
            vec![-0.0, 1.0],
            vec![1.0, f64::NAN],
            vec![1.0, f64::INFINITY],
            vec![1.0, 2f64.powi(53) + 2.0],
            vec![1e300],
        ] {
            let encoded = encode(&values);
            assert_eq!(encoded[0], RAW, "{values:?}");
            assert_eq!(encoded.len(), 1 + 8 * values.len());
            let decoded = decode(ENCODING, &encoded).expect("decodes");
            assert_eq!(
                decoded.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                values.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn extremes_and_empty_arrays_come_back_exactly() {
        let max = 2f64.powi(53);
        round_trip(&[max, -max, max, 0.0, -max]);
        round_trip(&[-5.0, 3.0, 0.0]);
        round_trip(&[]);
        assert_eq!(encode(&[]), vec![DELTAS]);
    }

    #[test]
    fn rows_stored_before_the_encoding_read_as_they_were_written() {
        let values = [1000.0, 2000.5, -3.0];
        assert_eq!(decode(0, &encode_f64s(&values)), Some(values.to_vec()));
        assert_eq!(decode(0, &[0u8; 7]), None);
    }

    #[test]
    fn a_damaged_blob_is_refused_not_misread() {
        assert_eq!(decode(ENCODING, &[]), None, "no tag");
        assert_eq!(decode(ENCODING, &[9, 1, 2]), None, "unknown tag");
        assert_eq!(decode(ENCODING, &[DELTAS, 0x80]), None, "cut short");
        assert_eq!(
            decode(
                ENCODING,
                &[
                    DELTAS, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f
                ]
            ),
            None,
            "over 64 bits"
        );
        // 2^54 as a first value: beyond what an f64 holds exactly.
        let mut too_large = vec![DELTAS];
        write_varint(&mut too_large, zigzag(1 << 54));
        assert_eq!(decode(ENCODING, &too_large), None);
        assert_eq!(
            decode(ENCODING, &[RAW, 1, 2, 3]),
            None,
            "raw, not whole f64s"
        );
        assert_eq!(decode(2, &[DELTAS]), None, "unknown encoding");
    }
}
