//! The option bits of a Bloom key's SCANDUMP header, RedisBloom's and rsbloom's dialects
//! together: one word, one table. The dispatch that reads them is [`crate::scandump`]; each
//! kind's header writer and reader uses the bits of its dialect.

/// RedisBloom option: sizes are not rounded to a power of two.
pub const OPT_NOROUND: u32 = 1;
/// RedisBloom option: `entries` counts bits (legacy).
pub const OPT_ENTS_IS_BITS: u32 = 2;
/// RedisBloom option: 64-bit hashing, which every filter since 2018 has.
pub const OPT_FORCE64: u32 = 4;
/// RedisBloom option: the chain never grows.
pub const OPT_NONSCALING: u32 = 8;
/// rsbloom's own header: a trailer with the seed and the link layouts follows.
pub const OPT_RSBLOOM: u32 = 0x100;
/// rsbloom's window dialect (with [`OPT_RSBLOOM`]): a window filter's fields follow.
pub const OPT_WINDOW: u32 = 0x200;
/// With [`OPT_WINDOW`]: the blocked layout, whose ring's bits come first.
pub const OPT_RING: u32 = 0x400;
/// With [`OPT_WINDOW`]: the rotating layout, whose own fields follow instead.
pub const OPT_ROTATING: u32 = 0x800;
/// With [`OPT_ROTATING`]: the `NOREFRESH` mode.
pub const OPT_NOREFRESH: u32 = 0x2000;
/// Every option bit RedisBloom defines.
pub const REDISBLOOM_OPTIONS: u32 = OPT_NOROUND | OPT_ENTS_IS_BITS | OPT_FORCE64 | OPT_NONSCALING;
/// A valkey-bloom filter's dialect (with [`OPT_RSBLOOM`]): valkey-bloom's fields follow.
pub const OPT_VALKEY: u32 = 0x1000;
/// A growing filter's dialect (with [`OPT_RSBLOOM`]): its fields follow.
pub const OPT_GROWING: u32 = 0x4000;
/// The options of a growing filter's header (the chunk layout).
pub const GROWING_OPTIONS: u32 = OPT_RSBLOOM | OPT_GROWING;
/// With [`OPT_GROWING`]: the one-line layout, whose own fields follow instead.
pub const OPT_LINES: u32 = 0x8000;
/// The options of a one-line growing filter's header.
pub const LINES_OPTIONS: u32 = GROWING_OPTIONS | OPT_LINES;
/// The options of a valkey-bloom filter's header.
pub const VALKEY_OPTIONS: u32 = OPT_RSBLOOM | OPT_VALKEY;
/// The options of a window filter's header of the first layout (with [`OPT_RING`] in the
/// blocked layout).
pub const WINDOW_OPTIONS: u32 = OPT_NOROUND | OPT_FORCE64 | OPT_RSBLOOM | OPT_WINDOW;
/// The options of a rotating window filter's header (with [`OPT_NOREFRESH`] in that mode).
pub const ROTATING_OPTIONS: u32 = WINDOW_OPTIONS | OPT_ROTATING;
/// The fields every Bloom header starts with: items, links (or slices), options, expansion.
pub(crate) const COMMON_HEADER: usize = 20;
