//! definition, type_definition, implementation, references: locations, each with its line.

use super::super::command::{At, Nav};
use super::super::witnessed::{WitnessCheck, Witnessed, identifier_of};
use crate::error::LspError;
use crate::protocol::{Definition, Implementation, ReferenceParams, References, TypeDefinition};
use crate::render::{Loc, locations};
use crate::tools::State;
use crate::tools::ops::answer::{Answer, Places};
use crate::tools::ops::not_offered;

impl State {
    pub(in crate::tools) async fn navigate(
        &self,
        nav: Nav,
        at: &At,
    ) -> Result<Answer<Places>, LspError> {
        let op = nav.op();
        // With a witness, `references` does not wait for the server to look idle (a quiet
        // period is a guess): the witness tells a complete answer from an early one.
        let witnessed = nav == Nav::References
            && self.witness().is_some()
            && identifier_of(&at.symbol).is_some();
        let l = self.locate_with(op, at, !witnessed).await?;
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
                Some(self.references_witnessed(&l.srv, at, name, &refs).await?)
            }
            (Nav::Implementation, Some(name)) => Some(
                self.implementations_witnessed(&l.srv, &l.t.path, name, &l.pos)
                    .await?,
            ),
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
            (None, Nav::References) => self.ask_settled::<References>(&l.srv, &refs).await?,
            (None, Nav::Implementation) => {
                self.ask_settled::<Implementation>(&l.srv, &l.pos).await?
            }
            (None, Nav::Definition) => self.ask::<Definition>(&l.srv, &l.pos).await?,
            (None, Nav::TypeDefinition) => self.ask::<TypeDefinition>(&l.srv, &l.pos).await?,
        };
        // A server that was still loading gave a partial answer, unless the witness found
        // nothing it left out.
        let partial = partial || (!l.ready && !witness.as_ref().is_some_and(Witnessed::agrees));
        let (head, mut r) = self.answer_head(&l, op, partial);
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
            witness: witness.as_ref().map(|w| w.report(self.ws())),
            witness_note,
        };
        Ok(self.finish(head, body, &r))
    }
}
