//! Which tenants' rows a list reads: one tenant's, or every tenant's (the
//! admin's view across them).

/// The WHERE term of a list read for one tenant (`one`) or for every
/// tenant, with parameter `p` bound either way (the tenant, or NULL):
/// two statement texts that bind alike. Not one text with `p IS NULL OR`:
/// the planner would then keep one plan for both, and a tenant's list
/// would lose the index that starts with its tenant.
pub fn tenant_is(one: bool, p: &str) -> String {
    if one {
        format!("tenant = {p}")
    } else {
        format!("CAST({p} AS TEXT) IS NULL")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tenants_list_names_it_and_every_tenants_binds_the_same_parameter() {
        assert_eq!(tenant_is(true, "$1"), "tenant = $1");
        assert_eq!(tenant_is(false, "?1"), "CAST(?1 AS TEXT) IS NULL");
    }
}
