//! Prints the model behind docs/growing.md's "one line a lookup" paragraph: what a growing
//! filter of fixed-size buckets (one or two cache lines each, addressed with no table, as linear
//! hashing's buckets are) would cost in memory at 1%, and how many lookups would read a second
//! line because their bucket overflowed, by the adds a bucket holds on average.
//! `cargo run --release -p rsbloom-core --example growing_buckets`
//!
//! A bucket's load is Poisson (items hashed uniformly). Under plain linear hashing a bucket not
//! yet split at the current level holds twice a split one's mean; with Larson's partial
//! expansions (groups of two buckets grow to three, then to four) the spread is 1.5 then 1.33.
//! A bucket holds `capacity` entries; the rest overflow at `OVERFLOW_ENTRY_BITS` each, plus
//! `OVERFLOW_LINK_BITS` for the bucket that overflows, and its lookups read a second line.

/// A slot at 1%: 11 remainder bits and the marker (`design::shape_for(0.01)`).
const SLOT_BITS: f64 = 12.0;
/// An overflowing entry, kept elsewhere: its slot and its cell.
const OVERFLOW_ENTRY_BITS: f64 = 16.0;
/// What finds a bucket's overflow.
const OVERFLOW_LINK_BITS: f64 = 64.0;
/// A filter reserved for the items at 1%, MEMORY USAGE per item (bench/GROWING.md).
const RESERVED_BITS: f64 = 12.8;

/// Poisson probabilities of 0..n for mean `mean`.
fn poisson(mean: f64, n: usize) -> Vec<f64> {
    let mut p = vec![(-mean).exp()];
    for k in 1..n {
        p.push(p[k - 1] * mean / k as f64);
    }
    p
}

/// A bucket of `bits` bits and the entries it holds (`new`: a unary header bit per cell and
/// per entry, a slot per entry); `at` gives its expected bits, overflow included, and the
/// chance it overflows at a mean load.
struct Bucket {
    bits: f64,
    capacity: usize,
}

impl Bucket {
    fn new(bits: f64, cells: f64) -> Bucket {
        let capacity = ((bits - cells) / (SLOT_BITS + 1.0)).floor() as usize;
        Bucket { bits, capacity }
    }

    /// (expected bits, chance of overflow) at mean load `mean`.
    fn at(&self, mean: f64) -> (f64, f64) {
        let (mut bits, mut over) = (0.0, 0.0);
        for (k, p) in poisson(mean, 8 * self.capacity).into_iter().enumerate() {
            let extra = k.saturating_sub(self.capacity) as f64;
            bits += p * self.bits;
            if extra > 0.0 {
                bits += p * (extra * OVERFLOW_ENTRY_BITS + OVERFLOW_LINK_BITS);
                over += p;
            }
        }
        (bits, over)
    }
}

/// Bits per item and the share of lookups reading a second line, averaged over the moments of
/// a growth cycle: groups of `m` buckets grow to `m + 1` for each `m` in `stages` (`[1]` is
/// plain linear hashing: a bucket splits in two). `per_bucket` adds a bucket on average.
fn model(bucket: &Bucket, per_bucket: f64, stages: &[u32]) -> (f64, f64) {
    const MOMENTS: u32 = 64;
    let (mut bits, mut second, mut n) = (0.0, 0.0, 0.0);
    for &m in stages {
        let m = f64::from(m);
        for i in 0..MOMENTS {
            // A fraction f of the groups has grown (per group: m + f buckets on average,
            // per_bucket × (m + f) items); a group not grown yet holds `mean` a bucket, a
            // grown one spreads as many over m + 1 buckets.
            let f = (f64::from(i) + 0.5) / f64::from(MOMENTS);
            let buckets = m + f;
            let mean = per_bucket * buckets / m;
            let grown_mean = mean * m / (m + 1.0);
            let (b_old, o_old) = bucket.at(mean);
            let (b_new, o_new) = bucket.at(grown_mean);
            bits += (b_old * (1.0 - f) * m + b_new * f * (m + 1.0)) / (per_bucket * buckets);
            // A lookup lands in a grown group with odds f.
            second += o_old * (1.0 - f) + o_new * f;
            n += 1.0;
        }
    }
    (bits / n, second / n)
}

fn main() {
    println!("| buckets | growth | adds a bucket holds on average | bits per item | × reserved | lookups reading a second line |");
    println!("|---|---|---:|---:|---:|---:|");
    let schemes: [(&str, &[u32]); 2] = [
        ("linear hashing (1 -> 2)", &[1]),
        ("partial expansions (2 -> 3 -> 4)", &[2, 3]),
    ];
    for (bits, cells) in [(512.0, 32.0), (1024.0, 64.0)] {
        let bucket = Bucket::new(bits, cells);
        for (name, stages) in schemes {
            let from = bucket.capacity * 11 / 20;
            for per_bucket in (from..=bucket.capacity).step_by(bucket.capacity / 18) {
                let (per_item, second) = model(&bucket, per_bucket as f64, stages);
                println!(
                    "| {bits} bits, {} entries | {name} | {per_bucket} | {per_item:.1} | {:.2} | {:.1}% |",
                    bucket.capacity,
                    per_item / RESERVED_BITS,
                    second * 100.0
                );
            }
        }
    }
}
