//! Styles. With `NO_COLOR` set nothing is coloured: focus and selection then show with bold and
//! reverse video alone, which no-color.org allows, so the dashboard stays usable.

use ratatui::style::{Color, Modifier, Style};

use super::detail::Kind;

#[derive(Debug, Clone, Copy)]
pub struct Theme {
    color: bool,
}

impl Theme {
    pub fn new(color: bool) -> Theme {
        Theme { color }
    }

    fn fg(self, color: Color) -> Style {
        if self.color {
            Style::new().fg(color)
        } else {
            Style::new()
        }
    }

    pub fn title(self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    pub fn border(self, focused: bool) -> Style {
        if focused {
            self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
        } else {
            self.fg(Color::DarkGray)
        }
    }

    pub fn header(self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    pub fn selected(self, focused: bool) -> Style {
        if focused {
            Style::new().add_modifier(Modifier::REVERSED)
        } else {
            Style::new().add_modifier(Modifier::UNDERLINED)
        }
    }

    pub fn quiet(self) -> Style {
        self.fg(Color::DarkGray)
    }

    pub fn good(self) -> Style {
        self.fg(Color::Green)
    }

    pub fn bad(self) -> Style {
        self.fg(Color::Red)
    }

    pub fn attention(self) -> Style {
        self.fg(Color::Yellow).add_modifier(Modifier::BOLD)
    }

    pub fn key(self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    /// A run's or a source's status word.
    pub fn status(self, status: &str) -> Style {
        match status {
            "completed" | "ready" => self.good(),
            "failed" | "cancelled" | "interrupted" => self.bad(),
            "awaiting_approval" | "awaiting_connection" | "restarting" => self.attention(),
            "running" | "connecting" => self.fg(Color::Cyan),
            _ => self.quiet(),
        }
    }

    pub fn detail(self, kind: Kind) -> Style {
        match kind {
            Kind::Heading => self.title(),
            Kind::Text => Style::new(),
            Kind::Code => self.fg(Color::White),
            Kind::Good => self.good(),
            Kind::Bad => self.bad(),
            Kind::Quiet => self.quiet(),
        }
    }
}
