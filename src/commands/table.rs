//! The command table: every command's name, handler, flags, ACL categories, arity, key spec
//! and docs. A new command is one line below plus its handler in the file of its family;
//! [`crate::ffi::commands`] turns the table into the commands' registration.

use super::bloom::{add, bulk, debug, exists, info, reserve, scandump};
use super::cuckoo;
use crate::ffi::commands::command_table;

// name => handler, flags, ACL categories (plus `bloom` where the server allows it; `fast`
// for the commands whose cost does not grow with their arguments), arity, key spec, since
// (RedisBloom's version), summary, complexity (k: hash functions per link, n: items given,
// l: links in the filter)
command_table! {
    // The commands whose replies a client-side cache must not keep: the introspection ones
    // (RedisBloom 8 gives its `*.INFO`, `*.DEBUG` and `*.SCANDUMP` the same tip). Every server
    // since Redis 7.0 takes command tips; clients read them from COMMAND INFO / COMMAND DOCS.
    dont_cache: [
        "bf.info",
        "bf.debug",
        "bf.scandump",
        "cf.info",
        "cf.debug",
        "cf.scandump",
    ];
    "bf.reserve" => reserve::reserve, "write deny-oom", "write fast", -4, INSERT, c"1.0.0",
        c"Creates an empty Bloom filter", c"O(1)";
    "bf.add" => add::add, "write deny-oom", "write fast", 3, INSERT, c"1.0.0",
        c"Adds an item, creating the filter if the key is missing", c"O(k l)";
    "bf.madd" => add::madd, "write deny-oom", "write", -3, INSERT, c"1.0.0",
        c"Adds items, creating the filter if the key is missing", c"O(k l n)";
    "bf.exists" => exists::exists, "readonly fast", "read fast", 3, READ, c"1.0.0",
        c"Whether an item may have been added", c"O(k l)";
    "bf.scandump" => scandump::scandump, "readonly fast", "read", 3, READ, c"1.0.0",
        c"Returns the next chunk of an incremental dump of a filter",
        c"O(n), n the bytes of the chunk (at most 16 MiB)";
    "bf.loadchunk" => scandump::loadchunk, "write deny-oom", "write", 4, UPDATE, c"1.0.0",
        c"Restores a filter from a chunk of BF.SCANDUMP", c"O(n), n the bytes of the chunk";
    "bf.load" => scandump::load, "write deny-oom", "write", 3, INSERT, c"1.0.0",
        c"Creates a valkey-bloom filter from valkey-bloom's BF.LOAD blob (its AOF form)",
        c"O(n), n the bytes of the blob";
    "bf.mexists" => exists::mexists, "readonly fast", "read", -3, READ, c"1.0.0",
        c"Whether each item may have been added", c"O(k l n)";
    "bf.insert" => add::insert, "write deny-oom", "write", -4, INSERT, c"1.0.0",
        c"Adds items, creating the filter with the given options if the key is missing",
        c"O(k l n)";
    "bf.bulkadd" => bulk::bulkadd, "write deny-oom", "write", -3, INSERT, c"2.8.2",
        c"Adds the items of one blob (newline-separated, or FRAMED), creating the filter if the key is missing; one byte per item",
        c"O(k l n), n the items of the blob";
    "bf.bulkexists" => bulk::bulkexists, "readonly", "read", -3, READ, c"2.8.2",
        c"Whether each item of one blob may have been added; one byte per item",
        c"O(k l n), n the items of the blob";
    "bf.info" => info::info, "readonly fast", "read fast", -2, METADATA, c"1.0.0",
        c"Returns a filter's capacity, size, links, items and expansion", c"O(l)";
    "bf.card" => info::card, "readonly fast", "read fast", 2, METADATA, c"2.4.4",
        c"Returns the number of items added to a filter", c"O(1)";
    "bf.debug" => debug::debug, "readonly fast", "read", 2, METADATA, c"1.0.0",
        c"Returns the item count and each link's geometry", c"O(l)";
    // Cuckoo filters (k: sub-filters, b: bucket size, n: items given, m: max iterations).
    "cf.reserve" => cuckoo::reserve::reserve, "write deny-oom", "write fast", -3, INSERT, c"1.0.0",
        c"Creates an empty cuckoo filter", c"O(1)";
    "cf.add" => cuckoo::add::add, "write deny-oom", "write fast", 3, INSERT, c"1.0.0",
        c"Adds an item (duplicates too), creating the filter if the key is missing",
        c"O(k b + m)";
    "cf.addnx" => cuckoo::add::addnx, "write deny-oom", "write fast", 3, INSERT, c"1.0.0",
        c"Adds an item unless it may be present, creating the filter if the key is missing",
        c"O(k b + m)";
    "cf.insert" => cuckoo::add::insert, "write deny-oom", "write", -4, INSERT, c"1.0.0",
        c"Adds items, creating the filter with the given capacity if the key is missing",
        c"O(n (k b + m))";
    "cf.insertnx" => cuckoo::add::insertnx, "write deny-oom", "write", -4, INSERT, c"1.0.0",
        c"Adds each item unless it may be present, creating the filter if the key is missing",
        c"O(n (k b + m))";
    "cf.bulkadd" => cuckoo::bulk::bulkadd, "write deny-oom", "write", -3, INSERT, c"2.8.2",
        c"Adds the items of one blob (newline-separated, or FRAMED), creating the filter if the key is missing; one byte per item",
        c"O(n (k b + m)), n the items of the blob";
    "cf.bulkexists" => cuckoo::bulk::bulkexists, "readonly", "read", -3, READ, c"2.8.2",
        c"Whether each item of one blob may be in the filter; one byte per item",
        c"O(n k b), n the items of the blob";
    "cf.exists" => cuckoo::exists::exists, "readonly fast", "read fast", 3, READ, c"1.0.0",
        c"Whether an item may be in the filter", c"O(k b)";
    "cf.mexists" => cuckoo::exists::mexists, "readonly fast", "read", -3, READ, c"1.0.0",
        c"Whether each item may be in the filter", c"O(n k b)";
    "cf.count" => cuckoo::exists::count, "readonly fast", "read fast", 3, READ, c"1.0.0",
        c"Counts the copies of an item's fingerprint (may over-count)", c"O(k b)";
    "cf.del" => cuckoo::delete::del, "write fast", "write fast", 3, UPDATE, c"1.0.0",
        c"Deletes one copy of an item", c"O(k b), compaction O(size) when it runs";
    "cf.compact" => cuckoo::delete::compact, "write fast", "write", 2, UPDATE, c"1.0.0",
        c"Moves fingerprints into older sub-filters and drops an emptied newest one",
        c"O(size of the filter)";
    "cf.info" => cuckoo::info::info, "readonly fast", "read fast", 2, METADATA, c"1.0.0",
        c"Returns a cuckoo filter's size, buckets, sub-filters, items, deletes and parameters",
        c"O(1)";
    "cf.debug" => cuckoo::debug::debug, "readonly fast", "read", 2, METADATA, c"1.0.0",
        c"Returns a cuckoo filter's parameters and counts in one line", c"O(1)";
    "cf.scandump" => cuckoo::scandump::scandump, "readonly fast", "read", 3, READ, c"1.0.0",
        c"Returns the next chunk of an incremental dump of a cuckoo filter",
        c"O(n), n the bytes of the chunk (at most 16 MiB)";
    "cf.loadchunk" => cuckoo::scandump::loadchunk, "write deny-oom", "write", 4, UPDATE, c"1.0.0",
        c"Restores a cuckoo filter from a chunk of CF.SCANDUMP", c"O(n), n the bytes of the chunk";
}
