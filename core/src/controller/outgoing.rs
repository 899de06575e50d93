//! One answer on its way to one target pane, in one value from the routing
//! decision to the turn it starts: its payload, its flow hops, and the stage
//! it is at ([`Stage`]: queued for a busy target, held for a box with text,
//! pasted and awaiting its turn, delivered). `delivery` moves each one
//! through its stages; nothing else keeps any part of a delivery.

use super::Effect;
use crate::agent::Paste;
use crate::flow::one_line;
use crate::screen::InputBox;
use crate::Millis;

/// Pastes of one delivery at most (the first, and again when it was lost).
pub const MAX_PASTES: u32 = 3;

/// An answer on its way to `pane`.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// The target pane.
    pub pane: u32,
    /// The target's name, for the bar.
    pub name: String,
    /// The sanitized text.
    pub payload: String,
    /// Flow hops of the turn it starts (a loop stops at the limit).
    pub hops: u32,
    /// Where it is now.
    pub stage: Stage,
}

/// The stages of a delivery, in order.
#[derive(Debug, Clone)]
pub enum Stage {
    /// The target works or waits: pasted when it stops (oldest first).
    Queued,
    /// The target's input box holds text: pasted once it is empty, looked
    /// at again at `due`.
    Held {
        /// The next look at the box.
        due: Millis,
    },
    /// Pasted; Enter is pressed until the target shows a turn.
    Pasted(Pasting),
    /// Confirmed by the target (or pasted by the copy that leads): it waits
    /// only for the turn it starts, which takes its hop count.
    Delivered,
}

/// A paste not yet confirmed by its target.
#[derive(Debug, Clone)]
pub struct Pasting {
    /// When the next Enter (or, after the last, the verdict) is due.
    pub due: Millis,
    /// Enters pressed since the last paste.
    pub presses: u32,
    /// Pastes so far.
    pub pastes: u32,
    /// The target may show a suggestion in its empty box at any moment
    /// ([`crate::agent::AgentKind::suggests_in_its_box`], once it ended a turn).
    pub suggests: bool,
    /// The target is a rules file's agent: its box is only what its `input`
    /// rule reads (an empty prompt may be a question's), so a retried Enter
    /// goes only onto the paste standing there, and nothing is pasted twice.
    pub strict: bool,
    /// How the target takes the answer.
    pub paste: Paste,
}

impl Outgoing {
    /// The paste under way, if it is at that stage.
    pub fn pasting(&self) -> Option<&Pasting> {
        match &self.stage {
            Stage::Pasted(p) => Some(p),
            _ => None,
        }
    }

    /// True while it waits for its target to stop working.
    pub fn is_queued(&self) -> bool {
        matches!(self.stage, Stage::Queued)
    }

    /// When it is held, its next look at the box.
    pub fn held_until(&self) -> Option<Millis> {
        match self.stage {
            Stage::Held { due } => Some(due),
            _ => None,
        }
    }

    /// True once pasted: it is the delivery the target's next turn belongs to.
    pub fn is_in_the_target(&self) -> bool {
        matches!(self.stage, Stage::Pasted(_) | Stage::Delivered)
    }

    /// The writes that type the payload into the target, as it takes one.
    pub fn writes(&self, paste: Paste) -> Effect {
        match paste {
            Paste::Bracketed => Effect::PasteToPane {
                pane: self.pane,
                text: self.payload.clone(),
            },
            Paste::Line => Effect::WriteToPane {
                pane: self.pane,
                text: one_line(&self.payload),
            },
        }
    }

    /// Whether a retried Enter can only submit the paste: onto a draft (the
    /// paste standing there), onto a certainly empty box of an agent that
    /// cannot be suggesting now, or onto unsure text that is the paste's
    /// beginning.
    pub fn enter_is_safe(&self, pasting: &Pasting, input: &InputBox) -> bool {
        match input {
            InputBox::Draft(text) if pasting.strict => shows_the_paste(text, &self.payload),
            InputBox::Draft(_) => true,
            InputBox::Empty => !pasting.suggests && !pasting.strict,
            InputBox::Unsure(text) => shows_the_paste(text, &self.payload),
            InputBox::Unknown => false,
        }
    }
}

impl Pasting {
    /// Whether the paste may be repeated: the box is certainly empty and
    /// no suggestion can appear there before the paste lands.
    pub fn may_paste_again(&self, input: &InputBox) -> bool {
        self.pastes < MAX_PASTES && !self.suggests && !self.strict && *input == InputBox::Empty
    }
}

/// True when `text`, one row of a box, is the start of `payload` as pasted
/// (cut at the pane's edge, or the whole first line).
fn shows_the_paste(text: &str, payload: &str) -> bool {
    let first = payload.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    let text = text.trim();
    !text.is_empty() && (first.starts_with(text) || text.starts_with(first) && !first.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pasted(payload: &str, suggests: bool, strict: bool) -> (Outgoing, Pasting) {
        let pasting = Pasting {
            due: 0,
            presses: 1,
            pastes: 1,
            suggests,
            strict,
            paste: Paste::Bracketed,
        };
        let outgoing = Outgoing {
            pane: 2,
            name: "coder".into(),
            payload: payload.into(),
            hops: 1,
            stage: Stage::Pasted(pasting.clone()),
        };
        (outgoing, pasting)
    }

    #[test]
    fn a_retried_enter_goes_only_where_it_can_submit_nothing_but_the_paste() {
        let (o, p) = pasted("the plan\nstep two", false, false);
        assert!(o.enter_is_safe(&p, &InputBox::Draft("anything".into())));
        assert!(o.enter_is_safe(&p, &InputBox::Empty));
        assert!(o.enter_is_safe(&p, &InputBox::Unsure("the pl".into())));
        assert!(!o.enter_is_safe(&p, &InputBox::Unsure("a suggestion".into())));
        assert!(!o.enter_is_safe(&p, &InputBox::Unknown));
        let (o, p) = pasted("the plan", true, false);
        assert!(!o.enter_is_safe(&p, &InputBox::Empty), "a suggestion may stand there");
        let (o, p) = pasted("the plan", false, true);
        assert!(
            !o.enter_is_safe(&p, &InputBox::Draft("other".into())),
            "a rules agent's draft"
        );
        assert!(o.enter_is_safe(&p, &InputBox::Draft("the plan".into())));
    }

    #[test]
    fn a_paste_goes_again_only_onto_a_certainly_empty_box_that_cannot_suggest() {
        let (_, p) = pasted("x", false, false);
        assert!(p.may_paste_again(&InputBox::Empty));
        assert!(!p.may_paste_again(&InputBox::Unknown));
        let (_, p) = pasted("x", true, false);
        assert!(!p.may_paste_again(&InputBox::Empty));
        let p = Pasting {
            pastes: MAX_PASTES,
            ..pasted("x", false, false).1
        };
        assert!(!p.may_paste_again(&InputBox::Empty));
    }
}
