//! What a value's allocations really take from the allocator: jemalloc's size classes (the
//! allocator of Redis and Valkey builds), so `MEMORY USAGE` says what a key adds to
//! `used_memory` instead of the bytes asked for (a small filter's 144-byte bit array takes a
//! 160-byte block; a 21.8 MB window a 24 MB one).

/// The bytes jemalloc hands out for a request of `requested` bytes: 8, then multiples of 16 up
/// to 128, then four classes per doubling (160, 192, 224, 256, 320, …), large ones included.
pub fn allocated(requested: usize) -> u64 {
    let bytes = requested as u64;
    match bytes {
        0 => 0,
        1..=8 => 8,
        9..=128 => bytes.div_ceil(16) * 16,
        _ => {
            let lg = 63 - u64::from((bytes - 1).leading_zeros());
            let step = 1u64 << (lg - 2);
            bytes.div_ceil(step).saturating_mul(step)
        }
    }
}

/// What the server allocates for a module value beside the module's own blocks (its object
/// header and module-value record, 16 bytes each), which `MEMORY USAGE` counts only if the
/// module's figure does.
pub const SERVER_VALUE_BYTES: u64 = 32;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jemalloc_size_classes() {
        let classes: Vec<u64> = [
            0, 1, 8, 9, 16, 17, 48, 100, 128, 129, 144, 160, 161, 224, 225,
        ]
        .into_iter()
        .map(allocated)
        .collect();
        assert_eq!(
            classes,
            [0, 8, 8, 16, 16, 32, 48, 112, 128, 160, 160, 160, 192, 224, 256]
        );
        assert_eq!(allocated(257), 320);
        assert_eq!(allocated(1024), 1024);
        assert_eq!(allocated(1025), 1280);
        assert_eq!(allocated(21_846_576 - 100), 24 << 20);
        assert_eq!(allocated(usize::MAX), u64::MAX);
    }
}
