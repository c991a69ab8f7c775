//! The SQL of named leases shared by both backends: one statement takes
//! or renews a lease, and only where its holder may.

/// Takes or renews the lease: inserts it (term 1), or updates it when
/// `holder` holds it or it has expired; the term goes up unless its own
/// holder renews it unexpired. Returns the row when it was taken or
/// renewed, nothing while another holds it. `p` names the four parameters
/// in the backend's style: name, holder, now, expires_at.
pub fn take(p: [&str; 4]) -> String {
    let [name, holder, now, expires] = p;
    format!(
        "INSERT INTO leases (name, holder, term, taken_at, expires_at) \
         VALUES ({name}, {holder}, 1, {now}, {expires}) \
         ON CONFLICT (name) DO UPDATE SET \
           term = CASE WHEN leases.holder = excluded.holder AND leases.expires_at > {now} \
                  THEN leases.term ELSE leases.term + 1 END, \
           taken_at = CASE WHEN leases.holder = excluded.holder AND leases.expires_at > {now} \
                  THEN leases.taken_at ELSE {now} END, \
           holder = excluded.holder, \
           expires_at = excluded.expires_at \
         WHERE leases.holder = excluded.holder OR leases.expires_at <= {now} \
         RETURNING name, holder, term, taken_at, expires_at"
    )
}

/// Expires the lease now if `holder` holds it. `p`: name, holder, now.
pub fn drop(p: [&str; 3]) -> String {
    let [name, holder, now] = p;
    format!(
        "UPDATE leases SET expires_at = {now} \
         WHERE name = {name} AND holder = {holder} AND expires_at > {now}"
    )
}

/// The lease's row. `p`: name.
pub fn get(name: &str) -> String {
    format!("SELECT name, holder, term, taken_at, expires_at FROM leases WHERE name = {name}")
}
