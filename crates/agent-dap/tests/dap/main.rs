//! Integration tests of `debug` against the real adapters (debugpy, lldb-dap, delve) and a
//! scripted fake Dart adapter.

mod common;
mod python;
mod native;
mod go;
mod dart;
mod lifecycle;
