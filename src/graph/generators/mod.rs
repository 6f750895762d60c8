//! Graph generators other than Kronecker (see each module).
