//! Which behaviour profile the sandbox's dry runs follow for a live server. The sandbox has one
//! profile, Redis 7.0 (verified against 7.0.15): against another server a dry run may differ from
//! the real run, which the user is told on connect (a `dry-run-differs` warning then marks any
//! live reply that did differ).

/// The profile the sandbox follows.
pub const PROFILE: &str = "Redis 7.0";

/// A note for a server the profile does not match; None for Redis 7.0.x.
pub fn note(product: &str, version: &str) -> Option<String> {
    if product == "redis" && version.starts_with("7.0.") {
        return None;
    }
    Some(format!(
        "the sandbox follows {PROFILE} (its only profile); dry runs may differ from this {product} {version} (a dry-run-differs warning says when a reply does)"
    ))
}

#[cfg(test)]
mod tests {
    use super::note;

    #[test]
    fn only_redis_7_0_matches_the_profile() {
        assert_eq!(note("redis", "7.0.15"), None);
        assert_eq!(
            note("valkey", "8.0.1"),
            Some("the sandbox follows Redis 7.0 (its only profile); dry runs may differ from this valkey 8.0.1 (a dry-run-differs warning says when a reply does)".into())
        );
        assert!(note("redis", "7.2.4").is_some());
        assert!(note("redis", "7.10.0").is_some());
    }
}
