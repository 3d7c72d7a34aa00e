//! `rsbloom`: the command-line loader of rsbloom's filters.
//!
//! - `rsbloom load --key seen urls.txt` adds every line of a file (or of standard input) to a
//!   filter through `BF.BULKADD` (`CF.BULKADD` with `--cuckoo`), blobs of `--batch` lines,
//!   `--pipeline` blobs in flight, with a progress bar on a terminal (items, items/s, how many
//!   were new, the time left when the input's size is known) and a plain summary otherwise.
//! - `cat urls | rsbloom dedup --key seen > new-urls` writes to standard output only the lines
//!   the filter had not seen, adding them, in their order.
//!
//! Lines are items byte for byte (without their `\n`), sent FRAMED so that any byte, an empty
//! line too, is an item as it stands. The server is a URL (`redis://`, `rediss://` for TLS,
//! with a user and password as the redis crate takes them), or one node of a Redis Cluster with
//! `--cluster`. A new filter takes the creation options (`--error-rate` and `--capacity`, with
//! `--expansion`, `--nonscaling`, `--window`, `--sliding`); an existing one is used as it is.
//!
//! Exit codes: 0 done; 1 a bad argument or no server; 2 the connection failed during the load
//! (the message says how many lines the server had acknowledged: those are in the filter);
//! 3 the filter refused an item (full, or its memory limit), named by its line.

mod input;
mod server;

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use input::{Batch, Lines};
use server::Server;

#[derive(Parser)]
#[command(
    name = "rsbloom",
    version,
    about = "Fill rsbloom's filters from files of lines"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Adds every line of FILE (standard input without one, or with `-`) to a filter.
    Load(Job),
    /// Writes to standard output the lines of FILE the filter had not seen, adding them.
    Dedup(Job),
}

/// What both subcommands take.
#[derive(Args)]
struct Job {
    /// The lines, one item each; standard input when missing or `-`.
    file: Option<PathBuf>,
    /// The filter's key.
    #[arg(long, short)]
    key: String,
    /// The server: `redis://[user:password@]host:port[/db]`, or `rediss://` for TLS.
    #[arg(
        long,
        short,
        env = "REDIS_URL",
        default_value = "redis://127.0.0.1:6379"
    )]
    url: String,
    /// The URL names a node of a Redis Cluster.
    #[arg(long)]
    cluster: bool,
    /// A cuckoo filter (CF.BULKADD) instead of a Bloom filter (BF.BULKADD).
    #[arg(long)]
    cuckoo: bool,
    /// Items per blob (1,000 to 10,000 keep the server busy without long pauses).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    batch: u32,
    /// Blobs in flight.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pipeline: u32,
    #[command(flatten)]
    create: Create,
    /// No progress bar, only the summary.
    #[arg(long, short)]
    quiet: bool,
}

/// How to create the filter when the key is missing (BF.RESERVE's / CF.RESERVE's options).
#[derive(Args, Clone, Default)]
pub struct Create {
    /// The false-positive rate of a new Bloom filter (with --capacity).
    #[arg(long, requires = "capacity")]
    pub error_rate: Option<f64>,
    /// The items a new filter is sized for.
    #[arg(long)]
    pub capacity: Option<u64>,
    /// A new filter's expansion.
    #[arg(long)]
    pub expansion: Option<u32>,
    /// A new Bloom filter never grows.
    #[arg(long)]
    pub nonscaling: bool,
    /// A new Bloom filter forgets items older than this many seconds.
    #[arg(long, conflicts_with = "sliding")]
    pub window: Option<u64>,
    /// A new Bloom filter remembers only its last `capacity` items.
    #[arg(long)]
    pub sliding: bool,
}

/// What a job ends with.
enum Failure {
    /// No server, or arguments the server refused before any line: exit 1.
    Start(String),
    /// The connection failed after `acked` lines were acknowledged: exit 2.
    Lost { acked: u64, why: String },
    /// The filter refused the item of line `line`: exit 3.
    Refused { line: u64 },
    /// The input could not be read: exit 1.
    Read(String),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let (job, dedup) = match cli.command {
        Command::Load(job) => (job, false),
        Command::Dedup(job) => (job, true),
    };
    match run(&job, dedup) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            let (code, text) = match failure {
                Failure::Start(why) => (1, why),
                Failure::Read(why) => (1, format!("cannot read the input: {why}")),
                Failure::Lost { acked, why } => (
                    2,
                    format!(
                        "the connection failed ({why}); the server had acknowledged the first \
                         {acked} lines, which are in the filter"
                    ),
                ),
                Failure::Refused { line } => (
                    3,
                    format!(
                        "line {line}: the filter refused the item (it is full, or at its memory \
                         limit); the lines before it are in the filter"
                    ),
                ),
            };
            eprintln!("rsbloom: {text}");
            ExitCode::from(code)
        }
    }
}

/// Loads (or deduplicates) the input into the filter.
fn run(job: &Job, dedup: bool) -> Result<(), Failure> {
    let mut lines = Lines::open(job.file.as_deref()).map_err(|e| Failure::Read(e.to_string()))?;
    let mut server = Server::connect(&job.url, job.cluster).map_err(Failure::Start)?;
    server
        .create(&job.key, job.cuckoo, &job.create)
        .map_err(Failure::Start)?;
    let bar = progress_bar(lines.size(), job.quiet);
    let mut out = BufWriter::new(io::stdout().lock());
    let (mut acked, mut new) = (0u64, 0u64);
    let began = Instant::now();
    loop {
        let batches = lines
            .next_batches(job.batch as usize, job.pipeline as usize)
            .map_err(|e| Failure::Read(e.to_string()))?;
        if batches.is_empty() {
            break;
        }
        let answers = server
            .bulkadd(&job.key, job.cuckoo, &batches)
            .map_err(|why| Failure::Lost { acked, why })?;
        for (batch, answer) in batches.iter().zip(&answers) {
            new += take(batch, answer, acked, dedup, &mut out)?;
            acked += batch.len() as u64;
        }
        bar.set_position(lines.read_bytes());
        let rate = acked as f64 / began.elapsed().as_secs_f64().max(1e-9);
        bar.set_message(format!("{acked} items, {rate:.0}/s, {new} new"));
    }
    out.flush().map_err(|e| Failure::Read(e.to_string()))?;
    bar.finish_and_clear();
    let secs = began.elapsed().as_secs_f64();
    eprintln!(
        "rsbloom: {acked} lines into {} ({new} new, {} already there) in {secs:.1} s, {:.0} items/s",
        job.key,
        acked - new,
        acked as f64 / secs.max(1e-9)
    );
    Ok(())
}

/// Reads one blob's answers: counts the new items (writing their lines when deduplicating) and
/// stops at a refused one, whose line number follows the `before` lines already taken.
fn take(
    batch: &Batch,
    answers: &[u8],
    before: u64,
    dedup: bool,
    out: &mut impl Write,
) -> Result<u64, Failure> {
    let mut new = 0;
    for (i, (line, &answer)) in batch.lines().zip(answers).enumerate() {
        match answer {
            b'1' => {
                new += 1;
                if dedup {
                    let written = out.write_all(line).and_then(|()| out.write_all(b"\n"));
                    written.map_err(|e| Failure::Read(format!("standard output: {e}")))?;
                }
            }
            b'0' => {}
            _ => {
                return Err(Failure::Refused {
                    line: before + i as u64 + 1,
                })
            }
        }
    }
    Ok(new)
}

/// The progress bar: bytes of a file of known size with the time left, or a spinner; hidden
/// when standard error is not a terminal (or with `--quiet`).
fn progress_bar(size: Option<u64>, quiet: bool) -> ProgressBar {
    let target = if quiet {
        ProgressDrawTarget::hidden()
    } else {
        ProgressDrawTarget::stderr()
    };
    let (bar, template) = match size {
        Some(size) => (
            ProgressBar::with_draw_target(Some(size), target),
            "{bar:30} {percent}% {msg}, {eta} left",
        ),
        None => (
            ProgressBar::with_draw_target(None, target),
            "{spinner} {msg}",
        ),
    };
    bar.set_style(ProgressStyle::with_template(template).expect("a valid template"));
    bar
}
