//! Integration tests of `eval` against real `python3` (the test venv, with pandas and
//! matplotlib) and real `node`.

mod bounds;
mod bridge;
mod common;
mod images;
mod javascript;
mod lifecycle;
mod python;
mod results;
mod state;
