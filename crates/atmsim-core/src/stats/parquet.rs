//! The probes' series as a Parquet file (Apache Parquet format
//! specification, with its Thrift definitions `parquet.thrift`), written
//! here so that a run needs no Parquet library: the Python layer would
//! otherwise load pyarrow (and numpy), about 0.2 s of every `atmsim run`
//! that has probes.
//!
//! The file holds one row group of four required columns, in the order of
//! the tidy series: `time_s` (DOUBLE), `entity` and `metric` (UTF-8
//! strings), `value` (DOUBLE). The numbers are stored PLAIN; the names are
//! dictionary-encoded (a PLAIN dictionary page of the names, then the
//! indices in the RLE/bit-packed hybrid), as Parquet writers store repeated
//! strings. Pages are version 1, uncompressed, at most [`PAGE_ROWS`] rows
//! each. Readers (pyarrow, pandas) read it as the frame `series_frame`
//! makes; the Python tests check that against pandas' own `to_parquet`.
//!
//! [`table_parquet`] writes a table of nullable columns the same way (one
//! row group, PLAIN values, a definition level per row): a large run's
//! per-VC and per-flow rows, which the Python layer would otherwise write
//! with pyarrow, loading pyarrow, numpy and pandas (0.4 CPU-s and 110 MiB
//! at 100,000 VCs).

/// Rows per data page.
pub const PAGE_ROWS: usize = 1 << 20;

// Parquet's enums (parquet.thrift).
const TYPE_BOOLEAN: i32 = 0;
const TYPE_INT64: i32 = 2;
const TYPE_DOUBLE: i32 = 5;
const TYPE_BYTE_ARRAY: i32 = 6;
const REQUIRED: i32 = 0;
const OPTIONAL: i32 = 1;
const CONVERTED_UTF8: i32 = 0;
const ENCODING_PLAIN: i32 = 0;
const ENCODING_RLE: i32 = 3;
const ENCODING_RLE_DICTIONARY: i32 = 8;
const CODEC_UNCOMPRESSED: i32 = 0;
const PAGE_DATA: i32 = 0;
const PAGE_DICTIONARY: i32 = 2;

// Thrift compact protocol type codes.
const CT_I32: u8 = 5;
const CT_I64: u8 = 6;
const CT_BINARY: u8 = 8;
const CT_LIST: u8 = 9;
const CT_STRUCT: u8 = 12;

/// A writer of Thrift's compact protocol: structs, their fields by id, and
/// lists.
#[derive(Default)]
struct Thrift {
    out: Vec<u8>,
    /// The last field id written in each open struct.
    last: Vec<i16>,
}

impl Thrift {
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.out.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.out.push(v as u8);
    }

    fn zigzag(&mut self, v: i64) {
        self.varint(((v << 1) ^ (v >> 63)) as u64);
    }

    fn field(&mut self, id: i16, kind: u8) {
        let last = self.last.last_mut().expect("a field outside a struct");
        let delta = id - *last;
        *last = id;
        if (1..=15).contains(&delta) {
            self.out.push(((delta as u8) << 4) | kind);
        } else {
            self.out.push(kind);
            self.zigzag(id as i64);
        }
    }

    fn i32(&mut self, id: i16, v: i32) {
        self.field(id, CT_I32);
        self.zigzag(v as i64);
    }

    fn i64(&mut self, id: i16, v: i64) {
        self.field(id, CT_I64);
        self.zigzag(v);
    }

    fn binary(&mut self, id: i16, v: &[u8]) {
        self.field(id, CT_BINARY);
        self.varint(v.len() as u64);
        self.out.extend_from_slice(v);
    }

    /// Opens the struct of field `id` (None: the message itself, or an
    /// element of a list).
    fn begin(&mut self, id: Option<i16>) {
        if let Some(id) = id {
            self.field(id, CT_STRUCT);
        }
        self.last.push(0);
    }

    fn end(&mut self) {
        self.out.push(0);
        self.last.pop();
    }

    /// The header of list field `id` of `n` elements of type `kind`.
    fn list(&mut self, id: i16, kind: u8, n: usize) {
        self.field(id, CT_LIST);
        if n < 15 {
            self.out.push(((n as u8) << 4) | kind);
        } else {
            self.out.push(0xF0 | kind);
            self.varint(n as u64);
        }
    }

    fn i32_list(&mut self, id: i16, values: &[i32]) {
        self.list(id, CT_I32, values.len());
        for &v in values {
            self.zigzag(v as i64);
        }
    }

    fn string_list(&mut self, id: i16, values: &[&str]) {
        self.list(id, CT_BINARY, values.len());
        for v in values {
            self.varint(v.len() as u64);
            self.out.extend_from_slice(v.as_bytes());
        }
    }
}

/// A page header (PageHeader): data pages carry a DataPageHeader, the
/// dictionary page a DictionaryPageHeader.
fn page_header(dictionary: bool, size: usize, values: usize, encoding: i32) -> Vec<u8> {
    let mut t = Thrift::default();
    t.begin(None);
    t.i32(
        1,
        if dictionary {
            PAGE_DICTIONARY
        } else {
            PAGE_DATA
        },
    );
    t.i32(2, size as i32);
    t.i32(3, size as i32);
    if dictionary {
        t.begin(Some(7));
        t.i32(1, values as i32);
        t.i32(2, encoding);
        t.end();
    } else {
        t.begin(Some(5));
        t.i32(1, values as i32);
        t.i32(2, encoding);
        t.i32(3, ENCODING_RLE);
        t.i32(4, ENCODING_RLE);
        t.end();
    }
    t.end();
    t.out
}

/// `indices` (each below 2^`width`) in the RLE/bit-packed hybrid: bit-packed
/// runs of 8 values, least significant bits first, the last group padded
/// with zeros.
fn bit_packed(indices: &[u32], width: u32, out: &mut Vec<u8>) {
    // A run of at most 2^20 groups keeps its header short; any length works.
    for run in indices.chunks(8 << 20) {
        let groups = run.len().div_ceil(8);
        let mut header = Thrift::default();
        header.varint(((groups as u64) << 1) | 1);
        out.extend_from_slice(&header.out);
        let (mut acc, mut bits) = (0u64, 0u32);
        for k in 0..groups * 8 {
            let v = run.get(k).copied().unwrap_or(0) as u64;
            acc |= v << bits;
            bits += width;
            while bits >= 8 {
                out.push(acc as u8);
                acc >>= 8;
                bits -= 8;
            }
        }
        debug_assert_eq!(bits, 0, "8 values fill whole bytes");
    }
}

/// Where a column chunk was written, for its ColumnMetaData.
struct Chunk {
    encodings: Vec<i32>,
    values: usize,
    start: usize,
    data_page: usize,
    dictionary_page: Option<usize>,
    size: usize,
}

/// Appends a DOUBLE column's pages to `file`.
fn double_column(file: &mut Vec<u8>, values: &[f64]) -> Chunk {
    let start = file.len();
    for page in values.chunks(PAGE_ROWS) {
        let header = page_header(false, page.len() * 8, page.len(), ENCODING_PLAIN);
        file.extend_from_slice(&header);
        for v in page {
            file.extend_from_slice(&v.to_le_bytes());
        }
    }
    Chunk {
        encodings: vec![ENCODING_PLAIN, ENCODING_RLE],
        values: values.len(),
        start,
        data_page: start,
        dictionary_page: None,
        size: file.len() - start,
    }
}

/// Appends a dictionary-encoded string column's pages to `file`: the names,
/// then the rows' indices into them.
fn name_column(file: &mut Vec<u8>, names: &[&str], indices: &[u32]) -> Chunk {
    let start = file.len();
    let mut dict = Vec::new();
    for n in names {
        dict.extend_from_slice(&(n.len() as u32).to_le_bytes());
        dict.extend_from_slice(n.as_bytes());
    }
    file.extend_from_slice(&page_header(true, dict.len(), names.len(), ENCODING_PLAIN));
    file.extend_from_slice(&dict);
    let data_page = file.len();
    let width = (u32::BITS - (names.len().saturating_sub(1) as u32).leading_zeros()).max(1);
    for page in indices.chunks(PAGE_ROWS) {
        let mut body = vec![width as u8];
        bit_packed(page, width, &mut body);
        let header = page_header(false, body.len(), page.len(), ENCODING_RLE_DICTIONARY);
        file.extend_from_slice(&header);
        file.extend_from_slice(&body);
    }
    Chunk {
        encodings: vec![ENCODING_PLAIN, ENCODING_RLE, ENCODING_RLE_DICTIONARY],
        values: indices.len(),
        start,
        data_page,
        dictionary_page: Some(start),
        size: file.len() - start,
    }
}

/// A column of a file's schema; a BYTE_ARRAY column holds UTF-8 strings.
struct Field<'a> {
    name: &'a str,
    physical: i32,
    repetition: i32,
}

/// Appends to `file` (its column chunks written) the FileMetaData of
/// `fields` with one row group of `chunks` (one per field; none when there
/// are no rows), the key-value `metadata`, and the footer.
fn finish_file(
    file: &mut Vec<u8>,
    fields: &[Field],
    chunks: &[Chunk],
    rows: usize,
    metadata: &[(String, String)],
    created_by: &str,
) {
    let mut t = Thrift::default();
    t.begin(None);
    t.i32(1, 1);
    t.list(2, CT_STRUCT, 1 + fields.len());
    t.begin(None);
    t.binary(4, b"schema");
    t.i32(5, fields.len() as i32);
    t.end();
    for field in fields {
        t.begin(None);
        t.i32(1, field.physical);
        t.i32(3, field.repetition);
        t.binary(4, field.name.as_bytes());
        if field.physical == TYPE_BYTE_ARRAY {
            t.i32(6, CONVERTED_UTF8);
            // logicalType: the STRING member (an empty struct) of the union.
            t.begin(Some(10));
            t.begin(Some(1));
            t.end();
            t.end();
        }
        t.end();
    }
    t.i64(3, rows as i64);
    t.list(4, CT_STRUCT, usize::from(rows > 0));
    if rows > 0 {
        t.begin(None);
        t.list(1, CT_STRUCT, chunks.len());
        for (chunk, field) in chunks.iter().zip(fields) {
            t.begin(None);
            t.i64(2, chunk.start as i64);
            t.begin(Some(3));
            t.i32(1, field.physical);
            t.i32_list(2, &chunk.encodings);
            t.string_list(3, &[field.name]);
            t.i32(4, CODEC_UNCOMPRESSED);
            t.i64(5, chunk.values as i64);
            t.i64(6, chunk.size as i64);
            t.i64(7, chunk.size as i64);
            t.i64(9, chunk.data_page as i64);
            if let Some(d) = chunk.dictionary_page {
                t.i64(11, d as i64);
            }
            t.end();
            t.end();
        }
        let total: usize = chunks.iter().map(|c| c.size).sum();
        t.i64(2, total as i64);
        t.i64(3, rows as i64);
        t.end();
    }
    if !metadata.is_empty() {
        t.list(5, CT_STRUCT, metadata.len());
        for (key, value) in metadata {
            t.begin(None);
            t.binary(1, key.as_bytes());
            t.binary(2, value.as_bytes());
            t.end();
        }
    }
    t.binary(6, created_by.as_bytes());
    t.end();
    file.extend_from_slice(&t.out);
    file.extend_from_slice(&(t.out.len() as u32).to_le_bytes());
    file.extend_from_slice(b"PAR1");
}

/// The series' columns as the bytes of a Parquet file (see the module
/// docs); `entity` and `metric` index `entity_names` and `metric_names`.
/// Fails if the columns differ in length or an index has no name.
pub fn series_parquet(
    time_s: &[f64],
    entity: &[u32],
    entity_names: &[&str],
    metric: &[u32],
    metric_names: &[&str],
    value: &[f64],
    created_by: &str,
) -> Result<Vec<u8>, String> {
    let rows = time_s.len();
    if entity.len() != rows || metric.len() != rows || value.len() != rows {
        return Err(format!(
            "series columns of different lengths: time_s {rows}, entity {}, metric {}, value {}",
            entity.len(),
            metric.len(),
            value.len()
        ));
    }
    for (column, indices, names) in [
        ("entity", entity, entity_names),
        ("metric", metric, metric_names),
    ] {
        if let Some(&i) = indices.iter().find(|&&i| i as usize >= names.len()) {
            return Err(format!(
                "series column {column}: index {i} has no name (names: {})",
                names.len()
            ));
        }
    }
    let mut file = b"PAR1".to_vec();
    let mut chunks = Vec::new();
    let columns = ["time_s", "entity", "metric", "value"];
    if rows > 0 {
        chunks.push(double_column(&mut file, time_s));
        chunks.push(name_column(&mut file, entity_names, entity));
        chunks.push(name_column(&mut file, metric_names, metric));
        chunks.push(double_column(&mut file, value));
    }
    let fields = columns.map(|name| {
        let double = name == "time_s" || name == "value";
        Field {
            name,
            physical: if double { TYPE_DOUBLE } else { TYPE_BYTE_ARRAY },
            repetition: REQUIRED,
        }
    });
    finish_file(&mut file, &fields, &chunks, rows, &[], created_by);
    Ok(file)
}

/// The values of a nullable column of [`table_parquet`].
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// BOOLEAN.
    Bool(Vec<Option<bool>>),
    /// INT64.
    Int(Vec<Option<i64>>),
    /// DOUBLE.
    Float(Vec<Option<f64>>),
    /// BYTE_ARRAY annotated as a UTF-8 string.
    Str(Vec<Option<String>>),
}

impl Values {
    fn len(&self) -> usize {
        match self {
            Values::Bool(v) => v.len(),
            Values::Int(v) => v.len(),
            Values::Float(v) => v.len(),
            Values::Str(v) => v.len(),
        }
    }

    fn physical_type(&self) -> i32 {
        match self {
            Values::Bool(_) => TYPE_BOOLEAN,
            Values::Int(_) => TYPE_INT64,
            Values::Float(_) => TYPE_DOUBLE,
            Values::Str(_) => TYPE_BYTE_ARRAY,
        }
    }

    /// Rows `range` as a data page's body: the definition levels (1: a
    /// value, 0: null; RLE/bit-packed hybrid behind their length), then the
    /// values that are not null, PLAIN (booleans bit-packed, one bit each).
    fn page_body(&self, range: std::ops::Range<usize>) -> Vec<u8> {
        fn levels<T>(values: &[Option<T>]) -> Vec<u32> {
            values.iter().map(|v| u32::from(v.is_some())).collect()
        }
        let defined = match self {
            Values::Bool(v) => levels(&v[range.clone()]),
            Values::Int(v) => levels(&v[range.clone()]),
            Values::Float(v) => levels(&v[range.clone()]),
            Values::Str(v) => levels(&v[range.clone()]),
        };
        let mut encoded = Vec::new();
        bit_packed(&defined, 1, &mut encoded);
        let mut body = (encoded.len() as u32).to_le_bytes().to_vec();
        body.extend_from_slice(&encoded);
        match self {
            Values::Bool(v) => {
                let bits: Vec<u8> = v[range].iter().flatten().map(|&b| u8::from(b)).collect();
                for group in bits.chunks(8) {
                    let byte = group
                        .iter()
                        .enumerate()
                        .fold(0u8, |acc, (k, &b)| acc | (b << k));
                    body.push(byte);
                }
            }
            Values::Int(v) => {
                for x in v[range].iter().flatten() {
                    body.extend_from_slice(&x.to_le_bytes());
                }
            }
            Values::Float(v) => {
                for x in v[range].iter().flatten() {
                    body.extend_from_slice(&x.to_le_bytes());
                }
            }
            Values::Str(v) => {
                for x in v[range].iter().flatten() {
                    body.extend_from_slice(&(x.len() as u32).to_le_bytes());
                    body.extend_from_slice(x.as_bytes());
                }
            }
        }
        body
    }
}

/// A table of named nullable columns as the bytes of a Parquet file: one
/// row group, each column OPTIONAL (a definition level per row), PLAIN,
/// uncompressed, pages of at most [`PAGE_ROWS`] rows; `metadata` goes into
/// the file's key-value metadata. Fails if the columns differ in length or
/// two have one name.
pub fn table_parquet(
    columns: &[(String, Values)],
    metadata: &[(String, String)],
    created_by: &str,
) -> Result<Vec<u8>, String> {
    let rows = columns.first().map_or(0, |(_, v)| v.len());
    for (name, values) in columns {
        if values.len() != rows {
            return Err(format!(
                "table column {name}: {} rows, the first column has {rows}",
                values.len()
            ));
        }
    }
    for (k, (name, _)) in columns.iter().enumerate() {
        if columns[..k].iter().any(|(other, _)| other == name) {
            return Err(format!("table column {name}: two columns of that name"));
        }
    }
    let mut file = b"PAR1".to_vec();
    let mut chunks = Vec::new();
    if rows > 0 {
        for (_, values) in columns {
            let start = file.len();
            for first in (0..rows).step_by(PAGE_ROWS) {
                let range = first..(first + PAGE_ROWS).min(rows);
                let n = range.len();
                let body = values.page_body(range);
                file.extend_from_slice(&page_header(false, body.len(), n, ENCODING_PLAIN));
                file.extend_from_slice(&body);
            }
            chunks.push(Chunk {
                encodings: vec![ENCODING_PLAIN, ENCODING_RLE],
                values: rows,
                start,
                data_page: start,
                dictionary_page: None,
                size: file.len() - start,
            });
        }
    }
    let fields: Vec<Field> = (columns.iter())
        .map(|(name, values)| Field {
            name,
            physical: values.physical_type(),
            repetition: OPTIONAL,
        })
        .collect();
    finish_file(&mut file, &fields, &chunks, rows, metadata, created_by);
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_protocol_fields_lists_and_varints() {
        let mut t = Thrift::default();
        t.begin(None);
        t.i32(1, -1);
        t.i64(3, 300);
        t.binary(20, b"ab");
        t.i32_list(21, &[1; 16]);
        t.end();
        let mut want = vec![0x15, 0x01, 0x26, 0xD8, 0x04];
        // Field 20 after 3: a delta of 17, so the id follows (zigzag 40).
        want.extend([0x08, 0x28, 0x02, b'a', b'b']);
        want.extend([0x19, 0xF5, 0x10]);
        want.extend([0x02; 16]);
        want.push(0);
        assert_eq!(t.out, want);
    }

    #[test]
    fn bit_packing_fills_groups_of_eight_least_significant_first() {
        let mut out = Vec::new();
        bit_packed(&[1, 2, 3, 0, 1, 2, 3, 0, 3], 2, &mut out);
        // Two groups: header (2 << 1) | 1, then 2 + 2 bytes.
        assert_eq!(out, vec![0x05, 0b0011_1001, 0b0011_1001, 0b0000_0011, 0]);
    }

    #[test]
    fn a_file_is_framed_by_its_magic_and_footer_length() {
        let names = ["a", "b", "c"];
        let f = series_parquet(
            &[0.0, 0.5],
            &[0, 2],
            &names,
            &[1, 0],
            &["m0", "m1"],
            &[1.0, 2.0],
            "atmsim test",
        )
        .unwrap();
        assert_eq!(&f[..4], b"PAR1");
        assert_eq!(&f[f.len() - 4..], b"PAR1");
        let footer = u32::from_le_bytes(f[f.len() - 8..f.len() - 4].try_into().unwrap()) as usize;
        assert!(footer < f.len() - 12);
        // Empty series: a schema and no row group.
        let empty = series_parquet(&[], &[], &names, &[], &["m0"], &[], "t").unwrap();
        assert_eq!(&empty[..4], b"PAR1");
    }

    #[test]
    fn a_table_page_holds_the_definition_levels_then_the_values_that_are_set() {
        let ints = Values::Int(vec![Some(7), None, Some(-1)]);
        let mut want = vec![2, 0, 0, 0, 0x03, 0b0000_0101];
        want.extend(7i64.to_le_bytes());
        want.extend((-1i64).to_le_bytes());
        assert_eq!(ints.page_body(0..3), want);
        let bools = Values::Bool(vec![Some(true), Some(false), None, Some(true)]);
        assert_eq!(
            bools.page_body(0..4),
            vec![2, 0, 0, 0, 0x03, 0b0000_1011, 0b101]
        );
        let strs = Values::Str(vec![None, Some("ab".into())]);
        assert_eq!(
            strs.page_body(1..2),
            vec![2, 0, 0, 0, 0x03, 1, 2, 0, 0, 0, b'a', b'b']
        );
    }

    #[test]
    fn a_table_of_columns_of_different_lengths_or_one_name_twice_is_refused() {
        let a = ("a".to_string(), Values::Float(vec![Some(1.0)]));
        let b = ("b".to_string(), Values::Float(vec![]));
        let e = table_parquet(&[a.clone(), b], &[], "t").unwrap_err();
        assert!(
            e.contains("table column b: 0 rows, the first column has 1"),
            "{e}"
        );
        let e = table_parquet(&[a.clone(), a.clone()], &[], "t").unwrap_err();
        assert!(e.contains("two columns of that name"), "{e}");
        let f = table_parquet(&[a], &[("k".into(), "v".into())], "t").unwrap();
        assert_eq!((&f[..4], &f[f.len() - 4..]), (&b"PAR1"[..], &b"PAR1"[..]));
    }

    #[test]
    fn inconsistent_columns_are_refused() {
        let e = series_parquet(&[0.0], &[], &["a"], &[0], &["m"], &[1.0], "t").unwrap_err();
        assert!(e.contains("different lengths"), "{e}");
        let e = series_parquet(&[0.0], &[1], &["a"], &[0], &["m"], &[1.0], "t").unwrap_err();
        assert!(e.contains("entity: index 1"), "{e}");
    }
}
