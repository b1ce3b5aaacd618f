// The crate's benches are in benches/; the library is empty.
