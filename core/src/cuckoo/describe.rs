//! What a cuckoo filter says of itself: CF.INFO's fields and CF.DEBUG's line, as RedisBloom
//! gives them.

use std::ffi::CStr;

use crate::cuckoo::filter::Cuckoo;

impl Cuckoo {
    /// CF.INFO's fields, in reply order.
    pub fn info_fields(&self) -> [(&'static CStr, i64); 8] {
        [
            (c"Size", self.memory_usage() as i64),
            (c"Number of buckets", self.buckets() as i64),
            (c"Number of filters", self.filter_count() as i64),
            // Signed, as RedisBloom replies it: -1 after an underflow.
            (c"Number of items inserted", self.items() as i64),
            (c"Number of items deleted", self.deletes() as i64),
            (c"Bucket size", i64::from(self.bucket_size())),
            (c"Expansion rate", i64::from(self.expansion())),
            (c"Max iterations", i64::from(self.max_iterations())),
        ]
    }

    /// CF.DEBUG's line: `bktsize:<b> buckets:<n> items:<i> deletes:<d> filters:<f>
    /// max_iterations:<m> expansion:<e>`.
    pub fn debug_line(&self) -> String {
        format!(
            "bktsize:{} buckets:{} items:{} deletes:{} filters:{} max_iterations:{} expansion:{}",
            self.bucket_size(),
            self.buckets(),
            self.items(),
            self.deletes(),
            self.filter_count(),
            self.max_iterations(),
            self.expansion()
        )
    }
}
