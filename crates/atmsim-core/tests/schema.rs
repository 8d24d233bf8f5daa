//! `docs/core-schema.json` is the JSON Schema generated from the scenario
//! types (`atmsim_core::scenario::json_schema`): this test fails when the
//! checked-in file is not current. Regenerate it (and the key tables of
//! `docs/core-interface.md` rendered from it) with
//! `bash scripts/update_contract.sh`; this test alone rewrites the file when
//! `ATMSIM_UPDATE_SCHEMA=1` is set.

use std::path::Path;

#[test]
fn the_checked_in_schema_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/core-schema.json");
    let now = atmsim_core::scenario::json_schema_text();
    if std::env::var_os("ATMSIM_UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &now).expect("write docs/core-schema.json");
        return;
    }
    let file = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        file == now,
        "docs/core-schema.json is not the schema of the scenario types: \
         regenerate it with `bash scripts/update_contract.sh`"
    );
}
