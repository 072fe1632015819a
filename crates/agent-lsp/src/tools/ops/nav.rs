//! definition, type_definition, implementation, references: locations, each with its line.

use super::super::witnessed::{WitnessCheck, Witnessed, identifier_of};
use crate::error::LspError;
use crate::protocol::{Definition, Implementation, ReferenceParams, References, TypeDefinition};
use crate::render::{Loc, locations};
use crate::state::State;
use crate::tools::asking;
use crate::tools::ops::answer::{self, Answer, Places, not_offered};
use crate::tools::target;
use crate::tools::witnessed;
use crate::tools::{At, Nav};

pub(in crate::tools) async fn navigate(
    st: &State,
    nav: Nav,
    at: &At,
) -> Result<Answer<Places>, LspError> {
    let op = nav.op();
    // With a witness, `references` does not wait for the server to look idle (a quiet
    // period is a guess): the witness tells a complete answer from an early one.
    let witnessed =
        nav == Nav::References && st.witness().is_some() && identifier_of(&at.symbol).is_some();
    let l = target::locate_with(st, op, at, !witnessed).await?;
    let supported = match nav {
        Nav::Definition => l.srv.supports::<Definition>(),
        Nav::TypeDefinition => l.srv.supports::<TypeDefinition>(),
        Nav::Implementation => l.srv.supports::<Implementation>(),
        Nav::References => l.srv.supports::<References>(),
    };
    if !supported {
        return Err(not_offered(&l, op));
    }
    let refs = ReferenceParams::with_declaration(l.pos.clone());
    // `references` is checked by the witness when the run has one: the server's first
    // answer against where the name occurs (see `witnessed`).
    let check = match (nav, identifier_of(&l.t.symbol)) {
        (Nav::References, Some(name)) => {
            let at = (l.t.path.as_path(), l.t.line0, l.character);
            Some(witnessed::references_witnessed(st, &l.srv, at, name, &refs).await?)
        }
        (Nav::Implementation, Some(name)) => {
            Some(witnessed::implementations_witnessed(st, &l.srv, &l.t.path, name, &l.pos).await?)
        }
        _ => None,
    };
    let (checked, witness, witness_note) = match check {
        Some(WitnessCheck::Checked(c)) => (Some((c.locations, c.partial)), c.witness, c.note),
        Some(WitnessCheck::NotChecked(why)) => {
            (None, None, Some(format!("witness: not checked — {why}")))
        }
        None => (None, None, None),
    };
    let (result, partial) = match (checked, nav) {
        (Some(answer), _) => answer,
        // Servers that analyse in the background (pyright) answer a cold `references` with
        // what they have indexed so far, without saying so: ask until two answers agree.
        (None, Nav::References) => asking::ask_settled::<References>(st, &l.srv, &refs).await?,
        (None, Nav::Implementation) => {
            asking::ask_settled::<Implementation>(st, &l.srv, &l.pos).await?
        }
        (None, Nav::Definition) => asking::ask::<Definition>(st, &l.srv, &l.pos).await?,
        (None, Nav::TypeDefinition) => asking::ask::<TypeDefinition>(st, &l.srv, &l.pos).await?,
    };
    // A server that was still loading gave a partial answer, unless the witness found
    // nothing it left out.
    let partial = partial || (!l.ready && !witness.as_ref().is_some_and(Witnessed::agrees));
    let (head, mut r) = answer::answer_head(st, &l, op, partial);
    let mut places: Vec<Loc> = locations(&result)
        .into_iter()
        .map(|(p, line, c)| r.loc(&p, line, c))
        .collect();
    let total = places.len();
    if nav == Nav::References {
        places.truncate(50);
    }
    let body = Places {
        locations: places,
        total,
        witness: witness.as_ref().map(|w| w.report(st.ws())),
        witness_note,
    };
    Ok(answer::finish(head, body, &r))
}
