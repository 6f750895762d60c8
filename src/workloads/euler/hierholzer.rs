//! Sequential Hierholzer, the benchmark's baseline: O(m) with an explicit stack, on a CSR of
//! edge ids (each undirected edge in both rows, a used flag per edge).

use crate::graph::Edge;

/// An Euler circuit from vertex `edges[0].0` as edge ids, or `None` when the walk does not
/// use every edge (the graph is not connected); degrees are assumed even (balanced).
pub fn circuit(n: u64, edges: &[Edge], directed: bool) -> Option<Vec<u64>> {
    let n = n as usize;
    let mut start = vec![0usize; n + 1];
    for &(u, v) in edges {
        start[u as usize + 1] += 1;
        if !directed {
            start[v as usize + 1] += 1;
        }
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut row = vec![0u64; start[n]];
    for (e, &(u, v)) in edges.iter().enumerate() {
        row[fill[u as usize]] = e as u64;
        fill[u as usize] += 1;
        if !directed {
            row[fill[v as usize]] = e as u64;
            fill[v as usize] += 1;
        }
    }
    let mut cursor = start[..n].to_vec();
    let mut used = vec![false; edges.len()];
    let mut out = Vec::with_capacity(edges.len());
    // Stack of (vertex, edge that reached it).
    let first = edges.first()?.0;
    let mut stack = vec![(first, u64::MAX)];
    while let Some(&(v, via)) = stack.last() {
        let vi = v as usize;
        while cursor[vi] < start[vi + 1] && used[row[cursor[vi]] as usize] {
            cursor[vi] += 1;
        }
        if cursor[vi] == start[vi + 1] {
            stack.pop();
            if via != u64::MAX {
                out.push(via);
            }
            continue;
        }
        let e = row[cursor[vi]];
        used[e as usize] = true;
        let (a, b) = edges[e as usize];
        stack.push((if a == v { b } else { a }, e));
    }
    out.reverse();
    (out.len() == edges.len()).then_some(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_circuits_and_refuses_two_pieces() {
        let triangle_and_loop = [(0, 1), (1, 2), (2, 0), (1, 1)];
        let c = super::circuit(3, &triangle_and_loop, false).unwrap();
        assert_eq!(c.len(), 4);
        assert!(super::circuit(6, &[(0, 1), (1, 0), (3, 4), (4, 3)], false).is_none());
        assert_eq!(super::circuit(2, &[(0, 1), (1, 0)], true).unwrap(), [0, 1]);
    }
}
