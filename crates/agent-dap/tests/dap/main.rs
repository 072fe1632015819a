//! Integration tests of `debug` against the real adapters (debugpy, lldb-dap, delve) and a
//! scripted fake Dart adapter.

mod common;
mod dart;
mod go;
mod lifecycle;
mod line_endings;
mod masking;
mod native;
mod python;
mod restart;
mod surface;
mod test_launch;
