//! Dart and Flutter: `dart debug_adapter` over stdio. Launch only.

use super::kit::{Adapter, AttachVia, BoxFuture, Header, Launch, LaunchSpec, has_extension};
use crate::protocol::Configuration;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

pub(crate) struct Dart;

impl Adapter for Dart {
    fn name(&self) -> &'static str {
        "dart"
    }

    fn markers(&self) -> &'static [&'static str] {
        &["pubspec.yaml"]
    }

    fn install(&self) -> &'static str {
        "install the Dart SDK (https://dart.dev/get-dart)"
    }

    fn binary_names(&self) -> Vec<String> {
        vec!["dart".into()]
    }

    fn debugs(&self, program: &Path) -> bool {
        has_extension(program, "dart")
    }

    fn command_args(&self) -> &'static [&'static str] {
        &["debug_adapter"]
    }

    fn launch<'a>(&'a self, spec: &'a LaunchSpec<'a>) -> BoxFuture<'a, Launch> {
        Box::pin(async move {
            Configuration::of(&DartLaunch {
                header: Header::launch("dart"),
                program: spec.program.display().to_string(),
                args: spec.args,
                cwd: spec.cwd.display().to_string(),
                env: spec.env,
                console: "debugConsole",
            })
            .into()
        })
    }

    fn attach(&self, _port: u16) -> Option<(Configuration, AttachVia)> {
        None
    }

    fn exception_filters(&self) -> &'static [&'static str] {
        &["All", "Unhandled"]
    }
}

/// The Dart adapter's `launch` configuration.
#[derive(Serialize)]
struct DartLaunch<'a> {
    #[serde(flatten)]
    header: Header,
    program: String,
    args: &'a [String],
    cwd: String,
    env: &'a BTreeMap<String, String>,
    /// Output as `output` events (not a terminal).
    console: &'static str,
}
