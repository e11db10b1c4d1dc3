//! The lessons of `samples/lessons/`, compiled in so the binary teaches without the source tree:
//! (folder, lesson.toml, start.lua, solution.lua, solution.test.toml). Add a line per lesson folder
//! (tests/lessons.rs checks that every folder is listed).

macro_rules! lesson {
    ($dir:literal) => {
        (
            $dir,
            include_str!(concat!("../../../samples/lessons/", $dir, "/lesson.toml")),
            include_str!(concat!("../../../samples/lessons/", $dir, "/start.lua")),
            include_str!(concat!("../../../samples/lessons/", $dir, "/solution.lua")),
            include_str!(concat!(
                "../../../samples/lessons/",
                $dir,
                "/solution.test.toml"
            )),
        )
    };
}

pub const LESSONS: &[(&str, &str, &str, &str, &str)] = &[
    lesson!("01-atomic-counter"),
    lesson!("02-rate-limiter"),
    lesson!("03-lock-release"),
    lesson!("04-stock-decrement"),
];
