//! `evalbench run`.

/// `evalbench run --export FILE`.
pub mod export;
/// `evalbench run --server`.
pub mod live;
