//! Graph files out: edge lists and Matrix Market, written in parallel.
