//! The live server the connection options name (redis-cli's -h/-p/-a/--user/-n, --server URL, TLS).

use super::{CliError, ServerArgs};
use crate::engine::live::TargetSpec;

/// A timeout flag in seconds as milliseconds; zero, negative or not finite is bad input.
fn seconds_to_ms(flag: &str, secs: Option<f64>) -> Result<Option<u64>, CliError> {
    match secs {
        None => Ok(None),
        Some(s) if s.is_finite() && s > 0.0 && s < 1e9 => Ok(Some((s * 1000.0).ceil() as u64)),
        Some(s) => Err(CliError::input(format!(
            "{flag} {s}: give a positive number of seconds (for example {flag} 2.5)"
        ))),
    }
}

/// Printed on stderr when a password is given on the command line.
pub const PASSWORD_WARNING: &str = "evalbench: warning: a password on the command line (-a, or in the --server URL) can be seen by other users in `ps`; use --askpass or REDISCLI_AUTH instead (--no-auth-warning hides this)";

/// The target the connection options name, or None when none is given.
pub fn server_spec(args: &ServerArgs, resp3: bool) -> Result<Option<TargetSpec>, CliError> {
    let wants_live = args.server.is_some()
        || args.host.is_some()
        || args.port.is_some()
        || args.pass.is_some()
        || args.user.is_some()
        || args.askpass
        || args.db.is_some()
        || args.tls;
    if !wants_live {
        return Ok(None);
    }
    let mut password = args
        .pass
        .clone()
        .or_else(|| std::env::var("REDISCLI_AUTH").ok());
    if args.askpass {
        password =
            Some(rpassword::prompt_password("Password: ").map_err(|e| {
                CliError::input(format!("--askpass: cannot read the password: {e}"))
            })?);
    }
    let url = args.server.clone().filter(|s| !s.is_empty());
    let url_password = url.as_deref().is_some_and(|u| {
        redis::IntoConnectionInfo::into_connection_info(u)
            .is_ok_and(|info| info.redis_settings().password().is_some())
    });
    if (args.pass.is_some() || url_password) && !args.no_auth_warning {
        // As redis-cli warns for -a and -u: other users of the machine see arguments in `ps`.
        eprintln!("{PASSWORD_WARNING}");
    }
    Ok(Some(TargetSpec {
        url,
        host: args.host.clone(),
        port: args.port,
        user: args.user.clone(),
        password,
        db: args.db,
        resp3,
        connect_timeout_ms: seconds_to_ms("--connect-timeout", args.connect_timeout)?,
        read_timeout_ms: seconds_to_ms("--read-timeout", args.read_timeout)?,
        tls: args.tls || args.cacert.is_some() || args.cert.is_some(),
        cacert: args.cacert.clone(),
        cert: args.cert.clone(),
        key: args.key.clone(),
        insecure: args.insecure,
    }))
}
