//! Each reader on small hand-written files, and each malformed case giving its one line.

use super::super::ranks::Serial;
use std::path::Path;

fn read(path: &Path, free: &[i64]) -> crate::error::Result<crate::mesh::Mesh> {
    super::read(path, free, &Serial)
}
use std::path::PathBuf;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "tessera-mesh-readers-{}-{name}",
        std::process::id()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn put(d: &std::path::Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = d.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// The error line reading `path` gives.
fn error_of(path: &std::path::Path) -> String {
    match read(path, &[]) {
        Ok(_) => panic!("{} read without error", path.display()),
        Err(e) => e.to_string(),
    }
}

fn assert_mentions(msg: &str, needles: &[&str]) {
    assert!(!msg.contains('\n'), "not one line: {msg}");
    for n in needles {
        assert!(msg.contains(n), "'{msg}' lacks '{n}'");
    }
}

const TWO_TETS_NODE: &str =
    "# two tets\n5 3 0 1\n1 0 0 0 1\n2 1 0 0 1\n3 0 1 0 1\n4 0 0 1 0\n5 1 1 1 0\n";
const TWO_TETS_ELE: &str = "2 4 0\n1 1 2 3 4\n2 2 3 4 5\n";

#[test]
fn node_ele_one_and_zero_based_with_markers() {
    let d = dir("nodeele");
    put(&d, "a.node", TWO_TETS_NODE.as_bytes());
    let path = put(&d, "a.ele", TWO_TETS_ELE.as_bytes());
    let m = read(&path, &[]).unwrap();
    assert_eq!((m.dim, m.num_nodes(), m.num_cells()), (3, 5, 2));
    assert_eq!(m.cells, vec![0, 1, 2, 3, 1, 2, 3, 4]);
    assert_eq!(m.fixed, vec![true, true, true, false, false]);
    // Freeing patch 1 frees those nodes.
    assert_eq!(read(&path, &[1]).unwrap().fixed, vec![false; 5]);
    // Triangle, 0-based, no markers: the boundary from faces of one cell.
    put(&d, "t.node", b"4 2 0 0\n0 0 0\n1 1 0\n2 0 1\n3 0.3 0.3\n");
    let path = put(&d, "t.ele", b"3 3 0\n0 0 1 3\n1 1 2 3\n2 2 0 3\n");
    let m = read(&path, &[]).unwrap();
    assert_eq!((m.dim, m.num_cells()), (2, 3));
    assert_eq!(m.fixed, vec![true, true, true, false]);
}

#[test]
fn node_ele_malformed() {
    let d = dir("nodeele-bad");
    put(
        &d,
        "count.node",
        b"6 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n5 1 1 1\n",
    );
    put(&d, "count.ele", TWO_TETS_ELE.as_bytes());
    let msg = error_of(&d.join("count.ele"));
    assert_mentions(&msg, &["count.node", "5 nodes", "promises 6"]);
    put(&d, "range.node", TWO_TETS_NODE.as_bytes());
    put(&d, "range.ele", b"2 4 0\n1 1 2 3 4\n2 2 3 4 9\n");
    assert_mentions(
        &error_of(&d.join("range.ele")),
        &["range.ele:3", "node 9 out of range", "expected 1..5"],
    );
    put(
        &d,
        "flat.node",
        b"4 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 1 1 0\n",
    );
    put(&d, "flat.ele", b"1 4 0\n1 1 2 3 4\n");
    assert_mentions(
        &error_of(&d.join("flat.ele")),
        &["flat.ele:2", "degenerate"],
    );
    put(&d, "inv.node", TWO_TETS_NODE.as_bytes());
    put(&d, "inv.ele", b"2 4 0\n1 2 1 3 4\n2 2 3 4 5\n");
    assert_mentions(
        &error_of(&d.join("inv.ele")),
        &["inv.ele:2", "inverted", "expected positively oriented"],
    );
    for (stem, from, to, needles) in [
        (
            "nan",
            "\n5 1 1 1",
            "\n5 1 nan 1",
            &["nan.node:7", "node 5", "'nan' is not finite"][..],
        ),
        (
            "inf",
            "\n2 1 0 0",
            "\n2 inf 0 0",
            &["inf.node:4", "node 2", "'inf' is not finite"],
        ),
        (
            "huge",
            "\n3 0 1 0",
            "\n3 0 1e300 0",
            &[
                "huge.node:5",
                "node 3",
                "'1e300' is too large",
                "-1e40 to 1e40",
            ],
        ),
    ] {
        put(
            &d,
            &format!("{stem}.node"),
            TWO_TETS_NODE.replace(from, to).as_bytes(),
        );
        put(&d, &format!("{stem}.ele"), TWO_TETS_ELE.as_bytes());
        assert_mentions(&error_of(&d.join(format!("{stem}.ele"))), needles);
    }
    put(&d, "zero.node", b"0 3 0 0\n");
    put(&d, "zero.ele", TWO_TETS_ELE.as_bytes());
    assert_mentions(
        &error_of(&d.join("zero.ele")),
        &["zero.node:1", "node count 0", "at least one"],
    );
    put(&d, "quad.node", TWO_TETS_NODE.as_bytes());
    put(&d, "quad.ele", b"1 10 0\n1 1 2 3 4 5 1 2 3 4 5\n");
    assert_mentions(
        &error_of(&d.join("quad.ele")),
        &["quad.ele:1", "10 corners", "expected 4"],
    );
}

const MSH2: &str = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n5\n10 0 0 0\n20 1 0 0\n30 0 1 0\n40 0 0 1\n50 1 1 1\n$EndNodes\n$Elements\n3\n1 2 2 7 1 10 20 30\n2 4 2 1 1 10 20 30 40\n3 4 2 1 1 20 30 40 50\n$EndElements\n";

#[test]
fn msh2_with_physical_groups() {
    let d = dir("msh2");
    let m = read(&put(&d, "a.msh", MSH2.as_bytes()), &[]).unwrap();
    assert_eq!((m.dim, m.num_nodes(), m.num_cells()), (3, 5, 2));
    assert_eq!(m.fixed, vec![true, true, true, false, false]);
    let bad_type = MSH2.replace(
        "3 4 2 1 1 20 30 40 50",
        "3 11 2 1 1 20 30 40 50 10 20 30 40 50 10",
    );
    assert_mentions(
        &error_of(&put(&d, "t.msh", bad_type.as_bytes())),
        &["t.msh:16", "unsupported element type 11"],
    );
    let bad_node = MSH2.replace("3 4 2 1 1 20 30 40 50", "3 4 2 1 1 20 30 40 60");
    assert_mentions(
        &error_of(&put(&d, "n.msh", bad_node.as_bytes())),
        &["n.msh:16", "node 60 out of range"],
    );
    let short = MSH2.replace("$Nodes\n5\n", "$Nodes\n6\n");
    assert_mentions(
        &error_of(&put(&d, "c.msh", short.as_bytes())),
        &["c.msh:11", "$EndNodes", "promises 6"],
    );
    // Coordinates not finite or too large, and a tag count past usize's range.
    for (name, text, needles) in [
        (
            "nan.msh",
            MSH2.replace("50 1 1 1", "50 nan 1 1"),
            &["nan.msh:10", "node 50", "'nan' is not finite"][..],
        ),
        (
            "inf.msh",
            MSH2.replace("20 1 0 0", "20 1 -inf 0"),
            &["inf.msh:7", "node 20", "'-inf' is not finite"],
        ),
        (
            "big.msh",
            MSH2.replace("40 0 0 1", "40 0 0 1e999"),
            &["big.msh:9", "node 40", "'1e999' is not finite"],
        ),
        (
            "huge.msh",
            MSH2.replace("40 0 0 1", "40 0 0 -1.5e41"),
            &[
                "huge.msh:9",
                "node 40",
                "'-1.5e41' is too large",
                "-1e40 to 1e40",
            ],
        ),
        (
            "tags.msh",
            MSH2.replace("2 4 2 1 1", "2 4 18446744073709551615 1 1"),
            &["tags.msh:15", "9 values", "18446744073709551615 tags"],
        ),
    ] {
        assert_mentions(
            &error_of(&put(&d, name, text.as_bytes())),
            &[&[name][..], needles].concat(),
        );
    }
}

const MSH4: &str = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Entities\n0 0 1 1\n1 0 0 0 1 1 1 1 7 0\n1 0 0 0 1 1 1 0 1 1\n$EndEntities\n$Nodes\n1 5 1 5\n3 1 0 5\n1\n2\n3\n4\n5\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n1 1 1\n$EndNodes\n$Elements\n2 3 1 3\n2 1 2 1\n1 1 2 3\n3 1 4 2\n2 1 2 3 4\n3 2 3 4 5\n$EndElements\n";

#[test]
fn msh4_ascii_with_physical_groups() {
    let d = dir("msh4");
    let m = read(&put(&d, "a.msh", MSH4.as_bytes()), &[]).unwrap();
    assert_eq!((m.dim, m.num_nodes(), m.num_cells()), (3, 5, 2));
    assert_eq!(m.cells, vec![0, 1, 2, 3, 1, 2, 3, 4]);
    assert_eq!(m.fixed, vec![true, true, true, false, false]);
    let tet10 = MSH4
        .replace("$Elements\n2 3 1 3", "$Elements\n2 2 1 3")
        .replace(
            "3 1 4 2\n2 1 2 3 4\n3 2 3 4 5",
            "3 1 11 1\n2 1 2 3 4 5 1 2 3 4 5",
        );
    assert_mentions(
        &error_of(&put(&d, "t.msh", tet10.as_bytes())),
        &["t.msh", "element block 2", "unsupported element type"],
    );
    let garbled = MSH4.replace("0 1 0\n0 0 1", "0 1 0\n0 zero 1");
    assert_mentions(
        &error_of(&put(&d, "g.msh", garbled.as_bytes())),
        &["g.msh:", "node"],
    );
    let malformed = [
        (
            "nodes.msh",
            MSH4.replace("$Nodes\n1 5 1 5", "$Nodes\n1 6 1 6"),
            &["$Nodes", "6 nodes", "hold 5"][..],
        ),
        (
            "elements.msh",
            MSH4.replace("$Elements\n2 3 1 3", "$Elements\n2 5 1 3"),
            &["$Elements", "5 elements", "hold 3"][..],
        ),
        (
            "range.msh",
            MSH4.replace("3 2 3 4 5", "3 2 3 4 9"),
            &["element block 2, element 3", "node 9"][..],
        ),
        (
            "inverted.msh",
            MSH4.replace("2 1 2 3 4", "2 2 1 3 4"),
            &["element 2", "cell 1 is inverted"][..],
        ),
        (
            "flat.msh",
            MSH4.replace("1 1 1\n$EndNodes", "0.5 0.5 0\n$EndNodes"),
            &["element 3", "cell 2 is degenerate"][..],
        ),
        (
            "none.msh",
            MSH4.replace(
                &MSH4[MSH4.find("$Nodes").unwrap()..MSH4.find("$EndNodes").unwrap()],
                "$Nodes\n0 0 1 1\n",
            ),
            &["element block 1, element 1", "node 1 out of range"][..],
        ),
        (
            "nan.msh",
            MSH4.replace("1 1 1\n$EndNodes", "nan 1 1\n$EndNodes"),
            &["node block 1", "node 5", "(NaN, 1, 1)", "expected finite"][..],
        ),
        (
            "inf.msh",
            MSH4.replace("0 1 0\n0 0 1", "0 1 0\n0 0 inf"),
            &["node block 1", "node 4", "(0, 0, inf)", "expected finite"][..],
        ),
        (
            "huge.msh",
            MSH4.replace("0 1 0\n0 0 1", "0 1e300 0\n0 0 1"),
            &[
                "node block 1",
                "node 3",
                "(0, 1e300, 0)",
                "from -1e40 to 1e40",
            ][..],
        ),
    ];
    for (name, text, needles) in malformed {
        let msg = error_of(&put(&d, name, text.as_bytes()));
        assert_mentions(&msg, &[&[name][..], needles].concat());
    }
}

/// MSH 4.1 binary: header, then sections of size_t (8 bytes), int (4) and double (8).
fn msh4_binary() -> Vec<u8> {
    let mut b = b"$MeshFormat\n4.1 1 8\n".to_vec();
    b.extend(1i32.to_le_bytes());
    b.extend(b"\n$EndMeshFormat\n$Nodes\n");
    let size = |b: &mut Vec<u8>, v: u64| b.extend(v.to_le_bytes());
    let int = |b: &mut Vec<u8>, v: i32| b.extend(v.to_le_bytes());
    for v in [1, 5, 1, 5] {
        size(&mut b, v);
    }
    for v in [3, 1, 0] {
        int(&mut b, v);
    }
    size(&mut b, 5);
    for t in 1..=5 {
        size(&mut b, t);
    }
    for p in [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
        [1.0, 1.0, 1.0f64],
    ] {
        for c in p {
            b.extend(c.to_le_bytes());
        }
    }
    b.extend(b"\n$EndNodes\n$Elements\n");
    for v in [1, 2, 1, 2] {
        size(&mut b, v);
    }
    for v in [3, 1, 4] {
        int(&mut b, v);
    }
    size(&mut b, 2);
    for e in [[1, 1, 2, 3, 4], [2, 2, 3, 4, 5]] {
        for v in e {
            size(&mut b, v);
        }
    }
    b.extend(b"\n$EndElements\n");
    b
}

#[test]
fn msh4_binary_and_truncated() {
    let d = dir("msh4b");
    let bytes = msh4_binary();
    let m = read(&put(&d, "b.msh", &bytes), &[]).unwrap();
    assert_eq!((m.dim, m.num_nodes(), m.num_cells()), (3, 5, 2));
    assert_eq!(
        m.fixed,
        vec![true; 5],
        "no tags: every node of two tets is on a face of one cell"
    );
    let cut = &bytes[..bytes.len() / 2];
    assert_mentions(&error_of(&put(&d, "cut.msh", cut)), &["cut.msh", "byte "]);
}

/// `.node`/`.ele` read in parts by 1 to 4 ranks (threads as ranks) give every rank what one
/// rank reading the whole files gets: the mesh (a Kuhn box with markers, comments and blank
/// lines), and for malformed files the first bad line's error.
#[test]
fn node_ele_in_parts_same_at_every_rank_count() {
    use crate::mesh::ranks::threads::on_ranks;
    let d = dir("nodeele-parts");
    let m = crate::mesh::generate::kuhn_box([3, 2, 2], [1.0; 3]);
    let mut node = format!("# a box\n\n{} 3 0 1\n", m.num_nodes());
    for i in 0..m.num_nodes() {
        let [x, y, z] = m.point(i);
        node += &format!("{} {x} {y} {z} {}\n", i + 1, i32::from(m.fixed[i]) * 7);
        if i % 5 == 0 {
            node += "  # a comment\n\n";
        }
    }
    let mut ele = format!("{} 4 0\n", m.num_cells());
    for c in 0..m.num_cells() {
        let ids: Vec<String> = m.cell(c).iter().map(|n| (n + 1).to_string()).collect();
        ele += &format!("{} {}\n", c + 1, ids.join(" "));
    }
    put(&d, "box.node", node.as_bytes());
    let path = put(&d, "box.ele", ele.as_bytes());
    let whole = read(&path, &[]).unwrap();
    assert_eq!(
        (&whole.x, &whole.cells, &whole.fixed),
        (&m.x, &m.cells, &m.fixed)
    );
    let cells = m.num_cells();
    // Line k (0-based) of `text` replaced.
    let with_line = |text: &str, k: usize, new: &str| {
        let mut lines: Vec<&str> = text.lines().collect();
        lines[k] = new;
        lines.join("\n") + "\n"
    };
    let cases = [
        ("box", node.clone(), ele.clone()),
        ("ids", node.replace("\n13 ", "\n31 "), ele.clone()),
        ("coordinate", node.replace("\n20 ", "\n20 x"), ele.clone()),
        ("long", node.clone(), format!("{ele}99 1 2 3 4\n")),
        (
            "short",
            node.clone(),
            ele.replacen(&format!("{cells} 4"), &format!("{} 4", cells + 2), 1),
        ),
        ("range", node.clone(), with_line(&ele, 17, "17 1 2 3 5000")),
    ];
    for (stem, node_text, ele_text) in cases {
        put(&d, &format!("{stem}.node"), node_text.as_bytes());
        let path = put(&d, &format!("{stem}.ele"), ele_text.as_bytes());
        let serial = read(&path, &[]).map_err(|e| e.to_string());
        assert_eq!(serial.is_ok(), stem == "box", "{stem}: {serial:?}");
        for np in 1..=4 {
            for got in on_ranks(np, |ranks| {
                super::read(&path, &[], ranks).map_err(|e| e.to_string())
            }) {
                assert_eq!(got, serial, "{stem} at np {np}");
            }
        }
    }
}
