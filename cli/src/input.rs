//! The input: lines of a file or of standard input, read in batches, each batch one FRAMED
//! blob (every item preceded by its length, 4 bytes little-endian), so that any line, an empty
//! one too, is an item byte for byte.

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

/// One blob's lines.
pub struct Batch {
    /// The FRAMED blob.
    blob: Vec<u8>,
    /// Where each line starts in the blob (after its length).
    starts: Vec<usize>,
}

impl Batch {
    /// The blob to send.
    pub fn blob(&self) -> &[u8] {
        &self.blob
    }

    /// How many lines it holds.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Its lines, in order.
    pub fn lines(&self) -> impl Iterator<Item = &[u8]> {
        self.starts.iter().map(|&start| {
            let length = u32::from_le_bytes(self.blob[start - 4..start].try_into().unwrap());
            &self.blob[start..start + length as usize]
        })
    }
}

/// The input's lines.
pub struct Lines {
    reader: Box<dyn BufRead>,
    size: Option<u64>,
    read: u64,
    line: Vec<u8>,
}

impl Lines {
    /// A file's lines, or standard input's for `None` or `-`.
    pub fn open(path: Option<&Path>) -> io::Result<Self> {
        let (reader, size): (Box<dyn BufRead>, _) = match path {
            Some(path) if path != Path::new("-") => {
                let file = File::open(path)?;
                let size = file
                    .metadata()
                    .ok()
                    .filter(|m| m.is_file())
                    .map(|m| m.len());
                (Box::new(BufReader::with_capacity(1 << 20, file)), size)
            }
            _ => (
                Box::new(BufReader::with_capacity(1 << 20, io::stdin().lock())),
                None,
            ),
        };
        Ok(Lines {
            reader,
            size,
            read: 0,
            line: Vec::new(),
        })
    }

    /// The input's size in bytes, when it is a file.
    pub fn size(&self) -> Option<u64> {
        self.size
    }

    /// Bytes read so far.
    pub fn read_bytes(&self) -> u64 {
        self.read
    }

    /// Up to `count` batches of up to `per_batch` lines each; none at the end of the input.
    pub fn next_batches(&mut self, per_batch: usize, count: usize) -> io::Result<Vec<Batch>> {
        let mut batches = Vec::with_capacity(count);
        while batches.len() < count {
            let batch = self.next_batch(per_batch)?;
            if batch.len() == 0 {
                break;
            }
            batches.push(batch);
        }
        Ok(batches)
    }

    fn next_batch(&mut self, per_batch: usize) -> io::Result<Batch> {
        let mut batch = Batch {
            blob: Vec::new(),
            starts: Vec::with_capacity(per_batch),
        };
        while batch.len() < per_batch {
            self.line.clear();
            let n = self.reader.read_until(b'\n', &mut self.line)?;
            if n == 0 {
                break;
            }
            self.read += n as u64;
            let line = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
            let length = u32::try_from(line.len())
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "a line over 4 GiB"))?;
            batch.blob.extend_from_slice(&length.to_le_bytes());
            batch.starts.push(batch.blob.len());
            batch.blob.extend_from_slice(line);
        }
        Ok(batch)
    }
}
