//! Rebuilds the crate when a migration changes: `sqlx::migrate!` embeds the
//! migrations at compile time, and cargo does not otherwise watch them.

fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
