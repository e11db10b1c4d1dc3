mod lexer;
pub use lexer::*;

mod structs;
pub use structs::*;

#[cfg(feature = "luau")]
mod interpolated_strings;
