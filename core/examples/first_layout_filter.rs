//! Writes the SCANDUMP stream (records of the next iterator, u64 little-endian, the chunk's
//! length, u32 little-endian, and the chunk) of an empty window filter of the first layout
//! (age-partitioned), which no command creates any more: `make bench` loads it with
//! BF.LOADCHUNK to measure that layout beside the rotating one.
//! `cargo run --release -p rsbloom-core --example first_layout_filter -- <error> <capacity>
//! <SLIDING | seconds> > stream`

use std::io::Write;

use rsbloom_core::window::partitioned::Sliding;
use rsbloom_core::{scandump, Filter, FilterSpec, Growth, Window};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [error, capacity, window] = &args[..] else {
        panic!("usage: first_layout_filter <error> <capacity> <SLIDING | seconds>");
    };
    let window = match window.as_str() {
        "SLIDING" => Window::Count,
        s => Window::Time {
            seconds: s.parse().expect("seconds"),
        },
    };
    let spec = FilterSpec {
        error: error.parse().expect("an error rate"),
        capacity: capacity.parse().expect("a capacity"),
        growth: match window {
            Window::Count => Growth::Fixed,
            _ => Growth::Scaling(2),
        },
        window,
        refresh: true,
    };
    let filter = Filter::from(Sliding::new(&spec, 0x6669_7273, u64::MAX).expect("a filter"));
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let header = scandump::header(&filter);
    let records = std::iter::once((1i64, header.into())).chain(scandump::chunks(&filter));
    for (next, data) in records {
        out.write_all(&(next as u64).to_le_bytes()).expect("stdout");
        out.write_all(&(data.len() as u32).to_le_bytes())
            .expect("stdout");
        out.write_all(&data).expect("stdout");
    }
}
