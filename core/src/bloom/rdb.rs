//! A chain's fields in rsbloom's RDB value (the layout is in [`crate::rdb`]).

use crate::bloom::builder::{ChainBuilder, ChainHeader, LinkHeader};
use crate::bloom::chain::Chain;
use crate::bloom::link::Layout;
use crate::codec::{read_pieces, write_pieces, DecodeError, FieldReader, FieldWriter};

/// Writes a chain's fields after its items and flags: its expansion, seed and links.
pub(crate) fn encode(chain: &Chain, w: &mut impl FieldWriter) {
    w.unsigned(u64::from(chain.expansion()));
    w.unsigned(chain.seed());
    w.unsigned(chain.links().len() as u64);
    for link in chain.links() {
        w.unsigned(link.layout.tag());
        w.unsigned(link.capacity);
        w.double(link.error);
        w.unsigned(u64::from(link.hashes));
        w.unsigned(link.bit_count());
        w.unsigned(link.items);
        write_pieces(w, link.bytes());
    }
}

/// Reads a chain after its items and flags (`nonscaling`: its flag), validating every field
/// before it allocates or trusts it.
pub(crate) fn decode(
    r: &mut impl FieldReader,
    items: u64,
    nonscaling: bool,
) -> Result<Chain, DecodeError> {
    let expansion = r.unsigned()?;
    let seed = r.unsigned()?;
    let links = r.unsigned()?;
    // The builder checks the link count before the loop runs.
    let mut chain = ChainBuilder::new(ChainHeader {
        items,
        links,
        expansion,
        nonscaling,
        seed,
    })?;
    for _ in 0..links {
        let layout = r.unsigned()?;
        let link = chain.link(LinkHeader {
            layout: Layout::from_tag(layout).ok_or(DecodeError::UnknownLayout)?,
            capacity: r.unsigned()?,
            error: r.double()?,
            hashes: r.unsigned()?,
            bits: r.unsigned()?,
            items: r.unsigned()?,
        })?;
        read_pieces(r, link.bytes_mut())?;
    }
    chain.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{Field, FieldSlice};
    use crate::rdb::{decode, encode};
    use crate::sizing::MAX_LINK_BITS;
    use crate::Filter;
    use crate::{FilterSpec, Growth, Window};

    fn sample() -> Chain {
        let spec = FilterSpec {
            error: 0.01,
            capacity: 50,
            growth: Growth::Scaling(2),
            window: Window::Unbounded,
            refresh: true,
        };
        let mut c = Chain::new(&spec, 7, u64::MAX).unwrap();
        for i in 0..400 {
            c.add(format!("{i}").as_bytes(), u64::MAX).unwrap();
        }
        c
    }

    fn fields_of(c: &Chain) -> Vec<Field> {
        let mut fields = Vec::new();
        encode(&Filter::Chain(c.clone()), &mut fields);
        fields
    }

    #[test]
    fn round_trips_exactly() {
        let c = sample();
        assert_eq!(
            decode(&mut FieldSlice(&fields_of(&c))).unwrap(),
            Filter::Chain(c)
        );
    }

    /// Field indexes of the first link (see the format above).
    const ITEMS: usize = 0;
    const FLAGS: usize = 1;
    const EXPANSION: usize = 2;
    const LINKS: usize = 4;
    const LAYOUT: usize = 5;
    const CAPACITY: usize = 6;
    const ERROR: usize = 7;
    const HASHES: usize = 8;
    const BITS: usize = 9;
    const LINK_ITEMS: usize = 10;

    #[test]
    fn each_tampering_is_refused_by_its_own_check() {
        let c = sample();
        let fields = fields_of(&c);
        for cut in 0..fields.len() {
            assert_eq!(
                decode(&mut FieldSlice(&fields[..cut])),
                Err(DecodeError::Read("truncated")),
                "cut at {cut}"
            );
        }
        let tamper = |at: usize, f: Field| {
            let mut bad = fields.clone();
            bad[at] = f;
            decode(&mut FieldSlice(&bad))
        };
        let u = Field::Unsigned;
        let items = c.items();
        let bits = c.links()[0].bit_count();
        for (at, field, check) in [
            (ITEMS, u(items + 1), DecodeError::ItemSum),
            (FLAGS, u(4), DecodeError::UnknownFlags),
            (FLAGS, u(3), DecodeError::UnknownFlags),
            (EXPANSION, u(0), DecodeError::Expansion),
            (EXPANSION, u(1 << 32), DecodeError::Expansion),
            (LINKS, u(0), DecodeError::LinkCount),
            (LINKS, u(1 << 17), DecodeError::LinkCount),
            (LAYOUT, u(9), DecodeError::UnknownLayout),
            (CAPACITY, u(0), DecodeError::Capacity),
            (ERROR, Field::Double(1.0), DecodeError::ErrorRate),
            (ERROR, Field::Double(f64::NAN), DecodeError::ErrorRate),
            (HASHES, u(0), DecodeError::HashCount),
            (BITS, u(0), DecodeError::BitCount),
            (BITS, u(bits + 1), DecodeError::BitCount),
            (BITS, u(bits - 64), DecodeError::LongPiece),
            (LINK_ITEMS, u(u64::MAX), DecodeError::ItemSum),
            (
                LINK_ITEMS + 1,
                u(3),
                DecodeError::Read("expected a string field"),
            ),
        ] {
            assert_eq!(tamper(at, field.clone()), Err(check), "{at} = {field:?}");
        }
        // A chain that says it has more links than it holds reads the next key's fields: here
        // the end of the input.
        let mut more = fields.clone();
        more[LINKS] = u(c.links().len() as u64 + 1);
        assert_eq!(
            decode(&mut FieldSlice(&more)),
            Err(DecodeError::Read("truncated"))
        );
    }

    /// Re-splits every bit array of an encoded chain into pieces of `sizes` (cycled).
    fn repieced(fields: &[Field], sizes: &[usize]) -> Vec<Field> {
        let mut out = Vec::new();
        let mut pending = Vec::new();
        let flush = |pending: &mut Vec<u8>, out: &mut Vec<Field>| {
            let mut at = 0;
            for &n in sizes.iter().cycle() {
                if at == pending.len() {
                    break;
                }
                let end = at.saturating_add(n).min(pending.len());
                out.push(Field::Bytes(pending[at..end].to_vec()));
                at = end;
            }
            pending.clear();
        };
        for f in fields {
            match f {
                Field::Bytes(b) => pending.extend_from_slice(b),
                other => {
                    flush(&mut pending, &mut out);
                    out.push(other.clone());
                }
            }
        }
        flush(&mut pending, &mut out);
        out
    }

    #[test]
    fn bit_arrays_load_from_pieces_of_any_size() {
        let c = sample();
        let fields = fields_of(&c);
        let c = Filter::Chain(c);
        // One whole piece per link (as 16 MiB pieces of older builds were for small links),
        // and odd sizes that cut words in two.
        for sizes in [&[usize::MAX][..], &[1], &[3, 7, 64]] {
            let split = repieced(&fields, sizes);
            assert_eq!(decode(&mut FieldSlice(&split)).unwrap(), c, "{sizes:?}");
        }
        // An empty piece, or a piece running past its link's end, is refused.
        let mut empty = repieced(&fields, &[8]);
        let at = empty
            .iter()
            .position(|f| matches!(f, Field::Bytes(_)))
            .unwrap();
        empty.insert(at, Field::Bytes(Vec::new()));
        assert_eq!(
            decode(&mut FieldSlice(&empty)),
            Err(DecodeError::EmptyPiece)
        );
        let mut long = fields;
        let at = long
            .iter()
            .position(|f| matches!(f, Field::Bytes(_)))
            .unwrap();
        if let Field::Bytes(b) = &mut long[at] {
            b.push(0);
        }
        assert_eq!(decode(&mut FieldSlice(&long)), Err(DecodeError::LongPiece));
    }

    #[test]
    fn the_largest_link_passes_every_check_but_this_machines_memory() {
        // A link of MAX_LINK_BITS (128 GiB), the most creation allows too: every geometry
        // check passes, and only the memory check refuses it here, before allocating.
        let ram = crate::codec::machine_memory().expect("machine memory");
        assert!(
            ram < MAX_LINK_BITS / 8,
            "this test needs a machine under 128 GiB"
        );
        let mut fields = fields_of(&sample());
        fields[BITS] = Field::Unsigned(MAX_LINK_BITS);
        assert_eq!(
            decode(&mut FieldSlice(&fields)),
            Err(DecodeError::MachineMemory)
        );
        fields[BITS] = Field::Unsigned(MAX_LINK_BITS + 64);
        assert_eq!(decode(&mut FieldSlice(&fields)), Err(DecodeError::BitCount));
    }
}
