//! The bulk commands' blob: the first byte chooses the form (odd: FRAMED), the rest is the
//! blob. A blob that parses must give back exactly its bytes (its lines joined, or its frames
//! re-encoded); a refused FRAMED blob must name a frame that really runs past the end, with
//! everything before it parsing; and every item of a parsed blob, added to a filter, is found.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rsbloom_core::bulk::{self, BlobError, FRAME_HEADER};
use rsbloom_core::{Chain, FilterSpec, Growth, Window};

fuzz_target!(|data: &[u8]| {
    let Some((&form, blob)) = data.split_first() else {
        return;
    };
    let framed = form & 1 == 1;
    match bulk::items(blob, framed) {
        Ok(items) => {
            let count = items.len();
            let items: Vec<&[u8]> = items.collect();
            assert_eq!(items.len(), count, "the count given before the first item");
            check_round_trip(blob, framed, &items);
            check_added_items_are_found(&items);
        }
        Err(e) => {
            assert!(framed, "lines never refuse");
            check_refusal(blob, e);
        }
    }
});

fn check_round_trip(blob: &[u8], framed: bool, items: &[&[u8]]) {
    if framed {
        let mut again = Vec::new();
        for item in items {
            bulk::push_frame(&mut again, item);
        }
        assert_eq!(again, blob);
    } else if blob.is_empty() {
        assert!(items.is_empty());
    } else {
        let body = blob.strip_suffix(b"\n").unwrap_or(blob);
        assert_eq!(items.join(&b'\n'), body);
    }
}

fn check_refusal(blob: &[u8], e: BlobError) {
    let offset = match e {
        BlobError::Truncated { offset, length } => {
            let end = offset as u64 + FRAME_HEADER as u64 + length;
            assert!(end > blob.len() as u64, "the frame fits: {e:?}");
            offset
        }
        BlobError::PartialLength { offset } => {
            assert!(offset + FRAME_HEADER > blob.len(), "the length fits: {e:?}");
            offset
        }
    };
    // Everything before the bad frame is whole frames.
    assert!(bulk::items(&blob[..offset], true).is_ok());
    assert!(e.reply().starts_with("ERR bad FRAMED blob"));
}

fn check_added_items_are_found(items: &[&[u8]]) {
    let spec = FilterSpec {
        error: 0.01,
        capacity: 64,
        growth: Growth::Scaling(2),
        window: Window::Unbounded,
        refresh: true,
    };
    let mut chain = Chain::new(&spec, 7, 1 << 24).expect("a small filter");
    let mut refused = false;
    chain.add_many(items.iter().copied(), 1 << 24, |result| {
        refused |= result.is_err();
        true
    });
    if !refused {
        assert!(items.iter().all(|item| chain.contains(item)));
    }
}
