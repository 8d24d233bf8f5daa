//! `docs/core-schema.json` is the JSON Schema generated from the scenario
//! types (`atmsim_core::scenario::json_schema`): this test fails when the
//! checked-in file is not current. The Python package ships the same text
//! as `python/atmsim/scenario/core-schema.json`, from which it reads the
//! core's ranges; this test checks that copy too. Regenerate both (and the
//! key tables of `docs/core-interface.md` rendered from the schema) with
//! `bash scripts/update_contract.sh`; this test alone rewrites the files
//! when `ATMSIM_UPDATE_SCHEMA=1` is set.

use std::path::Path;

#[test]
fn the_checked_in_schema_is_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let now = atmsim_core::scenario::json_schema_text();
    for file in [
        "docs/core-schema.json",
        "python/atmsim/scenario/core-schema.json",
    ] {
        let path = root.join(file);
        if std::env::var_os("ATMSIM_UPDATE_SCHEMA").is_some() {
            std::fs::write(&path, &now).unwrap_or_else(|e| panic!("write {file}: {e}"));
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            text == now,
            "{file} is not the schema of the scenario types: \
             regenerate it with `bash scripts/update_contract.sh`"
        );
    }
}
