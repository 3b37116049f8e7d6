//! Helpers shared by the CLI integration tests.

use std::path::PathBuf;

/// An empty directory of its own under the system temp dir, for test
/// `test` of `suite` (removed first if a previous run left it).
pub fn fresh_dir(suite: &str, test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("retroprof-{suite}-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
