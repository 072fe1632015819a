//! Integration tests of `debug` against the real adapters (debugpy, lldb-dap, delve) and a
//! scripted fake Dart adapter.

mod common;
mod dart;
mod go;
mod lifecycle;
mod line_endings;
mod native;
mod python;
mod surface;
mod test_launch;
