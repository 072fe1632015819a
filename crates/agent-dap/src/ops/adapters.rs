//! `adapters`: which debug adapters are usable in this workspace, and why not.

use crate::args::Exceptions;
use crate::report::{AdapterRow, Adapters, ExceptionMapping};
use crate::supervisor::Supervisor;

pub(super) fn run(sup: &Supervisor) -> Adapters {
    let adapters = sup
        .detect_all(&sup.root)
        .iter()
        .map(|d| {
            let a = d.id.adapter();
            let advertised = a.exception_filters();
            AdapterRow {
                id: d.id.name(),
                usable: d.usable(),
                marker: d.marker.as_ref().map(|m| sup.shown(m)),
                markers: d.id.markers().to_vec(),
                binary: d.binary.as_ref().map(|b| b.display().to_string()),
                problem: d.why_not(),
                install: d.id.install(),
                exception_filters: advertised.to_vec(),
                exceptions: ExceptionMapping {
                    uncaught: Exceptions::Uncaught.filters(advertised),
                    all: Exceptions::All.filters(advertised),
                    native: a.native_exception_stops(),
                },
            }
        })
        .collect();
    Adapters { adapters }
}
