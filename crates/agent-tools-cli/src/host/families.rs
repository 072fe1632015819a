//! The tool families this host can be built with, as one list: [`FAMILIES`], one entry per cargo
//! feature compiled in. Each [`Family`] says its feature, how it attaches to a run given the
//! [`HostOptions`], and what `doctor` reports for it; `families`, `build` and `doctor` iterate the
//! list, so a family is added or left out in one place. The list is the host's composition: the
//! floor (`agent-tier`) never learns of the families.

#[cfg(feature = "ask")]
use super::Asking;
use super::HostOptions;
use agent_tools::Registry;
use agent_tools::tier::doctor::DoctorEntry;
use std::path::Path;

/// One tool family of the host.
pub trait Family: Sync {
    /// Its cargo feature, which is also its name in `doctor`'s "families compiled in".
    fn feature(&self) -> &'static str;

    /// Attach its resources and register its tools in the run's `registry`, set up as `opts`
    /// says.
    fn attach(&self, registry: &Registry, opts: &HostOptions);

    /// The programs it could use for the checkout at `root`, and whether it can. Default: none
    /// (a family that starts no program of the checkout's).
    fn doctor(&self, root: &Path) -> Vec<DoctorEntry> {
        let _ = root;
        Vec::new()
    }

    /// What `doctor` says of the family as a whole for the checkout at `root`, a line each
    /// (how an untrusted project's servers are contained). Default: nothing.
    fn notes(&self, root: &Path) -> Vec<String> {
        let _ = root;
        Vec::new()
    }
}

/// Every family compiled in, in the order `doctor` lists them and the run attaches them.
pub const FAMILIES: &[&dyn Family] = &[
    #[cfg(feature = "lsp")]
    &Lsp,
    #[cfg(feature = "astgrep")]
    &AstGrep,
    #[cfg(feature = "dap")]
    &Dap,
    #[cfg(feature = "kernel")]
    &Kernel,
    #[cfg(feature = "ask")]
    &Ask,
    #[cfg(feature = "vibe")]
    &Vibe,
];

/// Language servers: `lsp`, `lsp_rename`, diagnostics on write.
#[cfg(feature = "lsp")]
struct Lsp;

#[cfg(feature = "lsp")]
impl Family for Lsp {
    fn feature(&self) -> &'static str {
        "lsp"
    }
    fn attach(&self, registry: &Registry, opts: &HostOptions) {
        let config = agent_tools::lsp::LspConfig {
            trust_project: opts.trust_project,
            ..Default::default()
        };
        agent_tools::lsp::attach(registry, config);
    }
    fn doctor(&self, root: &Path) -> Vec<DoctorEntry> {
        agent_tools::lsp::doctor(root)
    }
    fn notes(&self, root: &Path) -> Vec<String> {
        vec![format!("lsp: {}", agent_tools::lsp::containment_note(root))]
    }
}

/// Structural search and edits: `ast_grep`, `ast_edit`, `resolve`, and the identifier witness.
#[cfg(feature = "astgrep")]
struct AstGrep;

#[cfg(feature = "astgrep")]
impl Family for AstGrep {
    fn feature(&self) -> &'static str {
        "astgrep"
    }
    fn attach(&self, registry: &Registry, opts: &HostOptions) {
        let mut config = agent_tools::astgrep::AstGrepConfig::default();
        if let Some(bytes) = opts.astgrep_cache_bytes {
            config.cache_bytes = bytes;
        }
        agent_tools::astgrep::attach(registry, config);
    }
}

/// Debug adapters: `debug`.
#[cfg(feature = "dap")]
struct Dap;

#[cfg(feature = "dap")]
impl Family for Dap {
    fn feature(&self) -> &'static str {
        "dap"
    }
    fn attach(&self, registry: &Registry, opts: &HostOptions) {
        agent_tools::dap::attach(
            registry,
            agent_tools::dap::DapConfig {
                conversation_id: Some(opts.conversation()),
                ..Default::default()
            },
        );
    }
    fn doctor(&self, root: &Path) -> Vec<DoctorEntry> {
        agent_tools::dap::doctor(root)
    }
}

/// Kernels: `eval`.
#[cfg(feature = "kernel")]
struct Kernel;

#[cfg(feature = "kernel")]
impl Family for Kernel {
    fn feature(&self) -> &'static str {
        "kernel"
    }
    fn attach(&self, registry: &Registry, _opts: &HostOptions) {
        agent_tools::kernel::attach(registry, Default::default());
    }
    fn doctor(&self, root: &Path) -> Vec<DoctorEntry> {
        agent_tools::kernel::doctor(root)
    }
}

/// A person: `ask_user` and the approver, through the port [`HostOptions::asking`] names.
#[cfg(feature = "ask")]
struct Ask;

#[cfg(feature = "ask")]
impl Family for Ask {
    fn feature(&self) -> &'static str {
        "ask"
    }
    fn attach(&self, registry: &Registry, opts: &HostOptions) {
        match opts.asking {
            Asking::Nobody => {}
            Asking::Terminal => crate::ask::attach_terminal(registry, opts.ask_timeout),
            Asking::Elicitation => {
                crate::ask::attach_elicitation(registry, &opts.conversation(), opts.ask_timeout)
            }
        }
    }
}

/// Background workers: the `vibe_*` tools, attached only in vibe mode.
#[cfg(feature = "vibe")]
struct Vibe;

#[cfg(feature = "vibe")]
impl Family for Vibe {
    fn feature(&self) -> &'static str {
        "vibe"
    }
    fn attach(&self, registry: &Registry, opts: &HostOptions) {
        agent_tools::vibe::attach(
            registry,
            agent_tools::vibe::VibeConfig {
                vibe_mode: opts.vibe,
                ..Default::default()
            },
        );
    }
    fn doctor(&self, root: &Path) -> Vec<DoctorEntry> {
        agent_tools::vibe::doctor(root)
    }
}
