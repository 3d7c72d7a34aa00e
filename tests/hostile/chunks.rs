//! LOADCHUNK fuzzing: mutated headers and chunks of real SCANDUMP streams.

use super::*;

// ---------------------------------------------------------------------------------------------
// LOADCHUNK fuzzing

fn mutate(rng: &mut Rng, data: &[u8]) -> Vec<u8> {
    let mut m = data.to_vec();
    match rng.below(5) {
        0 => m.truncate(rng.below(data.len() + 1)),
        1 | 2 => {
            for _ in 0..=rng.below(3) {
                if !m.is_empty() {
                    let i = rng.below(m.len());
                    m[i] ^= 1 << rng.below(8);
                }
            }
        }
        3 => {
            for _ in 0..=rng.below(4) {
                if !m.is_empty() {
                    let i = rng.below(m.len());
                    m[i] = rng.next() as u8;
                }
            }
        }
        _ => {
            let n = rng.below(32);
            m.extend(rng.bytes(n));
        }
    }
    m
}

fn allowed_dump_error(e: &str) -> bool {
    e == texts::BAD_DATA
        || e == texts::NO_LINK
        || e == texts::CHUNK_TOO_BIG
        || e.starts_with("ERR filter would need")
}

#[test]
fn loadchunk_fuzzed_headers_and_chunks() {
    // a small per-filter limit, so that a header claiming big links cannot take much memory
    let server = Server::with_args(&["MAX_FILTER_BYTES", "4194304"], &[]);
    let mut con = server.conn();
    setup_sentinels(&mut con);
    assert_eq!(
        run(
            &mut con,
            &["BF.RESERVE", "src", "0.01", "40", "EXPANSION", "2"]
        ),
        ok()
    );
    let items: Vec<String> = (0..200).map(|i| format!("item{i}")).collect();
    let mut madd = vec!["BF.MADD".to_string(), "src".into()];
    madd.extend(items.iter().cloned());
    run(&mut con, &madd);
    // and one NONSCALING filter, whose header differs
    assert_eq!(
        run(
            &mut con,
            &["BF.RESERVE", "src2", "0.001", "300", "NONSCALING"]
        ),
        ok()
    );
    run(&mut con, &["BF.MADD", "src2", "a", "b", "c"]);
    let streams = [scandump(&mut con, "src"), scandump(&mut con, "src2")];
    assert!(info_int(&info(&mut con, "src"), "Number of filters") >= 3);

    // the unmutated stream loads and reads back
    let (header, chunks) = &streams[0];
    assert_eq!(
        run(&mut con, &[&b"BF.LOADCHUNK"[..], b"copy", b"1", header]),
        ok()
    );
    for (it, data) in chunks {
        assert_eq!(
            run(
                &mut con,
                &[
                    &b"BF.LOADCHUNK"[..],
                    b"copy",
                    it.to_string().as_bytes(),
                    data
                ]
            ),
            ok()
        );
    }
    let mut mexists = vec!["BF.MEXISTS".to_string(), "copy".into()];
    mexists.extend(items.iter().cloned());
    assert_eq!(run(&mut con, &mexists), ints(&[1; 200]));

    let mut rng = Rng(0x5eed);
    let mut headers_tried = 0;
    let mut headers_accepted = 0;
    let mut mutated: Vec<Vec<u8>> = Vec::new();
    for (header, _) in &streams {
        for len in 0..header.len() {
            mutated.push(header[..len].to_vec());
        }
        for _ in 0..1200 {
            mutated.push(mutate(&mut rng, header));
        }
    }
    for _ in 0..200 {
        let n = rng.below(400);
        mutated.push(rng.bytes(n));
    }
    for (n, m) in mutated.iter().enumerate() {
        let stream = &streams[n % 2];
        let replies = pipeline(
            &mut con,
            &[
                cmd(&[b"DEL", b"fz"]),
                cmd(&[b"BF.LOADCHUNK", b"fz", b"1", m]),
            ],
        );
        headers_tried += 1;
        match &replies[1] {
            Reply::Status(s) if s == "OK" => {
                headers_accepted += 1;
                assert_consistent(&mut con, "fz", &format!("header #{n}"));
                // feed it chunks: the real ones at their iterators, some mutated
                for (it, data) in &stream.1 {
                    let data = if rng.below(2) == 0 {
                        data.clone()
                    } else {
                        mutate(&mut rng, data)
                    };
                    match run(
                        &mut con,
                        &[
                            &b"BF.LOADCHUNK"[..],
                            b"fz",
                            it.to_string().as_bytes(),
                            &data,
                        ],
                    ) {
                        Reply::Status(_) => {}
                        Reply::Err(e) => {
                            assert!(allowed_dump_error(&e), "chunk after header #{n}: {e}")
                        }
                        other => panic!("chunk after header #{n}: {other:?}"),
                    }
                }
                assert_consistent(&mut con, "fz", &format!("header #{n} + chunks"));
            }
            Reply::Err(e) => assert!(allowed_dump_error(e), "header #{n}: {e}"),
            other => panic!("header #{n}: {other:?}"),
        }
        if n % 50 == 0 {
            assert_sentinels(
                &pipeline(&mut con, &sentinel_checks()),
                &format!("header #{n}"),
            );
        }
    }

    // chunks: mutated data at real and random iterators into a loaded copy
    let mut chunks_tried = 0;
    let (header, chunks) = &streams[0];
    let total: i64 = chunks.iter().map(|(_, d)| d.len() as i64).sum();
    assert_eq!(
        run(&mut con, &[&b"BF.LOADCHUNK"[..], b"cz", b"1", header]),
        ok()
    );
    for n in 0..1500 {
        let (it, data) = &chunks[rng.below(chunks.len())];
        let data = mutate(&mut rng, data);
        let it = match rng.below(10) {
            0..=5 => *it,
            6..=8 => rng.below(total as usize + 200) as i64 - 5,
            _ => rng.next() as i64,
        };
        match run(
            &mut con,
            &[
                &b"BF.LOADCHUNK"[..],
                b"cz",
                it.to_string().as_bytes(),
                &data,
            ],
        ) {
            Reply::Status(_) => {}
            Reply::Err(e) => assert!(allowed_dump_error(&e), "chunk #{n} at {it}: {e}"),
            other => panic!("chunk #{n}: {other:?}"),
        }
        chunks_tried += 1;
        if n % 100 == 0 {
            assert_consistent(&mut con, "cz", &format!("chunk #{n}"));
            assert_sentinels(
                &pipeline(&mut con, &sentinel_checks()),
                &format!("chunk #{n}"),
            );
        }
    }
    assert_consistent(&mut con, "cz", "after the chunks");
    assert_sentinels(&pipeline(&mut con, &sentinel_checks()), "LOADCHUNK fuzzing");
    println!(
        "LOADCHUNK: {headers_tried} mutated headers ({headers_accepted} accepted), {chunks_tried} mutated chunks"
    );
}
