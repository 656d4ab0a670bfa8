//! The device tree the Hermit kernel reads its memory from: a root
//! (compatible "hermit,multiboot", two cells for addresses and sizes), a
//! memory node per RAM region, and /chosen with the command line. Written
//! in the flattened format (version 17), big-endian, by hand.

use alloc::format;
use alloc::vec::Vec;

const BEGIN_NODE: u32 = 1;
const END_NODE: u32 = 2;
const PROP: u32 = 3;
const END: u32 = 9;
const HEADER: usize = 40;
const RESERVE_MAP: usize = 16;

#[derive(Default)]
struct Writer {
    structure: Vec<u8>,
    strings: Vec<u8>,
}

impl Writer {
    fn word(&mut self, w: u32) {
        self.structure.extend_from_slice(&w.to_be_bytes());
    }

    fn pad(&mut self) {
        while !self.structure.len().is_multiple_of(4) {
            self.structure.push(0);
        }
    }

    fn begin(&mut self, name: &str) {
        self.word(BEGIN_NODE);
        self.structure.extend_from_slice(name.as_bytes());
        self.structure.push(0);
        self.pad();
    }

    fn end(&mut self) {
        self.word(END_NODE);
    }

    fn prop(&mut self, name: &str, value: &[u8]) {
        let offset = self.string(name);
        self.word(PROP);
        self.word(value.len() as u32);
        self.word(offset);
        self.structure.extend_from_slice(value);
        self.pad();
    }

    fn string(&mut self, name: &str) -> u32 {
        let offset = self.strings.len() as u32;
        self.strings.extend_from_slice(name.as_bytes());
        self.strings.push(0);
        offset
    }

    fn finish(mut self) -> Vec<u8> {
        self.word(END);
        let structure_at = HEADER + RESERVE_MAP;
        let strings_at = structure_at + self.structure.len();
        let total = strings_at + self.strings.len();
        let header = [
            0xd00d_feed,
            total as u32,
            structure_at as u32,
            strings_at as u32,
            HEADER as u32,
            17,
            16,
            0,
            self.strings.len() as u32,
            self.structure.len() as u32,
        ];
        let mut out = Vec::with_capacity(total);
        header.iter().for_each(|w| out.extend_from_slice(&w.to_be_bytes()));
        out.extend_from_slice(&[0; RESERVE_MAP]);
        out.extend_from_slice(&self.structure);
        out.extend_from_slice(&self.strings);
        out
    }
}

fn cells(values: &[u64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_be_bytes()).collect()
}

/// The tree for `regions` (start, length) and `bootargs`, leaked: the
/// kernel reads it for good.
pub fn for_hermit(regions: &[(u64, u64)], bootargs: Option<&str>) -> &'static [u8] {
    let mut w = Writer::default();
    w.begin("");
    w.prop("compatible", b"hermit,multiboot\0");
    w.prop("#address-cells", &2u32.to_be_bytes());
    w.prop("#size-cells", &2u32.to_be_bytes());
    for &(start, len) in regions {
        w.begin(&format!("memory@{start:x}"));
        w.prop("device_type", b"memory\0");
        w.prop("reg", &cells(&[start, len]));
        w.end();
    }
    w.begin("chosen");
    let mut args = Vec::from(bootargs.unwrap_or("").as_bytes());
    args.push(0);
    w.prop("bootargs", &args);
    w.end();
    w.end();
    w.finish().leak()
}
